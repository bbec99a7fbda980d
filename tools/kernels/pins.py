"""The kernels of the kernel matrix, pinned to exact Debian packages, and where they are kept.

One place for every version: the matrix fetches exactly these, and README's kernel table
is checked against what was measured on them.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

# /var/lib: /var/cache is a tmpfs in the guests; LOCKSCOPE_KERNEL_ROOT moves it all
ROOT = Path(os.environ.get("LOCKSCOPE_KERNEL_ROOT", "/var/lib/lockscope"))
CACHE = ROOT / "kernels"
DEBS = CACHE / "debs"
APT_ROOT = ROOT / "apt"                         # a private apt root: the host's apt is untouched
VNG_VENV = ROOT / "vng-venv"
VNG_PIN = "virtme-ng==1.42"
HOST_APT = ["qemu-system-x86", "kmod", "busybox-static"]


def sources() -> tuple[list[str], str]:
    """The private apt root's sources, from this machine's own archive (its apt sources),
    and their keyring: the releases the pinned kernels come from."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "debian"))
    from archive import archive  # noqa: E402
    a = archive()
    return [*a.sources("bullseye", updates=False), *a.sources("bookworm", backports=True)], \
        a.keyring


# What a host of each release has besides its base system, from that release's own archive:
# its database servers and their benchmark clients (the attach checks), fio (the recorder's
# tests drive it), the filesystems' tools, what guest-run itself calls, and the release's
# own bpftrace (lockscope follow's scripts run on it) with the kernel's user-space headers
# (Debian 11's bpftrace 0.11 includes linux/types.h in every script it compiles). No
# compiler, no Python: the release brings its own.
ROOT_PACKAGES = ["kmod", "util-linux", "e2fsprogs", "xfsprogs", "procps", "bc", "gzip",
                 "mariadb-server", "mariadb-client", "postgresql", "sysbench", "fio",
                 "bpftrace", "linux-libc-dev"]


@dataclass(frozen=True)
class Kernel:
    release: str        # uname -r
    package: str        # Debian binary package
    version: str        # its exact Debian version
    upstream: str       # the kernel.org version it is built from
    stands_for: str     # the distributions whose hosts run this kernel line
    suite: str          # the Debian release whose root filesystem the guest boots with
    host: str           # that release, as the hosts table names it

    @property
    def userland(self) -> Path:
        """The release's root filesystem (tools/debian/mkroot builds and caches it)."""
        return ROOT / "roots" / f"host-{self.suite}"

    @property
    def deb(self) -> Path:
        return DEBS / f"{self.package}_{self.version}_amd64.deb"

    @property
    def root(self) -> Path:
        return CACHE / self.release

    @property
    def vmlinuz(self) -> Path:
        return self.root / "boot" / f"vmlinuz-{self.release}"

    def vng(self, cpus: int, memory: str, dirs: list[str], command: str) -> list[str]:
        """The vng command booting this kernel on its release's root (TCG: KVM guests
        stall here), running `command`; the root stays read-only on the host, what the
        guest writes under /etc, /opt, /usr/local and /var goes to overlays that vanish
        with it; `dirs`: more vng directory options (--rwdir, --rodir)."""
        overlays = [a for d in ("/etc", "/opt", "/usr/local", "/var")
                    for a in ("--overlay-rwdir", d)]
        return [str(VNG_VENV / "bin" / "vng"), "--verbose", "--run", str(self.vmlinuz),
                "--root", str(self.userland), "--disable-kvm", "--cpus", str(cpus),
                "--memory", memory, *overlays, *dirs, "--exec", command]


KERNELS = [
    Kernel("6.12.117+deb12-amd64", "linux-image-6.12.117+deb12-amd64", "6.12.117-1~deb12u1",
           "6.12.117", "Debian 13, RHEL 10, Ubuntu 24.04 HWE", "trixie", "Debian 13"),
    Kernel("6.1.0-56-amd64", "linux-image-6.1.0-56-amd64", "6.1.192-2", "6.1.192",
           "Debian 12, Amazon Linux 2023", "bookworm", "Debian 12"),
    Kernel("5.10.0-32-amd64", "linux-image-5.10.0-32-amd64", "5.10.223-1", "5.10.223",
           "Debian 11 (and kernels without lock:contention_*: Ubuntu 22.04, RHEL 9)", "bullseye",
           "Debian 11"),
]


def by_release(release: str) -> Kernel:
    for k in KERNELS:
        if k.release == release:
            return k
    raise KeyError(release)
