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


def _busy_shares(limits: list) -> list[float]:
    """The share of the time a busy loop in each of limits got over 3 s (the kernel's own
    accounting of its CPU time, /proc/PID/stat)."""
    procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"], preexec_fn=h.join)
             for h in limits]
    try:
        ticks = os.sysconf("SC_CLK_TCK")

        def cpu_seconds(proc: subprocess.Popen) -> float:
            fields = open(f"/proc/{proc.pid}/stat").read().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / ticks
        start_cpu, start = [cpu_seconds(p) for p in procs], time.monotonic()
        time.sleep(3)
        took = time.monotonic() - start
        return [(cpu_seconds(p) - c) / took for p, c in zip(procs, start_cpu)]
    finally:
        for p in procs:
            p.kill()
            p.wait()


@pytest.mark.kernel
def test_a_cpu_share_holds_a_busy_process_to_it():
    """run-matrix --cpu-share's cgroup (tools/kernels/cpu_limit.py) holds what joins it to
    its share, and the quota says it throttled it."""
    from cpu_limit import CpuLimit

    require_kernel()
    held = CpuLimit(f"test-{os.getpid()}", 0.25)
    try:
        [share] = _busy_shares([held])
        # the quota is a ceiling: a loaded machine gives less, never more (one period's
        # worth of slack for the reading's edges)
        assert share <= 0.25 + 0.1, share
        assert held.throttled_seconds() > 0
    finally:
        held.remove()
    assert not held.path.exists()


@pytest.mark.kernel
def test_guests_together_are_held_to_the_machine_share():
    """Guests inside the run's cgroup share its quota: two busy loops each allowed 0.4 of
    a CPU, inside one allowed 0.4 in all, get 0.4 between them, not 0.8."""
    from cpu_limit import CpuLimit

    require_kernel()
    machine = CpuLimit(f"test-machine-{os.getpid()}", 0.4)
    guests = [CpuLimit(f"guest{i}", 0.4, machine) for i in range(2)]
    try:
        shares = _busy_shares(guests)
        assert sum(shares) <= 0.4 + 0.1, shares
        assert all(s <= 0.4 + 0.1 for s in shares), shares
        assert machine.throttled_seconds() > 0
    finally:
        for g in guests:
            g.remove()
        machine.remove()
    assert not machine.path.exists()
