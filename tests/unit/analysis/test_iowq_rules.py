"""io-wq's hashed queue as a wait class and its rule per kernel range, on attach documents:
the range the recorded kernel picks (its source, commit and remedy), the measurement
winning over the version, measured zero against not measured, and the verdict."""

from __future__ import annotations

import pytest

from lockscope.analysis.attach import analyze_attach
from lockscope.analysis.iowq import CLASS
from lockscope.report.iowq_line import hashed_text

S = 1_000_000_000
ENTRY = ["do_syscall_64+0x71", "entry_SYSCALL_64_after_hwframe+0x76"]
# an io_uring program waits for its completions in io_uring_enter: waiting, not a loss
CQ_WAIT = ["__schedule+0x618", "schedule+0x23", "io_cqring_wait+0x2f1",
           "__do_sys_io_uring_enter+0x4d5", "__x64_sys_io_uring_enter+0x1f"] + ENTRY
DATA = "/mnt/db/data.file"


def hashed_entry(queued: int, behind: int, behind_s: float, unhashed: int = 0) -> dict:
    return {"queued": queued, "unhashed": unhashed,
            "waited": {"count": queued, "total_ns": int(behind_s * 1.2 * S), "max_ns": S},
            "behind": {"count": behind, "total_ns": int(behind_s * S), "max_ns": S}}


def doc(kernel: str, fstype: str = "ext4", hashed: dict | None = None,
        measured: bool | None = True, writes: int = 4000) -> dict:
    """Two submitter threads of an io_uring program that wait for completions 9 s of 10."""
    dio = {"path": DATA, "dev": "7:0", "ino": 12,
           "writes": {"count": writes, "bytes": writes * 4096}}
    if hashed is not None:
        dio["io_wq_hashed"] = hashed
    threads = [{"tid": t, "pid": 1, "comm": "engine", "oncpu_ns": S, "runqueue_ns": 0,
                "offcpu_ns": 9 * S} for t in (1, 2)]
    trace = {"kernel": kernel,
             "interval": {"start_mono_ns": 0, "end_mono_ns": 10 * S, "duration_ns": 10 * S},
             "threads": threads, "locks": [], "dio": [dio],
             "offcpu": [{"tid": t, "pid": 1, "comm": "engine", "reason": "blocked",
                         "kstack": CQ_WAIT, "ustack": [], "count": 100, "total_ns": 9 * S}
                        for t in (1, 2)]}
    if measured is not None:
        trace["io_wq_hashed"] = {"measured": measured,
                                 "reason": None if measured else "the io_uring group is off"}
    return {"kind": "attach", "host": {"cpus": 2, "kernel": kernel},
            "window": {"label": "engine", "threads": 2, "trace": trace,
                       "files": [{"path": DATA, "fstype": fstype, "setuid": False,
                                  "setgid": False, "security_xattrs": []}]}}


def causes(a: dict) -> list[dict]:
    return [c for f in a["files"] if f["path"] == DATA for c in f["causes"]
            if c["reason"] == "io_uring_hashed"]


def the_class(a: dict) -> dict | None:
    return next((c for c in a["classes"] if c["class"] == CLASS), None)


def test_before_6_4_every_write_is_hashed_and_an_upgrade_removes_it():
    a = analyze_attach(doc("6.1.0-56-amd64", hashed=hashed_entry(3000, 2900, 12.0)))
    (c,) = causes(a)
    assert c["kernel_range"] == "< 6.4"
    assert "io_uring/io_uring.c: io_prep_async_work()" in c["kernel_source"]
    assert "io_get_next_work()" in c["kernel_source"]
    assert "a kernel upgrade removes this" in c["remedy"]
    assert "non-blocking" in c["remedy"]
    assert c["fraction"] == round(2900 / 4000, 4)
    cls = the_class(a)
    assert cls is not None and cls["ns"] == 12 * S
    assert cls["threads"] == pytest.approx(1.2)     # requests waiting, on average
    v = a["verdict"]
    assert v["kind"] == "io_uring_serialized" and v["wait_class"] == CLASS
    assert v["path"] == DATA and v["reasons"] == ["io_uring_hashed"]
    assert v["remedies"][0] == c["remedy"]
    assert any("io-wq's hash" in e for e in v["evidence"])


@pytest.mark.parametrize("kernel, fstype, want_range, want_commit", [
    # from 6.4 btrfs's O_DIRECT writes stay hashed: the range of the running kernel
    ("6.5.0", "btrfs", ">= 6.4, < 6.10", "io_uring: avoid hashing O_DIRECT writes"),
    ("6.12.117+deb12-amd64", "btrfs", ">= 6.10", "fs: claw back a few FMODE_* bits"),
    # ext4 sets the flag from 6.4: hashed writes measured there fit only the older rule
    ("6.12.117+deb12-amd64", "ext4", "< 6.4", ""),
    ("6.5.0", "xfs", "< 6.4", ""),
])
def test_the_range_cited_per_kernel_and_filesystem(kernel, fstype, want_range, want_commit):
    a = analyze_attach(doc(kernel, fstype, hashed=hashed_entry(3000, 2500, 5.0)))
    (c,) = causes(a)
    assert c["kernel_range"] == want_range
    assert c["commit"].startswith(want_commit)
    assert ("behaves like < 6.4" in c["evidence"]) is (fstype in ("ext4", "xfs"))
    if want_range == ">= 6.10":
        assert "FOP_DIO_PARALLEL_WRITE" in c["kernel_source"]
    if want_range == ">= 6.4, < 6.10":
        assert "FMODE_DIO_PARALLEL_WRITE" in c["kernel_source"]


def test_measured_zero_is_a_class_of_zero_and_no_cause():
    a = analyze_attach(doc("6.18.44", hashed=hashed_entry(0, 0, 0.0, unhashed=3500)))
    assert causes(a) == []
    cls = the_class(a)
    assert cls is not None and cls["ns"] == 0
    assert a["io_uring_hashed"]["measured"] is True and a["io_uring_hashed"]["unhashed"] == 3500
    assert a["verdict"]["kind"] == "idle"
    assert hashed_text(a).endswith("measured, none; 3,500 O_DIRECT requests went to io-wq "
                                   "unhashed.")


@pytest.mark.parametrize("measured", [False, None])
def test_not_measured_is_no_class_and_says_so(measured):
    a = analyze_attach(doc("6.1.0-56-amd64", measured=measured))
    assert the_class(a) is None and causes(a) == []
    h = a["io_uring_hashed"]
    assert h["measured"] is False and h["reason"]
    assert "not measured" in hashed_text(a)


def test_a_few_hashed_writes_are_no_cause():
    a = analyze_attach(doc("6.1.0-56-amd64", hashed=hashed_entry(10, 5, 0.001), writes=4000))
    assert causes(a) == []
    assert the_class(a)["ns"] == 0.001 * S
