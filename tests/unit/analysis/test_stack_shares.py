"""The attach report's stack coverage (analysis.stack_shares): delay without a stack by
reason, short waits scaled to the window by the observed share, long ones as recorded;
nothing is said when nothing waited."""

from __future__ import annotations

from lockscope.analysis.stack_shares import stack_shares, stacks_phrase

SEC = 1_000_000_000


def rec(ns: int, long: bool, frames: int) -> dict:
    return {"tid": 1, "pid": 1, "reason": "blocked", "syscall": 74, "count": 1,
            "total_ns": ns, "long": long,
            "kstack": [f"f{i}+0x1" for i in range(frames)] or None, "ustack": None}


def trace(observed: int, offcpu: list[dict]) -> dict:
    return {"interval": {"duration_ns": 4 * SEC, "observed_ns": observed},
            "offcpu": offcpu, "locks": [], "threads": []}


def test_reasons_and_scaling():
    t = trace(SEC, [rec(2 * SEC, True, 5), rec(SEC // 4, False, 0), rec(SEC // 8, True, 0),
                    rec(SEC // 8, False, 2)])
    s = stack_shares(t, {}, set(), None)["block"]
    assert s["delay_ns"] == 2 * SEC + SEC + SEC // 8 + SEC // 2
    assert s["without_ns"] == {"not_sampled": SEC, "stack_lost": SEC // 8}
    assert s["four_frames_ns"] == 2 * SEC
    phrase = stacks_phrase({"block": s})
    assert phrase and phrase.startswith("delay without a stack: block 31.0%"), phrase


def test_nothing_waited_says_nothing():
    assert stacks_phrase(stack_shares(trace(SEC, []), {}, set(), None)) is None
