"""``lockscope flame``: one lock-wait, off-CPU or differential flame graph of a recording."""

from __future__ import annotations

import argparse

from ..errors import LockscopeError, UsageError

# Shown at the end of --help (command, what it does), as libbpf-tools do.
EXAMPLES = [
    ("lockscope flame results.json --kind lockwait --fs ext4 -o w.svg", "lock waits"),
    ("lockscope flame results.json --kind offcpu --fs xfs -o o.svg", "off-CPU time"),
    ("lockscope flame results.json --kind lockwait --fs ext4 --diff 1:8", "red: what grew"),
    ("lockscope flame results.json --kind holders --fs ext4 -o h.svg",
     "what the holder did"),
]


def add_parser(sub) -> None:
    """Register the ``flame`` subcommand."""
    p = sub.add_parser(
        "flame", help="draw one flame graph (lock waits, off-CPU, or the difference between "
        "two thread counts)",
        description="Draw one flame graph with inferno from results.json: lock waits weighted "
        "by ns waited, or off-CPU time weighted by ns blocked, summed over repeats; --diff A:B "
        "draws what grew from A to B threads (normalized; red grew). The folded stacks are "
        "written beside the SVG (same name, .folded).")
    p.add_argument("results", help="results.json, or the directory holding it")
    p.add_argument("--kind", choices=("lockwait", "offcpu", "holders"), default="lockwait",
                   help="which stacks (default: lockwait)")
    p.add_argument("--fs", help="filesystem label (required when several ran)")
    group = p.add_mutually_exclusive_group()
    group.add_argument("--threads", type=int, help="thread count (default: the highest)")
    group.add_argument("--diff", metavar="A:B", help="differential graph from A to B threads")
    p.add_argument("-o", "--output", help="SVG file (default: <fs>-<kind>-<N>threads.svg)")
    p.add_argument("--force", action="store_true",
                   help="overwrite files even if lockscope did not write them")
    p.set_defaults(func=run)


def _parse_diff(text: str) -> tuple[int, int]:
    try:
        a, b = (int(x) for x in text.split(":"))
    except ValueError:
        raise UsageError(f"--diff {text!r}: expected two thread counts like 1:8") from None
    if a == b:
        raise UsageError("--diff needs two different thread counts")
    return a, b


def run(args: argparse.Namespace) -> int:
    """Draw the graph; exit 1 with the install hint when inferno is missing."""
    # imported here: every start of lockscope imports this module for its parser
    import shutil
    import tempfile
    from pathlib import Path

    from ..report.flame.graphs import collect, draw, group_runs, safe_name, verb
    from ..report.flame.inferno import INSTALL, find_inferno
    from ..report.fmt import duration_ns, size_bytes
    from ..report.outputs import OutputGuard
    from ..results import load_results
    from ..run.outdir import check_dir

    doc = load_results(args.results)
    grouped = group_runs(doc)
    if not grouped:
        raise LockscopeError("no runs in results.json")
    if args.fs is None:
        if len(grouped) > 1:
            raise UsageError(f"several filesystems ran ({', '.join(grouped)}): choose one "
                             "with --fs")
        fs = next(iter(grouped))
    elif args.fs not in grouped:
        raise UsageError(f"no runs for --fs {args.fs} (recorded: {', '.join(grouped)})")
    else:
        fs = args.fs
    counts = sorted(grouped[fs])
    diff = _parse_diff(args.diff) if args.diff else None
    threads = None if diff else (args.threads if args.threads is not None else counts[-1])
    for n in (diff or (threads,)):
        if n not in counts:
            raise UsageError(f"{fs} has no run with {n} threads (recorded: "
                             f"{', '.join(map(str, counts))})")
    name = (f"{safe_name(fs)}-{args.kind}-diff-{diff[0]}to{diff[1]}threads" if diff
            else f"{safe_name(fs)}-{args.kind}-{threads}threads")
    svg = Path(args.output) if args.output else Path(f"{name}.svg")
    check_dir(svg.parent, "-o")
    folded = svg.with_suffix(".folded")
    guard = OutputGuard(args.force)
    guard.claim(svg)
    guard.claim(folded, stamped=False)

    with tempfile.TemporaryDirectory(prefix="lockscope-flame-") as tmp:
        flames = collect(doc, tmp, kinds=[args.kind], only_fs=fs, only_threads=threads,
                         diff=diff)
        graphs = [g for g in flames.graphs if bool(g.diff) == bool(diff)]
        if not graphs:
            raise LockscopeError(f"no {args.kind} stacks recorded for {fs} at "
                                 f"{threads if threads or not diff else diff[1]} threads")
        graph = graphs[0]
        assert graph.folded is not None     # collect plans only graphs with stacks
        inferno = find_inferno()
        if inferno is None or (diff and inferno.diff_folded is None):
            if not diff:
                svg.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(graph.folded, folded)
                guard.save()
                raise LockscopeError(f"inferno not found: install it with `{INSTALL}` "
                                     f"(folded stacks written to {folded})")
            raise LockscopeError(f"inferno not found: install it with `{INSTALL}`")
        draw(flames, inferno)
        if graph.error or graph.svg is None:
            raise LockscopeError(graph.error or "inferno drew nothing")
        svg.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(graph.folded, folded)
        shutil.copyfile(graph.svg, svg)
    guard.save()
    print(f"lockscope flame: wrote {svg} ({size_bytes(svg.stat().st_size)}; "
          f"{duration_ns(graph.total)} {verb(args.kind)}; folded stacks in {folded})")
    return 0
