"""io-wq's hashed queue in the exporter's per-interval thread time: its class where the
recorder measured it (the files' io_wq_hashed), none where it did not."""

from __future__ import annotations

from lockscope.analysis.iowq import CLASS
from lockscope.export.interval_digest import FileNames, LockBook, digest_interval

S = 1_000_000_000


def interval(hashed: dict | None) -> dict:
    dio = {"path": "/data/f", "dev": "7:0", "ino": 12, "writes": {"count": 10, "bytes": 40960}}
    if hashed is not None:
        dio["io_wq_hashed"] = hashed
    return {"interval": {"start_mono_ns": 0, "end_mono_ns": S, "duration_ns": S},
            "threads": [], "offcpu": [], "locks": [], "dio": [dio]}


def digest(iv: dict):
    return digest_interval(iv, LockBook(), FileNames(), set(), None)


def test_measured_hashed_waits_are_their_class():
    d = digest(interval({"queued": 9, "unhashed": 0,
                         "waited": {"count": 9, "total_ns": S, "max_ns": S // 4},
                         "behind": {"count": 8, "total_ns": S // 2, "max_ns": S // 4}}))
    assert d.classes_ns[CLASS] == S // 2


def test_measured_none_is_zero_and_not_measured_is_no_class():
    zero = {"queued": 0, "unhashed": 5, "waited": {"count": 0, "total_ns": 0, "max_ns": 0},
            "behind": {"count": 0, "total_ns": 0, "max_ns": 0}}
    assert digest(interval(zero)).classes_ns[CLASS] == 0
    assert CLASS not in digest(interval(None)).classes_ns
