"""Running `lockscope sweep` in tests, and checking it left nothing behind."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

from conftest import LOCKSCOPE
from patience import patience

ROOT = Path(__file__).resolve().parents[2]
RUNTIME = "3"


def lockscope(*args, **kw) -> subprocess.CompletedProcess:
    return LOCKSCOPE.run(*args, **kw)


def assert_nothing_left(doc: dict) -> None:
    """The images, loop devices and mounts this sweep made are all gone.

    (Checked per object: other tests may hold loop devices at the same time.)
    """
    mounts = {line.split()[1] for line in open("/proc/mounts")}
    for label, fs in doc["host"]["filesystems"].items():
        if not fs.get("made_by_lockscope"):
            continue
        assert fs["mountpoint"] not in mounts, f"{label} still mounted"
        assert not os.path.exists(fs["backing"]), f"{label} image left behind"
        attached = subprocess.run(["losetup", "-j", fs["backing"]], capture_output=True,
                                  text=True).stdout
        assert not attached.strip(), f"{label} loop device left attached: {attached}"


def interrupt_after_first_point(out: Path, *args: str) -> dict:
    """`lockscope sweep ARGS --out OUT --no-report`, interrupted (SIGINT) once a point is
    on disk; it must exit 130. Its results.json."""
    proc = LOCKSCOPE.start("sweep", *args, "--out", out, "--no-report")
    deadline = time.monotonic() + patience(120)
    while time.monotonic() < deadline and proc.poll() is None:
        f = out / "results.json"
        if f.exists() and json.loads(f.read_text())["runs"]:
            break
        time.sleep(0.3)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=patience(180))
    assert proc.returncode == 130, err
    return json.loads((out / "results.json").read_text())
