"""``lockscope sweep``: its options; what the sweep does when it runs is cli.sweep_run,
imported only then, as every start of lockscope builds this parser."""

from __future__ import annotations

import argparse

from ..sweep_choices import (
    DEFAULT_BLOCK,
    DEFAULT_DB_SCALE,
    DEFAULT_SCENARIO,
    DEFAULT_SPAN,
    PRESET_DESCRIPTIONS,
    SUPPORTED_FS,
    THROUGHPUT_TOOLS,
)

# Shown at the end of --help (command, what it does), as libbpf-tools do.
EXAMPLES = [
    ("lockscope sweep", "ext4 vs XFS, threads 1,2,4,8"),
    ("lockscope sweep --fs xfs --threads 1,4,16 --repeat 3",
     "one filesystem, 3 runs per point"),
    ("lockscope sweep --scenario shared-written-randwrite", "see lockscope scenarios"),
    ("lockscope sweep --job my.fio --target /data", "your fio job, under /data"),
    ("lockscope sweep --threads 1,4,16 --keep-going",
     "a failed point is one line; the later ones still run"),
    ("lockscope sweep --preset postgres-pgbench --threads 1,4,16",
     "a database's client count"),
    ("lockscope sweep --command 'dd if=/dev/zero of={dir}/f bs=1M count=1024 oflag=direct'"
     " --throughput dd --threads 1",
     "any tool, its own figures"),
    ("lockscope sweep --fs ext4 --threads 1,4 --verify",
     "rerun with each remedy, before vs after"),
    ("lockscope sweep --command 'fio --filename={dir}/f ... --numjobs={threads}' "
     "--throughput fio --verify --remedy-command 'fio --directory={dir} ... "
     "--numjobs={threads}'",
     "your remedied command, checked"),
]

DEFAULT_RUNTIME_S = 8
DEFAULT_IMAGE = "4g"


def parse_threads(text: str) -> list[int]:
    out = []
    for part in text.split(","):
        part = part.strip()
        if not part.isdigit() or int(part) <= 0:
            raise argparse.ArgumentTypeError(f"'{part}' is not a positive integer")
        out.append(int(part))
    return sorted(set(out))


def parse_fs(text: str) -> list[str]:
    fss = [f.strip() for f in text.split(",") if f.strip()]
    for f in fss:
        if f not in SUPPORTED_FS:
            raise argparse.ArgumentTypeError(
                f"'{f}' is not supported (use {', '.join(SUPPORTED_FS)})")
    if not fss:
        raise argparse.ArgumentTypeError("no filesystem given")
    return list(dict.fromkeys(fss))


def add_parser(sub) -> None:
    p = sub.add_parser(
        "sweep", help="run the workload at several thread counts, traced, and explain it",
        description="Run a fio-style workload at each thread count on each filesystem with "
        "the eBPF recorder attached, then analyze where threads waited and why throughput "
        "stops scaling. With no arguments: 4 KiB random O_DIRECT writes into one shared "
        "sparse file, threads 1,2,4,8, on fresh loop-backed ext4 and XFS images.")
    p.add_argument("--fs", default="ext4,xfs", type=parse_fs,
                   help="filesystems to compare, comma-separated: ext4, xfs, ext2, ext3 "
                   "(default: ext4,xfs)")
    p.add_argument("--threads", default="1,2,4,8", type=parse_threads,
                   help="thread counts, comma-separated (default: 1,2,4,8)")
    src = p.add_mutually_exclusive_group()
    src.add_argument("--scenario", default=None,
                     help=f"built-in scenario (default: {DEFAULT_SCENARIO}; see lockscope "
                     "scenarios)")
    src.add_argument("--job", metavar="FILE.fio", help="a fio job file instead of a scenario")
    _add_command_arguments(p, src)
    _add_preset_arguments(p, src)
    p.add_argument("--runtime", type=float, default=DEFAULT_RUNTIME_S, metavar="S",
                   help=f"seconds of timed phase per point (default: {DEFAULT_RUNTIME_S})")
    p.add_argument("--time-limit", type=float, default=None, metavar="S",
                   help="a --command or --preset point still running after S seconds is "
                   "killed and the sweep stops there (default: 10 x --runtime + 60; 0: no "
                   "limit)")
    p.add_argument("--repeat", type=int, default=1, metavar="N",
                   help="runs per point, interleaved (default: 1)")
    p.add_argument("--out", default=None, metavar="DIR",
                   help="output directory (default: ./lockscope-YYYYmmdd-HHMMSS)")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--image-size", default=DEFAULT_IMAGE, metavar="SIZE",
                       help=f"size of each sparse loop image (default: {DEFAULT_IMAGE})")
    where.add_argument("--target", metavar="DIR", action="append",
                       help="run in a new subdirectory of this existing ext4/XFS directory "
                       "instead of a loop image (repeat for several filesystems)")
    p.add_argument("--image-dir", default=None, metavar="DIR",
                   help="where loop images are made (default: $LOCKSCOPE_IMAGE_DIR or /var/tmp)")
    p.add_argument("--keep-going", action="store_true",
                   help="when a point fails (its workload, the filesystem under it, the "
                   "recorder killed), say so in one line and run the later points; the "
                   "sweep still exits 1 and its results are marked partial (default: stop "
                   "at the first failed point)")
    p.add_argument("--no-trace", action="store_true",
                   help="run the workload only, without the recorder")
    p.add_argument("--no-report", action="store_true", help="skip the HTML report")
    _add_verify_arguments(p)
    p.add_argument("--max-overhead", type=float, default=0, metavar="PCT",
                   help="the recorder's BPF CPU budget in percent of the CPUs: above it, it "
                   "sheds stacks, then probe groups (default 0: never; a sweep's points are "
                   "measurements and the analysis needs every probe)")
    p.set_defaults(func=run)


def _add_command_arguments(p: argparse.ArgumentParser, source_group) -> None:
    """The external-command options (``--command`` joins the group that also holds
    --scenario and --job: one workload source); run.workload.options checks them."""
    source_group.add_argument(
        "--command", metavar="TEMPLATE", dest="command_template",
        help="run this shell command at each point instead of the built-in engine, in a "
        "fresh directory on the filesystem under test; fields: {threads}, {runtime} "
        "(whole seconds), {dir}; with --per-thread also {thread}, {part_blocks}, "
        "{part_offset} (--block-size units), {part_bytes}, {part_offset_bytes}")
    g = p.add_argument_group("external command (with --command)")
    g.add_argument("--prepare", metavar="TEMPLATE",
                   help="run this first at each point, untraced, in the same directory "
                   "(same fields as --command, except the per-thread ones)")
    g.add_argument("--throughput", choices=THROUGHPUT_TOOLS,
                   help="read throughput from the tool's report (fio: JSON on stdout, "
                   "sysbench and pgbench: text on stdout, dd: stderr); default: write "
                   "system calls per second counted by the trace")
    g.add_argument("--per-thread", action="store_true",
                   help="start the command once per thread (one process per writer)")
    g.add_argument("--span", metavar="SIZE",
                   help=f"the region --per-thread writers split (default: {DEFAULT_SPAN})")
    g.add_argument("--block-size", metavar="SIZE",
                   help=f"the unit of {{part_blocks}} and {{part_offset}} "
                   f"(default: {DEFAULT_BLOCK})")
    g.add_argument("--trace-comm", metavar="NAME",
                   help="trace the threads named NAME (a server the command talks to) "
                   "instead of the command's own processes")


def _add_preset_arguments(p: argparse.ArgumentParser, source_group) -> None:
    """--preset and --db-scale; run.workload.preset_sweep checks them."""
    names = sorted(PRESET_DESCRIPTIONS)
    source_group.add_argument(
        "--preset", choices=names,
        help="a database under its own benchmark client on each filesystem: "
        + "; ".join(f"{name}: {PRESET_DESCRIPTIONS[name]}" for name in names))
    p.add_argument("--db-scale", type=int, default=None, metavar="N",
                   help="with --preset, the size of the prepared data: pgbench's scale "
                   "factor, or N×100,000 sysbench rows (default: "
                   f"{DEFAULT_DB_SCALE})")


def _add_verify_arguments(p: argparse.ArgumentParser) -> None:
    """--verify and --remedy-command; run.verify_options checks them."""
    g = p.add_argument_group("verifying the diagnosis (--verify)")
    g.add_argument("--verify", action="store_true",
                   help="after the verdict, run the sweep again with each remedy that can be "
                   "applied to the workload mechanically (written layout, a file per thread, "
                   "aligned writes, batched fdatasync, O_DIRECT), at the lowest and highest "
                   "thread counts, and report before and after: verified, partly or not "
                   "verified (results.json verify; the reruns in OUT/verify/). --command: "
                   "give --remedy-command; --preset: no rule proposes a setting, nothing "
                   "reruns")
    g.add_argument("--remedy-command", metavar="TEMPLATE",
                   help="with --command and --verify: the remedied command, in the same "
                   "template language as --command (same fields and companions)")


def run(args) -> int:
    from .sweep_run import run_sweep

    return run_sweep(args, _sweep_again)


def _sweep_again(argv: list[str]) -> int:
    """``lockscope sweep argv`` in this process (a --verify rerun)."""
    parser = argparse.ArgumentParser(prog="lockscope")
    add_parser(parser.add_subparsers())
    return run(parser.parse_args(["sweep", *argv]))
