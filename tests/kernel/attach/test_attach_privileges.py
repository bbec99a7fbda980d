"""Attach as a user that is not root, holding exactly the capabilities lockscope
documents (lockscope.capabilities, the service unit's AmbientCapabilities), given by
tests/support/run_with_caps.py: it records, with symbolized kernel stacks; with a
required one removed it refuses in one line naming it; with an optional one removed it
records and says what is lost, naming it. The continuous attach's exporter process holds
none of them."""

from __future__ import annotations

import json
import os
import shutil
import signal
import site
import subprocess
import sys
import tempfile
import urllib.request
import uuid
from pathlib import Path

import pytest

from lockscope.capabilities import CAPABILITIES, memlock_charged

from conftest import ROOT, require_kernel
from continuous_attach import free_port
from patience import patience
from prometheus_server import wait_for

pytestmark = pytest.mark.kernel
USER = "nobody"
RUN_WITH_CAPS = Path(__file__).resolve().parents[2] / "support" / "run_with_caps.py"


def _bounding() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("CapBnd:"):
            return int(line.split()[1], 16)
    return 0


# the documented set this host can grant at all (a container may bound it)
GRANTABLE = [c for c in CAPABILITIES if _bounding() >> c.number & 1]


@pytest.fixture(scope="module")
def home():
    """The package and its binaries where USER can read them (pytest's own temporary
    directories are root's alone), and a directory USER may write its results to."""
    require_kernel()
    d = Path(tempfile.mkdtemp(prefix="lockscope-nonroot-"))
    try:
        yield _fill(d)
    finally:
        shutil.rmtree(d)


def _fill(d: Path) -> Path:
    d.chmod(0o755)
    (d / "out").mkdir(mode=0o777)
    (d / "out").chmod(0o1777)
    if os.environ.get("LOCKSCOPE_COMMAND"):     # an installed release: nothing to copy
        return d
    shutil.copytree(ROOT / "analyzer" / "lockscope", d / "lockscope",
                    ignore=shutil.ignore_patterns("__pycache__"))
    (d / "bin").mkdir()
    for name in ("lockscope-record", "lockscope-features"):
        shutil.copy(ROOT / "build" / "bin" / name, d / "bin")
    for p in d.rglob("*"):
        p.chmod(p.stat().st_mode | 0o755 if p.is_dir() else p.stat().st_mode | 0o444)
    return d


def _as_service_user(caps: list[str]) -> list[str]:
    """USER holding exactly these capabilities (by number: run_with_caps.py), as the
    service's User= and AmbientCapabilities= give them."""
    numbers = ",".join(str(c.number) for c in CAPABILITIES if c.name in caps)
    return [sys.executable, str(RUN_WITH_CAPS), USER, numbers, "--"]


def _python(home: Path) -> tuple[list[str], dict[str, str]]:
    """This interpreter if USER may run it, else the system's (same minor version) on
    this one's site-packages."""
    env = dict(os.environ, LOCKSCOPE_BIN_DIR=str(home / "bin"),
               PYTHONPATH=os.pathsep.join([str(home), *site.getsitepackages()]))
    if os.environ.get("LOCKSCOPE_COMMAND"):      # an installed release (the host matrix)
        return [os.environ["LOCKSCOPE_COMMAND"]], dict(os.environ)
    for python in (sys.executable, f"/usr/bin/python3.{sys.version_info.minor}"):
        probe = subprocess.run([*_as_service_user([]), python, "-c", "import numpy, bcrypt"],
                               env=env, capture_output=True, cwd="/")
        if probe.returncode == 0:
            return [python, "-m", "lockscope"], env
    pytest.skip(f"no Python that user {USER} may run with this one's packages")


def _attach(home: Path, caps: list[str], target: int, out: Path):
    argv, env = _python(home)
    return subprocess.run([*_as_service_user(caps), *argv, "attach", "--pid", str(target),
                           "--duration", "2", "--no-report", "--out", str(out)],
                          env=env, capture_output=True, text=True, timeout=patience(180), cwd="/")


def _kernel_frames(results: Path) -> list[str]:
    trace = json.loads(results.read_text())["window"]["trace"]
    return [f for w in trace.get("offcpu", []) for f in w.get("kstack", [])]


@pytest.fixture
def target():
    # a root process that blocks in the kernel over and over: off-CPU waits with stacks
    proc = subprocess.Popen(["sh", "-c", "while :; do sleep 0.01; done"])
    yield proc.pid
    proc.kill()
    proc.wait()


def test_attach_with_the_documented_capabilities(home, target):
    out = home / "out" / uuid.uuid4().hex
    res = _attach(home, [c.name for c in GRANTABLE], target, out)
    assert res.returncode == 0, res.stderr
    frames = _kernel_frames(out / "results.json")
    assert frames and not any(f == "[unknown]" for f in frames), frames[:20]
    lost = [c.name for c in GRANTABLE if f"without {c.name}" in res.stderr]
    assert lost == [], res.stderr


@pytest.mark.parametrize("cap", [c for c in CAPABILITIES], ids=lambda c: c.name)
def test_attach_without_one_capability_names_it(home, target, cap):
    if cap not in GRANTABLE:
        pytest.skip(f"{cap.name} is outside this host's bounding set")
    if cap.name == "CAP_SYS_RESOURCE" and not memlock_charged():
        pytest.skip("this kernel does not charge BPF memory to RLIMIT_MEMLOCK")
    out = home / "out" / uuid.uuid4().hex
    res = _attach(home, [c.name for c in GRANTABLE if c is not cap], target, out)
    lines = res.stderr.strip().splitlines()
    if cap.name == "CAP_SYS_RESOURCE" and res.returncode != 0:
        # a kernel that charges the maps to RLIMIT_MEMLOCK: without it they may not fit,
        # and then the one line must say so
        assert len(lines) == 1 and cap.name in lines[0], res.stderr
    elif cap.required:
        assert res.returncode != 0
        assert len(lines) == 1 and cap.name in lines[0] and "Traceback" not in res.stderr
        assert not out.exists() or not (out / "results.json").exists()
    elif cap.name == "CAP_SYS_ADMIN" and res.returncode != 0:
        # a kernel that does not load the object without it (6.1, measured): the error
        # line names it
        assert cap.name in lines[-1] and "Traceback" not in res.stderr, res.stderr
        return
    else:
        assert res.returncode == 0, res.stderr
        assert f"without {cap.name}" in res.stderr, res.stderr
        doc = json.loads((out / "results.json").read_text())
        assert any(cap.name in line for line in doc["attach"]["privileges_lost"])
    if cap.name == "CAP_SYSLOG" and int(Path("/proc/sys/kernel/perf_event_paranoid")
                                        .read_text()) > 1:
        # what is lost is lost, and said: kernel frames are [unknown], not guessed
        assert set(_kernel_frames(out / "results.json")) <= {"[unknown]"}


def test_continuous_attach_as_a_service_user(home, target):
    argv, env = _python(home)
    port = free_port()
    proc = subprocess.Popen([*_as_service_user([c.name for c in GRANTABLE]), *argv, "attach",
                             "--continuous", "--pid", str(target), "--listen",
                             f"127.0.0.1:{port}"], env=env, cwd="/", text=True,
                            stderr=subprocess.PIPE)
    try:
        wait_for("the target's series served", lambda: "lockscope_target_up" in
                 urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics",
                                        timeout=patience(5)).read().decode(), timeout=60)
        children = Path(f"/proc/{proc.pid}/task/{proc.pid}/children").read_text().split()
        exporter = [c for c in children
                    if "exporter_process" in Path(f"/proc/{c}/cmdline").read_text()]
        assert exporter, children
        status = dict(line.split(":", 1) for line in
                      Path(f"/proc/{exporter[0]}/status").read_text().splitlines())
        for caps in ("CapInh", "CapPrm", "CapEff", "CapAmb"):
            assert int(status[caps], 16) == 0, status
        assert "0" not in status["Uid"].split()
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            _, err = proc.communicate(timeout=patience(60))
        except subprocess.TimeoutExpired:
            proc.kill()
            _, err = proc.communicate()
    assert proc.returncode == 0, err
