"""``lockscope experiments``: rerun the published ext4-vs-XFS experiments through the sweep
and rewrite docs/experiments.md with the published figures beside this kernel's."""

from __future__ import annotations

import datetime
import json
import os
import platform
import signal
import sys
from pathlib import Path

from ..errors import LockscopeError, UsageError
from ..run.outdir import check_dir, default_out_dir, new_out_dir

# Shown at the end of --help (command, what it does), as libbpf-tools do.
EXAMPLES = [
    ("lockscope experiments", "all five, ~15 min: docs/experiments.md"),
    ("lockscope experiments --only 1,4", "the others keep their last figures"),
    ("lockscope experiments --scale quick --doc /tmp/x.md", "seconds: does everything run?"),
]

DEFAULT_DOC = "docs/experiments.md"


def add_parser(sub) -> None:
    p = sub.add_parser(
        "experiments", help="rerun the published ext4-vs-XFS experiments and write the tables",
        description="Rerun the five reference experiments (fio, sysbench fileio, "
        "lockscope-load, dd) through lockscope sweep on fresh loop images, and write "
        "docs/experiments.md: published figures beside this kernel's, as ratios, with "
        "lockscope's verdict and whether each published claim holds here.")
    p.add_argument("--only", type=_numbers, default=None, metavar="N,...",
                   help="rerun only these experiments (1-5); the others keep their last "
                   "figures from the data file beside the document")
    p.add_argument("--out", default=None, metavar="DIR",
                   help="where the sweeps' results go (default: ./lockscope-experiments-"
                   "YYYYmmdd-HHMMSS)")
    p.add_argument("--doc", default=DEFAULT_DOC, metavar="FILE",
                   help=f"the document to (re)write (default: {DEFAULT_DOC}); a file there "
                   "that this command did not write is never overwritten")
    p.add_argument("--scale", choices=("full", "quick"), default="full",
                   help="full: the documented sizes (minutes); quick: tiny sizes (seconds), "
                   "for a check that everything runs")
    p.set_defaults(func=run)


def _numbers(text: str) -> list[int]:
    import argparse

    from ..experiments.catalog import EXPERIMENTS

    out = []
    for part in text.split(","):
        part = part.strip()
        if not part.isdigit() or int(part) not in EXPERIMENTS:
            raise argparse.ArgumentTypeError(
                f"'{part}' is not an experiment (use {', '.join(map(str, EXPERIMENTS))})")
        out.append(int(part))
    return sorted(set(out))


def run(args) -> int:
    from ..experiments.catalog import EXPERIMENTS, SCALES
    from ..experiments.page import MARKER, render
    from ..experiments.rerun import run_experiment

    doc = Path(args.doc)
    data_path = doc.with_suffix(".json")
    for path in (doc, data_path):
        if path.exists() and not _ours(path, MARKER):
            raise UsageError(f"--doc: {path} exists and was not written by lockscope "
                             "experiments; choose another --doc")
    if not doc.parent.is_dir():
        raise UsageError(f"--doc: no directory {doc.parent}")
    check_dir(doc.parent, "--doc")
    check_dir(args.out or default_out_dir("lockscope-experiments"), "--out", fresh=True)
    if os.geteuid() != 0:
        raise LockscopeError("not root: the experiments mount loop images and load BPF "
                             "(lockscope doctor has the detail)")
    out = new_out_dir(args.out, "lockscope-experiments")
    scale = SCALES[args.scale]
    kept = _load_data(data_path) if args.only else {}
    chosen = args.only or sorted(EXPERIMENTS)
    data: dict = {"marker": MARKER, "scale": scale.name, "experiments": dict(kept)}
    failed = []
    # SIGTERM stops the sweep under way as Ctrl-C does (it cleans up first)
    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        results = {n: run_experiment(EXPERIMENTS[n], scale, out) for n in chosen}
    finally:
        signal.signal(signal.SIGTERM, previous)
    for number, result in results.items():
        failed += [f"experiment {number} {e}" for e in result.errors]
        data["experiments"][str(number)] = _saved(result, EXPERIMENTS[number].scaled(scale))
    views = [_view(exp, data["experiments"].get(str(n)), exp.scaled(scale))
             for n, exp in sorted(EXPERIMENTS.items())]
    host = next((s["host"] for s in data["experiments"].values() if s.get("host")), None)
    text = render(views, host, scale.name, scale.repeat)
    (out / "experiments.md").write_text(text)
    (out / "experiments.json").write_text(json.dumps(data, indent=1) + "\n")
    doc.write_text(text)
    data_path.write_text(json.dumps(data, indent=1) + "\n")
    print(f"written: {doc} (sweeps in {out})")
    for line in failed:
        print(f"lockscope experiments: {line}", file=sys.stderr)
    return 1 if failed else 0


def _saved(result, scaled: str) -> dict:
    """An experiment's figures as kept in the data file beside the document."""
    m = result.measured
    return {"figures": [[*k, v] for k, v in m.mib_s.items()],
            "verdicts": [[*k, v] for k, v in m.verdicts.items()],
            "facts": [[*k, v] for k, v in m.facts.items()],
            "commands": result.commands, "errors": result.errors, "scaled": scaled,
            "host": _host(result.host)}


def _view(exp, saved: dict | None, scaled: str) -> dict:
    from ..experiments.definition import Measured
    from ..experiments.page import experiment_view

    if saved is None:
        return experiment_view(exp, Measured({}, {}), [], scaled, "not run yet")
    measured = Measured({(c, f, int(n)): v for c, f, n, v in saved["figures"]},
                        {(c, f): v for c, f, v in saved["verdicts"]},
                        {(c, f): v for c, f, v in saved["facts"]})
    return experiment_view(exp, measured, saved["commands"], saved["scaled"],
                           "; ".join(saved["errors"]) or None)


def _interrupt(signum, frame):
    raise KeyboardInterrupt


def _ours(path: Path, marker: str) -> bool:
    try:
        return marker in path.read_text(errors="replace")[:4096]
    except OSError:
        return False


def _load_data(path: Path) -> dict:
    try:
        return json.loads(path.read_text()).get("experiments") or {}
    except (OSError, ValueError):
        return {}


def _host(host: dict | None) -> dict | None:
    if not host:
        return None
    fss = host.get("filesystems") or {}
    backing = next((f.get("backing_device") for f in fss.values() if f.get("backing_device")),
                   "?")
    return {"kernel": host.get("kernel") or platform.release(),
            "cpus": host.get("cpus") or os.cpu_count(), "backing": backing,
            "date": datetime.date.today().isoformat()}
