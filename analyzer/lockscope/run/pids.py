"""Whether a process id is in use, for ledgers that outlive the lockscope run that wrote them."""

from __future__ import annotations

import os


def pid_exists(pid: int) -> bool:
    """True while `pid` names a process (ours or another user's), as signal 0 tells."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def pid_running(pid: int) -> bool:
    """True while `pid` names a process that has not exited (a zombie has)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[-1].split()[0] != "Z"
    except OSError:
        return False
