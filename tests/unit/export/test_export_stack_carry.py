"""A short wait an interval recorded without a stack takes its thread's samples of the
same wait from the latest earlier interval that had them (export.stack_carry): spread
the recorder's way, labelled stack="carried", its share said in the profile's comment
and a metric; never across threads, calls or a long gap, never for a long wait; the
share spread over idle samples leaves the profile; thread time stays what was
measured."""

from __future__ import annotations

import gzip

from prometheus_client import generate_latest

from lockscope.export import ExportState
from lockscope.export.metrics_registry import make_registry
from lockscope.export.profile_pb2 import Profile
from lockscope.export.profile_windows import profile_bytes
from lockscope.export.stack_carry import HORIZON_NS, spread
from lockscope.export.stack_coverage import stack_coverage

SEC = 1_000_000_000
FSYNC, READ, POLL = 74, 0, 7


def interval(end: int, offcpu: list[dict]) -> dict:
    return {"interval": {"start_mono_ns": end - SEC, "end_mono_ns": end, "duration_ns": SEC,
                         "observed_ns": SEC},
            "offcpu": offcpu, "locks": [], "threads": []}


def rec(ns: int, count: int, *, frames: tuple[str, ...] = (), tid: int = 7,
        syscall: int = FSYNC, long: bool = False, sampled_ns: int = 0) -> dict:
    return {"tid": tid, "pid": 7, "comm": "db", "reason": "blocked", "lock_addr": None,
            "kstack": list(frames) or None, "ustack": None, "syscall": syscall,
            "count": count, "total_ns": ns, "sampled_count": 1 if frames else 0,
            "sampled_ns": sampled_ns, "long": long}


JOURNAL = ("jbd2_log_wait_commit+0x1", "ext4_sync_file+0x2", "do_fsync+0x3",
           "__x64_sys_fsync+0x4")
DEVICE = ("io_schedule+0x1", "folio_wait_bit+0x2", "file_write_and_wait_range+0x3",
          "__x64_sys_fsync+0x4")


def blocks(state: ExportState) -> dict[tuple[tuple[str, ...], str | None], tuple[int, int]]:
    """(kernel stack, stack label) -> (count, ns) of the block profile."""
    out: dict = {}
    for (k, _u, labels), (c, n) in state.snapshot().block_total.items():
        key = (k, dict(labels).get("stack"))
        oc, on = out.get(key, (0, 0))
        out[key] = (oc + c, on + n)
    return out


def carried_state(second: list[dict], gap: int = SEC) -> ExportState:
    state = ExportState()
    state.add_interval(interval(SEC, [rec(3 * SEC // 10, 3, frames=JOURNAL, sampled_ns=300),
                                      rec(SEC // 10, 1, frames=DEVICE, sampled_ns=100)]))
    state.add_interval(interval(SEC + gap, second))
    return state


def test_a_stackless_wait_is_spread_over_its_earlier_samples():
    state = carried_state([rec(SEC // 2, 40)])
    got = blocks(state)
    # 3:1 by sampled time, count and time alike; the rest to the largest
    assert got[(JOURNAL, "carried")] == (30, 3 * SEC // 8)
    assert got[(DEVICE, "carried")] == (10, SEC // 8)
    assert ((), None) not in got
    cov = stack_coverage(state.snapshot().block_total)
    assert cov.without_share == 0 and cov.carried_share == (SEC // 2) / (SEC // 2 + 4 * SEC // 10)
    prof = Profile()
    prof.ParseFromString(gzip.decompress(profile_bytes(state.snapshot(), "block", None)))
    comment = [prof.string_table[i] for i in prof.comment
               if prof.string_table[i].startswith("delay without a stack")]
    assert comment and f"{cov.carried_share:.1%} with a stack carried" in comment[0]
    text = generate_latest(make_registry(state.snapshot)).decode()
    assert f'lockscope_profile_delay_carried_stack_ratio{{profile="block"}} ' \
           f'{cov.carried_share}' in text


def test_thread_time_stays_what_was_measured():
    state = carried_state([rec(SEC // 2, 40)])
    # classed by what was recorded: the stackless fsync is the call's class, the samples
    # by their frames; carrying moves profile delay, not thread time
    total = sum(state.snapshot().thread_ns.values())
    assert total == SEC // 2 + 4 * SEC // 10


def test_other_threads_calls_long_waits_and_stale_samples_keep_no_stack():
    for second, gap in (([rec(SEC // 2, 40, tid=8)], SEC),
                        ([rec(SEC // 2, 40, syscall=75)], SEC),
                        ([rec(SEC // 2, 4, long=True)], SEC),
                        ([rec(SEC // 2, 40)], HORIZON_NS + 2 * SEC)):
        got = blocks(carried_state(second, gap))
        assert not [k for k in got if k[1] == "carried"], (second, gap)
        assert sum(n for k, (_c, n) in got.items() if not k[0]) == SEC // 2


CLIENT = ("sk_wait_data+0x1", "tcp_recvmsg+0x2")


def test_a_stackless_wait_spread_over_idle_samples_leaves_the_profile():
    state = ExportState()
    # reads that waited for a client (idle by their frames) and for the device, then a
    # stackless read (unclassified by its call alone): spread 3:1 as the recorder
    # would, the idle share leaves the profile
    state.add_interval(interval(SEC, [rec(SEC, 5, frames=CLIENT, syscall=READ,
                                          sampled_ns=3 * SEC // 4),
                                      rec(SEC // 4, 1, frames=DEVICE, syscall=READ,
                                          sampled_ns=SEC // 4)]))
    state.add_interval(interval(2 * SEC, [rec(SEC // 2, 8, syscall=READ)]))
    assert blocks(state) == {(DEVICE, None): (1, SEC // 4), (DEVICE, "carried"): (2, SEC // 8)}
    # thread time stays as recorded, the stackless read in it whole
    assert sum(state.snapshot().thread_ns.values()) == SEC + SEC // 4 + SEC // 2
    # only idle samples: the whole of it is idle
    state = ExportState()
    state.add_interval(interval(SEC, [rec(SEC, 5, frames=CLIENT, syscall=READ,
                                          sampled_ns=SEC)]))
    state.add_interval(interval(2 * SEC, [rec(SEC // 4, 3, syscall=READ)]))
    assert blocks(state) == {}
    # an idle stackless wait (a poll) takes no sample that is not idle: the profile
    # leaves it out, carried or not
    state = ExportState()
    state.add_interval(interval(SEC, [rec(SEC, 5, frames=DEVICE, syscall=POLL,
                                          sampled_ns=SEC)]))
    state.add_interval(interval(2 * SEC, [rec(SEC // 4, 3, syscall=POLL)]))
    assert blocks(state) == {(DEVICE, None): (5, SEC)}


def test_the_latest_samples_stand_and_the_first_interval_keeps_its_own():
    state = ExportState()
    state.add_interval(interval(SEC, [rec(SEC // 10, 1, frames=DEVICE, sampled_ns=1)]))
    state.add_interval(interval(2 * SEC, [rec(SEC // 10, 1, frames=JOURNAL, sampled_ns=1),
                                          rec(SEC // 5, 2)]))
    state.add_interval(interval(3 * SEC, [rec(SEC // 5, 2)]))
    got = blocks(state)
    # the second interval's stackless wait takes the first's sample; the third the
    # second's (the latest), not both
    assert got[(DEVICE, "carried")] == (2, SEC // 5)
    assert got[(JOURNAL, "carried")] == (2, SEC // 5)


def test_spread_keeps_the_whole():
    assert spread(10, [3, 1]) == [8, 2]
    assert spread(7, [1, 1, 1]) == [3, 2, 2]
    assert spread(5, [0, 0]) == [0, 0]


def lock_interval(end: int, waits: list[dict], addr: str = "0x10") -> dict:
    iv = interval(end, [])
    iv["locks"] = [{"addr": addr, "kind": "global", "name": "m", "waits": waits}]
    return iv


def lock_wait(ns: int, count: int, stack: bool, flags: int = 2) -> dict:
    return {"flags": flags, "flag_names": ["WRITE"] if flags == 2 else ["READ"],
            "kstack": ["rwsem_down_write_slowpath+0x1", "x+0x2"] if stack else None,
            "ustack": None, "pid": 7, "comm": "db", "count": count, "total_ns": ns,
            "hist_log2_ns": [0] * 20 + [count]}


def test_a_lock_wait_whose_stack_was_shed_takes_its_lock_s_earlier_samples():
    state = ExportState()
    state.add_interval(lock_interval(SEC, [lock_wait(SEC // 10, 4, True)]))
    # stacks shed: the same lock and mode take the sample; another mode does not
    state.add_interval(lock_interval(2 * SEC, [lock_wait(SEC // 5, 6, False),
                                               lock_wait(SEC // 5, 6, False, flags=1)]))
    got = {(k, dict(lb).get("stack"), dict(lb)["mode"]): v
           for (k, _u, lb), v in state.snapshot().mutex_total.items()}
    stack = ("rwsem_down_write_slowpath+0x1", "x+0x2")
    assert got[(stack, "carried", "write")] == (6, SEC // 5)
    assert got[((), None, "read")] == (6, SEC // 5)
    # the lock-wait metrics and histogram are what was measured
    snap = state.snapshot()
    assert sum(c for c, _n in snap.lock_waits.values()) == 16
    assert sum(sum(h) for h in snap.lock_hist.values()) == 16
