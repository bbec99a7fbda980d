"""Database servers the package starts: the process ledger, and what a killed
lockscope leaves for the next run to stop (real MariaDB and PostgreSQL on loop images)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from lockscope.run import loopfs, procledger

from conftest import require_tool
from patience import patience

ROOT = Path(__file__).resolve().parents[3]
ENV = dict(os.environ, PYTHONPATH=str(ROOT / "analyzer"))


@pytest.fixture
def ledger(tmp_path, monkeypatch):
    monkeypatch.setattr(procledger, "LEDGER_DIR", tmp_path / "ledger")
    return tmp_path / "ledger"


def _dead_pid() -> int:
    p = subprocess.Popen(["true"])
    p.wait()
    return p.pid


def test_stale_entry_stops_its_process(ledger):
    proc = subprocess.Popen(["sleep", "60"])
    # its parent (this process) reaps it as soon as it ends, as init reaps a daemon:
    # cleanup_stale() returns once the stopped process is gone from the process table
    reaper = threading.Thread(target=proc.wait, daemon=True)
    reaper.start()
    try:
        entry = procledger.manage("sleeper", signal.SIGTERM)
        entry.started(proc.pid)
        entry.owner_pid = _dead_pid()  # as if lockscope had been SIGKILLed
        entry.save()
        assert procledger.cleanup_stale() == [entry.name]
        reaper.join(patience(10))
        assert proc.returncode == -signal.SIGTERM
        assert not list(ledger.glob("*.json"))
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_live_owner_and_reused_pid_are_left_alone(ledger):
    proc = subprocess.Popen(["sleep", "60"])
    try:
        mine = procledger.manage("mine")  # owner alive (this process)
        mine.started(proc.pid)
        assert procledger.cleanup_stale() == []
        other = procledger.manage("reused")
        other.started(proc.pid)
        other.pid_start += 1  # the pid now names a process started at another time
        other.owner_pid = _dead_pid()
        other.save()
        assert procledger.cleanup_stale() == [other.name]
        assert proc.poll() is None, "a process that is not the one recorded was signalled"
        mine._path().unlink()
    finally:
        proc.kill()
        proc.wait()


# A parent that reaps its child only a while after the child ended: the child stays a
# zombie (still listed by ps and pgrep) that long, as a daemon's processes do until
# init reaps them.
LATE_REAPER = textwrap.dedent("""
    import os, sys, time
    child = os.fork()
    if child == 0:
        os.execvp("sleep", ["sleep", "60"])
    print(child, flush=True)
    stat = f"/proc/{child}/stat"
    while open(stat).read().rsplit(")", 1)[1].split()[0] != "Z":
        time.sleep(0.01)
    time.sleep(1.5)
    os.waitpid(child, 0)
""")


def test_stop_returns_once_the_processes_are_reaped_not_only_ended(ledger):
    parent = subprocess.Popen([sys.executable, "-c", LATE_REAPER], stdout=subprocess.PIPE,
                              text=True)
    try:
        assert parent.stdout is not None
        child = int(parent.stdout.readline())
        entry = procledger.manage("late-reaped", signal.SIGTERM)
        entry.started(child)
        entry.stop(grace=patience(5))
        assert procledger.start_time(child, zombie=True) is None, "stop() returned while " \
            "the stopped process was still in the process table (a zombie)"
        assert parent.wait(patience(10)) == 0
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()


def test_stop_reaps_a_server_that_is_the_callers_own_child(ledger):
    """A server started as this process's child (MariaDB's) has nobody else to reap it:
    stop(reap=...) reaps it, and returns with it gone, not after REAP_TIMEOUT_S with
    a zombie left."""
    proc = subprocess.Popen(["sleep", "60"])
    try:
        entry = procledger.manage("own-child", signal.SIGTERM)
        entry.started(proc.pid)
        entry.stop(grace=patience(5), reap=proc.poll)
        assert proc.returncode == -signal.SIGTERM
        assert procledger.start_time(proc.pid, zombie=True) is None
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_private_dirs_go_with_the_entry(ledger, tmp_path):
    d = tmp_path / "sockets"
    d.mkdir()
    entry = procledger.manage("dirs")
    entry.dirs.append(str(d))
    entry.save()
    entry.stop(grace=0)
    assert not d.exists()
    entry.stop(grace=0)  # twice is harmless


CHILD = textwrap.dedent("""
    import json, sys, time
    from lockscope.run import dbserver
    from lockscope.run.loopfs import make_loopfs
    fs = make_loopfs(sys.argv[1], size_bytes=1 << 30)
    db = dbserver.SERVERS[sys.argv[2]](fs.path / "db", made_above=fs.path.parent)
    db.start()
    s = db.server()
    print(json.dumps({"pid": s.pid, "cgroup": s.cgroup, "mnt": fs.mountpoint,
                      "image": fs.image, "socket": s.socket}), flush=True)
    time.sleep(600)
""")


@pytest.mark.kernel
@pytest.mark.parametrize("fstype,kind", [("ext4", "mariadb"), ("xfs", "postgres")])
def test_server_of_a_killed_run_is_stopped_by_the_next(fstype, kind):
    require_tool("mariadb-install-db" if kind == "mariadb" else "runuser")
    child = subprocess.Popen([sys.executable, "-c", CHILD, fstype, kind], env=ENV,
                             stdout=subprocess.PIPE, text=True, start_new_session=True)
    try:
        facts = json.loads(child.stdout.readline() or "{}")
    finally:
        child.kill()  # SIGKILL: no cleanup of its own runs
        child.wait()
    assert facts, "the server did not start"
    assert procledger.start_time(facts["pid"]) is not None, "the server died with its owner"
    loopfs.cleanup_stale()
    assert procledger.start_time(facts["pid"]) is None
    mounts = {line.split()[1] for line in open("/proc/mounts")}
    assert facts["mnt"] not in mounts and not os.path.exists(facts["image"])
    assert not facts["cgroup"] or not os.path.exists(facts["cgroup"])
    if kind == "postgres":
        assert not os.path.exists(facts["socket"])  # its private socket directory
