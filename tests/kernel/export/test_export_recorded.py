"""The exporter over a real recording (ext4 loop image, 4 fio writers contending on
one sparse file's i_rwsem, the recorder's 500 ms intervals): `go tool pprof` reads the
mutex and block profiles and finds the JSON's top function; the metrics add up to the
recording and pass `promtool check metrics`."""

from __future__ import annotations

import re
import subprocess
from collections import defaultdict
from pathlib import Path

import pytest
from prometheus_client.openmetrics.parser import (
    text_string_to_metric_families as parse_openmetrics,
)
from prometheus_client.parser import text_string_to_metric_families

from lockscope.analysis.observed import observed_ns
from lockscope.analysis.waitclass import classify, idle_threads, load_user_classifier
from lockscope.export import ExportState
from lockscope.export.interval_digest import profile_kstack
from lockscope.export.metrics_registry import make_registry
from lockscope.export.pprof_writer import frame_function
from lockscope.export.profile_windows import profile_bytes
from lockscope.run.loopfs import make_loopfs

from conftest import require_tool
from export_recording import record
from patience import patience

pytestmark = pytest.mark.kernel


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """(contended file, final document, intervals, state fed with every interval)."""
    require_tool("fio")
    fs = make_loopfs("ext4", size_bytes=1 << 30)
    try:
        path, doc, lines = record(fs.path, tmp_path_factory.mktemp("rec"))
    finally:
        fs.destroy()
    assert len(lines) >= 4, "the recorder wrote too few intervals"
    state = ExportState()
    for iv in lines:
        state.add_interval(iv)
    return path, doc, lines, state


def go_pprof(args: list[str], profile: Path | str, env: dict[str, str] | None = None) -> str:
    import os
    # a first run builds pprof into the Go build cache: minutes on a busy machine
    go = require_tool("go")
    res = subprocess.run([go, "tool", "pprof", *args, str(profile)], capture_output=True,
                         text=True, timeout=patience(600), env={**os.environ, **(env or {})})
    assert res.returncode == 0, res.stderr[-2000:]
    return res.stdout


def top_functions(text: str) -> list[tuple[float, str]]:
    """(flat %, function) rows of `pprof -top`, in its order."""
    rows, started = [], False
    for line in text.splitlines():
        if re.match(r"\s*flat\s+flat%", line):
            started = True
            continue
        if started and line.strip():
            parts = line.split(None, 5)
            rows.append((float(parts[1].rstrip("%")), parts[5]))
    return rows


def raw_samples(text: str) -> list[tuple[int, int, str]]:
    """(contentions, delay ns, labels line) of `pprof -raw`."""
    out: list[tuple[int, int, str]] = []
    lines = text.splitlines()
    for i, line in enumerate(lines):
        m = re.match(r"^\s+(\d+)\s+(\d+):\s+[\d ]+$", line)
        if m:
            labels = lines[i + 1] if i + 1 < len(lines) and ":[" in lines[i + 1] else ""
            out.append((int(m.group(1)), int(m.group(2)), labels))
    return out


def leaf(kstack: list[str], ustack: list[str]) -> str:
    frames = [f for f in kstack + ustack if f]
    return frame_function(frames[0]) if frames else "[no stack]"


def assert_top(rows: list[tuple[float, str]], flat_ns: dict[str, int]) -> None:
    """pprof's top function is the JSON's heaviest leaf function (either one of two
    within 2% of each other: a near tie is no disagreement)."""
    ranked = sorted(flat_ns.items(), key=lambda kv: -kv[1])
    total = sum(flat_ns.values())
    assert ranked and rows
    accepted = {ranked[0][0]}
    if len(ranked) > 1 and (ranked[0][1] - ranked[1][1]) < 0.02 * total:
        accepted.add(ranked[1][0])
    assert rows[0][1] in accepted, (rows[:3], ranked[:3])
    assert rows[0][0] == pytest.approx(100 * ranked[0][1] / total, abs=2.5)


def test_mutex_profile_read_by_go_pprof(recorded, tmp_path):
    path, doc, _, state = recorded
    prof = tmp_path / "mutex.pb.gz"
    prof.write_bytes(profile_bytes(state.snapshot(), "mutex", None))
    flat: dict[str, int] = defaultdict(int)
    for lk in doc["locks"]:
        for w in lk["waits"]:
            flat[leaf(w["kstack"], w["ustack"])] += w["total_ns"]
    assert_top(top_functions(go_pprof(["-top"], prof)), flat)
    raw = go_pprof(["-raw"], prof)
    assert "contentions/count delay/nanoseconds" in raw
    samples = raw_samples(raw)
    # every wait of the window is in the profile, exactly (the intervals add up)
    assert sum(s[1] for s in samples) == sum(lk["total_ns"] for lk in doc["locks"])
    assert sum(s[0] for s in samples) == sum(lk["count"] for lk in doc["locks"])
    # the file's i_rwsem waits carry the file, the lock and the class
    mine = [s for s in samples if f"file:[{path}]" in s[2] and "lock:[i_rwsem]" in s[2]]
    assert mine and all("wait_class:[inode_lock]" in s[2] for s in mine)
    want = sum(lk["total_ns"] for lk in doc["locks"]
               if lk["kind"] == "i_rwsem" and lk["path"] == str(path))
    assert sum(s[1] for s in mine) == want > 0


def test_block_profile_read_by_go_pprof(recorded, tmp_path):
    _, doc, _, state = recorded
    prof = tmp_path / "block.pb.gz"
    prof.write_bytes(profile_bytes(state.snapshot(), "block", None))
    kinds = {lk["addr"]: lk["kind"] for lk in doc["locks"]}
    idle = idle_threads(doc["threads"], observed_ns(doc))
    user = load_user_classifier()
    flat: dict[str, int] = defaultdict(int)
    for rec in doc["offcpu"]:
        if rec["reason"] == "runqueue" or classify(rec, kinds, idle, user).cls != "idle":
            # as the profile has it: from the frame that called the scheduler
            flat[leaf(list(profile_kstack(rec["kstack"])), rec["ustack"])] += rec["total_ns"]
    assert_top(top_functions(go_pprof(["-top"], prof)), flat)
    samples = raw_samples(go_pprof(["-raw"], prof))
    total = sum(s[1] for s in samples)
    # loss only: at most all off-CPU time, at least every sleeping lock wait
    assert total <= sum(r["total_ns"] for r in doc["offcpu"])
    assert total >= sum(r["total_ns"] for r in doc["offcpu"] if r["reason"] == "lock") > 0
    assert not any("wait_class:[idle]" in s[2] for s in samples)
    assert any("wait_class:[inode_lock]" in s[2] and "lock:[i_rwsem]" in s[2]
               for s in samples)


def test_seconds_window_is_the_last_intervals(recorded, tmp_path):
    _, _, lines, state = recorded
    snap = state.snapshot()
    end = lines[-1]["interval"]["end_mono_ns"]
    picked = [iv for iv in lines if iv["interval"]["end_mono_ns"] > end - 1e9]
    assert 0 < len(picked) < len(lines)
    prof = tmp_path / "mutex1.pb.gz"
    prof.write_bytes(profile_bytes(snap, "mutex", 1))
    raw = go_pprof(["-raw"], prof)
    want = sum(lk["total_ns"] for iv in picked for lk in iv["locks"])
    assert sum(s[1] for s in raw_samples(raw)) == want
    span = picked[-1]["interval"]["end_mono_ns"] - picked[0]["interval"]["start_mono_ns"]
    m = re.search(r"^Duration: ([\d.]+)", raw, re.M)
    assert m and float(m.group(1)) == pytest.approx(span / 1e9, abs=0.01)
    # more than the exporter keeps: capped, and the profile says so
    small = ExportState(window_s=1)
    for iv in lines:
        small.add_interval(iv)
    capped = tmp_path / "capped.pb.gz"
    capped.write_bytes(profile_bytes(small.snapshot(), "mutex", 100))
    raw = go_pprof(["-raw"], capped)
    assert "capped at the 1 s" in raw
    assert sum(s[1] for s in raw_samples(raw)) == want


def exposition(state: ExportState, openmetrics: bool = False) -> str:
    from prometheus_client.exposition import choose_encoder
    encoder, _ = choose_encoder("application/openmetrics-text" if openmetrics else "")
    return encoder(make_registry(state.snapshot)).decode()


def samples_of(text: str) -> dict[str, list]:
    out: dict[str, list] = defaultdict(list)
    for fam in text_string_to_metric_families(text):
        for s in fam.samples:
            out[s.name].append(s)
    return out


def test_metrics_add_up_to_the_recording(recorded):
    path, doc, lines, state = recorded
    text = exposition(state)
    s = samples_of(text)
    # thread time: every traced thread's on-CPU, off-CPU and runnable time, by class
    threads = sum(t["oncpu_ns"] + t["offcpu_ns"] + t["runqueue_ns"] for t in doc["threads"])
    assert sum(x.value for x in s["lockscope_thread_seconds_total"]) == \
        pytest.approx(threads / 1e9, rel=1e-9)
    kinds = {x.labels["class"]: x.labels["kind"] for x in s["lockscope_thread_seconds_total"]}
    assert kinds["idle"] == "idle" and kinds["oncpu"] == "oncpu"
    assert kinds["inode_lock"] == kinds["block_io"] == "loss"
    mine = [x for x in s["lockscope_lock_wait_seconds_total"]
            if x.labels["file"] == str(path) and x.labels["lock"] == "i_rwsem"]
    want = sum(lk["total_ns"] for lk in doc["locks"]
               if lk["kind"] == "i_rwsem" and lk["path"] == str(path))
    assert sum(x.value for x in mine) == pytest.approx(want / 1e9, rel=1e-9)
    assert {x.labels["wait_class"] for x in mine} == {"inode_lock"}
    assert {x.labels["mode"] for x in mine} <= {"read", "write"}
    # the histogram counts every wait
    count = sum(x.value for x in s["lockscope_lock_wait_duration_seconds_count"])
    assert count == sum(lk["count"] for lk in doc["locks"])
    infs = [x for x in s["lockscope_lock_wait_duration_seconds_bucket"]
            if x.labels["le"] == "+Inf"]
    assert sum(x.value for x in infs) == count
    dio = next(e for e in doc["dio"] if e["path"] == str(path))
    writes = {x.labels["file"]: x.value for x in s["lockscope_dio_writes_total"]}
    assert writes[str(path)] == dio["writes"]["count"] > 0
    hole = [x.value for x in s["lockscope_dio_write_class_writes_total"]
            if x.labels["file"] == str(path) and x.labels["class"] == "hole"]
    assert hole == [dio["hole"]["count"]]
    bpf = sum(iv["overhead"]["bpf_ns"] for iv in lines)
    assert s["lockscope_recorder_bpf_cpu_seconds_total"][0].value == \
        pytest.approx(bpf / 1e9, rel=1e-9)
    assert s["lockscope_recorder_intervals_total"][0].value == len(lines)
    # nothing unmeasured is exported as 0: no database, no target state, no budget given
    assert "lockscope_db_commits_total" not in s and "lockscope_target_up" not in s


def test_device_metrics_add_up_to_the_recording(recorded):
    """The block device under the writers: its requests, service times and histogram as
    the recording's block[] counts them, and its busy time bounded by the service times
    (a busy device has at least one request in flight: Little's law's mean depth is at
    least its busy share), but for the busy period still open at the window's end: its
    requests' service is not counted, as they have not completed (docs/recorder-json.md,
    block); that period is taken as at most twice the slowest completed request."""
    _, doc, lines, state = recorded
    s = samples_of(exposition(state))
    by_dev = {e.get("name") or e["dev"]: e for e in doc["block"]}
    assert by_dev, "the writers' device did no block I/O in the window"
    requests = {x.labels["device"]: x.value for x in s["lockscope_device_requests_total"]}
    service = {x.labels["device"]: x.value for x in s["lockscope_device_service_seconds_total"]}
    for name, e in by_dev.items():
        assert requests[name] == e["count"]
        assert service[name] == pytest.approx(e["total_ns"] / 1e9, rel=1e-9)
    counts = {x.labels["device"]: x.value
              for x in s["lockscope_device_service_duration_seconds_count"]}
    assert counts == requests
    busy = {x.labels["device"]: x.value for x in s.get("lockscope_device_busy_seconds_total", [])}
    measured = {n for n, e in by_dev.items() if e.get("busy_ns") is not None}
    assert set(busy) == measured   # absent where not measured, never 0
    for name in measured:
        open_at_end = 2 * by_dev[name]["max_ns"] / 1e9
        assert 0 < busy[name] <= service[name] * (1 + 1e-6) + open_at_end, \
            (name, busy, service, open_at_end)
        ratio = next(x.value for x in s["lockscope_device_busy_ratio"]
                     if x.labels["device"] == name)
        window = sum(iv["interval"]["duration_ns"] for iv in lines) / 1e9
        assert ratio == pytest.approx(busy[name] / window, rel=1e-6)


def test_exposition_passes_promtool_and_openmetrics(recorded):
    _, _, _, state = recorded
    state.set_context(target_up=True, target="fio", max_overhead_pct=1, duty_pct=100,
                      drops={"map_full": 0}, map_occupancy={"offcpu": (10, 4096)})
    promtool = require_tool("promtool")
    text = exposition(state)
    res = subprocess.run([promtool, "check", "metrics"], input=text, capture_output=True,
                         text=True, timeout=patience(60))
    assert res.returncode == 0 and not res.stdout.strip(), res.stdout + res.stderr
    om = exposition(state, openmetrics=True)
    assert om.rstrip().endswith("# EOF")
    fams = {f.name: f for f in parse_openmetrics(om)}
    assert fams["lockscope_lock_wait_seconds"].type == "counter"
    assert fams["lockscope_lock_wait_seconds"].unit == "seconds"
    assert fams["lockscope_lock_wait_duration_seconds"].type == "histogram"
    assert fams["lockscope_target_up"].samples[0].value == 1.0


def exported_names(text: str) -> set[str]:
    """Every sample name the exposition's families can carry (a family is declared
    even while it has no sample yet)."""
    names: set[str] = set()
    for fam in text_string_to_metric_families(text):
        suffixes = {"counter": ("_total",), "histogram": ("_bucket", "_sum", "_count"),
                    "summary": ("_sum", "_count")}.get(fam.type, ("",))
        names.update(fam.name + s for s in suffixes)
    return names


def test_dashboard_and_rules_name_only_exported_metrics(recorded):
    """Grafana's and Prometheus's queries in deploy/ name metrics the exporter serves
    (with every context the recording side can give set)."""
    import json
    _, _, _, state = recorded
    state.set_context(target_up=True, target="fio", max_overhead_pct=1, duty_pct=100,
                      drops={"map_full": 0}, map_occupancy={"offcpu": (10, 4096)},
                      db_engine="mariadb", db_commits=1)
    names = exported_names(exposition(state))
    deploy = Path(__file__).resolve().parents[3] / "deploy"
    dash = json.loads((deploy / "grafana" / "lockscope-dashboard.json").read_text())
    exprs = [t["expr"] for p in dash["panels"] for t in p["targets"]]
    exprs += [v["query"]["query"] for v in dash["templating"]["list"] if v["type"] == "query"]
    rules = (deploy / "prometheus" / "lockscope-alerts.yml").read_text()
    used = {n for e in [*exprs, rules] for n in re.findall(r"\blockscope_\w+", e)}
    assert len(used) >= 15 and len(exprs) >= 14
    assert used <= names, sorted(used - names)


def test_drops_are_exported_as_parts_that_add_up(recorded):
    """The recording's own drops object, given as the recording side gives it: parts
    that do not overlap (map_full by map, stack_missing as kernel and user), a
    restart of the recorder (counts back to 0) absorbed."""
    _, doc, _, _ = recorded
    state = ExportState()
    state.add_interval(recorded[2][0])
    drops = doc["drops"]
    grown = {**drops, "nested_begin": drops["nested_begin"] + 7,
             "map_full_by_map": {**drops["map_full_by_map"], "offcpu": 3 +
                                 drops["map_full_by_map"].get("offcpu", 0)}}
    state.set_context(drops=drops)
    state.set_context(drops=grown)     # +7 nested, +3 offcpu map full (not counted twice)
    state.set_context(drops={k: (0 if not isinstance(v, dict) else dict.fromkeys(v, 0))
                             for k, v in grown.items()})   # a new recorder
    state.set_context(drops={"nested_begin": 2})
    s = samples_of(exposition(state))["lockscope_recorder_drops_total"]
    got = {x.labels["kind"]: x.value for x in s}
    assert "map_full" not in got and "stack_missing" not in got
    assert set(got) >= {f"map_full.{m}" for m in drops["map_full_by_map"]}
    # the recording's own drops (a busy host has some) count once, under their parts;
    # those of what was not followed (null: long waits off) are not counted
    by_map = drops["map_full_by_map"]
    base = sum(by_map.values()) + sum(v for k, v in drops.items()
                                      if isinstance(v, int)
                                      and k not in ("map_full", "stack_missing"))
    assert got["map_full.offcpu"] == by_map.get("offcpu", 0) + 3
    assert got["nested_begin"] == drops["nested_begin"] + 7 + 2
    assert sum(got.values()) == base + 3 + 7 + 2


def replayed(lines: list, times: int) -> list:
    """The recording's intervals played ``times`` times in a row (clock moved on)."""
    span = lines[-1]["interval"]["end_mono_ns"] - lines[0]["interval"]["start_mono_ns"]
    out = []
    for n in range(times):
        for iv in lines:
            moved = dict(iv["interval"])
            moved["start_mono_ns"] += n * span
            moved["end_mono_ns"] += n * span
            out.append({**iv, "interval": moved})
    return out


def test_memory_stays_bounded_over_a_long_replay(recorded):
    """Hours of intervals hold a window's worth of them and at most max_samples stacks
    per profile; what does not fit is folded into one sample, so totals are kept."""
    _, doc, lines, _ = recorded
    state = ExportState(window_s=20, max_samples=5)
    times = 40
    for iv in replayed(lines, times):
        state.add_interval(iv)
    s = state.snapshot()
    per_s = len(lines) / (sum(iv["interval"]["duration_ns"] for iv in lines) / 1e9)
    assert len(s.recent) <= 20 * per_s + 2
    assert len(s.mutex_total) <= 6 and len(s.block_total) <= 6
    assert sum(n for _, n in s.mutex_total.values()) == \
        times * sum(lk["total_ns"] for lk in doc["locks"])
    assert s.intervals == times * len(lines) and len(s.lines) <= 60


def test_go_pprof_fetches_the_endpoints(recorded, tmp_path):
    """`go tool pprof` takes the profiles from the server's URLs, as from a Go service."""
    from lockscope.export import ExportServer
    _, _, _, state = recorded
    server = ExportServer.bind("127.0.0.1:0", state)
    server.start()
    try:
        for kind in ("mutex", "block"):
            local = tmp_path / f"{kind}.pb.gz"
            local.write_bytes(profile_bytes(state.snapshot(), kind, None))
            url = f"{server.url}/debug/pprof/{kind}"
            env = {"PPROF_TMPDIR": str(tmp_path)}   # where pprof saves what it fetched
            fetched = go_pprof(["-top"], url, env)
            assert top_functions(fetched)[:3] == top_functions(go_pprof(["-top"], local))[:3]
            assert top_functions(fetched)
            raw = go_pprof(["-raw"], f"{url}?seconds=1", env)
            assert raw_samples(raw)
    finally:
        server.stop()


def test_interval_state_sets_occupancy_drops_and_duty(recorded):
    """Each interval carries the recorder's state as of its end (maps in use, drops,
    sampling): the exposition shows the last one's, with nothing set by hand."""
    _, _, lines, _ = recorded
    last = lines[-1]["state"]
    state = ExportState()
    for iv in lines:
        state.add_interval(iv)
    s = samples_of(exposition(state))
    used = {x.labels["map"]: x.value for x in s["lockscope_recorder_map_entries"]}
    cap = {x.labels["map"]: x.value for x in s["lockscope_recorder_map_capacity"]}
    assert used == {m: v["entries"] for m, v in last["maps"].items()}
    assert cap == {m: v["max_entries"] for m, v in last["maps"].items()}
    assert used["locks"] > 0 and used["threads"] >= 5    # fio's writers and main thread
    assert all(cap[m] >= used[m] for m in used)
    kinds = {x.labels["kind"] for x in s["lockscope_recorder_drops_total"]}
    assert kinds >= {f"map_full.{m}" for m in last["drops"]["map_full_by_map"]}
    assert s["lockscope_recorder_duty_ratio"][0].value == last["sampling"]["duty_pct"] / 100
    assert s["lockscope_recorder_pauses_total"][0].value == last["sampling"]["pauses"]
    assert s["lockscope_recorder_paused_seconds_total"][0].value == \
        last["sampling"]["paused_ns"] / 1e9
