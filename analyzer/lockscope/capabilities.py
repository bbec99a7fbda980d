"""The capabilities recording needs, and what each one missing costs (docs/fleet.md,
"Least privilege"). Root holds them all; a service user is given exactly these (the
systemd unit's AmbientCapabilities). Measured by running the recorder as a non-root
user with each one removed (tests/kernel/attach/test_attach_privileges.py)."""

from __future__ import annotations

import os
from dataclasses import dataclass


@dataclass(frozen=True)
class Capability:
    name: str
    number: int
    required: bool
    costs: str


# numbers: include/uapi/linux/capability.h
CAPABILITIES = (
    Capability("CAP_BPF", 39, True,
               "nothing can be recorded: loading BPF programs and maps "
               "(kernel/bpf/syscall.c: bpf_capable)"),
    Capability("CAP_PERFMON", 38, True,
               "nothing can be recorded: attaching to tracepoints and reading kernel memory "
               "from BPF (kernel/bpf/syscall.c: bpf_token_capable / perfmon_capable)"),
    Capability("CAP_SYSLOG", 34, False,
               "kernel stacks are not symbolized ([unknown] frames): /proc/kallsyms shows "
               "addresses only to CAP_SYSLOG when perf_event_paranoid > 1 "
               "(kernel/kallsyms.c: kallsyms_show_value)"),
    Capability("CAP_SYS_PTRACE", 19, False,
               "no user stacks, file paths or --fs auto for processes of other users: "
               "/proc/PID/maps, fd and root need ptrace access (fs/proc/base.c: "
               "proc_fd_access_allowed, proc_mem_open)"),
    Capability("CAP_DAC_READ_SEARCH", 2, False,
               "/proc/PID/fd of processes of other users cannot be listed: file paths and "
               "--fs auto are lost for them (the directory is the owner's, mode 0500)"),
    Capability("CAP_SYS_ADMIN", 21, False,
               "the recorder's CPU is not measured (BPF run-time statistics: "
               "kernel/bpf/syscall.c: bpf_enable_stats), so --max-overhead cannot be held: "
               "the budget and cost figures are reported as not measured; and on some "
               "kernels (Debian 12's 6.1, measured) the BPF object does not load at all"),
    Capability("CAP_SYS_RESOURCE", 24, False,
               "on kernels that charge BPF maps to RLIMIT_MEMLOCK (before memory-cgroup "
               "accounting, kernel/bpf/syscall.c: bpf_map_charge_memlock) the maps may not "
               "fit; later kernels do not use it"),
)
BY_NAME = {c.name: c for c in CAPABILITIES}


def effective() -> int:
    """This process's effective capability mask (/proc/self/status CapEff)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("CapEff:"):
                return int(line.split()[1], 16)
    return 0


def missing(mask: int | None = None) -> list[Capability]:
    """The capabilities recording uses that this process lacks, required first."""
    held = effective() if mask is None else mask
    return [c for c in CAPABILITIES if not held >> c.number & 1]


def require_recording() -> None:
    """A LockscopeError naming the missing capability when recording cannot start."""
    from .errors import LockscopeError

    lacking = [c.name for c in missing() if c.required]
    if "CAP_SYS_RESOURCE" in {c.name for c in missing()} and memlock_charged():
        import resource

        hard = resource.getrlimit(resource.RLIMIT_MEMLOCK)[1]
        if hard != resource.RLIM_INFINITY:
            lacking.append(f"CAP_SYS_RESOURCE (this kernel charges BPF maps to "
                           f"RLIMIT_MEMLOCK, limited to {hard >> 10} KiB here)")
    if lacking:
        who = "not root" if os.geteuid() else "root without them"
        raise LockscopeError(f"{who}: recording needs {' and '.join(lacking)} "
                             "(lockscope doctor has the detail)")


def memlock_charged() -> bool:
    """Whether this kernel charges BPF maps to RLIMIT_MEMLOCK: its BTF still has
    struct bpf_map_memory (include/linux/bpf.h up to 5.10; memory cgroups from 5.11)."""
    try:
        with open("/sys/kernel/btf/vmlinux", "rb") as f:
            return b"\0bpf_map_memory\0" in f.read()
    except OSError:
        return True     # unknown: say what it could cost


def what_is_lost() -> list[str]:
    """One line per capability recording could use and this process lacks (the memlock
    one only where the kernel charges it)."""
    return [f"without {c.name}: {c.costs}" for c in missing() if not c.required
            and (c.name != "CAP_SYS_RESOURCE" or memlock_charged())]
