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

# Each round also writes a byte to /dev/null, which never blocks: a system call the
# syscalls group follows, so that a group costs something whatever else the host runs.
# A sleep is a long wait only if the thread blocks in it for the threshold: on a loaded
# host it can be preempted before it blocks and spend its time runnable instead (the
# sleep's deadline is absolute: it blocks for what is left, or never). So the sleeper
# also says, from its own CPU clock and its time runnable (/proc/thread-self/schedstat),
# how many sleeps surely were long waits (blocked, less all runnable time, at the
# threshold) and how many may have been (off CPU at the threshold: the recorder's
# measure, from the block to the switch-in, takes in the runnable time after the
# wakeup). It runs SCHED_FIFO where it may, so that other tasks rarely preempt it: its
# sleeps then block whole even on a loaded host (the test's point), and the bounds meet.
SLEEPER = r"""
import json, os, sys, time
n, ms, threshold_ns = int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3]) * 1000
null = os.open(os.devnull, os.O_WRONLY)
try:
    os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(1))
except OSError:
    pass

def sched():
    # on CPU from the thread's CPU clock (up to date; schedstat's first field is only
    # at the last tick or switch), runnable from schedstat (at each switch-in)
    with open("/proc/thread-self/schedstat") as f:
        runnable = int(f.read().split()[1])
    return time.thread_time_ns(), runnable

sys.stdin.readline()
done = sure = maybe = 0
for _ in range(n):
    t = time.perf_counter()
    while time.perf_counter() - t < 0.002:
        pass
    os.write(null, b"x")
    # the readings inside [t0, t1]: what they cost on CPU, or waiting for it, is
    # subtracted from that span, not from the sleep (a loaded host made one sleep of 3000
    # look shorter than the threshold when read the other way round)
    t0, (on0, rq0) = time.monotonic_ns(), sched()
    time.sleep(ms / 1000)
    (on1, rq1), t1 = sched(), time.monotonic_ns()
    off = (t1 - t0) - (on1 - on0)
    if off - (rq1 - rq0) >= threshold_ns:
        sure += 1
    elif off >= threshold_ns:
        maybe += 1
    done += 1
print(json.dumps({"sleeps": done, "sure": sure, "maybe": maybe}), flush=True)
"""

SLEEPS = 60
SLEEP_MS = 3.0
TINY_BUDGET_SLEEPS = 3000
THRESHOLD_US = 1000


def run_sleeper(tmp_path: Path, recorder_args: tuple[str, ...],
                sleeps: int = SLEEPS) -> tuple[dict, dict]:
    """(what the sleeper said, its sleeps judged against THRESHOLD_US; the recording)."""
    script = tmp_path / "sleeper.py"
    script.write_text(SLEEPER)
    said, doc, _ = record_gated_program([sys.executable, str(script), str(sleeps),
                                         str(SLEEP_MS), str(THRESHOLD_US)],
                                        tmp_path / "rec.json", recorder_args)
    return said, doc


def assert_every_long_sleep_kept(said: dict, sleeps: int, got: int, unseen: int) -> None:
    """Every sleep that was a long wait recorded or counted as unseen; and most sleeps
    were (else the test shows nothing)."""
    assert said["sleeps"] == sleeps and said["sure"] >= 0.9 * sleeps, said
    assert said["sure"] <= got + unseen <= said["sure"] + said["maybe"], (got, unseen, said)


def long_records(doc: dict, tid: int) -> list[dict]:
    return [r for r in doc["offcpu"] if r.get("long") and r["tid"] == tid]


@pytest.mark.parametrize("switch", ["flag", "detach"])
def test_every_long_wait_has_its_stacks_at_a_low_duty(tmp_path, switch):
    """--duty-flag (what a continuous attach uses) leaves every link in place;
    detaching the other programs at every phase (a bounded attach) makes them again at
    each. Every wait is recorded, or counted as one whose switch-in sched_switch never
    reported (docs/long-waits.md, Limits)."""
    said, doc = run_sleeper(tmp_path, ("--duty", "10", "--duty-period-ms", "200",
                                       "--long-wait-us", str(THRESHOLD_US),
                                       *(["--duty-flag"] if switch == "flag" else [])))
    tids = {r["tid"] for r in doc["offcpu"] if r.get("long")}
    assert len(tids) == 1, tids   # the sleeper is single-threaded
    longs = long_records(doc, tids.pop())
    # most of the window was not observed: the waits were caught in "off" phases too
    sampling = doc["sampling"]
    assert sampling["observed_ns"] < 0.5 * doc["interval"]["duration_ns"], sampling
    got = sum(r["count"] for r in longs)
    unseen = doc["drops"]["long_wait_switch_in_unseen"]
    assert_every_long_sleep_kept(said, SLEEPS, got, unseen)
    assert doc["counts"]["long_waits"] == got
    # the system call of a wait switched out in an "off" phase is read at its switch-in
    assert len({r["syscall"] for r in longs}) == 1 and longs[0]["syscall"] is not None, longs
    for r in longs:
        assert r["reason"] == "blocked"
        assert len(r["kstack"] or []) >= 3, r
        assert r["ustack"], r
    # measured whole, less the run-queue delay sched_info gives, which can take in part
    # of a sleep (docs/long-waits.md, Limits): about the sleeps' own length
    blocked_ns = sum(r["total_ns"] for r in longs)
    assert 0.75 * got * SLEEP_MS * 1e6 <= blocked_ns <= doc["interval"]["duration_ns"], longs
    assert doc["drops"]["long_wait_kernel_stack_missing"] == 0
    assert doc["drops"]["long_wait_user_stack_missing"] == 0


def test_without_long_waits_the_off_phases_see_nothing(tmp_path):
    """The same run with --long-wait-us 0: no record is marked long, and the sleeps
    recorded are only those of the observed phases, fewer than all."""
    said, doc = run_sleeper(tmp_path, ("--duty", "10", "--duty-period-ms", "200",
                                       "--long-wait-us", "0"))
    assert not [r for r in doc["offcpu"] if r.get("long")]
    # not followed, so not counted: null, not zero
    assert doc["counts"]["long_waits"] is None
    assert doc["drops"]["long_wait_switch_in_unseen"] is None
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
                                       "--long-wait-us", str(THRESHOLD_US), "--disable",
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
    got = sum(r["count"] for r in longs)
    unseen = doc["drops"]["long_wait_switch_in_unseen"]
    assert_every_long_sleep_kept(said, TINY_BUDGET_SLEEPS, got, unseen)
    assert all(r["kstack"] and r["ustack"] for r in longs), longs


# One thread reads, in turn, from a pipe and from a unix socket: the same system call
# from the same C wrapper, blocked at two kernel places. A second thread writes a byte
# to each, a few ms after each read began.
TWO_PLACES = r"""
import json, os, socket, sys, threading, time
n = int(sys.argv[1])
pr, pw = os.pipe()
sa, sb = socket.socketpair()
turn = threading.Semaphore(0)
def writer():
    for i in range(2 * n):
        turn.acquire()
        time.sleep(0.003)
        if i % 2 == 0:
            os.write(pw, b"x")
        else:
            sb.send(b"x")
threading.Thread(target=writer, daemon=True).start()
sys.stdin.readline()
for _ in range(n):
    turn.release()
    os.read(pr, 1)
    turn.release()
    os.read(sa.fileno(), 1)
print(json.dumps({"reads": 2 * n, "tid": threading.get_native_id()}), flush=True)
"""


def test_long_waits_at_two_places_keep_their_own_kernel_stacks(tmp_path):
    """A long wait's kernel stack is reused from the last one taken at the same place
    (docs/long-waits.md): the pipe's waits keep pipe_read's stack and the socket's the
    socket's, every one, while most stacks are not walked again."""
    script = tmp_path / "two_places.py"
    script.write_text(TWO_PLACES)
    reads = 40
    said, doc, _ = record_gated_program([sys.executable, str(script), str(reads)],
                                        tmp_path / "rec.json", ("--long-wait-us", "1000"))
    longs = [r for r in long_records(doc, said["tid"]) if r["syscall"] == 0]  # read(2)
    by_place = {"pipe": 0, "socket": 0}
    for r in longs:
        frames = " ".join(r["kstack"] or [])
        place = "pipe" if "pipe_read" in frames else "socket" if "unix_stream" in frames \
            else None
        assert place and not ("pipe_read" in frames and "unix_stream" in frames), r
        by_place[place] += r["count"]
    unseen = doc["drops"]["long_wait_switch_in_unseen"]
    assert said["reads"] == 2 * reads
    assert reads - unseen <= by_place["pipe"] <= reads, (by_place, unseen)
    assert reads - unseen <= by_place["socket"] <= reads, (by_place, unseen)
    assert by_place["pipe"] + by_place["socket"] + unseen >= 2 * reads
    # the places came back within --stack-refresh-ms (100 ms): stacks were reused
    assert doc["counts"]["long_wait_kernel_stacks_reused"] > 0, doc["counts"]
