"""Time-sampled recording (lockscope-record --duty): the probes are attached part of each
period and detached for the rest; the document says how long they watched
(interval.observed_ns, "sampling"), rates per observed second agree with what the
workload did, and no begin/end pair spans a detached phase (docs/recorder-json.md)."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest

from lockscope import schema
from lockscope.binaries import find_binary

from patience import patience
from record_common import dio_entry, record_binary, recorder, wait_for_series

WINDOW_S = 4.0
PERIOD_MS = 200


@pytest.mark.parametrize("args,word", [
    (["--duty", "0"], "--duty"),
    (["--duty", "101"], "--duty"),
    (["--duty", "x"], "--duty"),
    (["--duty-period-ms", "5"], "--duty-period-ms"),
])
def test_bad_duty_options_exit_2(args, word):
    res = subprocess.run([record_binary(), *args], capture_output=True, text=True,
                         timeout=patience(30))
    assert res.returncode == 2, res
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and word in lines[0], res.stderr
    assert "Traceback" not in res.stderr


def start_writer(fs_path: Path, out: Path, seconds: float) -> subprocess.Popen:
    """4 KiB O_DIRECT random overwrites for `seconds` by lockscope-load, which reports
    its own completed writes and run time in `out`."""
    return subprocess.Popen([find_binary("lockscope-load"), "--name=w",
                             f"--filename={fs_path / 'f.dat'}", "--rw=randwrite", "--bs=4k",
                             "--direct=1", "--size=16m", f"--runtime={seconds:g}",
                             "--time_based", "--output-format=json", f"--output={out}"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def record_during_writes(fs_path: Path, tmp: Path, name: str, extra: list[str]
                         ) -> tuple[dict, float]:
    """The recorder's document over WINDOW_S inside a steady writer, and the writer's own
    completed-write rate (writes per second of its run)."""
    out = tmp / f"{name}-load.json"
    with recorder(extra, tmp / f"{name}.json") as (_, start, finish):
        writer = start_writer(fs_path, out, WINDOW_S + 3)
        try:
            time.sleep(1.5)  # past its file layout: the rate is steady
            start()
            time.sleep(WINDOW_S)
            doc = finish()
        finally:
            _, err = writer.communicate(timeout=patience(60))
    assert writer.returncode == 0, err
    job = json.loads(out.read_text())["jobs"][0]
    return doc, job["write"]["total_ios"] / (job["job_runtime"] / 1000)


def runs_per_s(doc: dict) -> float:
    return sum(g["run_cnt"] for g in doc["overhead"]["per_group"]) / \
        (doc["interval"]["duration_ns"] / 1e9)


@pytest.mark.alone  # compares program runs per second with a full recording
@pytest.mark.kernel
def test_duty_cycle_watches_part_of_the_time_and_rates_hold(ext4_fs, tmp_path):
    full, _ = record_during_writes(ext4_fs.path, tmp_path, "full", [])
    doc, writer_rate = record_during_writes(
        ext4_fs.path, tmp_path, "duty", ["--duty", "30", "--duty-period-ms", str(PERIOD_MS)])

    # always attached: observed is the window, one "on" phase
    assert full["interval"]["observed_ns"] == full["interval"]["duration_ns"]
    assert full["sampling"]["duty_pct"] == 100 and full["sampling"]["cycles"] == 1

    iv, sampling = doc["interval"], doc["sampling"]
    assert set(sampling) <= set(schema.Sampling.__optional_keys__)
    assert sampling["duty_pct"] == sampling["requested_pct"] == 30
    assert sampling["period_ns"] == PERIOD_MS * 1_000_000
    assert sampling["observed_ns"] == iv["observed_ns"]
    assert sampling["attach_failures"] == 0
    # about one "on" phase per period begun in the window (fewer when detaching is slow
    # on a loaded host: a phase ends once its links are gone)
    periods = iv["duration_ns"] / sampling["period_ns"]
    assert periods / 2 <= sampling["cycles"] <= periods + 1, sampling
    assert 0.2 <= iv["observed_ns"] / iv["duration_ns"] <= 0.45, iv

    # detached programs do not run: fewer runs per second of window
    assert runs_per_s(doc) < 0.7 * runs_per_s(full), (runs_per_s(doc), runs_per_s(full))
    o = doc["overhead"]
    assert o["observed_ns"] == iv["observed_ns"]
    assert o["cpu_share"] == pytest.approx(
        o["bpf_ns"] / (o["window_ns"] * o["online_cpus"]), rel=1e-6)
    assert o["cpu_share_observed"] == pytest.approx(
        o["bpf_ns"] / (o["observed_ns"] * o["online_cpus"]), rel=1e-6)

    # DIO writes per observed second: the writer's own completed-write rate
    rate = dio_entry(doc, ext4_fs.path / "f.dat")["writes"]["count"] / (iv["observed_ns"] / 1e9)
    assert rate == pytest.approx(writer_rate, rel=0.35), (rate, writer_rate)

    # No pair spans a detached phase: both ends of every timed pair fall within one
    # "on" phase, so no latency exceeds it (a stale pair would last at least an "off"
    # phase, 140 ms), and no thread has more time than was observed.
    on_ns = sampling["period_ns"] * 30 / 100
    slack = 30e6  # attaching and detaching take a few ms; a noisy host more
    off_ns = sampling["period_ns"] - on_ns
    assert on_ns + slack < off_ns
    for sc in doc["syscalls"]:
        assert sc["max_ns"] <= on_ns + slack, sc
    for lk in doc["locks"]:
        for w in lk["waits"]:
            assert w["max_ns"] <= on_ns + slack, w
    for e in doc["dio"]:
        assert e["latency"]["max_ns"] <= on_ns + slack, e["latency"]
    for t in doc["threads"]:
        total = t["oncpu_ns"] + t["offcpu_ns"] + t["runqueue_ns"]
        assert total <= iv["observed_ns"] + slack * sampling["cycles"], t
    for rec in doc["offcpu"]:
        assert rec["total_ns"] <= iv["observed_ns"] + slack * sampling["cycles"], rec


@pytest.mark.alone  # attaching slowed by other tests would shorten the "on" phases
@pytest.mark.kernel
def test_series_intervals_carry_their_observed_time(tmp_path):
    series_out = tmp_path / "series.jsonl"
    # --max-overhead 0: the duty stays at 50 whatever the host's own load costs
    with recorder(["--duty", "50", "--duty-period-ms", "100", "--interval-ms", "250",
                   "--max-overhead", "0", "--series-out", str(series_out)],
                  tmp_path / "rec.json") as (_, start, finish):
        start()
        wait_for_series(series_out, 3)
        doc = finish()
    series = doc["series"]
    assert len(series) >= 3
    for s in series:
        iv = s["interval"]
        assert 0 <= iv["observed_ns"] <= iv["duration_ns"]
        assert s["overhead"]["cpu_share_observed"] is None or iv["observed_ns"] > 0
    # the intervals' observed times add up to the window's
    assert sum(s["interval"]["observed_ns"] for s in series) == doc["interval"]["observed_ns"]
    assert 0.3 <= doc["interval"]["observed_ns"] / doc["interval"]["duration_ns"] <= 0.7


def duty_steps(doc: dict) -> list[int]:
    """The duties --max-overhead set, in order (its "duty N%" steps)."""
    steps = doc["overhead"]["shed"]
    assert all(s["kind"] == "duty" for s in steps), steps
    return [int(s["what"].split()[1].rstrip("%")) for s in steps]


@pytest.mark.alone  # other tests' system calls would keep the budget spent
@pytest.mark.kernel
def test_budget_lowers_the_duty_under_load_and_raises_it_when_the_load_ends(ext4_fs,
                                                                             tmp_path):
    full, _ = record_during_writes(ext4_fs.path, tmp_path, "full", [])
    loaded = full["overhead"]["cpu_share"]
    with recorder([], tmp_path / "idle.json") as (_, start, finish):
        start()
        time.sleep(2)
        idle = finish()["overhead"]["cpu_share"]
    if not idle < 0.1 * loaded:
        pytest.skip(f"the host's own events cost {idle:.3%}, the writer's {loaded:.3%}")
    # a budget the writer's load exceeds three times: a duty near 27%, well above the
    # 10% floor, so that other work on the host (the recorder follows every process
    # here) does not push it down to shedding stacks
    budget_pct = 100 * loaded / 3
    with recorder(["--max-overhead", f"{budget_pct:.6f}", "--duty-period-ms", "200"],
                  tmp_path / "budget.json") as (_, start, finish):
        writer = start_writer(ext4_fs.path, tmp_path / "budget-load.json", 4)
        try:
            time.sleep(1)
            start()  # about 3 s of writes in the window, then 4 s of none
            _, err = writer.communicate(timeout=patience(60))
            time.sleep(4)
            doc = finish()
        finally:
            if writer.poll() is None:
                writer.kill()
    assert writer.returncode == 0, err
    pcts = duty_steps(doc)
    assert pcts, doc["overhead"]
    low = pcts.index(min(pcts))
    assert 10 <= pcts[low] < 100 and pcts[0] < 100
    # raised again once the writes ended, never above --duty
    assert max(pcts[low:]) > pcts[low] and max(pcts) <= 100, pcts
    assert doc["sampling"]["requested_pct"] == 100


@pytest.mark.kernel
def test_a_flag_switches_the_probes_off_without_detaching_them(tmp_path):
    """--duty-flag: the off part is a flag the programs test first; switching takes no
    link work, so the observed share is the duty's even on a loaded host, and the series
    intervals carry the maps' occupancy."""
    idle = subprocess.Popen(["sleep", "60"])  # a quiet target: short map reads
    try:
        with recorder(["--pid", str(idle.pid), "--duty", "50", "--duty-period-ms", "200",
                       "--duty-flag", "--interval-ms", "250"],
                      tmp_path / "rec.json") as (_, start, finish):
            start()
            time.sleep(2.0)
            doc = finish()
    finally:
        idle.kill()
        idle.wait()
    s = doc["sampling"]
    assert s["switch"] == "flag" and s["attach_failures"] == 0
    assert s["toggles"] >= 2 * (s["cycles"] - 1)
    assert 0.35 <= doc["interval"]["observed_ns"] / doc["interval"]["duration_ns"] <= 0.65
    for iv in doc["series"]:
        maps = iv["state"]["maps"]
        assert {"locks", "threads", "offcpu", "dio"} <= set(maps)
        assert all(0 <= m["entries"] <= m["max_entries"] for m in maps.values())
        assert iv["state"]["sampling"]["switch"] == "flag"
        assert "map_full" in iv["state"]["drops"]
