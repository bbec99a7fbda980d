"""Rerunning an experiment: each of its sweeps through ``lockscope sweep`` (a child process
with its own cleanup), then the figures read back from each sweep's results.json."""

from __future__ import annotations

import json
import shlex
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from . import figures
from .definition import Experiment, Measured, Scale, Sweep


@dataclass
class ExperimentRun:
    measured: Measured
    commands: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    host: dict | None = None


def run_experiment(exp: Experiment, scale: Scale, out: Path, say=print) -> ExperimentRun:
    run = ExperimentRun(Measured({}, {}, {}))
    for sweep in exp.sweeps(scale):
        name = f"exp{exp.number}-{sweep.case}"
        args = _with_job(sweep, out / f"{name}.fio")
        run.commands.append(_shown(args, sweep, name))
        say(f"experiment {exp.number} ({sweep.case}): lockscope sweep on "
            f"{', '.join(sweep.fss)}, threads {','.join(map(str, sweep.threads))}")
        sdir = out / name
        log = out / f"{name}.log"
        with open(log, "w") as fh:
            rc = _sweep([sys.executable, "-m", "lockscope", "sweep", *args,
                         "--out", str(sdir)], fh)
        doc = _load(sdir / "results.json")
        if rc != 0 or doc is None:
            run.errors.append(f"{sweep.case}: lockscope sweep exited {rc}: {_last_line(log)}")
        if doc is not None:
            merge(run.measured, doc, sweep.case)
            run.host = run.host or doc.get("host")
    return run


def _sweep(argv: list[str], log) -> int:
    """Run one sweep to its end. Interrupted, it is told so (it may not have seen the
    signal) and waited for: it unmounts and detaches what it made before it exits."""
    proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL)
    try:
        rc = proc.wait()
    except KeyboardInterrupt:
        proc.send_signal(signal.SIGINT)
        proc.wait()
        raise
    if rc == 130:
        raise KeyboardInterrupt
    return rc


def merge(into: Measured, doc: dict, case: str) -> None:
    into.mib_s.update(figures.points(doc, case))
    into.verdicts.update(figures.verdicts(doc, case))
    into.facts.update(figures.facts(doc, case))


def _with_job(sweep: Sweep, path: Path) -> list[str]:
    """The sweep's arguments, with its engine job (if any) written to ``path``."""
    args = list(sweep.args)
    if sweep.job is not None:
        lines = [f"[{path.stem}]"] + [f"{k}={v}" for k, v in sweep.job.items()]
        path.write_text("\n".join(lines) + "\n")
        args += ["--job", str(path)]
    return args


def _shown(args: list[str], sweep: Sweep, name: str) -> str:
    """The command as the docs show it: the job file by name, with its contents."""
    shown = [f"{name}.fio" if a.endswith(f"{name}.fio") else a for a in args]
    text = shlex.join(["lockscope", "sweep", *shown])
    if sweep.job is not None:
        text = f"# {name}.fio: " + " ".join(f"{k}={v}" for k, v in sweep.job.items()) \
            + "\n" + text
    return text


def _load(path: Path) -> dict | None:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def _last_line(log: Path) -> str:
    try:
        lines = [ln for ln in log.read_text(errors="replace").splitlines() if ln.strip()]
    except OSError:
        return ""
    return lines[-1].strip() if lines else ""
