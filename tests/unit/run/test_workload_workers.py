"""Worker threads of a command, from real traces: fio with two jobs, run under a
shell gate (tests/data/workload/fio-2jobs-trace-threads.json: the trace's threads,
off-CPU records and window, as lockscope-record wrote them), and the same on a busy
host (fio-2jobs-busy-host-trace-threads.json: load average ~9, where a helper thread
of fio's main process ran 0.1 ms and waited 121 ms in the runqueue)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lockscope.analysis.runs import trace_breakdown
from lockscope.run.workload.workers import worker_threads

DATA = Path(__file__).resolve().parents[2] / "data" / "workload"
TRACE = json.loads((DATA / "fio-2jobs-trace-threads.json").read_text())
BUSY_HOST = json.loads((DATA / "fio-2jobs-busy-host-trace-threads.json").read_text())


def waits_by_tid(trace: dict, syscall_word: str) -> set[int]:
    """Threads whose off-CPU stacks show ``syscall_word`` (the test's own route)."""
    return {rec["tid"] for rec in trace["offcpu"]
            if any(syscall_word in frame for frame in rec.get("kstack") or [])}


@pytest.mark.parametrize("trace", [TRACE, BUSY_HOST], ids=["quiet", "busy-host"])
def test_the_writers_are_the_workers(trace):
    workers = {w["tid"] for w in worker_threads(trace)}
    writers = waits_by_tid(trace, "pwrite64")
    # the two job processes, each writing; nothing that only waited
    assert len({w["pid"] for w in worker_threads(trace)}) == 2
    assert workers and workers <= writers
    waiting = (waits_by_tid(trace, "wait4") | waits_by_tid(trace, "clock_nanosleep")
               | waits_by_tid(trace, "pselect6"))
    assert not workers & (waiting - writers)


def test_shares_count_only_the_workers():
    tids = {w["tid"] for w in worker_threads(TRACE)}
    window = TRACE["interval"]["duration_ns"]
    everyone = trace_breakdown(TRACE, 2, window)
    workers = trace_breakdown(TRACE, 2, window, tids)
    assert workers["thread_time_ns"] < everyone["thread_time_ns"]
    # the waiting threads' time was "other off-CPU" time
    assert workers["time_share"]["other_offcpu"] < everyone["time_share"]["other_offcpu"]
    assert workers["time_share"]["block_io"] > everyone["time_share"]["block_io"]


def test_no_off_cpu_records_no_choice():
    assert worker_threads({**TRACE, "offcpu": []}) == []
    assert worker_threads(None) == []
