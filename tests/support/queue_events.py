"""A second reader of io_uring:io_uring_queue_async_work: a tracefs instance of its own
counts the event per process, hashed and not, from the event's own printed line
(``... hashed queue`` / ``... normal queue``: its print fmt, 5.10 to 6.18), independently
of lockscope-record. No tests here; test_record_iowq_hashed.py uses it."""

from __future__ import annotations

import os
import re
from contextlib import contextmanager
from pathlib import Path

TRACEFS = Path("/sys/kernel/tracing")
EVENT = "io_uring/io_uring_queue_async_work"
# "comm-tid  (  tgid) [cpu] ...: io_uring_queue_async_work: ... hashed queue ..."
LINE = re.compile(r"-\d+\s+\(\s*(\d+)\).*io_uring_queue_async_work:.*\b(hashed|normal) queue")


def available() -> bool:
    return (TRACEFS / "events" / EVENT / "format").exists()


@contextmanager
def queue_events(name: str):
    """Yields a function that returns {tgid: {"hashed": n, "normal": n}} of the events
    recorded so far; the instance is removed on every path."""
    inst = TRACEFS / "instances" / f"{name}-{os.getpid()}"
    inst.mkdir()
    try:
        (inst / "buffer_size_kb").write_text("8192")
        (inst / "options" / "record-tgid").write_text("1")
        (inst / "events" / EVENT / "enable").write_text("1")

        def counts() -> dict[int, dict[str, int]]:
            (inst / "tracing_on").write_text("0")
            out: dict[int, dict[str, int]] = {}
            with open(inst / "trace") as f:
                for line in f:
                    m = LINE.search(line)
                    if m:
                        by = out.setdefault(int(m[1]), {"hashed": 0, "normal": 0})
                        by[m[2]] += 1
            lost = (inst / "per_cpu").exists() and any(
                int(re.search(r"overrun: (\d+)", (c / "stats").read_text())[1])
                for c in (inst / "per_cpu").iterdir())
            assert not lost, "the tracefs buffer overran: the second count is incomplete"
            return out

        yield counts
    finally:
        try:
            (inst / "events" / EVENT / "enable").write_text("0")
        finally:
            inst.rmdir()    # an instance goes with rmdir alone, its files with it
