"""Sweeps of external commands (fio, dd) on real loop-backed ext4 and XFS, traced by the
real recorder through the command's process tree. Short points, threads 1 and 2."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from lockscope.report.notes import missing_notes
from lockscope.run.host import cgroup2_root

from conftest import LOCKSCOPE, require_tool
from patience import patience
from sweep_runs import assert_nothing_left, lockscope

FIO = ("fio --name=w --filename={dir}/f.dat --size=32m --rw=randwrite --bs=4k --direct=1 "
       "--numjobs={threads} --runtime={runtime} --time_based --output-format=json")
DD_SPAN = 64 << 20
DD = ("dd if=/dev/zero of={dir}/big bs=64k oflag=direct conv=notrunc "
      "seek={part_offset} count={part_blocks}")
DD_PREPARE = f"dd if=/dev/zero of={{dir}}/big bs=1M count={DD_SPAN >> 20} status=none"


def command_sweep(tmp_path: Path, name: str, *args: str, fs: str = "ext4,xfs"):
    out = tmp_path / name
    res = lockscope("sweep", "--threads", "1,2", "--runtime", "2", "--fs", fs,
                    "--image-size", "1g", "--out", str(out), "--no-report", *args,
                    timeout=300)
    doc = json.loads((out / "results.json").read_text()) if out.is_dir() else None
    if doc:
        assert_nothing_left(doc)
    assert not own_cgroups_left(), own_cgroups_left()
    return res, doc


def own_cgroups_left(pid: int | None = None) -> list[str]:
    """Point cgroups left by the sweep ``pid``, or by any sweep that has ended (other
    sweeps may be running on the host)."""
    root = cgroup2_root()
    names = sorted(p.name for p in root.glob("lockscope-cmd-*")) if root else []
    owners = {name: int(name.split("-")[2]) for name in names}
    if pid is not None:
        return [n for n in names if owners[n] == pid]
    return [n for n in names if not Path(f"/proc/{owners[n]}").exists()]


def traced_processes(run: dict, comm: str) -> set[int]:
    return {t["pid"] for t in run["trace"]["threads"] if t.get("comm") == comm}


@pytest.mark.kernel
def test_fio_command_with_its_own_throughput(tmp_path):
    require_tool("fio")
    res, doc = command_sweep(tmp_path, "fio", "--command", FIO, "--throughput", "fio")
    assert res.returncode == 0, res.stderr[-2000:]
    assert doc["partial"] is False and doc["workload"]["scenario"] == "command"
    assert {(r["fs"], r["threads"]) for r in doc["runs"]} == {
        (fs, n) for fs in ("ext4", "xfs") for n in (1, 2)}
    for run in doc["runs"]:
        assert run["trace"], run["trace_error"]
        jobs = run["workload"]["jobs"]
        assert len(jobs) == run["threads"]  # fio's own job records, one per job
        ios = sum(j["write"]["total_ios"] for j in jobs)
        assert ios > 0
        # fio forks one process per job: all of them are traced (the cgroup follows forks)
        assert len(traced_processes(run, "fio")) >= run["threads"]
        # the trace saw at least the writes fio counted (psync: pwrite64)
        pwrites = sum(s["count"] for s in run["trace"]["syscalls"]
                      if s["name"] == "pwrite64")
        assert pwrites >= ios
        # the workers are the job processes, not fio's main process (the pid started)
        workers = {w["pid"] for w in run["workload"]["lockscope"]["threads"]}
        assert len(workers) == run["threads"]
        assert run["workload"]["command"]["pids"][0] not in workers
    for fs in ("ext4", "xfs"):
        points = doc["analysis"][fs]["points"]
        assert [p["threads"] for p in points] == [1, 2]
        for p in points:
            run = next(r for r in doc["runs"] if r["fs"] == fs and r["threads"] == p["threads"])
            assert p["iops"]["mean"] == pytest.approx(
                sum(j["write"]["iops"] for j in run["workload"]["jobs"]))
        assert doc["analysis"][fs]["verdict"]["kind"]


@pytest.mark.kernel
def test_dd_writers_each_on_their_part(tmp_path):
    require_tool("dd")
    res, doc = command_sweep(tmp_path, "dd", "--command", DD, "--per-thread",
                             "--prepare", DD_PREPARE, "--span", str(DD_SPAN),
                             "--throughput", "dd")
    assert res.returncode == 0, res.stderr[-2000:]
    for run in doc["runs"]:
        n = run["threads"]
        jobs = run["workload"]["jobs"]
        lines = run["workload"]["command"]["lines"]
        assert len(jobs) == len(lines) == n
        # each writer ran under the pid it was started with (a simple command is exec'd)
        traced = {t["pid"] for t in run["trace"]["threads"] if t.get("oncpu_ns")}
        assert set(run["workload"]["command"]["pids"]) <= traced
        # the trace saw every block the writers wrote
        writes = sum(s["count"] for s in run["trace"]["syscalls"] if s["name"] == "write")
        assert writes >= DD_SPAN // (64 << 10)
        part = DD_SPAN // n
        for i, job in enumerate(jobs):
            # bytes/s x dd's own seconds = the part it was given
            w = job["write"]
            assert w["bw_bytes"] * job["job_runtime"] / 1e3 == pytest.approx(part, rel=1e-3)
            assert f"seek={i * part // (64 << 10)} " in lines[i]
        # the file keeps its size: the writers overwrote, never extended
        facts = [f for f in run["files"] if f["path"].endswith("/big")]
        assert facts and facts[0]["size_bytes"] == DD_SPAN
    for fs in ("ext4", "xfs"):
        assert len(doc["analysis"][fs]["points"]) == 2


@pytest.mark.kernel
def test_failing_command_keeps_completed_points(tmp_path):
    require_tool("dd")
    # fails at 2 threads, after writing its stderr; at 1 thread, 100 direct writes
    cmd = ("if [ {threads} -gt 1 ]; then echo 'starting' >&2; "
           "echo 'dd: failed to open: Permission denied' >&2; exit 3; fi; "
           "dd if=/dev/zero of={dir}/x bs=4k count=100 oflag=direct status=none")
    res, doc = command_sweep(tmp_path, "fail", "--command", cmd, fs="ext4")
    assert res.returncode == 1
    last = res.stderr.strip().splitlines()[-1]
    assert last.startswith("lockscope sweep: ") and "threads=2" in last
    assert last.endswith("exited 3: dd: failed to open: Permission denied")
    assert doc["partial"] is True
    assert doc["failed_point"]["threads"] == 2 and doc["failed_point"]["exit_status"] == 3
    assert doc["failed_point"]["stderr"] == "dd: failed to open: Permission denied"
    assert [(r["fs"], r["threads"]) for r in doc["runs"]] == [("ext4", 1)]
    run = doc["runs"][0]
    # without a parser, the operations are the write calls the trace counted
    assert run["workload"]["throughput_source"] == "trace"
    wall = run["workload"]["lockscope"]["timed_phase"]["duration_ns"] / 1e9
    writes = run["workload"]["jobs"][0]["write"]["iops"] * wall
    assert writes == pytest.approx(100, abs=1)
    assert doc["analysis"]["ext4"]["points"][0]["threads"] == 1
    # the report says which point failed and why
    notes = [n for n in missing_notes(doc) if "failed and the sweep stopped" in n]
    assert len(notes) == 1 and "ext4 2 threads" in notes[0] and "exit status 3" in notes[0]


@pytest.mark.kernel
def test_command_past_the_time_limit_is_killed(tmp_path):
    require_tool("sleep")
    # a child that outlives the limit by far: its whole process group must go. Its
    # length is this test's own: other tests beside it may run a "sleep 600".
    length = f"600.{os.getpid()}"
    res, doc = command_sweep(tmp_path, "slow", "--command", f"sleep {length} & sleep {length}",
                             "--time-limit", "3", fs="xfs")
    assert res.returncode == 1
    last = res.stderr.strip().splitlines()[-1]
    assert "--time-limit 3 s: killed" in last, last
    assert doc["partial"] is True and doc["failed_point"]["threads"] == 1
    assert doc["runs"] == []
    left = subprocess.run(["pgrep", "-f", f"^sleep {length}$"], capture_output=True, text=True)
    assert left.stdout.strip() == "", left.stdout


@pytest.mark.kernel
def test_unknown_field_refused_before_anything_is_made(tmp_path):
    images = tmp_path / "images"
    res = lockscope("sweep", "--command", "fio --numjobs={jobs}", "--image-dir", str(images),
                    "--out", str(tmp_path / "out"))
    assert res.returncode == 2
    assert res.stderr.strip() == ("lockscope sweep: --command: unknown field '{jobs}' "
                                  "(known: {threads}, {runtime}, {dir})")
    assert not images.exists() and not (tmp_path / "out").exists()


def start_sweep(out: Path, command: str) -> subprocess.Popen:
    return LOCKSCOPE.start("sweep", "--command", command, "--fs", "ext4", "--threads", "1",
                           "--image-size", "1g", "--out", out, "--no-report")


def pids_running(argv: list[str]) -> list[int]:
    """Live processes whose command line is exactly ``argv``."""
    want = "\0".join(argv) + "\0"
    out = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and (entry / "cmdline").read_text() == want:
                state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
                if state != "Z":
                    out.append(int(entry.name))
        except OSError:
            continue
    return out


def wait_for(argv: list[str], proc: subprocess.Popen, timeout: float = 120) -> None:
    deadline = time.monotonic() + patience(timeout)
    while not pids_running(argv):
        assert proc.poll() is None, proc.communicate()[1][-2000:]
        assert time.monotonic() < deadline, f"{argv} never started"
        time.sleep(0.2)


# A list (run under sh) with a child in the background: the whole tree must go.
TREE = "sleep 4321 & sleep 4322; wait"
TREE_ARGVS = (["sleep", "4321"], ["sleep", "4322"])


@pytest.mark.kernel
def test_ctrl_c_ends_the_command_tree(tmp_path):
    out = tmp_path / "interrupted"
    proc = start_sweep(out, TREE)
    wait_for(TREE_ARGVS[1], proc)
    assert pids_running(TREE_ARGVS[0])
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=patience(120))
    assert proc.returncode == 130, err
    for argv in TREE_ARGVS:
        assert not pids_running(argv), argv
    assert not own_cgroups_left(proc.pid)
    doc = json.loads((out / "results.json").read_text())
    assert doc["partial"] is True and doc["runs"] == []
    assert_nothing_left(doc)


@pytest.mark.kernel
def test_a_killed_sweeps_command_is_ended_by_the_next(tmp_path):
    from lockscope.run import loopfs
    from lockscope.run.workload import scope

    proc = start_sweep(tmp_path / "killed", TREE)
    try:
        wait_for(TREE_ARGVS[1], proc)
    finally:
        proc.kill()  # as a crash would: nothing of the sweep's own cleanup runs
        proc.communicate(timeout=patience(60))
    assert pids_running(TREE_ARGVS[1])  # still running, in the dead sweep's cgroup
    left = own_cgroups_left(proc.pid)
    assert left
    # (another lockscope sweep starting on this host meanwhile may clean them first)
    scope.cleanup_stale()
    loopfs.cleanup_stale()
    for argv in TREE_ARGVS:
        assert not pids_running(argv), argv
    assert not own_cgroups_left(proc.pid)


@pytest.mark.kernel
def test_trace_comm_traces_only_threads_of_that_name(tmp_path):
    # dd under a name no other process on the host has (a task's comm is the name it
    # was executed by)
    name = f"lsdd{os.getpid()}"[:15]
    (tmp_path / name).symlink_to(require_tool("dd"))
    # a list, so sh stays the parent; only the renamed dd is traced
    cmd = (f"cat /dev/null; {tmp_path / name} if=/dev/zero of={{dir}}/x bs=4k count=300 "
           "oflag=direct status=none; cat /dev/null")
    res, doc = command_sweep(tmp_path, "comm", "--command", cmd, "--trace-comm", name,
                             fs="ext4")
    assert res.returncode == 0, res.stderr[-2000:]
    assert doc["workload"]["command"]["trace_comm"] == name
    for run in doc["runs"]:
        comms = {t["comm"] for t in run["trace"]["threads"]}
        assert comms == {name}, comms
        writes = sum(s["count"] for s in run["trace"]["syscalls"] if s["name"] == "write")
        assert writes == 300


@pytest.mark.kernel
def test_without_cgroup_v2_the_started_pids_are_traced(tmp_path, ext4_fs, monkeypatch):
    """Hosts without a writable cgroup v2 mount: the recorder follows the pids the point
    started (a simple command is exec'd, so the tool is one of them)."""
    from lockscope.run.workload import scope
    from lockscope.run.workload.command_point import CommandSpec, run_command_point
    from lockscope.run.workload.template import Split

    require_tool("dd")
    monkeypatch.setattr(scope, "cgroup2_root", lambda: None)
    spec = CommandSpec("dd if=/dev/zero of={dir}/p bs=4k oflag=direct conv=notrunc "
                       "seek={part_offset} count={part_blocks} status=none",
                       per_thread=True, split=Split(2 << 20, 4 << 10))
    workdir = ext4_fs.path / "w"
    workdir.mkdir()
    res = run_command_point(spec, 2, 1, workdir, tmp_path / "scratch")
    res.wait_detached()
    assert res.trace, res.trace_error
    pids = res.workload["command"]["pids"]
    assert {t["pid"] for t in res.trace["threads"] if t.get("oncpu_ns")} == set(pids)
    writes = sum(s["count"] for s in res.trace["syscalls"] if s["name"] == "write")
    assert writes == (2 << 20) // (4 << 10)
    assert not own_cgroups_left(os.getpid())
