"""Lock holders recorded on real loop-backed ext4 by lockscope-record while
lockscope-load threads contend on one file's i_rwsem.

Expectations come from what each workload makes the holder do under the
lock (fs/ext4/file.c): an O_DSYNC DIO write into a hole commits the journal
before it unlocks (iomap_dio_complete -> generic_write_sync -> ext4_sync_file);
without O_DSYNC it allocates and waits for its own DIO; an unaligned write onto
unwritten extents drains in-flight DIO; a buffered write copies into the page
cache. Shares, never absolute times.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from lockscope.analysis.holders import (
    ACTIVITIES,
    FRAME_RULES,
    lock_releasers,
    lock_samples,
    releasers,
    split,
)
from lockscope.analysis.runs import lock_key
from lockscope.run.loopfs import make_loopfs

from conftest import ROOT, require_kernel
from patience import patience
from record_common import file_locks, record_binary, recorder

pytestmark = pytest.mark.kernel

LOAD = ROOT / "build" / "bin" / "lockscope-load"
ALLOCATION = dict(FRAME_RULES)["allocation"]
DIO_SUBMISSION = ("iomap_dio_rw", "__iomap_dio_rw", "iomap_dio_bio_iter", "submit_bio",
                  "ext4_iomap_begin")


@pytest.fixture(scope="module")
def ext4():
    require_kernel()
    fs = make_loopfs("ext4", size_bytes=1 << 30)
    try:
        yield fs
    finally:
        fs.destroy()


def record_load(path: Path, out: Path, load_args: list[str], rec_args: list[str] = (),
                seconds: float = 2.0, jobs: int = 4) -> dict:
    """lockscope-load threads on one file, recorded for `seconds` of their timed phase."""
    path.unlink(missing_ok=True)
    cmd = [str(LOAD), "--name=w", f"--filename={path}", f"--numjobs={jobs}", "--size=64m",
           "--runtime=30", "--time_based", "--start_on_stdin=1", "--output-format=json",
           f"--output={out.with_suffix('.load.json')}", *load_args]
    load = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        assert load.stdout.readline() == "ready\n", load.stderr.read()[-2000:]
        with recorder(["--pid", str(load.pid), *rec_args], out) as (_, start, finish):
            start()
            load.stdin.write("go\n")
            load.stdin.flush()
            time.sleep(seconds)
            doc = finish()
    finally:
        if load.poll() is None:
            load.terminate()
        load.wait(patience(30))
    return doc


def file_holders(doc: dict, path: Path) -> dict:
    locks = file_locks(doc, path, "i_rwsem")
    assert locks, doc["locks"][:2]
    samples = lock_samples(doc, lock_key(locks[0]), lock_key)
    assert samples, doc["holders"]
    return split(samples)


def frames_in(frames: list[str], prefixes: tuple[str, ...]) -> bool:
    return any(f.split("+", 1)[0].startswith(prefixes) for f in frames)


def test_dsync_writes_into_holes_wait_behind_a_journal_commit(ext4, tmp_path):
    path = ext4.path / "dsync"
    doc = record_load(path, tmp_path / "r.json", ["--rw=randwrite", "--bs=4k", "--direct=1",
                                                  "--layout=sparse", "--sync=dsync"])
    out = file_holders(doc, path)
    top = out["holders"][0]
    assert top["activity"] == "journal", out
    assert frames_in(top["frames"], dict(FRAME_RULES)["journal"])
    assert all(h["activity"] in ACTIVITIES for h in out["holders"])
    # The waiters were woken by the writer releasing i_rwsem (rwsem hand-off).
    lock = file_locks(doc, path, "i_rwsem")[0]
    released = releasers(lock_releasers(doc, lock_key(lock), lock_key))
    assert released and released[0]["frames"][0] == "up_write", released
    assert frames_in(released[0]["frames"], ("ext4_",)), released


def test_sparse_writes_hold_the_lock_to_allocate_and_submit(ext4, tmp_path):
    path = ext4.path / "sparse"
    doc = record_load(path, tmp_path / "r.json", ["--rw=randwrite", "--bs=4k", "--direct=1",
                                                  "--layout=sparse"])
    out = file_holders(doc, path)
    top = out["holders"][0]
    assert top["activity"] != "journal", out
    assert frames_in(top["frames"], ALLOCATION + DIO_SUBMISSION), out
    # Snapshots weigh waiters x time since the last: together they stand for the lock's wait
    # as contention_begin/end measured it (another program, another clock).
    lock = file_locks(doc, path, "i_rwsem")[0]
    weighted = sum(s["wait_ns"] for s in doc["holders"]["samples"] if s["addr"] == lock["addr"])
    assert 0.7 < weighted / lock["total_ns"] < 1.3, (weighted, lock["total_ns"])
    # Owners off CPU (waiting for their DIO) reuse the stack walked at the same place
    # within --stack-refresh-ms: more snapshots reused a stack than were of running owners.
    h = doc["holders"]
    if h["offcpu_stacks"]:
        on_cpu = sum(s["count"] for s in h["samples"] if s["state"] == "on_cpu")
        assert h["counts"]["stacks_reused"] > on_cpu, (h["counts"], on_cpu)


def test_unaligned_async_writes_onto_unwritten_extents_drain_dio_under_the_lock(ext4, tmp_path):
    # fs/ext4/file.c: ext4_dio_write_checks() takes i_rwsem exclusive for an
    # unaligned write onto unwritten extents and calls inode_dio_wait(); with
    # several writes in flight per thread there is DIO to drain.
    path = ext4.path / "unaligned"
    doc = record_load(path, tmp_path / "r.json", ["--rw=randwrite", "--bs=4k", "--direct=1",
                                                  "--layout=fallocated", "--unaligned=512",
                                                  "--ioengine=io_uring", "--iodepth=8"])
    out = file_holders(doc, path)
    drain = [h for h in out["holders"] if h["activity"] == "dio_drain"]
    assert drain and drain[0]["frames"][0] == "inode_dio_wait", out


def test_long_buffered_writes_hold_the_lock_in_the_page_cache(ext4, tmp_path):
    # 1 MiB buffered writes: each holds i_rwsem exclusive while it copies
    # (fs/ext4/file.c: ext4_buffered_write_iter -> generic_perform_write). Two
    # threads: the waiter sleeps, so the holder has a CPU however few there
    # are; when other load preempts it anyway, it waits for a CPU in the copy.
    path = ext4.path / "buffered"
    doc = record_load(path, tmp_path / "r.json", ["--rw=write", "--bs=1m", "--direct=0",
                                                  "--layout=written"], jobs=2)
    out = file_holders(doc, path)
    shares = {h["activity"]: h["share"] for h in out["holders"]}
    top = out["holders"][0]
    # Copying (page_cache), or preempted in the copy (runqueue) on a busy machine.
    assert top["activity"] in ("page_cache", "runqueue"), out
    assert frames_in(top["frames"], dict(FRAME_RULES)["page_cache"]), out
    assert shares.get("page_cache", 0) > 0, out
    samples = lock_samples(doc, lock_key(file_locks(doc, path, "i_rwsem")[0]), lock_key)
    in_copy = sum(s["wait_ns"] for s in samples
                  if frames_in(s["kstack"], dict(FRAME_RULES)["page_cache"]))
    assert in_copy > 0.5 * out["sampled_ns"], out


@pytest.mark.alone  # times the snapshots against their period
def test_snapshots_stay_within_the_period_and_every_one_is_counted(ext4, tmp_path):
    path = ext4.path / "budget"
    args = ["--rw=randwrite", "--bs=4k", "--direct=1", "--layout=sparse", "--sync=dsync"]
    runs = {}
    for period in (2, 8):
        doc = record_load(path, tmp_path / f"r{period}.json", args,
                          ["--holder-period-ms", str(period)])
        h = doc["holders"]
        assert h["enabled"] and h["period_ms"] == period and h["timer_cpus"] >= 1
        counts = h["counts"]
        assert set(counts) >= {"waits", "table_full", "sampled", "reader_owned", "no_owner",
                               "no_owner_field", "owner_gone", "stack_failed",
                               "no_stack_support", "map_full", "stacks_shed",
                               "wake_unsampled", "stacks_reused"}
        # every snapshot taken is in exactly one sample row
        assert counts["sampled"] == sum(s["count"] for s in h["samples"]) > 0
        # one snapshot per contended lock per period (a timer per CPU may claim
        # a period up to half a period early)
        seconds = doc["interval"]["duration_ns"] / 1e9
        nlocks = len({s["addr"] for s in h["samples"]})
        assert counts["sampled"] <= 2 * seconds * 1000 / period * nlocks + 4
        runs[period] = counts["sampled"] / seconds
    # a longer period takes fewer snapshots
    assert runs[8] < runs[2] * 0.6, runs


def test_a_budget_sheds_owner_stacks_then_the_holders_group(ext4, tmp_path):
    # Only the core groups and holders on, and a budget everything exceeds:
    # stacks go first (owner snapshots go on without stacks, counted), then
    # the holders group with its timers, before everything is detached (the
    # budget is checked every second: 5 s leave room for those steps).
    groups = json.loads(subprocess.run([record_binary(), "--list-features"], capture_output=True,
                                       text=True, check=True).stdout)["groups"]
    off = ",".join(g["name"] for g in groups
                   if not g["kept_by_budget"] and g["name"] != "holders")
    path = ext4.path / "budget-shed"
    doc = record_load(path, tmp_path / "r.json", ["--rw=randwrite", "--bs=4k", "--direct=1",
                                                  "--layout=sparse", "--sync=dsync"],
                      ["--max-overhead", "0.0001", "--disable", off], seconds=5.0)
    shed = [(s["kind"], s["what"]) for s in doc["overhead"]["shed"]]
    assert ("group", "holders") in shed, shed
    assert shed.index(("stacks", "stacks")) < shed.index(("group", "holders")), shed
    h = doc["holders"]
    assert h["counts"]["stacks_shed"] > 0, h["counts"]
    assert h["timer_cpus"] == 0  # the timers went with the group
    # no snapshot after the group was shed: at most ~one per period until then
    at = next(s["after_ns"] for s in doc["overhead"]["shed"] if s["what"] == "holders")
    nlocks = max(len({s["addr"] for s in h["samples"]}), 1)
    assert h["counts"]["sampled"] <= 2 * at / (h["period_ms"] * 1e6) * nlocks + 4


def test_disabled_holders_take_no_snapshot(ext4, tmp_path):
    path = ext4.path / "off"
    doc = record_load(path, tmp_path / "r.json", ["--rw=randwrite", "--bs=4k", "--direct=1",
                                                  "--layout=sparse"],
                      ["--disable", "holders"], seconds=1.0)
    h = doc["holders"]
    assert not h["enabled"] and h["samples"] == [] and h["counts"]["sampled"] == 0
    assert not h["releasers_enabled"] and h["releasers"] == []
    assert file_locks(doc, path, "i_rwsem")
    group = next(g for g in doc["features"] if g["name"] == "holders")
    assert group["enabled"] is False and group["reason"] == "disabled by --disable"


def test_without_tp_btf_holders_keep_state_and_count_missing_stacks(ext4, tmp_path):
    # raw_tp gives no trusted task pointer: owners off CPU get no stack, which
    # is counted; the state is still recorded.
    path = ext4.path / "raw"
    doc = record_load(path, tmp_path / "r.json", ["--rw=randwrite", "--bs=4k", "--direct=1",
                                                  "--layout=sparse", "--sync=dsync"],
                      ["--attach-kinds", "raw_tp,tracepoint"], seconds=1.0)
    h = doc["holders"]
    group = next(g for g in doc["features"] if g["name"] == "holders")
    assert group["attach"] == "raw_tp" and h["enabled"] and not h["offcpu_stacks"]
    assert h["counts"]["no_stack_support"] > 0
    blocked = [s for s in h["samples"] if s["state"] in ("blocked", "runqueue")]
    assert blocked and all(s["kstack"] == [] for s in blocked)


PIPE_LOAD = """
import os, sys, threading, time
r, w = os.pipe()
buf = b"x" * (256 << 10)
stop = time.time() + float(sys.argv[1])
def writer():
    while time.time() < stop:
        os.write(w, buf)
def reader():
    while os.read(r, 1 << 20):
        pass
threading.Thread(target=reader, daemon=True).start()
print("ready", flush=True)
writers = [threading.Thread(target=writer) for _ in range(4)]
for t in writers: t.start()
for t in writers: t.join()
"""


def test_a_pipe_mutex_names_the_thread_copying_into_the_pipe(tmp_path):
    # Writers to one pipe serialize on pipe->mutex (fs/pipe.c: anon_pipe_write
    # holds it while it copies); its owner is read from mutex::owner.
    require_kernel()
    # writes until killed below (120 s only bounds an orphan): a loaded host may take
    # seconds to load the recorder
    load = subprocess.Popen([sys.executable, "-c", PIPE_LOAD, "120"], stdout=subprocess.PIPE,
                            text=True)
    try:
        assert load.stdout.readline() == "ready\n"
        # How often the writers collide is the scheduler's affair (26 to 5,790 waits in
        # 1.5 s on a loaded 2-CPU host): windows until one has sampled a waiter.
        for attempt in range(4):
            with recorder(["--pid", str(load.pid)], tmp_path / f"r{attempt}.json") as (
                    _, start, finish):
                time.sleep(0.3)
                start()
                time.sleep(1.5)
                doc = finish()
            named = [s for s in doc["holders"]["samples"]
                     if s["lock_type"] == "mutex" and s["owner_tid"]]
            if named:
                break
    finally:
        load.kill()
        load.wait()
    mine = {t["tid"] for t in doc["threads"]}
    assert named, doc["holders"]
    total = sum(s["wait_ns"] for s in named)
    in_pipe = sum(s["wait_ns"] for s in named if s["owner_tid"] in mine
                  and frames_in(s["kstack"], ("pipe_write", "anon_pipe_write", "pipe_read",
                                              "anon_pipe_read", "copy_page_")))
    assert in_pipe > 0.5 * total, named[:3]
