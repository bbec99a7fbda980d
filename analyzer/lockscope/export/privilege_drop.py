"""The exporter process gives up every privilege before it reads from the network.

Started by root (by hand): it takes the unprivileged user's ids (``nobody`` unless told),
which clears every capability. Started by a non-root user holding capabilities (the
service: ambient capabilities, docs/fleet.md): it clears its ambient, inheritable,
permitted and effective sets. Either way ``no_new_privs`` is set, so nothing it could
execute gains any back; and the result is read back from /proc/self/status and refused
unless every set is empty and no id is 0.
"""

from __future__ import annotations

import ctypes
import os
import pwd

from ..errors import LockscopeError

PR_SET_NO_NEW_PRIVS = 38
PR_CAP_AMBIENT = 47
PR_CAP_AMBIENT_CLEAR_ALL = 4
PR_SET_DUMPABLE = 4
_LINUX_CAPABILITY_VERSION_3 = 0x20080522
CAP_SETS = ("CapInh", "CapPrm", "CapEff", "CapAmb")


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                ("inheritable", ctypes.c_uint32)]


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def _check(rc: int, what: str) -> None:
    if rc != 0:
        err = ctypes.get_errno()
        raise LockscopeError(f"exporter: cannot {what}: {os.strerror(err)}")


def status_ids_and_caps(pid: int | str = "self") -> dict[str, str]:
    """Uid, Gid and the capability sets of a process, as /proc/PID/status says them."""
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in ("Uid", "Gid", "NoNewPrivs", *CAP_SETS):
                out[key] = value.strip()
    return out


def drop_privileges(user: str | None) -> str:
    """Give up root and every capability for good; returns who the process now is."""
    libc = _libc()
    if os.geteuid() == 0 or os.getuid() == 0:
        name = user or "nobody"
        try:
            pw = pwd.getpwnam(name)
        except KeyError:
            raise LockscopeError(f"exporter: no user {name!r} to run as "
                                 "(--export-user names another)") from None
        if pw.pw_uid == 0:
            raise LockscopeError(f"exporter: --export-user {name} is root")
        os.setgroups([])
        os.setresgid(pw.pw_gid, pw.pw_gid, pw.pw_gid)
        os.setresuid(pw.pw_uid, pw.pw_uid, pw.pw_uid)
    _check(libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0),
           "clear its ambient capabilities")
    header = _CapHeader(_LINUX_CAPABILITY_VERSION_3, 0)
    data = (_CapData * 2)()     # all zero: no capability in any set
    _check(libc.capset(ctypes.byref(header), data), "clear its capabilities")
    _check(libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "set no_new_privs")
    # not dumpable: another process of the same user cannot read its keys by ptrace
    _check(libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0), "stop being dumpable")
    got = status_ids_and_caps()
    held = [k for k in CAP_SETS if int(got.get(k, "0"), 16)]
    if held or "0" in (got["Uid"].split() + got["Gid"].split()):
        raise LockscopeError(f"exporter: privileges remain after dropping them ({got})")
    return pwd.getpwuid(os.getuid()).pw_name if _has_name(os.getuid()) else str(os.getuid())


def _has_name(uid: int) -> bool:
    try:
        pwd.getpwuid(uid)
        return True
    except KeyError:
        return False
