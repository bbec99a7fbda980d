"""The kernel matrix's judge (tools/kernels/judge.py) on this machine's own outputs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from conftest import LOCKSCOPE, ROOT, require_kernel

sys.path.insert(0, str(ROOT / "tools" / "kernels"))


TRACEFS = "/sys/kernel/tracing/events"


@pytest.mark.kernel
def test_the_matrix_judge_agrees_with_doctor_here_and_catches_a_lie(tmp_path):
    """The matrix's doctor check, fed this machine's own listing and doctor JSON, passes;
    the same JSON with one group's line flipped does not."""
    from judge import _doctor_checks

    bins = ROOT / "build" / "bin"
    listing = json.loads(subprocess.run([str(bins / "lockscope-record"), "--list-features"],
                                        capture_output=True, text=True).stdout)["groups"]
    res = LOCKSCOPE.run("doctor", "--json")
    doctor = json.loads(res.stdout)
    systems = [s for s in os.listdir(TRACEFS) if os.path.isdir(f"{TRACEFS}/{s}")]
    events = {f"{s}:{e}" for s in systems for e in os.listdir(f"{TRACEFS}/{s}")
              if os.path.isdir(f"{TRACEFS}/{s}/{e}")}
    assert _doctor_checks(listing, doctor, res.returncode, events)["ok"]
    lied = json.loads(res.stdout)
    line = next(c for c in lied["checks"] if c["name"] == "lock")
    line["available"] = not line["available"]
    verdict = _doctor_checks(listing, lied, res.returncode, events)
    assert not verdict["ok"] and "lock" in verdict["detail"]


@pytest.mark.kernel
def test_a_cpu_share_holds_a_busy_process_to_it():
    """run-matrix --cpu-share's cgroup (tools/kernels/cpu_limit.py) holds what joins it to
    its share: a busy loop in it gets at most that share of the time (the kernel's own
    accounting of its CPU time, /proc/PID/stat), and the quota says it throttled it."""
    from cpu_limit import CpuLimit

    require_kernel()
    held = CpuLimit(f"test-{os.getpid()}", 0.25)
    try:
        proc = subprocess.Popen([sys.executable, "-c", "while True: pass"],
                                preexec_fn=held.join)
        try:
            ticks = os.sysconf("SC_CLK_TCK")
            def cpu_seconds() -> float:
                fields = open(f"/proc/{proc.pid}/stat").read().rsplit(")", 1)[1].split()
                return (int(fields[11]) + int(fields[12])) / ticks
            start_cpu, start = cpu_seconds(), time.monotonic()
            time.sleep(3)
            share = (cpu_seconds() - start_cpu) / (time.monotonic() - start)
        finally:
            proc.kill()
            proc.wait()
        # the quota is a ceiling: a loaded machine gives less, never more (one period's
        # worth of slack for the reading's edges)
        assert share <= 0.25 + 0.1, share
        assert held.throttled_seconds() > 0
    finally:
        held.remove()
    assert not held.path.exists()
