"""Followed system calls whose threads leave the CPU before the exit: the recorder keeps
a call's state on its CPU while the thread runs, and sched_switch hands it to the thread's
entry when the thread switches out, before another thread on that CPU can begin a call.

Many threads block in O_DSYNC writes and fsyncs on files of their own, all on one CPU
(every switch-out mid-call is a hand-off, and the next thread's call would take the slot
if one were missed), then moved between CPUs every millisecond (calls wake on another
CPU than they began on). Each file's counts must be exactly what the program did, each
durability call no longer than the program measured around it (a call mixed up with
another file's would break one or the other), and only the O_DSYNC writers' off-CPU
time marked as durability writes. Without the sched group every call keeps its state in
the thread's entry: the same must hold."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from record_common import dio_entry, record_gated_program

pytestmark = pytest.mark.kernel
PROGRAM = Path(__file__).resolve().parents[2] / "support" / "switching_calls.py"
THREADS, CALLS = 9, 60


def cpu_lists() -> list[str]:
    """One CPU; and two, taken in turn, where this host has them."""
    cpus = sorted(os.sched_getaffinity(0))
    return [str(cpus[0])] + ([f"{cpus[0]},{cpus[1]}"] if len(cpus) > 1 else [])


@pytest.mark.parametrize("cpus", cpu_lists())
@pytest.mark.parametrize("sched", ["on", "off"])
def test_calls_that_leave_the_cpu_stay_with_their_file(filesystems, tmp_path, cpus, sched):
    work = filesystems["ext4"].path / f"switching-{sched}-{cpus.replace(',', '-')}"
    work.mkdir(exist_ok=True)
    extra = ("--disable", "sched") if sched == "off" else ()
    said, doc, _ = record_gated_program(
        [sys.executable, str(PROGRAM), str(work), str(THREADS), str(CALLS), cpus],
        tmp_path / "r.json", recorder_args=extra, ready=True)
    threads = said["threads"]
    try:
        calls = {s["name"]: s["count"] for s in doc["syscalls"]}
        assert calls["pwrite64"] == sum(t["writes"] for t in threads)
        assert calls["fsync"] == sum(t["fsyncs"] for t in threads)
        assert doc["drops"]["calls_lost"] == 0
        for t in threads:
            e = dio_entry(doc, Path(t["path"]))
            what = (t["role"], t["path"])
            assert e["buffered_writes"]["count"] == t["writes"], what
            assert e["buffered_writes"]["bytes"] == t["bytes"], what
            timed = e["dsync_writes"] if t["role"] == "dsync" else e["fsync"]
            assert e["dsync_writes"]["count"] == (t["writes"] if t["role"] == "dsync" else 0), what
            assert e["fsync"]["count"] == t["fsyncs"], what
            if t["role"] != "buffered":
                # each call's kernel span lies inside the span the program measured
                assert 0 < timed["max_ns"] <= t["max_ns"], what
                assert 0 < timed["total_ns"] <= t["total_ns"], what
        if sched == "off":
            assert doc["counts"]["calls_handed_off"] == 0
            return
        # every blocked call was handed off at its switch-out
        assert doc["counts"]["calls_handed_off"] > 0
        dsync_tids = {t["tid"] for t in threads if t["role"] == "dsync"}
        marked = {r["tid"] for r in doc["offcpu"] if r.get("dsync")}
        assert marked and marked <= dsync_tids, (marked, dsync_tids)
    finally:
        for t in threads:
            os.unlink(t["path"])
