"""lockscope-record's cheap paths keep their meaning: sampled off-CPU stacks, fsync latency per
file, socket and pipe traffic per process.

A small Python program does a known amount of work (fsyncs and fdatasyncs of one file, sends
and receives on a socket pair, short sleeps and pipe reads) while the recorder follows its
process; every expectation comes from what the program did or measured itself.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from record_common import record_gated_program

pytestmark = pytest.mark.kernel

FSYNCS, FDATASYNCS = 25, 15
SENDS, MSG = 40, 300
SLEEPS, PIPE_READS = 300, 200

# The traced program: waits for "go" on stdin, works, prints what it measured, exits.
PROGRAM = r"""
import json, os, socket, sys, threading, time
path, fsyncs, fdatasyncs, sends, msg, sleeps, reads = sys.argv[1], *map(int, sys.argv[2:])
sys.stdin.readline()
fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
for _ in range(fsyncs):
    os.write(fd, b"x" * 4096)
    os.fsync(fd)
for _ in range(fdatasyncs):
    os.write(fd, b"y" * 4096)
    os.fdatasync(fd)
os.close(fd)
a, b = socket.socketpair()
for _ in range(sends):
    a.sendall(b"z" * msg)
    got = 0
    while got < msg:
        got += len(b.recv(msg - got))
# blocking in two ways: short sleeps, and reads of a pipe another thread feeds
r, w = os.pipe()
def feed():
    for _ in range(reads):
        time.sleep(0.0005)
        os.write(w, b"p")
t0 = time.perf_counter()
for _ in range(sleeps):
    time.sleep(0.0005)
slept = time.perf_counter() - t0
t = threading.Thread(target=feed)
t.start()
t0 = time.perf_counter()
for _ in range(reads):
    os.read(r, 1)
read_wait = time.perf_counter() - t0
t.join()
print(json.dumps({"tid": threading.get_native_id(), "slept": slept, "read_wait": read_wait}),
      flush=True)
"""


def traced_run(path: Path, out: Path, extra: list[str] | None = None) -> tuple[dict, dict, float]:
    """Runs PROGRAM under the recorder; (recording, what the program measured, seconds from the
    window's start to "go")."""
    said, doc, lead = record_gated_program(
        [sys.executable, "-c", PROGRAM, str(path), str(FSYNCS), str(FDATASYNCS), str(SENDS),
         str(MSG), str(SLEEPS), str(PIPE_READS)], out, tuple(extra or ()))
    return doc, said, lead


def frames_with(records: list[dict], name: str) -> list[dict]:
    return [o for o in records if any(name in f for f in o["kstack"])]


def test_fsync_latency_per_file_and_socket_traffic_per_process(ext4_fs, tmp_path):
    path = ext4_fs.path / "synced"
    doc, _, _ = traced_run(path, tmp_path / "r.json")
    st = os.stat(path)
    entry = next(d for d in doc["dio"] if d["ino"] == st.st_ino)
    # every fsync and fdatasync of the file, each timed
    assert entry["fsync"]["count"] == FSYNCS + FDATASYNCS
    assert 0 < entry["fsync"]["max_ns"] <= entry["fsync"]["total_ns"]
    calls = {s["name"]: s["count"] for s in doc["syscalls"]}
    assert calls["fsync"] == FSYNCS and calls["fdatasync"] == FDATASYNCS
    net = [n for n in doc["net"] if n["pid"] != 0]
    assert len(net) == 1, net
    n = net[0]
    # the socket pair, plus the program's few pipe reads and writes (stdin, stdout, the
    # feeder thread's pipe): at most a handful of calls besides
    assert SENDS <= n["tx_calls"] <= SENDS + PIPE_READS + 5
    assert SENDS * MSG <= n["tx_bytes"] <= SENDS * MSG + PIPE_READS + 4096
    assert SENDS <= n["rx_calls"] <= 2 * SENDS + PIPE_READS + 5
    assert SENDS * MSG <= n["rx_bytes"] <= SENDS * MSG + PIPE_READS + 4096
    # the waits inside fsync and fdatasync (for the device or the journal, as the host's
    # timing has it) are off-CPU records that name their system call, whether or not
    # their stacks were sampled
    nrs = syscall_numbers(tmp_path, "fsync", "fdatasync")
    assert any(o["syscall"] in nrs and o["reason"] != "runqueue" for o in doc["offcpu"]), \
        [(o["reason"], o["syscall"]) for o in doc["offcpu"]]


def syscall_numbers(tmp_path: Path, *names: str) -> set[int]:
    """This machine's numbers of the named system calls, from the C library's headers."""
    src = tmp_path / "nrs.c"
    src.write_text("#include <stdio.h>\n#include <sys/syscall.h>\nint main(void) {\n"
                   + "".join(f'printf("%d\\n", SYS_{n});\n' for n in names) + "}\n")
    exe = tmp_path / "nrs"
    subprocess.run(["cc", "-o", str(exe), str(src)], check=True)
    return {int(x) for x in subprocess.run([str(exe)], capture_output=True, text=True,
                                           check=True).stdout.split()}


def test_sampled_offcpu_stacks_weigh_up_to_the_threads_offcpu_time(tmp_path):
    doc, said, lead = traced_run(tmp_path / "synced", tmp_path / "r.json",
                                 ["--min-block-us", "0"])
    tid = said["tid"]
    mine = [o for o in doc["offcpu"] if o["tid"] == tid]
    thread = next(t for t in doc["threads"] if t["tid"] == tid)
    # stacks were sampled: far fewer walks than switch-outs
    assert doc["counts"]["offcpu_unsampled"] > doc["counts"]["offcpu_stacks_walked"]
    assert sum(o["sampled_count"] for o in mine) < sum(o["count"] for o in mine)
    for o in mine:
        assert o["sampled_ns"] <= o["total_ns"] and o["sampled_count"] <= o["count"]
    # Every blocked switch-out is in a record: the records sum to the thread's blocked time,
    # except the wait for "go" (off CPU since the window opened, counted without a record),
    # which is at most `lead` plus the wake-up.
    blocked = sum(o["total_ns"] for o in mine if o["reason"] != "runqueue")
    missing = thread["offcpu_ns"] - blocked
    assert 0 <= missing <= (lead + 0.05) * 1e9 + 0.01 * thread["offcpu_ns"], (missing, lead)
    # The time spread over sampled stacks lands on the right ones: the sleeps on the
    # nanosleep stacks and the pipe reads on pipe_read's, each at most what the program
    # measured around its calls, and most of it (the rest is on-CPU time in the calls).
    sleeps = sum(o["total_ns"] for o in frames_with(mine, "nanosleep"))
    reads = sum(o["total_ns"] for o in frames_with(mine, "pipe_read"))
    assert 0.3 * said["slept"] * 1e9 < sleeps <= said["slept"] * 1e9
    assert 0.3 * said["read_wait"] * 1e9 < reads <= said["read_wait"] * 1e9
