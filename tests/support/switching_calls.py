"""Threads that block in system calls on files of their own while sharing CPUs, for
test_record_switching.py: a followed call whose thread leaves its CPU before the exit
must still be counted, on its own file, with its own duration.

Usage: switching_calls.py DIRECTORY THREADS CALLS CPUS. Each thread has one file and
one role (by its index, in turn): ``dsync`` (pwrite on a file opened O_DSYNC: a
durability write, timed per file), ``fsync`` (a write, then fsync), ``buffered`` (plain
pwrite). It prints "ready", waits for a line on stdin, runs, prints one JSON line of
what each thread did (its tid, role, file, calls, bytes, and the longest and summed
time it measured around each timed call) and exits.

CPUS is a comma list of CPU numbers: every thread is pinned to the first; with two
or more, a shuffler thread moves every worker to the next CPU of the list every
millisecond, so that calls blocked on one CPU wake on another.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time

ROLES = ("dsync", "fsync", "buffered")


def worker(i: int, directory: str, calls: int, cpu: int, go: threading.Event,
           out: list[dict | None], tids: list[int]) -> None:
    os.sched_setaffinity(0, {cpu})
    role = ROLES[i % len(ROLES)]
    path = os.path.join(directory, f"t{i}-{role}")
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | (os.O_DSYNC if role == "dsync" else 0)
    fd = os.open(path, flags)
    tids[i] = threading.get_native_id()
    buf = bytes([i & 0xff]) * (4096 * (1 + i % 4))   # sizes differ between files
    rec = {"tid": tids[i], "role": role, "path": path, "writes": 0, "bytes": 0,
           "fsyncs": 0, "max_ns": 0, "total_ns": 0}
    go.wait()
    for n in range(calls):
        t0 = time.monotonic_ns()
        rec["bytes"] += os.pwrite(fd, buf, n * len(buf))
        t1 = time.monotonic_ns()
        rec["writes"] += 1
        if role == "fsync":
            os.fsync(fd)
            t1 = time.monotonic_ns()   # the fsync's own span is inside [t0, t1]
            rec["fsyncs"] += 1
        if role != "buffered":
            rec["max_ns"] = max(rec["max_ns"], t1 - t0)
            rec["total_ns"] += t1 - t0
    os.close(fd)
    out[i] = rec


def shuffle(cpus: list[int], tids: list[int], done: threading.Event) -> None:
    k = 0
    while not done.is_set():
        k += 1
        for j, tid in enumerate(tids):
            if tid:
                try:
                    os.sched_setaffinity(tid, {cpus[(j + k) % len(cpus)]})
                except OSError:   # the thread ended
                    pass
        time.sleep(0.001)


def main(directory: str, threads: int, calls: int, cpu_list: str) -> None:
    cpus = [int(c) for c in cpu_list.split(",")]
    go, done = threading.Event(), threading.Event()
    out: list[dict | None] = [None] * threads
    tids = [0] * threads
    workers = [threading.Thread(target=worker, args=(i, directory, calls, cpus[0], go, out, tids))
               for i in range(threads)]
    for w in workers:
        w.start()
    while not all(tids):
        time.sleep(0.01)
    print("ready", flush=True)
    sys.stdin.readline()
    shuffler = threading.Thread(target=shuffle, args=(cpus, tids, done)) if len(cpus) > 1 else None
    if shuffler:
        shuffler.start()
    go.set()
    for w in workers:
        w.join()
    done.set()
    if shuffler:
        shuffler.join()
    print(json.dumps({"threads": out}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4])
