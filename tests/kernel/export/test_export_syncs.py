"""Durability labels over a real recording: fio on ext4 writes one file with an fsync
every 4 writes, one with a sync_file_range writeback hint every 8 (fio issues one kind
per job), and one opened O_DSYNC. The exporter's `call` label keeps the three apart,
with the recording's own counts: fsync/fdatasync (`fsync`), writeback hints that
promise no durability (`sync_file_range`) and writes that sync themselves
(`dsync_write`)."""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections import defaultdict
from pathlib import Path

import pytest
from prometheus_client.exposition import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from lockscope.export import ExportState
from lockscope.export.metrics_registry import make_registry
from lockscope.run.loopfs import make_loopfs

from conftest import require_tool
from patience import patience
from record_common import recorder, stop

pytestmark = pytest.mark.kernel


def wait_open(pid: int, paths: list, timeout: float = 20) -> None:
    """Until the process has every file open (fio lays files out one by one first)."""
    want = {str(p) for p in paths}
    deadline = time.monotonic() + patience(timeout)
    while time.monotonic() < deadline:
        fds = Path(f"/proc/{pid}/fd")
        try:
            have = {os.readlink(fds / fd) for fd in os.listdir(fds)}
        except FileNotFoundError:
            raise AssertionError(f"process {pid} exited early") from None
        except OSError:
            have = set()
        if want <= have:
            return
        time.sleep(0.1)
    raise AssertionError(f"process {pid} did not open {sorted(want - have)}: {sorted(have)}")


def test_sync_calls_are_told_apart(tmp_path):
    fio = require_tool("fio")
    fs = make_loopfs("ext4", size_bytes=1 << 30)
    series = tmp_path / "series.jsonl"
    try:
        synced, hinted, dsync = fs.path / "synced", fs.path / "hinted", fs.path / "dsync"
        common = ["--rw=write", "--bs=4k", "--size=64m", "--time_based", "--runtime=60",
                  "--thread", "--ioengine=psync"]
        writers = subprocess.Popen(
            [fio, "--name=synced", f"--filename={synced}", "--fsync=4", *common,
             "--name=hinted", f"--filename={hinted}", "--sync_file_range=write:8", *common,
             "--name=dsync", f"--filename={dsync}", "--sync=dsync", *common],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        try:
            wait_open(writers.pid, [synced, hinted, dsync])
            with recorder(["--pid", str(writers.pid), "--interval-ms", "500",
                           "--series-out", str(series)], tmp_path / "rec.json") \
                    as (_, start, finish):
                time.sleep(0.5)
                start()
                time.sleep(2.5)
                doc = finish()
        finally:
            stop(writers)
    finally:
        fs.destroy()
    state = ExportState()
    for line in series.read_text().splitlines():
        state.add_interval(json.loads(line))
    got: dict[tuple[str, str], float] = defaultdict(float)
    secs: dict[tuple[str, str], float] = defaultdict(float)
    for fam in text_string_to_metric_families(generate_latest(
            make_registry(state.snapshot)).decode()):
        for s in fam.samples:
            if s.name == "lockscope_file_syncs_total":
                got[(s.labels["file"], s.labels["call"])] += s.value
            elif s.name == "lockscope_file_sync_seconds_total":
                secs[(s.labels["file"], s.labels["call"])] += s.value
    dio = {e["path"]: e for e in doc["dio"] if e["path"]}
    f, h, d = dio[str(synced)], dio[str(hinted)], dio[str(dsync)]
    assert f["fsync"]["count"] > 0 and h["sync_file_range"]["count"] > 0
    assert d["dsync_writes"]["count"] > 0
    assert got[(str(synced), "fsync")] == f["fsync"]["count"]
    assert got[(str(hinted), "sync_file_range")] == h["sync_file_range"]["count"]
    assert got[(str(dsync), "dsync_write")] == d["dsync_writes"]["count"]
    # each call kind only where it happened
    assert {call for (_file, call) in got} == {"fsync", "sync_file_range", "dsync_write"}
    assert len(got) == 3
    assert secs[(str(synced), "fsync")] == pytest.approx(f["fsync"]["total_ns"] / 1e9)
    assert secs[(str(hinted), "sync_file_range")] == \
        pytest.approx(h["sync_file_range"]["total_ns"] / 1e9)
