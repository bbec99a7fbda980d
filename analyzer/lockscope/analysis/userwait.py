"""What a futex wait waits for, told by the user functions on its stack.

A thread asleep in the futex system call either waits for work or an event
(a condition variable, a semaphore, a server's event or latch: idle) or for a
lock another thread holds (a mutex, a read-write lock, a database's own
latch: contention). The kernel stack is the same for both; the user stack
names the difference.

Stacks are lists of recorder frames ("name+0xoff", "[file+0xaddr]",
"[unknown]"), leaf first, as in the recording's ``ustack``/``kstack``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import NamedTuple

IDLE = "idle"
USER_LOCK = "user_lock"


class UserWait(NamedTuple):
    kind: str       # IDLE or USER_LOCK
    function: str   # the user function that decided it


# Kernel frames of a futex wait (kernel/futex/: futex_wait_queue,
# futex_wait, __futex_wait, do_futex, the system call entries).
_FUTEX_KERNEL = re.compile(r"^(__)?(futex_|do_futex|__x64_sys_futex|__arm64_sys_futex|"
                           r"__se_sys_futex|__do_sys_futex)")

# A server's own lock and wait functions, found by name. A lock function
# anywhere on the stack decides over an idle one (a lock wait may sleep on
# an event or latch underneath, e.g. PostgreSQL's ProcSleep on its latch).
_SERVER_LOCK = [re.compile(p) for p in (
    # MariaDB/MySQL InnoDB latches (srw_lock, ssux_lock, sux_lock; older
    # sync_array/rw_lock/mutex policies), row-lock and metadata-lock waits
    r"(^|::)(srw_|ssux_|sux_)\w*lock", r"(^|::)srw_mutex", r"sync_array_wait_event",
    r"(^|::)rw_lock_[sx]_lock", r"(^|::)mutex_enter", r"(^|::)(TTASEventMutex|PolicyMutex)",
    r"(^|::)lock_wait$", r"(^|::)lock_wait_suspend_thread", r"group_commit_lock::acquire",
    r"MDL_context::acquire_lock", r"MDL_wait::timed_wait",
    r"(^|::)(inline_)?mysql_(mutex|rwlock|prlock)_", r"(^|::)psi_(mutex|rwlock|prlock)_",
    r"(^|::)rw_pr_(rd|wr)lock",
    # PostgreSQL lightweight and heavyweight locks, spinlocks
    r"^LWLockAcquire", r"^LWLockWaitForVar", r"^ProcSleep$", r"^WaitOnLock$",
    r"^LockAcquire", r"^XactLockTableWait$", r"^s_lock$",
)]
_SERVER_IDLE = [re.compile(p) for p in (
    # InnoDB events, MariaDB's thread pool waiting for tasks
    r"os_event::wait", r"^os_event_wait", r"tpool::\w+::wait_for_tasks",
    r"tpool::\w+::get_task", r"MYSQL_BIN_LOG::wait_for_update",
    # PostgreSQL latches and condition variables
    r"^WaitLatch", r"^WaitEventSetWait$", r"^ConditionVariable(Timed)?Sleep$",
)]
# The C and C++ libraries' primitives, when no server function decides:
# the one nearest the leaf wins (a condition wait that blocks re-taking its
# mutex shows the mutex lock nearer the leaf).
_LIB = [(re.compile(p), kind) for p, kind in (
    (r"^lll_lock_wait", USER_LOCK),
    (r"^pthread_mutex_(timed|clock)?lock$", USER_LOCK),
    (r"^pthread_mutex_cond_lock$", USER_LOCK),
    (r"^pthread_rwlock_(timed|clock)?(rd|wr)lock$", USER_LOCK),
    (r"^std::(recursive_|timed_|shared_)*mutex::(try_)?lock", USER_LOCK),
    (r"^pthread_cond_(timed|clock)?wait", IDLE),
    (r"^std::(_V2::)?condition_variable(_any)?::wait", IDLE),
    (r"^std::__condvar::wait", IDLE),
    (r"^sem_(timed|clock)?wait", IDLE),
    (r"^pthread_barrier_wait$", IDLE),
    (r"^pthread_(timed|clock)?join", IDLE),
    (r"^std::__atomic_futex_unsigned_base::_M_futex_wait", IDLE),
)]


def function_name(frame: str) -> str | None:
    """The function of a recorder frame, without offset, glibc's internal
    alias prefix or leading underscores; None for an unnamed frame."""
    if not frame or frame.startswith("["):
        return None
    name = frame.rsplit("+0x", 1)[0]
    if name.startswith("__GI_"):
        name = name[len("__GI_"):]
    return name.lstrip("_") or None


def is_futex_wait(kernel_frames: Sequence[str]) -> bool:
    return any(_FUTEX_KERNEL.match(f) for f in kernel_frames)


def classify(user_frames: Sequence[str], kernel_frames: Sequence[str] = ()) -> UserWait | None:
    """Idle or lock contention, for a futex wait, by its user functions.

    kernel_frames, when given, must show a futex wait (else None: this is
    another kind of wait). None also when no user function is recognised.
    """
    if kernel_frames and not is_futex_wait(kernel_frames):
        return None
    names = [n for n in map(function_name, user_frames or ()) if n]
    for n in names:
        if any(p.search(n) for p in _SERVER_LOCK):
            return UserWait(USER_LOCK, n)
    for n in names:
        if any(p.search(n) for p in _SERVER_IDLE):
            return UserWait(IDLE, n)
    for n in names:
        for p, kind in _LIB:
            if p.search(n):
                return UserWait(kind, n)
    return None
