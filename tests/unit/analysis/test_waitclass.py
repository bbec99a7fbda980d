"""Off-CPU wait classes on stacks as the recorder writes them (kernel leaf first).

The stacks are copied from recordings of MariaDB 10.11 and PostgreSQL 15 on
ext4 (Linux 6.18), plus a few hand-built ones for paths those runs did not hit.
"""

from __future__ import annotations

from lockscope.analysis.runs import trace_breakdown
from lockscope.analysis.waitclass import (
    CLASSES,
    LOSS_CLASSES,
    classify,
    idle_threads,
    sweep_part,
    syscall_of,
)

ENTRY = ["do_syscall_64+0x71", "entry_SYSCALL_64_after_hwframe+0x76"]
FUTEX = ["__schedule+0x618", "schedule+0x23", "futex_do_wait+0x46", "__futex_wait+0x8a",
         "futex_wait+0x67", "do_futex+0xfd", "__x64_sys_futex+0x112"] + ENTRY
FDATASYNC_COMMIT = ["__schedule+0x618", "schedule+0x23", "jbd2_log_wait_commit+0xc2",
                    "ext4_sync_file+0x1f2", "do_fsync+0x3b", "__x64_sys_fdatasync+0x12"] + ENTRY
FDATASYNC_WRITEBACK = ["__schedule+0x618", "schedule+0x23", "io_schedule+0x3f",
                       "folio_wait_bit+0xd6", "folio_wait_writeback+0x2a",
                       "__filemap_fdatawait_range+0x7c", "file_write_and_wait_range+0x8f",
                       "ext4_sync_file+0xa0", "do_fsync+0x3b", "__x64_sys_fdatasync+0x12"] + ENTRY
CLIENT_POLL = ["__schedule+0x618", "schedule+0x23", "schedule_hrtimeout_range_clock+0xcb",
               "poll_schedule_timeout.constprop.0+0x37", "do_sys_poll+0x400",
               "__x64_sys_poll+0xd1"] + ENTRY
EPOLL = ["__schedule+0x618", "schedule+0x23", "schedule_hrtimeout_range_clock+0xcb",
         "do_epoll_wait+0x548", "__x64_sys_epoll_wait+0x5a"] + ENTRY
DIO_WRITE = ["__schedule+0x618", "schedule+0x23", "schedule_timeout+0x77",
             "io_schedule_timeout+0x51", "__iomap_dio_rw+0x5ea", "iomap_dio_rw+0xe",
             "ext4_file_write_iter+0x35a", "vfs_write+0x22f", "__x64_sys_pwrite64+0xa3"] + ENTRY
START_HANDLE = ["__schedule+0x618", "schedule+0x23", "wait_transaction_locked+0x8a",
                "add_transaction_credits+0x1d5", "start_this_handle+0x102",
                "jbd2__journal_start+0xfa", "ext4_dirty_inode+0x34",
                "__mark_inode_dirty+0x5c", "generic_update_time+0x50",
                "file_modified+0x91", "ext4_buffered_write_iter+0x5b", "vfs_write+0x22f",
                "__x64_sys_pwrite64+0xa3"] + ENTRY
PAGE_FAULT = ["__schedule+0x618", "schedule+0x23", "io_schedule+0x3f",
              "folio_wait_bit_common+0x13a", "filemap_fault+0x5f1", "__do_fault+0x33",
              "do_fault+0x2b1", "__handle_mm_fault+0x7b8", "handle_mm_fault+0x1c1",
              "do_user_addr_fault+0x1f2", "exc_page_fault+0x78", "asm_exc_page_fault+0x26"]
UNIX_READ = ["__schedule+0x618", "schedule+0x23", "schedule_timeout+0x11e",
             "unix_stream_data_wait+0x10b", "unix_stream_read_generic+0x5a6",
             "unix_stream_recvmsg+0x8e", "sock_read_iter+0xe1", "vfs_read+0x2b5",
             "ksys_read+0x6d", "__x64_sys_read+0x19"] + ENTRY
PG_USER_LATCH = ["epoll_wait+0x13", "WaitLatch+0x78", "WalWriterMain+0x153"]


def rec(kstack, reason="blocked", **kw):
    return {"tid": kw.pop("tid", 100), "reason": reason, "kstack": kstack, "ustack": [],
            "total_ns": 1000, **kw}


def test_fsync_waits_are_durability_whatever_they_wait_on_below():
    for stack in (FDATASYNC_COMMIT, FDATASYNC_WRITEBACK):
        c = classify(rec(stack, reason="journal"))
        assert c.cls == "durability" and c.method == "kernel function"
        assert c.detail.startswith("fdatasync → ")
    assert classify(rec(FDATASYNC_COMMIT)).detail == "fdatasync → jbd2_log_wait_commit"


def test_client_waits_are_idle_not_loss():
    for stack in (CLIENT_POLL, EPOLL, UNIX_READ):
        c = classify(rec(stack))
        assert c.cls == "idle", stack
    assert classify(rec(CLIENT_POLL)).method == "syscall"
    assert classify(rec(UNIX_READ)).method == "kernel function"
    assert "idle" not in LOSS_CLASSES and set(LOSS_CLASSES) | {"idle"} == set(CLASSES)


def test_io_journal_and_page_faults():
    assert classify(rec(DIO_WRITE, reason="io")).cls == "block_io"
    c = classify(rec(START_HANDLE, reason="journal"))
    assert (c.cls, c.detail) == ("journal", "pwrite64 → wait_transaction_locked")
    assert classify(rec(PAGE_FAULT, reason="io")).cls == "memory"


def test_scheduler_and_kernel_locks():
    assert classify(rec([], reason="runqueue")).cls == "runqueue"
    kinds = {"0xffff1": "i_rwsem", "0xffff2": "global"}
    c = classify(rec(DIO_WRITE, reason="lock", lock_addr="0xffff1"), kinds)
    assert (c.cls, c.method, c.detail) == ("inode_lock", "kernel lock", "i_rwsem")
    assert classify(rec(DIO_WRITE, reason="lock", lock_addr="0xffff2"), kinds).cls == \
        "kernel_lock"
    assert classify(rec(DIO_WRITE, reason="lock", lock_addr="0xdead"), kinds).cls == \
        "kernel_lock"


def test_futex_waits_need_user_frames_or_an_idle_thread():
    r = rec(FUTEX, ustack=["[libc.so.6+0x85f16]"], tid=7)
    assert classify(r).cls == "unclassified"
    assert classify(r, idle_tids={7}).cls == "idle"
    assert classify(r, idle_tids={7}).method == "thread"

    def user(frames, kframes):
        return ("user_lock", "ha_innobase::lock") if frames[0] == "lock+0x1" else "idle"

    c = classify(rec(FUTEX, ustack=["lock+0x1", "main+0x2"]), user_classifier=user)
    assert (c.cls, c.method, c.detail) == ("user_lock", "user function", "ha_innobase::lock")
    c = classify(rec(FUTEX, ustack=PG_USER_LATCH), user_classifier=user)
    assert (c.cls, c.method) == ("idle", "user function")
    # a classifier that fails leaves the wait unclassified instead of losing the recording
    assert classify(rec(FUTEX, ustack=["x+0x1"]),
                    user_classifier=lambda u, k: 1 / 0).cls == "unclassified"


def test_syscall_from_number_when_no_entry_frame():
    assert syscall_of([], 75) == "fdatasync"
    assert syscall_of(["__x64_sys_poll+0xd1"], 75) == "poll"  # the stack wins
    assert classify(rec(["__schedule+0x618", "schedule+0x23"], syscall=232)).cls == "idle"
    assert classify(rec(["__schedule+0x618", "schedule+0x23"], syscall=202)).cls == \
        "unclassified"
    assert classify(rec(["__schedule+0x618", "schedule+0x23"])).cls == "unclassified"


def test_idle_threads_are_those_that_barely_ran():
    threads = [{"tid": 1, "oncpu_ns": 1000, "runqueue_ns": 0},
               {"tid": 2, "oncpu_ns": 5e8, "runqueue_ns": 1e8}]
    assert idle_threads(threads, 1e9) == {1}
    assert idle_threads(threads, 0) == set()


def test_futex_waits_for_the_log_flush_are_durability():
    for frames in (["syscall+0x1d", "group_commit_lock::acquire(unsigned long, "
                    "log_t::write_lock)+0x9a", "log_write_up_to(unsigned long, bool)+0x1b3"],
                   ["futex_wait+0x10", "LWLockAcquireOrWait+0x91", "XLogFlush+0x140"]):
        c = classify(rec(FUTEX, ustack=frames), user_classifier=lambda u, k: ("user_lock", "x"))
        assert c.cls == "durability" and c.method == "user function", frames


def test_the_sweep_splits_blocked_time_with_the_same_classifier():
    """The sweep's block_io / journal / other_offcpu parts come from classify: a
    durability wait counts as what it waits on below."""
    assert sweep_part(rec(DIO_WRITE)) == "block_io"
    assert sweep_part(rec(START_HANDLE)) == "journal"
    assert sweep_part(rec(FDATASYNC_COMMIT)) == "journal"
    assert sweep_part(rec(FDATASYNC_WRITEBACK)) == "block_io"
    assert sweep_part(rec(CLIENT_POLL)) == "other_offcpu"
    assert sweep_part(rec(PAGE_FAULT)) == "other_offcpu"
    # documents of older recorders, where the recorder gave io / journal / other
    assert sweep_part({"reason": "io", "kstack": []}) == "block_io"
    assert sweep_part({"reason": "journal", "kstack": []}) == "journal"
    recs = [rec(DIO_WRITE, total_ns=300), rec(START_HANDLE, total_ns=200),
            rec(CLIENT_POLL, total_ns=100), rec([], reason="runqueue", total_ns=50)]
    trace = {"threads": [{"tid": 100, "oncpu_ns": 400, "offcpu_ns": 600, "runqueue_ns": 50}],
             "offcpu": recs}
    share = trace_breakdown(trace, 1, 0)["time_share"]
    total = 400 + 600 + 50
    for part in ("block_io", "journal"):
        want = sum(r["total_ns"] for r in recs
                   if r["reason"] == "blocked" and sweep_part(r) == part)
        assert abs(share[part] - want / total) < 1e-9, part
