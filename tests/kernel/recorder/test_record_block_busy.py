"""Device busy time (the recorder's `block[]` busy_ns, busy_share, inflight_mean) against
the kernel's own count of it: io_ticks, the tenth field of /sys/block/DEV/stat, the
milliseconds the device had I/O in flight (block/blk-core.c update_io_ticks())."""

from __future__ import annotations

import math
import os
import signal
import time
from pathlib import Path

import pytest

from conftest import require_tool
from record_common import prepare_file, recorder, start_fio, stop, wait_jobs_writing

pytestmark = pytest.mark.kernel

WINDOW_S = 8.0
DRAIN_S = 0.5       # stopped writers: what they had in flight completes meanwhile


def io_ticks_ms(device: str) -> int:
    fields = Path(f"/sys/block/{os.path.basename(device)}/stat").read_text().split()
    return int(fields[9])


def jiffy_ms(doc: dict) -> float:
    """io_ticks grows by whole jiffies; the recorder reads CONFIG_HZ (jbd2.hz). Without it,
    the coarsest HZ the kernel offers (100)."""
    hz = (doc.get("jbd2") or {}).get("hz") or 100
    return 1000.0 / hz


# alone: the drains must outlast the requests in flight, which other tests' I/O on the
# host's disk under the loop device can hold for longer (once, beside a matrix run,
# io_ticks counted the device busy through both drains: 9.72 s against the window's
# 7.65 s)
@pytest.mark.alone
def test_busy_share_agrees_with_io_ticks(loopfs_factory, tmp_path):
    """fio's 4 direct writers on a loop XFS, stopped before the window opens and after it
    closes, so that the device is idle at both ends and the two routes see the same
    requests. io_ticks adds, for each busy period, the jiffies it crossed: a period of
    L ms adds L/J on average, with a variance of at most L/J jiffies² (J ms a jiffy:
    the crossings of a period shorter than a jiffy are 0 or 1, p = L/J; longer, the
    rounding of L/J, variance <= 1/4). Summed, the standard deviation is at most
    sqrt(J * busy) ms; the bound is three of those, plus a jiffy at each end."""
    fio = require_tool("fio")
    fs = loopfs_factory("xfs", 1 << 30)
    path = fs.path / "f"
    prepare_file(path, "overwrite", 128)
    writers = start_fio(fio, path, "overwrite", 128)
    try:
        wait_jobs_writing(writers.pid)
        os.kill(writers.pid, signal.SIGSTOP)
        # no budget: under load it would lower the duty, and the busy time is of the
        # observed part only
        with recorder(["--pid", str(writers.pid), "--max-overhead", "0"],
                      tmp_path / "r.json") as (_, start, finish):
            time.sleep(DRAIN_S)
            ticks0 = io_ticks_ms(fs.device)
            start()
            os.kill(writers.pid, signal.SIGCONT)
            time.sleep(WINDOW_S)
            os.kill(writers.pid, signal.SIGSTOP)
            time.sleep(DRAIN_S)
            ticks1 = io_ticks_ms(fs.device)
            doc = finish()
    finally:
        stop(writers)
    rdev = os.stat(fs.device).st_rdev
    b = next(e for e in doc["block"] if e["dev"] == f"{os.major(rdev)}:{os.minor(rdev)}")
    assert b["busy_unmeasured"] is None, b["busy_unmeasured"]
    assert b["count"] > 100, b
    observed = doc["interval"]["observed_ns"]
    assert b["observed_ns"] == observed
    assert b["busy_share"] == pytest.approx(b["busy_ns"] / observed)
    assert b["inflight_mean"] == pytest.approx(b["service_ns_total"] / observed)
    assert b["service_ns_total"] == b["total_ns"]
    busy_ms = b["busy_ns"] / 1e6
    ticks = ticks1 - ticks0
    j = jiffy_ms(doc)
    tolerance = 3 * math.sqrt(j * max(busy_ms, ticks)) + 2 * j
    assert abs(busy_ms - ticks) <= tolerance, (busy_ms, ticks, tolerance, b)
    # at least one request in flight whenever the device is busy (Little's law), less
    # the requests still in flight at the end, which the service sum leaves out
    assert b["inflight_mean"] >= b["busy_share"] * 0.95, b
