"""What the kernel matrix expects of each kernel: the one place for known gaps.

``missing``: the core groups the kernel cannot load, each with why (what docs/kernels.md
says it lacks); the matrix fails when the measurement differs either way, so doctor and
the docs cannot drift from the kernel. ``gaps``: checks known to fail on that kernel,
each with why; every other check must pass. A gap that closes is reported (remove it
here), and it does not fail the run.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from lockscope.run.probe_groups import CORE_GROUPS  # noqa: F401 (doctor's; judge.py's too)


@dataclass(frozen=True)
class Expect:
    missing: dict[str, str] = field(default_factory=dict)   # core group -> why it cannot load
    gaps: dict[str, str] = field(default_factory=dict)      # check -> why it fails there
    # whether io_uring hashes O_DIRECT writes to ext4 (io_uring/io_uring.c
    # io_prep_async_work(): before 6.4 it does; ext4 sets FMODE_DIO_PARALLEL_WRITE from
    # 6.4), and so whether the io_uring sweep's verdict names io-wq; None: not checked
    # on this kernel
    io_wq_hashed: bool | None = None


EXPECTED: dict[str, Expect] = {
    "6.12.117+deb12-amd64": Expect(io_wq_hashed=False),
    # 6.1 and 5.10: dio through __iomap_dio_rw/iomap_dio_complete, whose events (from 6.5,
    # 3fd41721cd5c) they lack (bpf/recorder/alternatives.c)
    "6.1.0-56-amd64": Expect(io_wq_hashed=True),
    # 5.10: lock waits from the rwsem/mutex slow paths (lock_slowpath stands in for lock)
    "5.10.0-32-amd64": Expect(io_wq_hashed=True, gaps={
        "follow_counts_as_recorder":
            "Debian 11's bpftrace 0.11.3 compiles no follow script: the struct definitions "
            "it writes from the kernel's BTF (definitions.h) use u64, size_t, loff_t and "
            "pid_t without their typedefs ('unknown type name u64'); the kprobe variant "
            "never attaches",
    }),
}
