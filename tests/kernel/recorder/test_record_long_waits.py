"""Long waits (lockscope-record --long-wait-us, docs/long-waits.md): every off-CPU wait
of a traced thread at least that long is recorded with its kernel and user stack in
every phase of --duty, not only in the observed part. The workload counts its own
waits: one thread that sleeps a known number of times, each sleep longer than the
threshold, with short bursts of CPU in between, so that nothing else it does blocks."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from record_common import record_gated_program

pytestmark = pytest.mark.kernel

SLEEPER = r"""
import json, sys, time
n, ms = int(sys.argv[1]), float(sys.argv[2])
sys.stdin.readline()
done = 0
for _ in range(n):
    t = time.perf_counter()
    while time.perf_counter() - t < 0.002:
        pass
    time.sleep(ms / 1000)
    done += 1
print(json.dumps({"sleeps": done}), flush=True)
"""

SLEEPS = 60
SLEEP_MS = 3.0
TINY_BUDGET_SLEEPS = 3000


def run_sleeper(tmp_path: Path, recorder_args: tuple[str, ...],
                sleeps: int = SLEEPS) -> tuple[dict, dict]:
    script = tmp_path / "sleeper.py"
    script.write_text(SLEEPER)
    said, doc, _ = record_gated_program([sys.executable, str(script), str(sleeps),
                                         str(SLEEP_MS)], tmp_path / "rec.json", recorder_args)
    return said, doc


def long_records(doc: dict, tid: int) -> list[dict]:
    return [r for r in doc["offcpu"] if r.get("long") and r["tid"] == tid]


@pytest.mark.parametrize("switch", ["flag", "detach"])
def test_every_long_wait_has_its_stacks_at_a_low_duty(tmp_path, switch):
    """--duty-flag (what a continuous attach uses) leaves every link in place;
    detaching the other programs at every phase (a bounded attach) makes them again at
    each. Every wait, or all but one of the 60: on a shared 2-CPU VM 2 of about 15
    runs missed one, once in each mode (the cause is not established; docs/long-waits.md,
    Limits)."""
    said, doc = run_sleeper(tmp_path, ("--duty", "10", "--duty-period-ms", "200",
                                       "--long-wait-us", str(int(SLEEP_MS * 1000 / 3)),
                                       *(["--duty-flag"] if switch == "flag" else [])))
    tids = {r["tid"] for r in doc["offcpu"] if r.get("long")}
    assert len(tids) == 1, tids   # the sleeper is single-threaded
    longs = long_records(doc, tids.pop())
    # most of the window was not observed: the waits were caught in "off" phases too
    sampling = doc["sampling"]
    assert sampling["observed_ns"] < 0.5 * doc["interval"]["duration_ns"], sampling
    got = sum(r["count"] for r in longs)
    assert said["sleeps"] == SLEEPS and SLEEPS - 1 <= got <= SLEEPS, longs
    # the system call of a wait switched out in an "off" phase is read at its switch-in
    assert len({r["syscall"] for r in longs}) == 1 and longs[0]["syscall"] is not None, longs
    for r in longs:
        assert r["reason"] == "blocked"
        assert len(r["kstack"] or []) >= 3, r
        assert r["ustack"], r
        # measured whole: at least the sleeps' own length each
        assert r["total_ns"] >= r["count"] * SLEEP_MS * 1e6, r
    assert doc["counts"]["long_waits"] >= SLEEPS
    assert doc["drops"]["long_wait_kernel_stack_missing"] == 0
    assert doc["drops"]["long_wait_user_stack_missing"] == 0


def test_without_long_waits_the_off_phases_see_nothing(tmp_path):
    """The same run with --long-wait-us 0: no record is marked long, and the sleeps
    recorded are only those of the observed phases, fewer than all."""
    said, doc = run_sleeper(tmp_path, ("--duty", "10", "--duty-period-ms", "200",
                                       "--long-wait-us", "0"))
    assert not [r for r in doc["offcpu"] if r.get("long")]
    assert doc["counts"]["long_waits"] == 0
    seen = sum(r["count"] for r in doc["offcpu"] if r["reason"] == "blocked")
    assert seen < said["sleeps"], seen


def test_under_a_tiny_budget_groups_go_before_stacks_and_long_waits_stay(tmp_path):
    """--max-overhead far below any cost: the duty drops to its floor, the optional
    groups are shed before the stacks, then the probes pause; the sleeper's long waits
    are still all recorded, through the pauses, with their stacks."""
    # ~15 s of 5 ms steps: a step of the budget a second at most (the duty, each optional
    # group, both kinds of stack: up to 8 on a loaded host, where no step comes early),
    # then a pause of 1 s
    said, doc = run_sleeper(tmp_path, ("--max-overhead", "0.0001", "--max-pause-ms", "1000",
                                       "--long-wait-us", "1000", "--disable",
                                       "holders,releasers,block,jbd2,ext4_extent"),
                            sleeps=TINY_BUDGET_SLEEPS)
    steps = [(s["kind"], s["what"]) for s in doc["overhead"]["shed"]]
    kinds = [k for k, _ in steps]
    assert kinds[0] == "duty" and "stacks" in kinds and "pause" in kinds, steps
    # the groups that cost something when a step is judged go first; a group whose
    # events start later (other tasks' writes on a shared host) may be shed after
    assert "group" in kinds and kinds.index("group") < kinds.index("stacks"), steps
    assert doc["sampling"]["pauses"] >= 1
    tids = {r["tid"] for r in doc["offcpu"] if r.get("long")}
    assert len(tids) == 1, tids
    longs = long_records(doc, tids.pop())
    # detaching a shed group's ~25 per-call syscalls:* events takes about a second
    # (bench/README.md, bench/sweep); a switch of the sleeper in that second can go
    # unseen (0-3 of 1,200 here): at least 99%, none more than it did
    got = sum(r["count"] for r in longs)
    assert said["sleeps"] == TINY_BUDGET_SLEEPS, said
    assert 0.99 * TINY_BUDGET_SLEEPS <= got <= TINY_BUDGET_SLEEPS, (steps, got)
    assert all(r["kstack"] and r["ustack"] for r in longs), longs
