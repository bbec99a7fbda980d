"""lockscope attach from the outside: bad targets, a target that exits, a login that fails."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import LOCKSCOPE
from lockscope_cli import says_window_open
from patience import patience
from soak_harness import recorders_of

ROOT = Path(__file__).resolve().parents[3]


def lockscope(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return LOCKSCOPE.run(*args, timeout=timeout)


def dead_pid() -> int:
    p = subprocess.Popen(["true"])
    p.wait()
    return p.pid


@pytest.mark.parametrize("args, words", [
    (lambda: ["--pid", str(dead_pid())], "no such process"),
    (lambda: ["--pid", "12x"], "not a process id"),
    (lambda: ["--comm", "no-such-comm-q"], "no running thread is named"),
    (lambda: ["--cgroup", "/tmp"], "not a cgroup v2 directory"),
    (lambda: ["--cgroup", "/nonexistent/cg"], "not a directory"),
    (lambda: ["--unit", "no-such-unit-q"], "no cgroup for no-such-unit-q.service"),
    (lambda: ["--pid", "1", "--duration", "1e6"], "--duration must be in"),
    (lambda: ["--pid", "1", "--fs", "nosuchfs"], "unknown filesystem type 'nosuchfs'"),
    (lambda: ["--pid", "1", "--fs", "xfs,all"], "--fs: a comma list"),
    (lambda: ["--pid", "1", "--duty", "0"], "--duty must be a percentage"),
    (lambda: ["--pid", "1", "--duty", "101"], "--duty must be a percentage"),
])
def test_bad_targets_are_one_line_and_exit_2(tmp_path, args, words):
    out = tmp_path / "out"
    res = lockscope("attach", *args(), "--out", str(out))
    assert res.returncode == 2, res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and words in lines[0], res.stderr
    assert "Traceback" not in res.stderr and res.stdout == ""
    assert not out.exists()


def test_no_target_is_a_usage_error():
    res = lockscope("attach")
    assert res.returncode == 2 and "one of the arguments" in res.stderr


@pytest.mark.kernel
def test_target_exit_ends_the_attach_cleanly_and_a_bad_login_is_a_warning(tmp_path):
    # The target writes and syncs a file until the window is open (on a loaded host the
    # recorder takes seconds to load and attach), a second more, and exits; the attach
    # asked for 60 s.
    work = tmp_path / "w"
    work.mkdir()
    go = work / "go"
    script = (f"import os,time\nf=open('{work}/data','wb')\nn=0\n"
              "while n<10:\n f.write(b'x'*4096); f.flush(); os.fsync(f.fileno());"
              f" time.sleep(0.1)\n n+=os.path.exists('{go}')\n")
    target = subprocess.Popen([sys.executable, "-c", script])
    proc = None
    try:
        out = tmp_path / "out"
        t0 = time.monotonic()
        proc = LOCKSCOPE.start("attach", "--pid", str(target.pid), "--duration", "60",
                               "--mysql", str(tmp_path / "no.sock"), "--out", str(out),
                               "--no-report")
        said = []
        for line in proc.stderr:
            said.append(line)
            if says_window_open(line):
                go.touch()
                break
        _, rest = proc.communicate(timeout=patience(120))
        took = time.monotonic() - t0
    finally:
        for p in (target, proc):
            if p is not None and p.poll() is None:
                p.kill()
                p.wait()
    err = "".join(said) + rest
    assert proc.returncode == 0, err
    assert "warning: --mysql" in err and "cannot log in" in err
    assert "the target exited" in err
    assert took < 30
    doc = json.loads((out / "results.json").read_text())
    assert doc["kind"] == "attach" and doc["target"]["exited"] is True
    assert doc["attach"]["ended"] == "target exited"
    assert doc["db"]["samples"] == [] and doc["db"]["warning"]
    a = doc["analysis"]["attach"]
    # its fsyncs were waits of the durability class, and its file was seen written
    assert next(c for c in a["classes"] if c["class"] == "durability")["ns"] > 0
    assert any(f["path"] == str(work / "data") for f in a["files"])
    # nothing of the recorder is left behind
    assert not [p for p in out.iterdir() if p.name.startswith(".")]


@pytest.mark.kernel
def test_duty_is_passed_to_the_recorder_and_rates_are_per_observed_second(tmp_path):
    work = tmp_path / "w"
    work.mkdir()
    script = (f"import os,time\nf=open('{work}/data','wb')\nend=time.monotonic()+60\n"
              "while time.monotonic()<end:\n f.write(b'x'*4096); f.flush(); time.sleep(0.001)\n")
    target = subprocess.Popen([sys.executable, "-c", script])
    try:
        out = tmp_path / "out"
        # a budget that never lowers the duty: the one asked for is the one used
        res = lockscope("attach", "--pid", str(target.pid), "--duration", "3", "--duty", "50",
                        "--max-overhead", "100", "--out", str(out), "--no-report")
    finally:
        target.kill()
        target.wait()
    assert res.returncode == 0, res.stderr
    doc = json.loads((out / "results.json").read_text())
    trace = doc["window"]["trace"]
    assert doc["attach"]["duty_pct"] == 50
    assert "--duty" in trace["argv"] and trace["sampling"]["duty_pct"] == 50
    share = trace["interval"]["observed_ns"] / trace["interval"]["duration_ns"]
    assert 0.3 <= share <= 0.7
    a = doc["analysis"]["attach"]
    assert a["observed_s"] == pytest.approx(trace["interval"]["observed_ns"] / 1e9)
    assert a["sampling"] == f"observed {share:.0%} of the time (--duty)"
    assert a["sampling"] in res.stdout


@pytest.mark.kernel
def test_sigkill_of_lockscope_leaves_no_recorder_behind(tmp_path):
    target = subprocess.Popen(["sleep", "120"])
    proc = LOCKSCOPE.start("attach", "--pid", target.pid, "--duration", "120", "--out",
                           tmp_path / "out", stdout=None)
    try:
        for line in proc.stderr:
            if says_window_open(line):
                break
        recorders = recorders_of(proc.pid)
        assert len(recorders) == 1
        proc.kill()
        proc.wait()
        deadline = time.monotonic() + patience(15)
        while time.monotonic() < deadline and Path(f"/proc/{recorders[0]}").exists():
            time.sleep(0.1)
        stat = Path(f"/proc/{recorders[0]}/stat")
        # gone, or a zombie of the dead parent waiting for init to reap it
        assert not stat.exists() or stat.read_text().rsplit(")", 1)[1].split()[0] == "Z"
    finally:
        if proc.poll() is None:
            proc.kill()
        target.kill()
        target.wait()


@pytest.mark.kernel
def test_ctrl_c_keeps_a_partial_but_valid_window(tmp_path):
    import signal

    target = subprocess.Popen(["sleep", "120"])
    out = tmp_path / "out"
    # Ctrl-C signals the terminal's whole process group: lockscope and its recorder.
    proc = LOCKSCOPE.start("attach", "--pid", target.pid, "--duration", "120", "--out", out,
                           "--no-report", start_new_session=True)
    try:
        for line in proc.stderr:
            if says_window_open(line):
                break
        time.sleep(1.5)
        os.killpg(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=patience(60))
    finally:
        if proc.poll() is None:
            proc.kill()
        target.kill()
        target.wait()
    assert proc.returncode == 130, err
    assert "interrupted" in err and "Traceback" not in err
    doc = json.loads((out / "results.json").read_text())
    assert doc["partial"] is True and doc["attach"]["ended"] == "interrupted"
    window = doc["window"]["trace"]["interval"]["duration_ns"] / 1e9
    assert 1.0 < window < 60
    assert doc["analysis"]["attach"]["window_s"] == pytest.approx(window)
