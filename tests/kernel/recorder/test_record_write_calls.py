"""The recorder's write-call counts against a child's own: file writes apart from the
pipe and socket writes that are a server's responses."""

from __future__ import annotations

import subprocess
import sys

import pytest

from lockscope.analysis.observed import observed_ns
from lockscope.analysis.series import interval_throughput

from record_common import recorder

CHILD = """
import os, socket, sys
path, n_file, n_pipe, n_send = sys.argv[1], *map(int, sys.argv[2:])
a, b = socket.socketpair()
r, w = os.pipe()
fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
sys.stdin.readline()
for i in range(n_file):
    os.pwrite(fd, b"z" * 512, i * 512)
for _ in range(n_pipe):
    os.write(w, b"x"); os.read(r, 1)
for _ in range(n_send):
    a.send(b"y"); b.recv(1)
print("done", flush=True)
sys.stdin.readline()
"""


@pytest.mark.kernel
def test_a_trace_counts_file_writes_apart_from_socket_and_pipe_writes(tmp_path):
    """pwrite64 to a file counts as a write call; write() to a pipe and send() on a
    socket are responses, taken out by the recorder's tx_write_calls."""
    n_file, n_pipe, n_send = 300, 200, 500
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(tmp_path / "f"), str(n_file),
                              str(n_pipe), str(n_send)], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
    try:
        with recorder(["--pid", str(child.pid)], tmp_path / "trace.json") as (_, start, finish):
            start()
            child.stdin.write("go\n")
            child.stdin.flush()
            assert child.stdout.readline() == "done\n"
            doc = finish()
    finally:
        child.kill()
        child.wait()
    net = [n for n in doc["net"] if n["pid"] == child.pid]
    calls = {s["name"]: s["count"] for s in doc["syscalls"]}
    # every write() here goes to a pipe (print's too); the file gets pwrite64 only
    assert calls["pwrite64"] == n_file and calls["write"] >= n_pipe
    assert net and net[0]["tx_write_calls"] == calls["write"]
    assert net[0]["tx_calls"] == calls["write"] + n_send
    seconds = observed_ns(doc) / 1e9
    assert round(interval_throughput(doc)["write_calls_s"] * seconds) == n_file
