"""Run a command as another user holding exactly the given capabilities, in its
permitted, effective, inheritable and ambient sets (what systemd's User= and
AmbientCapabilities= give a service). By number, so a setpriv or capsh too old to name
CAP_BPF or CAP_PERFMON (Debian 11's) is no obstacle.

    python run_with_caps.py USER CAP[,CAP...] -- COMMAND [ARG...]     (CAP: a number)
"""

from __future__ import annotations

import ctypes
import os
import pwd
import sys

PR_SET_KEEPCAPS = 8
PR_CAP_AMBIENT = 47
PR_CAP_AMBIENT_RAISE = 2
_LINUX_CAPABILITY_VERSION_3 = 0x20080522


class _Header(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _Data(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                ("inheritable", ctypes.c_uint32)]


def main(argv: list[str]) -> None:
    user, caps_text, sep, *command = argv
    if sep != "--" or not command:
        sys.exit(__doc__)
    caps = [int(c) for c in caps_text.split(",") if c]
    libc = ctypes.CDLL(None, use_errno=True)

    def check(rc: int, what: str) -> None:
        if rc != 0:
            sys.exit(f"run_with_caps: {what}: {os.strerror(ctypes.get_errno())}")

    pw = pwd.getpwnam(user)
    check(libc.prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0), "keep capabilities")
    os.setgroups([])
    os.setresgid(pw.pw_gid, pw.pw_gid, pw.pw_gid)
    os.setresuid(pw.pw_uid, pw.pw_uid, pw.pw_uid)
    data = (_Data * 2)()
    for c in caps:
        bit = 1 << (c % 32)
        data[c // 32].effective |= bit
        data[c // 32].permitted |= bit
        data[c // 32].inheritable |= bit
    check(libc.capset(ctypes.byref(_Header(_LINUX_CAPABILITY_VERSION_3, 0)), data),
          "set capabilities")
    for c in caps:
        check(libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, c, 0, 0),
              f"raise ambient capability {c}")
    os.execvp(command[0], command)


if __name__ == "__main__":
    main(sys.argv[1:])
