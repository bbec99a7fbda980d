"""The kernels of the kernel matrix, pinned to exact Debian packages, and where they are kept.

One place for every version: the matrix fetches exactly these, and README's kernel table
is checked against what was measured on them.
"""

from __future__ import annotations

import os
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
KEYRING = "/usr/share/keyrings/debian-archive-keyring.gpg"
SOURCES = [
    "http://deb.debian.org/debian bullseye main",
    "http://deb.debian.org/debian bookworm main",
    "http://deb.debian.org/debian-security bookworm-security main",
    "http://deb.debian.org/debian bookworm-backports main",
]


@dataclass(frozen=True)
class Kernel:
    release: str        # uname -r
    package: str        # Debian binary package
    version: str        # its exact Debian version
    upstream: str       # the kernel.org version it is built from
    stands_for: str     # the distributions whose hosts run this kernel line

    @property
    def deb(self) -> Path:
        return DEBS / f"{self.package}_{self.version}_amd64.deb"

    @property
    def root(self) -> Path:
        return CACHE / self.release

    @property
    def vmlinuz(self) -> Path:
        return self.root / "boot" / f"vmlinuz-{self.release}"


KERNELS = [
    Kernel("6.12.117+deb12-amd64", "linux-image-6.12.117+deb12-amd64", "6.12.117-1~deb12u1",
           "6.12.117", "Debian 13, RHEL 10, Ubuntu 24.04 HWE"),
    Kernel("6.1.0-56-amd64", "linux-image-6.1.0-56-amd64", "6.1.192-2", "6.1.192",
           "Debian 12, Amazon Linux 2023"),
    Kernel("5.10.0-32-amd64", "linux-image-5.10.0-32-amd64", "5.10.223-1", "5.10.223",
           "Debian 11 (and kernels without lock:contention_*: Ubuntu 22.04, RHEL 9)"),
]


def by_release(release: str) -> Kernel:
    for k in KERNELS:
        if k.release == release:
            return k
    raise KeyError(release)
