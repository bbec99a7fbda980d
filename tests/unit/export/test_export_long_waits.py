"""Long waits and sampled ones in the exporter (docs/long-waits.md): a record marked
``long`` counts as recorded, every one of them; the others were recorded only while
observed and are scaled by the interval's duration over its observed time, with a
label saying which. The profiles and the metrics say how much delay has no stack, and
why; a profile without any delay gives no figure."""

from __future__ import annotations

import gzip

from prometheus_client import generate_latest

from lockscope.export import ExportState
from lockscope.export.interval_digest import profile_kstack
from lockscope.export.metrics_registry import make_registry
from lockscope.export.profile_pb2 import Profile
from lockscope.export.profile_windows import profile_bytes
from lockscope.export.stack_coverage import stack_coverage

SEC = 1_000_000_000


def interval(duration: int, observed: int, offcpu: list[dict], locks: list[dict]) -> dict:
    return {"interval": {"start_mono_ns": 0, "end_mono_ns": duration, "duration_ns": duration,
                         "observed_ns": observed},
            "offcpu": offcpu, "locks": locks, "threads": []}


def off(ns: int, count: int, long: bool, stack: bool) -> dict:
    return {"tid": 7, "pid": 7, "comm": "db", "reason": "blocked", "lock_addr": None,
            "kstack": ["io_schedule+0x1", "folio_wait_bit+0x2", "fsync+0x3", "x+0x4"]
            if stack else None, "ustack": ["fsync+0x5"] if stack else None,
            "syscall": 74, "count": count, "total_ns": ns, "long": long}


def wait(ns: int, count: int, long: bool, stack: bool) -> dict:
    return {"flags": 2, "flag_names": ["WRITE"], "kstack": ["rwsem_down_write_slowpath+0x1"]
            if stack else None, "ustack": None, "pid": 7, "comm": "db", "count": count,
            "total_ns": ns, "long": long}


def state_of(duration: int, observed: int) -> ExportState:
    state = ExportState()
    state.add_interval(interval(
        duration, observed,
        [off(3 * SEC, 30, True, True), off(SEC // 10, 10, False, False),
         off(SEC // 10, 5, True, False)],
        [{"addr": "0x10", "kind": "global", "name": "m",
          "waits": [wait(SEC // 2, 4, True, True), wait(SEC // 20, 50, False, True)]}]))
    return state


def block_samples(state: ExportState) -> dict:
    return {dict(k[2]).get("sampling"): v for k, v in state.snapshot().block_total.items()
            if dict(k[2]).get("sampling")}


def test_short_waits_are_scaled_and_labelled_long_ones_are_not():
    state = state_of(10 * SEC, SEC)   # observed a tenth of the time
    samples = state.snapshot().block_total
    by = {}
    for (k, u, labels), (c, ns) in samples.items():
        by.setdefault(dict(labels)["sampling"], []).append((bool(k or u), c, ns))
    assert sorted(by["long"]) == [(False, 5, SEC // 10), (True, 30, 3 * SEC)]
    assert by["scaled"] == [(False, 100, SEC)]   # 10 waits seen in a tenth: ~100
    mutex = {dict(lb)["sampling"]: v for (_k, _u, lb), v in state.snapshot().mutex_total.items()}
    assert mutex == {"long": (4, SEC // 2), "scaled": (500, SEC // 2)}


def test_at_full_duty_nothing_is_scaled():
    state = state_of(SEC, SEC)
    labels = {dict(k[2])["sampling"] for k in state.snapshot().block_total}
    assert labels == {"long", "every"}


def test_the_delay_without_a_stack_is_said_with_its_reason():
    state = state_of(10 * SEC, SEC)
    cov = stack_coverage(state.snapshot().block_total)
    total = 3 * SEC + SEC + SEC // 10
    assert cov.delay_ns == total
    assert cov.share("not_sampled") == SEC / total
    assert cov.share("stack_lost") == (SEC // 10) / total
    prof = Profile()
    prof.ParseFromString(gzip.decompress(profile_bytes(state.snapshot(), "block", None)))
    comments = [prof.string_table[i] for i in prof.comment]
    line = [c for c in comments if c.startswith("delay without a stack")]
    assert line and f"{(SEC + SEC // 10) / total:.1%}" in line[0], comments
    text = generate_latest(make_registry(state.snapshot)).decode()
    assert ('lockscope_profile_delay_without_stack_ratio{profile="block",'
            'reason="stack_lost"}') in text


def test_no_delay_gives_no_stack_figure():
    state = ExportState()
    state.add_interval(interval(SEC, SEC, [], []))
    assert stack_coverage(state.snapshot().block_total).without_share is None
    text = generate_latest(make_registry(state.snapshot)).decode()
    assert "lockscope_profile_delay_without_stack_ratio{" not in text


def test_a_place_to_wait_is_one_frame_whichever_way_its_stack_was_taken():
    # in the waiter's context at sched_switch, and the sleeping task's (long waits)
    in_context = ["__schedule+0x618", "schedule+0x23", "futex_do_wait+0x3e", "do_syscall_64+0x71"]
    of_the_task = ["futex_do_wait+0x3e", "do_syscall_64+0x71"]
    assert profile_kstack(in_context) == profile_kstack(of_the_task) == tuple(of_the_task)
    # only the top: a frame named so further down stays
    assert profile_kstack(["a+0x1", "schedule+0x2"]) == ("a+0x1", "schedule+0x2")
    assert profile_kstack(None) == () and profile_kstack(["__schedule+0x1"]) == ()
