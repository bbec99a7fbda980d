"""Helpers for the lockscope-record tests: fio writers and a recorder lined up with them.

No tests here; test_record_cli.py and test_record_scenarios.py import it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from contextlib import contextmanager
from pathlib import Path

from patience import patience

ROOT = Path(__file__).resolve().parents[2]
RECORD = ROOT / "build" / "bin" / "lockscope-record"
INODE_KINDS = ("i_rwsem", "xfs_ilock", "invalidate_lock", "i_data_sem")
FINISH_TIMEOUT_S = 60   # from "stop" to the recorder's exit: detach, read, write


def record_binary() -> str:
    """The built recorder; a clear failure when it was not built."""
    assert RECORD.is_file(), f"{RECORD} is missing: run 'make bins'"
    return str(RECORD)


def prepare_file(path: Path, mode: str, size_mb: int) -> None:
    """sparse/buffered: a sparse file of size_mb; overwrite: fully written, synced."""
    if mode == "overwrite":
        if not path.exists() or path.stat().st_size != size_mb << 20:
            subprocess.run(["dd", "if=/dev/zero", f"of={path}", "bs=1M", f"count={size_mb}",
                            "oflag=direct", "status=none"], check=True)
    else:
        path.unlink(missing_ok=True)
        with open(path, "wb") as f:
            f.truncate(size_mb << 20)
    os.sync()


def start_fio(fio: str, path: Path, mode: str, size_mb: int = 128, runtime: float = 600,
              jobs: int = 4, cwd: Path | None = None) -> subprocess.Popen:
    """4 writer threads of one process (--thread) doing random 4k writes on one file,
    until stop(): the runtime only outlives a recorder's start, which takes tens of
    seconds on an emulated (TCG) machine.

    --fallocate=none keeps a sparse file sparse (fio would preallocate it);
    --file_service_type and --norandommap keep fio from laying the file out.
    The runtime outlasts a recorder that takes minutes to load (an emulated guest);
    callers stop fio once they have recorded.
    """
    cmd = [fio, "--name=w", f"--filename={path}", "--rw=randwrite", "--bs=4k",
           f"--direct={0 if mode == 'buffered' else 1}", f"--numjobs={jobs}", "--thread",
           f"--size={size_mb}m", f"--runtime={runtime}", "--time_based", "--fallocate=none",
           "--norandommap", "--group_reporting", "--output-format=terse"]
    return subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            cwd=cwd)


def wait_jobs_writing(pid: int, jobs: int = 4, timeout: float = 60) -> None:
    """Until `jobs` threads of the process have each made a write call. Only then may
    fio be paused: its main thread gives a job JOB_START_TIMEOUT (5 s, wall clock) to
    initialise, and a pause inside that window makes it give up on the job and wait
    forever (fio's backend.c, run_threads()); a thread that exists may not have started."""
    deadline = time.monotonic() + patience(timeout)
    while True:
        writing = sum(1 for tid in _tids(pid) if _thread_write_calls(pid, tid) > 0)
        if writing >= jobs:
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"{writing} of {jobs} jobs of {pid} wrote in "
                                 f"{patience(timeout):g} s: " + threads_doing(pid))
        time.sleep(0.05)


def _tids(pid: int) -> list[str]:
    try:
        return os.listdir(f"/proc/{pid}/task")
    except FileNotFoundError:
        raise AssertionError(f"process {pid} exited before its jobs wrote") from None


def _thread_write_calls(pid: int, tid: str) -> int:
    try:
        return write_calls(pid, tid)
    except (FileNotFoundError, ProcessLookupError):
        return 0   # the thread has gone


def wait_threads(pid: int, n: int, timeout: float = 20) -> None:
    """Until the process has n threads (fio starts its jobs after a short setup)."""
    deadline = time.time() + patience(timeout)
    while time.time() < deadline:
        try:
            if len(os.listdir(f"/proc/{pid}/task")) >= n:
                return
        except FileNotFoundError:
            raise AssertionError(f"process {pid} exited before its threads started") from None
        time.sleep(0.05)
    raise AssertionError(f"process {pid} did not start {n} threads")


def stop(proc: subprocess.Popen | None) -> None:
    if proc and proc.poll() is None:
        proc.send_signal(signal.SIGCONT)   # it may have been paused
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(patience(10))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@contextmanager
def recorder(args: list[str], out: Path):
    """A recorder in --start-on-stdin mode, attached and ready; yields (proc, start, stop).
    It sheds nothing (--max-overhead 0) unless args say otherwise: on a busy host the
    default budget could turn stacks off in the middle of what a test checks. Every
    filesystem's probe groups (--fs all) unless args name --fs: a test's target often
    opens its files after the recorder attached, which --pid's default (auto) cannot see.
    The run-time statistics stay on throughout (--stats-every 1) unless args say
    otherwise: tests compare run counts and shares over the whole window."""
    fs = [] if "--fs" in args else ["--fs", "all"]
    every = [] if "--stats-every" in args else ["--stats-every", "1"]
    proc = subprocess.Popen([record_binary(), "--max-overhead", "0", "--start-on-stdin",
                             "--out", str(out), *fs, *every, *args],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        assert line == "ready\n", f"recorder said {line!r}: {proc.stderr.read()[-2000:]}"

        def start() -> None:
            proc.stdin.write("start\n")
            proc.stdin.flush()
            said = proc.stdout.readline()
            assert said == "started\n", f"recorder said {said!r}"

        def finish() -> dict:
            proc.stdin.write("stop\n")
            proc.stdin.flush()
            proc.stdin.close()
            assert proc.wait(patience(FINISH_TIMEOUT_S)) == 0, proc.stderr.read()[-2000:]
            return json.loads(out.read_text())

        yield proc, start, finish
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def record_gated_program(argv: list[str], out: Path, recorder_args: tuple[str, ...] = (),
                         ready: bool = False) -> tuple[dict, dict, float]:
    """A program that waits for "go" on stdin (after printing "ready" first, with
    ``ready``) and then prints one JSON line of what it did, run under the recorder
    (--pid): (what it said, the recording, seconds from the window's start to "go")."""
    prog = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert prog.stdin is not None and prog.stdout is not None
        if ready:
            assert prog.stdout.readline() == "ready\n"
        with recorder(["--pid", str(prog.pid), *recorder_args], out) as (_, start, finish):
            start()
            t0 = time.monotonic()
            prog.stdin.write("go\n")
            prog.stdin.flush()
            lead = time.monotonic() - t0
            said = json.loads(prog.stdout.readline())
            assert prog.wait(patience(60)) == 0
            doc = finish()
    finally:
        if prog.poll() is None:
            prog.kill()
            prog.wait()
    return said, doc, lead


def remove_cgroup(cg: Path, timeout_s: float = 5.0) -> None:
    """Removes a test's cgroup once its last task has gone (rmdir fails while the
    kernel still counts one); left in place after timeout_s."""
    deadline = time.monotonic() + patience(timeout_s)
    while cg.exists() and time.monotonic() < deadline:
        try:
            cg.rmdir()
        except OSError:
            time.sleep(0.1)


def wait_for_series(series_out: Path, intervals: int, timeout_s: float = 60.0) -> None:
    """Blocks until the recorder has written `intervals` series lines: on a loaded host
    the intervals close later than the wall clock says, so a test waits for them."""
    timeout_s = patience(timeout_s)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if series_out.exists() and len(series_out.read_text().splitlines()) >= intervals:
            return
        time.sleep(0.05)
    raise AssertionError(f"fewer than {intervals} series intervals in {timeout_s} s")


def record_writers(fio: str, path: Path, mode: str, out: Path, seconds: float = 2.0,
                   extra: list[str] | None = None, size_mb: int = 128) -> dict:
    """Runs the 4 writers, records --pid for `seconds` of their steady state. A sparse
    file's holes are punched again once the recorder is ready: while it loads (tens of
    seconds in an emulated guest) the writers fill the file, and writes into written
    blocks are overwrites, not the hole writes a sparse scenario is about."""
    prepare_file(path, mode, size_mb)
    writers = start_fio(fio, path, mode, size_mb)
    try:
        wait_jobs_writing(writers.pid)
        # The writers wait while the recorder loads: on one slow (emulated) CPU they
        # would take nearly all of it, and the load ten times as long.
        os.kill(writers.pid, signal.SIGSTOP)
        with recorder(["--pid", str(writers.pid), *(extra or [])], out) as (_, start, finish):
            os.kill(writers.pid, signal.SIGCONT)
            if mode == "sparse":
                punch_holes(path, size_mb)
            # once their writes are seen going on: on one emulated CPU the resumed
            # writers (the holes' allocations, the loop device under them) took longer
            # than a window, which then saw none of their time (a 6.1 guest)
            wait_writing(writers)
            start()
            time.sleep(seconds)
            doc = finish()
    finally:
        stop(writers)
    return doc


def write_calls(pid: int, tid: str | None = None) -> int:
    """The process's write-family system calls so far (/proc/PID/io syscw: all its
    threads), or one thread's."""
    with open(f"/proc/{pid}/task/{tid}/io" if tid else f"/proc/{pid}/io") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("syscw:"))


def wait_writing(proc: subprocess.Popen, calls: int = 8, timeout: float = 120) -> None:
    """Until the process has made `calls` more write calls; else fails saying what its
    threads were doing (state, wait channel, kernel stack) or how it ended."""
    first = write_calls(proc.pid)
    timeout = patience(timeout)
    deadline = time.monotonic() + timeout
    while proc.poll() is None and write_calls(proc.pid) - first < calls:
        if time.monotonic() > deadline:
            raise AssertionError(f"the writers made no {calls} writes in {timeout:g} s: "
                                 + threads_doing(proc.pid))
        time.sleep(0.05)
    if proc.returncode is not None:
        raise AssertionError(f"the writers ended ({proc.returncode}): "
                             + (proc.stderr.read() if proc.stderr else "")[-2000:])


def threads_doing(pid: int) -> str:
    """Each thread's state, wait channel and kernel stack, as /proc shows them."""
    out = []
    for tid in sorted(os.listdir(f"/proc/{pid}/task")):
        task = Path(f"/proc/{pid}/task/{tid}")
        try:
            state = task.joinpath("stat").read_text().rsplit(")", 1)[1].split()[0]
            wchan = task.joinpath("wchan").read_text()
            stack = task.joinpath("stack").read_text().replace("\n", " | ")
        except OSError as e:
            state, wchan, stack = "?", "?", str(e)
        out.append(f"{tid} {state} {wchan}: {stack}")
    return "; ".join(out)


def punch_holes(path: Path, size_mb: int) -> None:
    subprocess.run(["fallocate", "--punch-hole", "--offset", "0", "--length",
                    str(size_mb << 20), str(path)], check=True)


def thread_ns(doc: dict) -> int:
    """Time of all traced threads in the window (on CPU + off CPU + runnable)."""
    return sum(t["oncpu_ns"] + t["offcpu_ns"] + t["runqueue_ns"] for t in doc["threads"])


def file_locks(doc: dict, path: Path, kind: str | None) -> list[dict]:
    """The recorded locks of the file at path, of this kind (None: every kind)."""
    real = os.path.realpath(path)
    return [lk for lk in doc["locks"] if kind in (None, lk["kind"]) and lk["path"]
            and os.path.realpath(lk["path"]) == real]


def wait_share(doc: dict, path: Path, kind: str = "i_rwsem") -> float:
    """Wait on the file's lock of this kind as a share of traced thread time."""
    total = thread_ns(doc)
    # what the recording saw, should it ever be nothing (once, in a 5.10 guest)
    assert total > 0, ("no thread time recorded", doc["threads"][:8], doc["interval"],
                       doc.get("sampling"), doc.get("counts"),
                       [f for f in doc["features"] if f["name"] == "sched"])
    return sum(lk["total_ns"] for lk in file_locks(doc, path, kind)) / total


def dio_entry(doc: dict, path: Path) -> dict:
    real = os.path.realpath(path)
    for e in doc["dio"]:
        if e["path"] and os.path.realpath(e["path"]) == real:
            return e
    raise AssertionError(f"no dio entry for {path}: {[e['path'] for e in doc['dio']]}")


def start_engine(argv: list[str]) -> subprocess.Popen:
    """lockscope-load started with --start_on_stdin=1, its "ready" line read: it has laid
    its files out and waits for "go" (record_engine)."""
    engine = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    said = engine.stdout.readline()
    if said != "ready\n":
        engine.kill()
        _, err = engine.communicate()
        raise AssertionError(f"lockscope-load said {said!r}: {err[-2000:]}")
    return engine


def record_engine(engine: subprocess.Popen, out: Path, timeout: float,
                  extra: list[str] | None = None) -> dict:
    """The recorder's document of a started engine (start_engine) from its "go" to its
    exit; the engine is killed and its pipes closed on every path."""
    try:
        with recorder(["--pid", str(engine.pid), *(extra or [])], out) as (_, start, finish):
            start()
            engine.stdin.write("go\n")
            engine.stdin.flush()
            assert engine.wait(patience(timeout)) == 0, engine.stderr.read()[-2000:]
            return finish()
    finally:
        if engine.poll() is None:
            engine.kill()
            engine.wait()
        for s in (engine.stdin, engine.stdout, engine.stderr):
            s.close()
