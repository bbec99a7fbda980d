"""What the fault-injection tests (test_faults_*.py) share: a sweep run with its stderr
lines timed as they come, a point reached, a fault's one line, and nothing left behind.

Each fault is real: a tmpfs that runs out under an ext4 image, ext4's own error trigger
(/sys/fs/ext4/<dev>/trigger_fs_error, which reports an error as a failing device does),
a process killed with SIGKILL, a mount namespace without loop devices."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from lockscope_cli import LOCKSCOPE
from patience import patience

# a small job: 64 KiB direct random writes over a written file per thread
SMALL_JOB = """[global]
rw=randwrite
bs=64k
direct=1
layout=written
size={size}
nrfiles=1
[w]
"""
WAIT_S = 180


@dataclass
class Run:
    """A running ``lockscope`` whose stderr lines are kept with the time each came."""

    proc: subprocess.Popen
    out: Path
    lines: list[tuple[float, str]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.append((time.monotonic(), line.rstrip("\n")))

    def wait_line(self, text: str, timeout: float = WAIT_S) -> float:
        """When a stderr line holding ``text`` came (waits for it)."""
        deadline = time.monotonic() + patience(timeout)
        while time.monotonic() < deadline:
            for t, line in list(self.lines):
                if text in line:
                    return t
            if self.proc.poll() is not None and not self._reader.is_alive():
                break
            time.sleep(0.05)
        raise AssertionError(f"no line with {text!r}: {self.text()[-3000:]}")

    def wait_runs(self, n: int, timeout: float = WAIT_S) -> dict:
        """results.json once it holds ``n`` finished points."""
        deadline = time.monotonic() + patience(timeout)
        while time.monotonic() < deadline and self.proc.poll() is None:
            try:
                doc = json.loads((self.out / "results.json").read_text())
                if len(doc["runs"]) >= n:
                    return doc
            except (OSError, ValueError):
                pass
            time.sleep(0.05)
        raise AssertionError(f"no results.json with {n} point(s): {self.text()[-3000:]}")

    def finish(self, timeout: float = WAIT_S) -> int:
        self.proc.wait(patience(timeout))
        self._reader.join(patience(10))
        return self.proc.returncode

    def text(self) -> str:
        return "\n".join(line for _, line in self.lines)

    def last_line(self) -> str:
        return self.lines[-1][1] if self.lines else ""

    def results(self) -> dict:
        return json.loads((self.out / "results.json").read_text())


def start_sweep(out: Path, *args: object, env: dict | None = None) -> Run:
    proc = LOCKSCOPE.start("sweep", *args, "--out", out, "--no-report",
                           stdout=subprocess.DEVNULL, env=env)
    return Run(proc, out)


def job_file(tmp_path: Path, size: str = "16m") -> Path:
    p = tmp_path / "small.fio"
    p.write_text(SMALL_JOB.format(size=size))
    return p


def assert_one_line_failure(run: Run, *words: str) -> str:
    """Exit 1, no traceback, the last stderr line is lockscope's and names ``words``."""
    text = run.text()
    assert run.proc.returncode == 1, text[-3000:]
    assert "Traceback" not in text, text[-3000:]
    last = run.last_line()
    assert last.startswith("lockscope sweep: "), text[-3000:]
    for w in words:
        assert w in last, (w, last)
    keep_line(last)
    return last


def keep_line(line: str) -> None:
    """With LOCKSCOPE_FAULT_LINES=FILE, the test's name and the line it got are appended
    there: docs/faults.md's table is written from them."""
    path = os.environ.get("LOCKSCOPE_FAULT_LINES")
    if path:
        test = os.environ.get("PYTEST_CURRENT_TEST", "?").split(" ")[0]
        with open(path, "a") as f:
            f.write(f"{test}\t{line}\n")


def mounted() -> set[str]:
    return {line.split()[1] for line in open("/proc/mounts")}


def assert_nothing_left(doc: dict, out: Path, image_kept: bool = False) -> None:
    """The mounts and loop devices the sweep made are gone, and so are its processes;
    so are its images unless one had to stay (its filesystem went read-only)."""
    for label, fs in doc["host"]["filesystems"].items():
        if not fs.get("made_by_lockscope"):
            continue
        assert fs["mountpoint"] not in mounted(), f"{label} still mounted"
        attached = subprocess.run(["losetup", "-j", fs["backing"]], capture_output=True,
                                  text=True).stdout
        assert not attached.strip(), f"{label} loop device left attached: {attached}"
        if not image_kept:
            assert not os.path.exists(fs["backing"]), f"{label} image left behind"
    assert not processes_mentioning(str(out)), processes_mentioning(str(out))


def processes_mentioning(text: str) -> list[int]:
    """Live processes whose command line holds ``text`` (an --out or image path)."""
    pids = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit() or int(d.name) == os.getpid():
            continue
        try:
            cmd = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state = (d / "stat").read_text().rsplit(")", 1)[-1].split()[0]
        except OSError:
            continue
        if text in cmd and state != "Z":
            pids.append(int(d.name))
    return pids


def find_child(comm: str, mentioning: str, timeout: float = WAIT_S) -> int:
    """The pid of the process named ``comm`` whose command line holds ``mentioning``
    (waits for it)."""
    deadline = time.monotonic() + patience(timeout)
    while time.monotonic() < deadline:
        for pid in processes_mentioning(mentioning):
            try:
                # the kernel keeps 15 characters of a name (TASK_COMM_LEN)
                if Path(f"/proc/{pid}/comm").read_text().strip() == comm[:15]:
                    return pid
            except OSError:
                continue
        time.sleep(0.05)
    raise AssertionError(f"no {comm} process with {mentioning} in its command line")


def kill_child(comm: str, mentioning: str) -> int:
    """SIGKILL that process."""
    pid = find_child(comm, mentioning)
    os.kill(pid, signal.SIGKILL)
    return pid


def ext4_error(device: str, why: str = "lockscope fault test") -> None:
    """Make ext4 on ``device`` report an error, as on a failing device (fs/ext4/sysfs.c,
    trigger_fs_error → ext4_error)."""
    Path(f"/sys/fs/ext4/{Path(device).name}/trigger_fs_error").write_text(why)


def _run(*cmd: str) -> str:
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout.strip()


@contextmanager
def thin_storage(base: Path, tmpfs_mb: int, size: str = "2g"):
    """An ext4 (errors=remount-ro) on a sparse ``size`` file on a ``tmpfs_mb`` MiB tmpfs:
    storage that promises more than it has, as a thin-provisioned volume does. Yields the
    ext4's mount point and its loop device."""
    tmpfs, outer = base / "thin-tmpfs", base / "thin-ext4"
    tmpfs.mkdir()
    outer.mkdir()
    _run("mount", "-t", "tmpfs", "-o", f"size={tmpfs_mb}m", "lockscope-thin", str(tmpfs))
    dev = ""
    try:
        backing = tmpfs / "backing"
        _run("truncate", "-s", size, str(backing))
        dev = _run("losetup", "--find", "--show", str(backing))
        # a small journal: the tmpfs holds the data the test writes, not mkfs's zeros
        _run("mkfs.ext4", "-q", "-J", "size=4", "-E", "nodiscard", dev)
        _run("mount", "-o", "errors=remount-ro", dev, str(outer))
        yield outer, dev
    finally:
        if str(outer) in mounted():
            subprocess.run(["umount", "-l", str(outer)], check=False)
        if dev:
            subprocess.run(["losetup", "-d", dev], check=False)
        subprocess.run(["umount", "-l", str(tmpfs)], check=False)
