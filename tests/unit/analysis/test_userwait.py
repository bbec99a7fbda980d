"""userwait.classify: idle vs lock contention from a futex wait's user frames (no root)."""

from __future__ import annotations

import pytest

from lockscope.analysis.userwait import IDLE, USER_LOCK, classify, function_name, is_futex_wait

FUTEX_K = ["futex_wait_queue+0x60", "__futex_wait+0x93", "futex_wait+0x6f", "do_futex+0x12b",
           "__x64_sys_futex+0x127", "do_syscall_64+0x7f", "entry_SYSCALL_64_after_hwframe+0x76"]
PIPE_K = ["pipe_read+0x2f5", "vfs_read+0x2a1", "ksys_read+0x6b", "do_syscall_64+0x7f"]
ROOT = ["start_thread+0x304", "clone3+0x2b"]


@pytest.mark.parametrize("frame, name", [
    ("pthread_cond_wait+0x1e7", "pthread_cond_wait"),
    ("__GI___lll_lock_wait+0x2b", "lll_lock_wait"),
    ("tpool::thread_pool_generic::wait_for_tasks+0xf0",
     "tpool::thread_pool_generic::wait_for_tasks"),
    ("[mariadbd+0xd6e442]", None),
    ("[unknown]", None),
])
def test_function_name(frame, name):
    assert function_name(frame) == name


@pytest.mark.parametrize("user, kind, fn", [
    # glibc condition variables: waiting for an event
    (["__futex_abstimed_wait_common+0xc6", "pthread_cond_wait+0x1e7", "c+0x5d", "main+0x7a"],
     IDLE, "pthread_cond_wait"),
    (["__futex_abstimed_wait_common+0xc6", "__pthread_cond_timedwait64+0x21b", "worker+0x40"],
     IDLE, "pthread_cond_timedwait64"),
    # glibc mutex and rwlock: contention
    (["__GI___lll_lock_wait+0x2b", "pthread_mutex_lock+0x111", "c+0x7e"], USER_LOCK,
     "lll_lock_wait"),
    (["__futex_abstimed_wait_common+0xc6", "pthread_rwlock_wrlock+0x14c", "f+0x1"], USER_LOCK,
     "pthread_rwlock_wrlock"),
    # re-taking the mutex after a condition wait is a mutex wait: nearest the leaf wins
    (["__GI___lll_lock_wait+0x2b", "__pthread_mutex_cond_lock+0x33", "pthread_cond_wait+0x22a",
      "f+0x10"], USER_LOCK, "lll_lock_wait"),
    # MariaDB's pool idle, InnoDB latches, PostgreSQL LWLocks over their semaphore
    (["__futex_abstimed_wait_common+0xc6", "pthread_cond_clockwait+0x21e",
      "tpool::thread_pool_generic::wait_for_tasks+0xf0",
      "tpool::thread_pool_generic::get_task+0x7e"],
     IDLE, "tpool::thread_pool_generic::wait_for_tasks"),
    (["syscall+0x19", "srw_mutex_impl<true>::wait+0x22", "buf_page_get_low+0x3a1"], USER_LOCK,
     "srw_mutex_impl<true>::wait"),
    (["syscall+0x19", "ssux_lock_impl<true>::wr_wait+0x4b", "mtr_t::x_lock_space+0x9"],
     USER_LOCK, "ssux_lock_impl<true>::wr_wait"),
    (["do_futex_wait.constprop.0+0x33", "__new_sem_wait_slow64.constprop.0+0x72",
      "PGSemaphoreLock+0x2f", "LWLockAcquire+0x1c3", "XLogInsertRecord+0x2a1"],
     USER_LOCK, "LWLockAcquire"),
    # a heavyweight-lock wait sleeps on the latch: the lock decides
    (["epoll_wait+0x27", "WaitEventSetWait+0x112", "WaitLatch+0x4d", "ProcSleep+0x5f1",
      "WaitOnLock+0xa3"], USER_LOCK, "ProcSleep"),
    (["__futex_abstimed_wait_common+0xc6", "sem_clockwait+0x22",
      "ConditionVariableTimedSleep+0x50"],
     IDLE, "ConditionVariableTimedSleep"),
])
def test_classify(user, kind, fn):
    got = classify(user + ROOT, FUTEX_K)
    assert got is not None and (got.kind, got.function) == (kind, fn)


def test_not_a_futex_wait_is_not_classified():
    assert not is_futex_wait(PIPE_K)
    assert classify(["read+0x4c", "pthread_cond_wait+0x1", "main+0x7"], PIPE_K) is None


def test_unnamed_or_unknown_user_frames_give_none():
    assert classify(["syscall+0x19", "[mariadbd+0xd6e442]", "[mariadbd+0xd5e38c]"], FUTEX_K) is None
    assert classify([], FUTEX_K) is None
    assert classify(["main+0x10"], FUTEX_K) is None


def test_without_kernel_frames_user_frames_alone_decide():
    assert classify(["pthread_mutex_lock+0x111", "main+0x7"]).kind == USER_LOCK
