"""``lockscope experiments`` once its options are parsed (cli.experiments_cmd): rerun the
published ext4-vs-XFS experiments through the sweep and rewrite docs/experiments.md with
the published figures beside this kernel's."""

from __future__ import annotations

import datetime
import json
import os
import platform
import signal
import sys
from pathlib import Path

from ..errors import LockscopeError, UsageError
from ..experiments.catalog import EXPERIMENTS, SCALES
from ..experiments.definition import Measured
from ..experiments.page import MARKER, experiment_view, render
from ..experiments.rerun import run_experiment
from ..run.outdir import check_dir, default_out_dir, new_out_dir


def run_experiments(args) -> int:
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
