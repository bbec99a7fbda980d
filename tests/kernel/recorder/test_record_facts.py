"""The recorder's fixed names (``lockscope-record --list-facts``) are the one source of
each: the analyzer's copies and the other binaries' lists must say the same."""

from __future__ import annotations

import json
import subprocess
import sys
import typing

import pytest

from lockscope import schema
from lockscope.analysis.lock_mode import MODE_CLASSES
from lockscope.analysis.lockkinds import INODE_LOCK_KINDS
from lockscope.analysis.observed import observed_ns
from lockscope.analysis.series import interval_throughput
from lockscope.binaries import find_binary, recorder_facts, recorder_syscalls
from lockscope.cli.doctor_cmd import ATTACH_KINDS

from patience import patience
from record_common import recorder


def _run_json(*argv: str) -> dict:
    res = subprocess.run(list(argv), capture_output=True, text=True, timeout=patience(600))
    return json.loads(res.stdout)


def test_list_features_carries_the_same_facts():
    features = _run_json(find_binary("lockscope-record"), "--list-features")
    facts = recorder_facts()
    assert {k: features[k] for k in facts} == facts


def test_dio_write_classes_are_the_schemas():
    assert tuple(recorder_facts()["dio_write_classes"]) == schema.CLASS_KEYS
    assert tuple(typing.get_type_hints(schema.ClassCounts)) == schema.CLASS_KEYS
    assert typing.get_args(schema.ClassKey) == schema.CLASS_KEYS


def test_the_classes_whose_lock_mode_is_read_are_the_analyzers():
    assert tuple(recorder_facts()["dio_mode_classes"]) == MODE_CLASSES


def test_inode_lock_kinds_are_the_recorders():
    assert tuple(recorder_facts()["inode_lock_kinds"]) == INODE_LOCK_KINDS


def test_attach_kinds_agree_across_binaries_and_doctor():
    kinds = recorder_facts()["attach_kinds"]
    probed = _run_json(find_binary("lockscope-features"))["attach"]
    doctor = [k for k, _what, _lost in ATTACH_KINDS]
    assert set(kinds) <= set(probed), "lockscope-features must probe every recorder kind"
    assert sorted(doctor) == sorted(probed), "doctor must explain every probed kind"


def _section(counts: dict[str, int]) -> dict:
    return {"interval": {"duration_ns": 1_000_000_000},
            "syscalls": [{"name": n, "count": c, "total_ns": 0} for n, c in counts.items()]}


def test_write_calls_per_second_count_exactly_the_recorders_write_calls():
    """Each call the recorder lists as a write (io_submit and io_uring_enter included:
    a database's libaio writes) counts once; a name it never records counts nothing."""
    writes = recorder_syscalls("write")
    assert "io_submit" in writes and "io_uring_enter" in writes
    for name in writes:
        assert interval_throughput(_section({name: 7}))["write_calls_s"] == 7
    others = [*recorder_syscalls("sync"), *recorder_syscalls("sync_range"),
              *recorder_syscalls("received"), "writev"]
    assert interval_throughput(_section(dict.fromkeys(others, 5)))["write_calls_s"] == 0
    syncs = recorder_syscalls("sync")
    assert interval_throughput(_section(dict.fromkeys(syncs, 2)))["fsync_calls_s"] == \
        2 * len(syncs)


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


def test_the_groups_the_budget_keeps_are_the_listings():
    groups = _run_json(find_binary("lockscope-record"), "--list-features")["groups"]
    kept = [g["name"] for g in groups if g["kept_by_budget"]]
    assert kept == recorder_facts()["budget_kept_groups"]
    assert {"lock", "dio", "sched"} <= set(kept), "the analysis cannot stand without them"
