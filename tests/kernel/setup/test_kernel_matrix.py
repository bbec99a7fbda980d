"""The kernel matrix's judge (tools/kernels/judge.py) on this machine's own outputs."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from conftest import LOCKSCOPE, ROOT

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
