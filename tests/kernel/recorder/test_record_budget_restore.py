"""What --max-overhead shed comes back once the load eases (lockscope-record
--restore-after-ms, docs/recorder-json.md "overhead"): the last step shed first, one at a
time, then the duty rises. The target writes to /dev/null as fast as it can (system
calls the syscalls group follows), then sleeps; the budget is set from what the same
recorder costs on each phase of it, measured first on this host."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from lockscope.binaries import recorder_facts

from patience import patience
from record_common import record_binary

pytestmark = pytest.mark.kernel

# busy for BUSY_S seconds from its start, then quiet until it is killed
WRITE_THEN_SLEEP = ("import os, sys, time\n"
                    "fd = os.open('/dev/null', os.O_WRONLY)\n"
                    "end = time.monotonic() + float(sys.argv[1])\n"
                    "while time.monotonic() < end:\n"
                    "    os.write(fd, b'x')\n"
                    "time.sleep(600)\n")
BUSY_S = 6.0
FOR_GOOD = ("holders", "releasers")


def record(pid: int, out: Path, *args: str) -> dict:
    res = subprocess.run([record_binary(), "--pid", str(pid), "--out", str(out), *args],
                         capture_output=True, text=True, timeout=patience(120))
    assert res.returncode == 0, res.stderr
    return json.loads(out.read_text())


def target(busy_s: float) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", WRITE_THEN_SLEEP, str(busy_s)])


def full_time_share(busy_s: float, out: Path) -> float:
    """The recorder's BPF share of the CPUs over 2 s, every probe on, on a target busy
    for busy_s seconds from its start."""
    t = target(busy_s)
    try:
        return float(record(t.pid, out, "--duration", "2")["overhead"]["cpu_share"])
    finally:
        t.kill()
        t.wait()


@pytest.mark.alone  # the quiet phase's cost is the host's: other tests' events add to it
def test_what_the_budget_shed_comes_back_when_the_load_eases(tmp_path):
    # what the recorder costs, every probe on, while the target writes and while it sleeps
    busy = full_time_share(60, tmp_path / "busy.json")
    quiet = full_time_share(0, tmp_path / "quiet.json")
    # over budget at the duty's floor while busy, so that more than the duty is shed;
    # a step comes back under half the budget, judged at that floor while quiet: with a
    # margin of 2, under a quarter
    # the share is judged at the duty in force, which the budget lowers to its floor
    floor = recorder_facts()["duty_floor_pct"] / 100
    budget = busy * floor * 0.6
    if quiet * floor >= budget / 4:
        pytest.skip(f"this host's events cost the recorder {quiet:.3%} of the CPUs with the "
                    f"target asleep, against {busy:.3%} while it writes: too close to tell")
    t = target(BUSY_S)
    try:
        doc = record(t.pid, tmp_path / "rec.json", "--duration", "24",
                     "--max-overhead", f"{100 * budget:.6f}", "--restore-after-ms", "2000",
                     "--max-pause-ms", "1000")
    finally:
        t.kill()
        t.wait()
    shed = doc["overhead"]["shed"]
    steps = [(s["kind"], s["what"]) for s in shed]
    start = doc["interval"]["start_mono_ns"]
    busy_until = start + BUSY_S * 1e9
    # the holders' timers are detached for good, and the releasers go with them
    taken = [(s["kind"], s["what"]) for s in shed
             if s["kind"] in ("stacks", "group") and s["t_ns"] <= busy_until + 1e9
             and s["what"] not in FOR_GOOD]
    back = [(s["what"], s["t_ns"]) for s in shed if s["kind"] == "restore"]
    assert taken, steps
    # once quiet, everything taken comes back, the last taken first, 2 s apart at least
    assert [w for w, _ in back][:len(taken)] == [w for _, w in reversed(taken)], steps
    assert all(t0 >= busy_until for _, t0 in back), steps
    assert all(b - a >= 2e9 for (_, a), (_, b) in zip(back, back[1:])), steps
    assert not [g for g in doc["overhead"]["per_group"]
                if g["shed"] and g["name"] not in FOR_GOOD], steps
    # then the duty rises again
    last_back = back[len(taken) - 1][1]
    raised = [s for s in shed if s["kind"] == "duty" and s["t_ns"] > last_back]
    assert raised and doc["sampling"]["duty_pct"] > 10, steps
