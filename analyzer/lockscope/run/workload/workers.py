"""Which traced threads of an external command did its work.

The engine names its I/O threads; a command's tree also holds threads that only wait
for the workers (the shell in wait4, fio's main process sleeping between status
updates and its helper thread in pselect6, a driver in pthread_join). Counted as
thread time, they would dilute every share (at one fio job, four of six threads idle).
A worker is a thread whose traced time is mostly not waiting for work, as the attach
analysis classes waits (analysis.waitclass)."""

from __future__ import annotations

from collections import defaultdict

from ...analysis.observed import observed_ns
from ...analysis.waitclass import classify, idle_threads

# A thread is a worker when less than this share of its traced time waits for work.
IDLE_SHARE_MAX = 0.5
# A futex wait cannot say lock from waiting for work without user symbols; a thread on
# a CPU for less than this share of the window (a driver's main thread in pthread_join
# after starting the workers) is taken to wait for work in it.
FUTEX_IDLE_BUSY_SHARE = 0.05
# Threads traced for less than this share of the window (short-lived helpers) are left
# out: too little of the window to count. A tenth, not less: fio's main process can run
# a setup thread for 150 ms of a 2.3 s point, on CPU throughout, then exit.
TRACED_MIN_SHARE = 0.1
# Time in the runqueue is left out of both tests: it is the scheduler's doing, not the
# thread's, and on a busy host a helper that ran for 0.1 ms can wait 100 ms there
# (fio's short-lived thread beside its jobs) and would pass for a worker.


def worker_threads(trace: dict | None) -> list[dict]:
    """``[{tid, pid, comm}]`` of the worker threads; empty when the trace cannot tell
    (no off-CPU records): then every traced thread counts."""
    if not trace or not trace.get("offcpu"):
        return []
    threads = trace.get("threads") or []
    window = observed_ns(trace)
    idle_all_window = idle_threads(threads, window, FUTEX_IDLE_BUSY_SHARE)
    waiting: dict[int, float] = defaultdict(float)
    for rec in trace["offcpu"]:
        if classify(rec, None, idle_all_window).cls == "idle":
            waiting[rec.get("tid")] += float(rec.get("total_ns") or 0)
    out = []
    for t in threads:
        traced = sum(float(t.get(k) or 0) for k in ("oncpu_ns", "offcpu_ns"))
        if traced > TRACED_MIN_SHARE * window and \
                waiting[t.get("tid")] < IDLE_SHARE_MAX * traced:
            out.append({"tid": t.get("tid"), "pid": t.get("pid"), "comm": t.get("comm")})
    return out
