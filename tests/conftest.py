"""Shared fixtures: kernel-test gating, real loop-backed ext4/XFS mounts, and the
``lockscope`` command as a child process.

Kernel tests (marked ``kernel``) need root, BPF and loop devices. They skip
with a reason naming what is missing, except under LOCKSCOPE_KERNEL_TESTS=1,
where a missing piece fails the test instead.
"""

from __future__ import annotations

import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "analyzer"))

from lockscope.run.loopfs import LoopFilesystem, make_loopfs  # noqa: E402

from lockscope_cli import LOCKSCOPE, Lockscope  # noqa: E402

__all__ = ["LOCKSCOPE", "Lockscope"]

KERNEL_TESTS_REQUIRED = os.environ.get("LOCKSCOPE_KERNEL_TESTS") == "1"




@pytest.fixture
def lockscope_cli() -> Lockscope:
    """The one way a test starts the lockscope command (lockscope_cli.Lockscope)."""
    return LOCKSCOPE


def kernel_missing() -> str | None:
    """What keeps kernel tests from running here, or None."""
    if os.geteuid() != 0:
        return "not root (run as root, e.g. sudo make test)"
    if not os.path.exists("/sys/kernel/btf/vmlinux"):
        return "no /sys/kernel/btf/vmlinux (kernel built without BTF)"
    if not os.path.exists("/dev/loop-control"):
        return "no /dev/loop-control (loop devices unavailable)"
    for tool in ("losetup", "mkfs.ext4", "mkfs.xfs"):
        if not shutil.which(tool):
            return f"{tool} not installed (make test installs it)"
    return None


def require_kernel() -> None:
    """Skip (or, under LOCKSCOPE_KERNEL_TESTS=1, fail) when kernel tests cannot run."""
    missing = kernel_missing()
    if missing:
        if KERNEL_TESTS_REQUIRED:
            pytest.fail(f"LOCKSCOPE_KERNEL_TESTS=1 but {missing}")
        pytest.skip(f"kernel test: {missing}; set up root+BPF and LOCKSCOPE_KERNEL_TESTS=1")


def not_here(why: str) -> NoReturn:
    """What the test checks is not on this host: a skip, but a failure under
    LOCKSCOPE_KERNEL_TESTS=1, whose hosts must have it."""
    if KERNEL_TESTS_REQUIRED:
        pytest.fail(f"LOCKSCOPE_KERNEL_TESTS=1 but {why}")
    pytest.skip(why)


def require_tool(name: str) -> str:
    """Path of an external tool, or skip/fail like require_kernel."""
    path = shutil.which(name)
    if not path:
        if KERNEL_TESTS_REQUIRED:
            pytest.fail(f"LOCKSCOPE_KERNEL_TESTS=1 but {name} is not installed")
        pytest.skip(f"{name} not installed (make test installs it)")
    return path


# Fixtures that make loop filesystems: a module using one is a kernel module.
KERNEL_FIXTURES = {"ext4_fs", "xfs_fs", "any_fs", "filesystems", "loopfs_factory"}


@pytest.hookimpl(tryfirst=True)  # before -m selects by the markers
def pytest_collection_modifyitems(config, items):
    """A module with any kernel test runs all its tests with the kernel ones (``make test``
    runs those one at a time, after the others in parallel): its module fixtures stay
    shared, and tests beside kernel tests often use the machine too."""
    kernel_modules = {item.nodeid.split("::")[0] for item in items
                      if item.get_closest_marker("kernel")
                      or KERNEL_FIXTURES & set(getattr(item, "fixturenames", ()))}
    for item in items:
        if item.nodeid.split("::")[0] in kernel_modules and not item.get_closest_marker("kernel"):
            item.add_marker(pytest.mark.kernel)


def pytest_runtest_setup(item):
    if item.get_closest_marker("kernel"):
        require_kernel()


def _loopfs(fstype: str, size: int = 2 << 30):
    require_kernel()
    fs = make_loopfs(fstype, size_bytes=size)
    try:
        yield fs
    finally:
        fs.destroy()


@pytest.fixture
def ext4_fs():
    """A fresh mounted ext4 on a direct-I/O loop device; yields LoopFilesystem (.path)."""
    yield from _loopfs("ext4")


@pytest.fixture
def xfs_fs():
    """A fresh mounted XFS on a direct-I/O loop device; yields LoopFilesystem (.path)."""
    yield from _loopfs("xfs")


@pytest.fixture(params=["ext4", "xfs"])
def any_fs(request) -> LoopFilesystem:
    """Each test using this runs once on ext4 and once on XFS."""
    yield from _loopfs(request.param)


@pytest.fixture(scope="module")
def filesystems():
    """One ext4 and one XFS shared by a whole test module (making them is the slow part):
    ``filesystems["ext4"].path``."""
    require_kernel()
    made: dict[str, LoopFilesystem] = {}
    try:
        for fstype in ("ext4", "xfs"):
            made[fstype] = make_loopfs(fstype, size_bytes=1 << 30)
        yield made
    finally:
        for fs in made.values():
            fs.destroy()


@dataclass
class SharedDir:
    """A test's own directory on a module's shared loop filesystem (``.path``, ``.fstype``):
    for tests that only need files of their own on ext4 or XFS, not a fresh filesystem."""

    path: Path
    fstype: str


def shared_dir(filesystems: dict[str, LoopFilesystem], fstype: str, name: str):
    """Yield a fresh directory for one test on ``filesystems[fstype]``; removed after it."""
    safe = "".join(c if c.isalnum() else "-" for c in name)[:100]
    path = filesystems[fstype].path / safe
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir()
    try:
        yield SharedDir(path, fstype)
    finally:
        shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def loopfs_factory():
    """Make several loop filesystems in one test: ``loopfs_factory('xfs', size)``."""
    require_kernel()
    made: list[LoopFilesystem] = []

    def make(fstype: str, size: int = 2 << 30, **kw) -> LoopFilesystem:
        fs = make_loopfs(fstype, size_bytes=size, **kw)
        made.append(fs)
        return fs

    yield make
    for fs in reversed(made):
        fs.destroy()
