"""lockscope-record measures its own cost: the "overhead" object (kernel BPF run-time
statistics of its programs), the --max-overhead budget that sheds stacks and groups, and
the per-interval --interval-ms series whose deltas add up to the final document."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

import pytest

from lockscope.binaries import find_binary, recorder_facts

from patience import patience
from record_common import record_binary, recorder, wait_for_series

# Writes to /dev/null for a minute at most: system calls the syscalls group follows.
WRITE_LOOP = ("import os, time\n"
              "fd = os.open('/dev/null', os.O_WRONLY)\n"
              "end = time.monotonic() + 60\n"
              "while time.monotonic() < end:\n"
              "    os.write(fd, b'x')\n")


def run_record(*args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([record_binary(), *args], capture_output=True, text=True,
                          timeout=patience(timeout))


@pytest.mark.parametrize("args,word", [
    (["--max-overhead", "lots"], "--max-overhead"),
    (["--max-overhead", "-1"], "--max-overhead"),
    (["--max-overhead", "101"], "--max-overhead"),
    (["--interval-ms", "5"], "--interval-ms"),
    (["--interval-ms", "x"], "--interval-ms"),
    (["--series-out", "/tmp/never-written.jsonl"], "--series-out"),
])
def test_bad_budget_and_interval_options_exit_2(args, word):
    res = run_record(*args)
    assert res.returncode == 2, res
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and word in lines[0], res.stderr
    assert not Path("/tmp/never-written.jsonl").exists()


def direct_writes(fs_path: Path, name: str, ios: int) -> int:
    """ios 4 KiB O_DIRECT random overwrites by lockscope-load; returns the I/Os it reports."""
    out = fs_path / f"{name}.json"
    res = subprocess.run([find_binary("lockscope-load"), "--name=w",
                          f"--filename={fs_path / name}.dat", "--rw=randwrite", "--bs=4k",
                          "--direct=1", "--size=4m", f"--io_size={ios * 4}k",
                          "--output-format=json", f"--output={out}"],
                         capture_output=True, text=True, timeout=patience(120))
    assert res.returncode == 0, res.stderr
    return json.loads(out.read_text())["jobs"][0]["write"]["total_ios"]


def group(doc: dict, name: str) -> dict:
    return next(g for g in doc["overhead"]["per_group"] if g["name"] == name)


def prog_ids(owner: int) -> set[int]:
    """Ids of the BPF programs process owner holds, from its fds' fdinfo."""
    ids = set()
    for fd in os.listdir(f"/proc/{owner}/fdinfo"):
        try:
            text = Path(f"/proc/{owner}/fdinfo/{fd}").read_text()
        except OSError:
            continue
        ids.update(int(m) for m in re.findall(r"^prog_id:\s+(\d+)$", text, re.M))
    return ids


def bpftool_runs(ids: set[int]) -> dict[int, tuple[int, int]]:
    """Program id -> (run_cnt, run_time_ns), as bpftool reads them."""
    res = subprocess.run(["bpftool", "prog", "show", "--json"], capture_output=True, text=True,
                         timeout=patience(60), check=True)
    return {p["id"]: (p.get("run_cnt", 0), p.get("run_time_ns", 0))
            for p in json.loads(res.stdout) if p["id"] in ids}


def check_stats_clock(o: dict) -> None:
    """The statistics' own clock read: an empty program's run time, so no busier
    program (many runs, averaged) measures much less; its total is that figure per run."""
    clock = o["stats_clock"]
    runs = sum(p["run_cnt"] for p in o["per_program"])
    assert clock["ns_per_run"] > 0
    assert clock["bpf_ns"] == pytest.approx(min(clock["ns_per_run"] * runs, o["bpf_ns"]),
                                            rel=1e-3, abs=1)
    assert clock["cpu_share"] <= o["cpu_share"]
    busy = [p["ns_per_run"] for p in o["per_program"] if p["run_cnt"] >= 1000]
    assert busy and clock["ns_per_run"] <= 1.5 * min(busy)


@pytest.mark.alone  # its own load's runs against none: other tests' calls would blur them
@pytest.mark.kernel
def test_overhead_is_consistent_and_grows_with_the_load(ext4_fs, tmp_path):
    docs, ios = [], []
    for n in (256, 4096):
        with recorder([], tmp_path / f"rec{n}.json") as (_, start, finish):
            start()
            ios.append(direct_writes(ext4_fs.path, f"f{n}", n))
            docs.append(finish())
    for doc, n in zip(docs, ios):
        o = doc["overhead"]
        assert o["stats"] in ("session", "already_on")
        assert o["window_ns"] == doc["interval"]["duration_ns"] == o["measured_ns"]
        assert o["online_cpus"] == os.sysconf("SC_NPROCESSORS_ONLN")
        progs, groups = o["per_program"], o["per_group"]
        assert sum(p["run_time_ns"] for p in progs) == o["bpf_ns"] == o["measured_bpf_ns"] > 0
        assert sum(g["run_time_ns"] for g in groups) == o["bpf_ns"]
        assert sum(g["cpu_share"] for g in groups) == pytest.approx(o["cpu_share"], rel=1e-6)
        assert o["cpu_share"] == pytest.approx(
            o["bpf_ns"] / (o["window_ns"] * o["online_cpus"]), rel=1e-6)
        for p in progs + groups:
            if p["run_cnt"]:
                assert p["ns_per_run"] == pytest.approx(p["run_time_ns"] / p["run_cnt"])
        # every direct write passes through the dio group's begin and end programs
        assert group(doc, "dio")["run_cnt"] >= 2 * n
        assert o["user"]["cpu_ns"] >= o["user"]["user_ns"] and o["shed"] == []
        assert not o["detached"]
        check_stats_clock(o)
    small, big = (group(d, "dio") for d in docs)
    assert big["run_cnt"] > small["run_cnt"] and big["run_time_ns"] > small["run_time_ns"]
    # the recorder turned the statistics on for itself only
    assert Path("/proc/sys/kernel/bpf_stats_enabled").read_text().strip() in ("0", "1")


@pytest.mark.alone  # bpftool's reading and the recorder's must see the same load
@pytest.mark.kernel
def test_cpu_share_agrees_with_bpftool(ext4_fs, tmp_path):
    with recorder([], tmp_path / "rec.json") as (proc, start, finish):
        ids = prog_ids(proc.pid)
        before = bpftool_runs(ids)
        t0 = time.monotonic()
        start()
        direct_writes(ext4_fs.path, "f", 8192)
        t1 = time.monotonic()
        after = bpftool_runs(ids)
        doc = finish()
    assert before and set(after) == set(before)
    ours = {p["id"]: p for p in doc["overhead"]["per_program"]}
    assert set(ours) == set(after)
    bpf_ns = sum(after[i][1] - before[i][1] for i in after)
    share = bpf_ns / ((t1 - t0) * 1e9 * os.sysconf("SC_NPROCESSORS_ONLN"))
    assert doc["overhead"]["cpu_share"] == pytest.approx(share, rel=0.10)


@pytest.mark.kernel
def test_budget_sheds_stacks_then_groups_then_pauses_and_goes_on(tmp_path):
    out = tmp_path / "rec.json"
    # one non-core group left on; everything on this machine costs more than 0.0001%
    res = run_record("--list-features")
    groups = [g["name"] for g in json.loads(res.stdout)["groups"]]
    kept = recorder_facts()["budget_kept_groups"]     # what the budget never sheds alone
    off = ",".join(g for g in groups if g not in kept and g != "syscalls")
    # A group is shed only for a cost it had in the last second: keep the syscalls
    # group busy with writes, whatever else this host does.
    writer = subprocess.Popen([sys.executable, "-c", WRITE_LOOP])
    try:
        # 15 s: the four steps take about 4 s (one a second), each pause 1.5 s plus a
        # second watched again before the next; twice that leaves room for a busy host
        res = run_record("--duration", "15", "--max-overhead", "0.0001", "--disable", off,
                         "--max-pause-ms", "1500", "--interval-ms", "500", "--out", str(out))
    finally:
        writer.kill()
        writer.wait()
    assert res.returncode == 0, res.stderr
    doc = json.loads(out.read_text())
    o, sampling = doc["overhead"], doc["sampling"]
    steps = [(s["kind"], s["what"]) for s in o["shed"]]
    # the duty goes down first, to its floor at once (the budget is far below the share),
    # then stacks, the one non-core group, and then pauses: the core groups alone are
    # over a budget this small, every time they are attached again
    assert steps[:4] == [("duty", "duty 10%"), ("stacks", "user_stacks"),
                         ("stacks", "stacks"), ("group", "syscalls")]
    pauses = o["shed"][4:]
    assert len(pauses) >= 2 and all(s["kind"] == "pause" for s in pauses)
    assert sampling["pauses"] == len(pauses)
    assert all(s["pause_ns"] == 1500e6 for s in pauses)   # far over: the longest pause
    assert o["max_pause_ns"] == 1500e6
    assert doc["sampling"]["duty_pct"] == 10 and doc["sampling"]["requested_pct"] == 100
    start, end = doc["interval"]["start_mono_ns"], doc["interval"]["end_mono_ns"]
    times = [s["t_ns"] for s in o["shed"]]
    assert start < times[0] and times == sorted(times) and times[-1] <= end
    # a pause lasts its length, and the next one comes only after the probes were
    # attached again and watched again
    for a, b in zip(pauses, pauses[1:]):
        assert b["t_ns"] - a["t_ns"] >= a["pause_ns"]
    assert all(s["after_ns"] == s["t_ns"] - start for s in o["shed"])
    assert all(s["share_before"] > 0.0001 / 100 for s in o["shed"])
    assert group(doc, "syscalls")["shed"]
    # the window stays open to --duration; paused time is not observed time
    assert doc["interval"]["duration_ns"] >= 14e9
    ended_paused = end - pauses[-1]["t_ns"] < pauses[-1]["pause_ns"]
    paused = sum(min(s["pause_ns"], end - s["t_ns"]) for s in pauses)
    assert sampling["paused_ns"] == pytest.approx(paused, rel=0.05)
    assert o["detached"] == ended_paused
    assert doc["interval"]["observed_ns"] <= doc["interval"]["duration_ns"] - paused
    # recording goes on after a pause: an interval after the first pause's end observed
    first_end = pauses[0]["t_ns"] + pauses[0]["pause_ns"]
    assert any(iv["interval"]["start_mono_ns"] >= first_end and iv["interval"]["observed_ns"] > 0
               for iv in doc["series"])
    assert o["max_overhead_pct"] == pytest.approx(0.0001)
    assert o["core_groups"] == kept


@pytest.mark.kernel
def test_series_cover_the_window_and_add_up(ext4_fs, tmp_path):
    series_out = tmp_path / "series.jsonl"
    with recorder(["--interval-ms", "200", "--series-out", str(series_out)],
                  tmp_path / "rec.json") as (_, start, finish):
        start()
        direct_writes(ext4_fs.path, "f", 4096)
        wait_for_series(series_out, 3)  # a loaded host closes intervals late
        doc = finish()
    series = doc["series"]
    assert doc["series_omitted"] == 0 and len(series) >= 3
    assert [json.loads(line) for line in series_out.read_text().splitlines()] == series
    iv = doc["interval"]
    assert series[0]["interval"]["start_mono_ns"] == iv["start_mono_ns"]
    assert series[-1]["interval"]["end_mono_ns"] == iv["end_mono_ns"]
    for a, b in zip(series, series[1:]):
        assert a["interval"]["end_mono_ns"] == b["interval"]["start_mono_ns"]
    for s in series:
        assert s["interval"]["duration_ns"] == \
            s["interval"]["end_mono_ns"] - s["interval"]["start_mono_ns"]
        assert set(s) >= {"threads", "locks", "offcpu", "dio", "syscalls", "block", "overhead"}

    def sums(sections, key, fields):
        total: dict = defaultdict(int)
        for sec in sections:
            for e in sec:
                for f in fields:
                    total[(key(e), f)] += e[f]["count"] if isinstance(e[f], dict) else e[f]
        return dict(total)

    dio_key = lambda e: (e["dev"], e["ino"])  # noqa: E731
    dio_fields = ("writes", "aligned", "hole", "mapped", "unwritten")
    assert sums([s["dio"] for s in series], dio_key, dio_fields) == \
        sums([doc["dio"]], dio_key, dio_fields)
    lock_key = lambda e: e["addr"]  # noqa: E731
    assert sums([s["locks"] for s in series], lock_key, ("count", "total_ns")) == \
        sums([doc["locks"]], lock_key, ("count", "total_ns"))
    sys_key = lambda e: e["name"]  # noqa: E731
    # (a call counted in an interval may have no timed one there: write calls are timed
    # on a sample)
    sys_fields = ("count", "timed", "total_ns")
    assert {k: v for k, v in sums([s["syscalls"] for s in series], sys_key, sys_fields).items()
            if v} == \
        {k: v for k, v in sums([doc["syscalls"]], sys_key, sys_fields).items() if v}
    # off-CPU time is exact per thread, lock, system call and kernel-side reason; per
    # stack (and so per io / journal / other) it is spread over each interval's own
    # samples (docs/recorder-json.md, offcpu)
    off_key = lambda e: (e["tid"], e["lock_addr"], e["syscall"],  # noqa: E731
                         e["reason"] if e["reason"] in ("lock", "runqueue") else "blocked")
    assert sums([s["offcpu"] for s in series], off_key, ("count", "total_ns")) == \
        sums([doc["offcpu"]], off_key, ("count", "total_ns"))
    assert sum(s["overhead"]["bpf_ns"] for s in series) == doc["overhead"]["bpf_ns"]
    # thread times count in the interval where each period ends
    t_key = lambda e: e["tid"]  # noqa: E731
    t_fields = ("oncpu_ns", "offcpu_ns", "runqueue_ns")
    got = sums([s["threads"] for s in series], t_key, t_fields)
    want = sums([doc["threads"]], t_key, t_fields)
    assert {k: v for k, v in got.items() if v} == {k: v for k, v in want.items() if v}
    # only what changed: an interval lists no thread without time in it
    for s in series:
        assert all(t["oncpu_ns"] + t["offcpu_ns"] + t["runqueue_ns"] for t in s["threads"])
        assert all(c["count"] for c in s["syscalls"])


@pytest.mark.kernel
def test_a_window_that_never_opened_costs_nothing(tmp_path):
    out = tmp_path / "rec.json"
    res = subprocess.run([record_binary(), "--start-on-stdin", "--interval-ms", "100",
                          "--out", str(out)], input="", capture_output=True, text=True,
                         timeout=patience(60))
    assert res.returncode == 0, res.stderr
    doc = json.loads(out.read_text())
    o = doc["overhead"]
    assert doc["interval"]["duration_ns"] == 0 and o["window_ns"] == 0
    assert o["bpf_ns"] == 0 and o["cpu_share"] is None and o["shed"] == []
    assert all(p["run_cnt"] == 0 for p in o["per_program"])
    assert doc["series"] == []


def fdinfo_runs(owner: int) -> int:
    """All run counts of the BPF programs process owner holds, as the kernel's fdinfo
    gives them (they grow only while the run-time statistics are on)."""
    total = 0
    for fd in os.listdir(f"/proc/{owner}/fdinfo"):
        try:
            text = Path(f"/proc/{owner}/fdinfo/{fd}").read_text()
        except OSError:
            continue
        m = re.search(r"^run_cnt:\s+(\d+)$", text, re.M)
        if m and re.search(r"^prog_id:", text, re.M):
            total += int(m.group(1))
    return total


def sampled_window(tmp_path: Path, *args: str,
                   seconds: float) -> tuple[dict, list[tuple[float, int]]]:
    """A window of the recorder on a write loop; the kernel's run counts every 0.1 s
    (monotonic time, count)."""
    out = tmp_path / "rec.json"
    writer = subprocess.Popen([sys.executable, "-c", WRITE_LOOP])
    rec = subprocess.Popen([record_binary(), "--start-on-stdin", "--out", str(out), *args],
                           stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
    counts = []
    try:
        assert rec.stdout.readline() == "ready\n", rec.stderr.read()
        rec.stdin.write("start\n")
        rec.stdin.flush()
        assert rec.stdout.readline() == "started\n"
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            counts.append((time.monotonic(), fdinfo_runs(rec.pid)))
            time.sleep(0.1)
        rec.stdin.close()
        assert rec.wait(patience(60)) == 0, rec.stderr.read()
    finally:
        writer.kill()
        writer.wait()
        if rec.poll() is None:
            rec.kill()
            rec.wait()
    return json.loads(out.read_text()), counts


@pytest.mark.alone  # another recorder would hold the statistics on
@pytest.mark.kernel
def test_statistics_are_sampled_without_a_budget_and_the_rest_estimated(tmp_path):
    doc, counts = sampled_window(tmp_path, "--max-overhead", "0", "--stats-every", "3",
                                 seconds=9)
    o = doc["overhead"]
    window, measured = o["window_ns"], o["measured_ns"]
    if o["stats"] == "already_on":
        # kernel.bpf_stats_enabled is 1 on this host: the recorder cannot switch them
        # off, so it measures every second and estimates nothing
        assert o["stats_every"] == 1 and measured == window
        assert o["bpf_ns"] == o["measured_bpf_ns"]
        return
    assert o["stats"] == "session" and o["stats_every"] == 3
    # on for one budget tick (a second; the first 0.25 s after the start) in three
    assert 0 < measured < window
    assert measured == pytest.approx(window / 3, abs=1.3e9)
    # the kernel's own counters stood still while they were off: the time between polls
    # in which they grew is the measured time, give or take a poll per switch
    steps = [(t1 - t0, c1 > c0) for (t0, c0), (t1, c1) in zip(counts, counts[1:])]
    assert not all(g for _, g in steps) and any(g for _, g in steps)
    polled = counts[-1][0] - counts[0][0]
    grew = sum(dt for dt, g in steps if g) / polled
    slack = (window / 3e9 + 1) * 2 * max(dt for dt, _ in steps) / polled
    assert grew == pytest.approx(measured / window, abs=slack + 0.05), (grew, slack)
    progs = o["per_program"]
    assert sum(p["run_time_ns"] for p in progs) == o["measured_bpf_ns"] > 0
    # the unmeasured part at the measured cost less the statistics' clock: more than
    # what was measured, less than scaling it whole
    assert o["measured_bpf_ns"] < o["bpf_ns"] <= o["measured_bpf_ns"] * window / measured
    assert sum(p["bpf_ns"] for p in progs) == pytest.approx(o["bpf_ns"], abs=len(progs))
    assert sum(g["bpf_ns"] for g in o["per_group"]) == pytest.approx(o["bpf_ns"],
                                                                     abs=len(progs))
    assert o["cpu_share"] == pytest.approx(o["bpf_ns"] / (window * o["online_cpus"]),
                                           rel=1e-6)
    for p in progs:
        bare = max(0, p["run_time_ns"] - o["stats_clock"]["ns_per_run"] * p["run_cnt"])
        assert p["bpf_ns"] == pytest.approx(
            p["run_time_ns"] + bare * (window - measured) / measured, rel=1e-6, abs=2)
    check_stats_clock(o)


@pytest.mark.kernel
@pytest.mark.parametrize("args", [["--max-overhead", "90"],
                                  ["--max-overhead", "0", "--duty", "50"]],
                         ids=["budget", "duty"])
def test_a_budget_or_a_duty_keeps_the_statistics_on(tmp_path, args):
    doc, counts = sampled_window(tmp_path, *args, "--stats-every", "3", seconds=3)
    o = doc["overhead"]
    assert o["stats_every"] == 1 and o["measured_ns"] == o["window_ns"]
    assert o["bpf_ns"] == o["measured_bpf_ns"]
    if "--duty" not in args:  # a duty's off phases detach the probes: nothing runs
        assert all(b > a for (_, a), (_, b) in zip(counts, counts[1:]))
