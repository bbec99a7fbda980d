"""How a fault during a sweep point reaches the user: one line naming what failed and
where (the errno, the file or device), as a ``PointFailed`` the sweep keeps the completed
points for."""

from __future__ import annotations

import errno as errno_names

from ..errors import LockscopeError


class PointFailed(LockscopeError):
    """A point failed (the workload, its files, the filesystem under it, the recorder
    killed): the sweep keeps the completed points and marks this one."""

    def __init__(self, message: str, exit_status: int | None = None,
                 stderr_line: str = "") -> None:
        super().__init__(message)
        self.exit_status = exit_status
        self.stderr_line = stderr_line


def os_error_text(exc: OSError) -> str:
    """``No space left on device (ENOSPC) on /path``: the errno by name, and the file."""
    name = errno_names.errorcode.get(exc.errno or 0, "")
    text = exc.strerror or str(exc)
    if name:
        text += f" ({name})"
    where = exc.filename if exc.filename is not None else None
    return f"{text} on {where}" if where else text


def point_os_error(exc: OSError, what: str) -> PointFailed:
    """An OSError met while ``what`` (e.g. "saving the point") as the point's failure."""
    return PointFailed(f"{what}: {os_error_text(exc)}", stderr_line=os_error_text(exc))


def status_text(returncode: int) -> str:
    """``exited 1`` or ``killed by signal 9 (SIGKILL)``."""
    if returncode >= 0:
        return f"exited {returncode}"
    import signal

    try:
        name = f" ({signal.Signals(-returncode).name})"
    except ValueError:
        name = ""
    return f"killed by signal {-returncode}{name}"
