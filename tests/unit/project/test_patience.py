"""tests/support/patience.py: LOCKSCOPE_TIME_SCALE read once, as a fresh Python imports it;
unset is 1, a factor scales every wait, and a value that is no factor >= 1 is one line
naming the variable and a non-zero exit, never a quiet fallback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
SHOW = "from patience import SCALE, patience; print(SCALE, patience(10))"


def fresh_import(scale: str | None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "LOCKSCOPE_TIME_SCALE"}
    env["PYTHONPATH"] = str(ROOT / "tests" / "support")
    if scale is not None:
        env["LOCKSCOPE_TIME_SCALE"] = scale
    return subprocess.run([sys.executable, "-c", SHOW], capture_output=True, text=True,
                          env=env, cwd=ROOT, timeout=60)


@pytest.mark.parametrize("scale", [None, ""])
def test_unset_or_empty_is_one(scale):
    res = fresh_import(scale)
    assert res.returncode == 0, res.stderr
    assert res.stdout.split() == ["1.0", "10.0"]


def test_a_factor_scales_the_wait():
    res = fresh_import("2.5")
    assert res.returncode == 0, res.stderr
    assert res.stdout.split() == ["2.5", "25.0"]


@pytest.mark.parametrize("scale", ["abc", "0.5", "nan", "inf"])
def test_no_factor_of_at_least_one_is_one_line_and_a_failure(scale):
    res = fresh_import(scale)
    assert res.returncode != 0 and res.stdout == ""
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and "LOCKSCOPE_TIME_SCALE" in lines[0] and scale in lines[0], \
        res.stderr
