"""io_uring's O_DIRECT writes that io-wq runs one at a time per file, measured by
lockscope-record and checked against a second reader of the same event.

lockscope-load writes with io_uring into holes of a sparse ext4 file: ext4 refuses those
writes non-blocking (fs/ext4/file.c ext4_dio_write_checks(): -EAGAIN under IOCB_NOWAIT
for a write that is not a pure overwrite), so io_uring queues them to io-wq. Whether it
hashes them by the inode is the kernel's rule (io_uring/io_uring.c io_prep_async_work():
before 6.4 every write to a regular file; from 6.4 not the O_DIRECT writes of a
filesystem with FMODE_DIO_PARALLEL_WRITE, which ext4 sets). The test does not read the
version: a tracefs instance of its own counts the event's hashed and unhashed queueings of
the engine's process, and the recording must agree with it: as many hashed requests, each
one's wait measured, most of them behind another, and the wait class measured; or, where
the kernel hashes none, none measured as such and the class measured zero.
"""

from __future__ import annotations

import json
import os

import pytest
from queue_events import available, queue_events

from lockscope.analysis.iowq import hashed_cause, hashed_summary, hashed_wait_class
from lockscope.analysis.kernel_release import parse_release

from dio_cases import LOAD
from record_common import dio_entry, record_engine, start_engine

pytestmark = pytest.mark.kernel

DEPTH = 16      # per thread: requests queue behind each other when the kernel hashes them


def keep_finding(hashed: bool, figures: dict) -> None:
    """With LOCKSCOPE_FINDINGS=FILE, what the kernel did is appended there, with the
    figures compared: the kernel matrix's judge sets it against the kernel's expectation
    (tools/kernels/judge.py)."""
    path = os.environ.get("LOCKSCOPE_FINDINGS")
    if path:
        with open(path, "a") as f:
            f.write(f"io_wq_hashed\t{'yes' if hashed else 'no'}\n"
                    f"io_wq_hashed_figures\t{json.dumps(figures)}\n")


def test_hashed_direct_writes_wait_as_the_event_says(ext4_fs, tmp_path):
    if not available():
        pytest.skip("no io_uring:io_uring_queue_async_work in tracefs")
    path = ext4_fs.path / "sparse"
    engine = start_engine([
        str(LOAD), "--name=w", f"--filename={path}", "--rw=randwrite", "--bs=4k",
        "--direct=1", "--ioengine=io_uring", f"--iodepth={DEPTH}", "--numjobs=2",
        "--size=64m", "--runtime=2", "--time_based", "--layout=sparse",
        "--start_on_stdin=1", "--output-format=json", f"--output={tmp_path / 'load.json'}"])
    with queue_events("lockscope-iowq") as counts:
        # no budget: a group it sheds would leave the hashed waits unmeasured
        doc = record_engine(engine, tmp_path / "r.json", timeout=120,
                            extra=["--max-overhead", "0"])
        seen = counts().get(engine.pid, {"hashed": 0, "normal": 0})
    entry = dio_entry(doc, path)
    writes = entry["writes"]["count"]
    assert writes > 0
    # the holes make ext4 refuse the writes non-blocking: io-wq gets them either way
    assert seen["hashed"] + seen["normal"] > 0, seen
    summary = hashed_summary(doc)
    wait_class = hashed_wait_class(summary, float(doc["interval"]["observed_ns"]))
    # the event is there, the budget is off and the recorder may attach the dio group
    # any way but the classic tracepoint: nothing should keep it from measuring them
    assert doc["io_wq_hashed"]["measured"], doc["io_wq_hashed"]
    h = entry["io_wq_hashed"]
    keep_finding(seen["hashed"] > 0, {"event": seen, "recorded": h, "writes": writes})
    # the same requests as the event's own count (the recorder: the window, this file)
    assert abs(h["queued"] - seen["hashed"]) <= max(2, 0.02 * seen["hashed"]), (h, seen)
    assert abs(h["unhashed"] - seen["normal"]) <= max(2, 0.02 * seen["normal"]), (h, seen)
    assert wait_class is not None
    # the cause and the rule it cites, for the kernel the recording names
    mine = [f for f in summary["files"] if f["ino"] == entry["ino"]]
    cause = hashed_cause("ext4", mine[0], writes, parse_release(doc["kernel"])) if mine else None
    if seen["hashed"]:
        # a rule under which this kernel hashes ext4's O_DIRECT writes: before 6.4
        assert cause is not None and cause["kernel_range"] == "< 6.4", cause
        assert "io_prep_async_work()" in cause["kernel_source"] and cause["remedy"], cause
    else:
        assert cause is None
    if seen["hashed"]:
        # each hashed request's wait ends when its direct I/O begins in a worker
        assert h["waited"]["count"] >= 0.95 * h["queued"], h
        assert h["behind"]["count"] >= 0.5 * h["queued"], h
        assert h["behind"]["total_ns"] > 0
        assert wait_class["ns"] == summary["behind_ns"] > 0
    else:
        assert h["waited"]["count"] == h["behind"]["count"] == 0
        assert wait_class["ns"] == 0 and summary["measured"] is True
