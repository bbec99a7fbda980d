"""Stacks for an interval's short waits that have none, from the same thread's samples
of the same wait in the intervals just before.

The recorder walks a thread's stacks once per wait (system call, reason, lock) per
--stack-refresh-ms and spreads each interval's unsampled time over that interval's
samples of the same wait (docs/recorder-json.md, *offcpu*). A wait whose samples fell
in other intervals keeps no stack: its first switch-outs after an interval began, or
an "on" part of the duty that ends before the memo lets the thread walk again. Such a
record is spread here, the recorder's way (count and time in proportion to the sampled
time), over the samples of the same (thread, reason, lock, system call, O_DSYNC) in the
latest earlier interval that had them, if it ended at most ``HORIZON_NS`` before. A
lock wait has its own stacks unless the budget shed them; one without takes, the same
way, the earlier samples of its (process, lock, flags). The profiles label what was
spread so ``stack="carried"`` and say its share (export.stack_coverage); long waits
never take another wait's stack. Samples the profile leaves out as idle stand for
waits too, as they do in the recorder's own spread: the share of a stackless wait
spread over them is idle (a thread waiting for completions in io_uring_enter whose
samples show io_cqring_wait), and leaves the profile."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

# two of attach --continuous's 5 s duty periods: an "on" part's samples still stand for
# the next one's waits
HORIZON_NS = 10_000_000_000
MAX_KEYS = 65536

WaitKey = tuple[Any, ...]
Record = Mapping[str, Any]  # an offcpu[] record, or a locks[].waits[] one with lock_addr


def wait_key(r: Mapping[str, Any]) -> WaitKey:
    """The recorder's spreading key of an off-CPU record; a lock wait's (locks[].waits,
    with its lock's address as lock_addr: no thread id there) is (process, lock,
    flags)."""
    if "flags" in r:
        return ("lock", r.get("pid"), r.get("lock_addr"), r.get("flags"))
    return (r.get("tid"), r.get("reason"), r.get("lock_addr"), r.get("syscall"),
            bool(r.get("dsync")))


def has_stack(r: Mapping[str, Any]) -> bool:
    return bool(r.get("kstack") or r.get("ustack"))


def spread(total: int, weights: list[int]) -> list[int]:
    """total in proportion to weights, the rounding rest to the largest weight."""
    whole = sum(weights)
    if whole <= 0:
        return [0] * len(weights)
    parts = [total * w // whole for w in weights]
    parts[max(range(len(weights)), key=weights.__getitem__)] += total - sum(parts)
    return parts


@dataclass
class SampleMemory:
    """The latest sampled short-wait records of each wait, with the end of their
    interval."""

    _by_key: dict[WaitKey, tuple[int, list[Record]]] = field(default_factory=dict)

    def carry(self, records: Iterable[Record], end_mono_ns: int,
              usable: Callable[[Record], bool]) -> list[tuple[Record, bool]]:
        """An interval's records (it ended at end_mono_ns), each short one without a
        stack replaced by its shares of the remembered samples of its wait where there
        are some, as (record, carried); then remembers this interval's samples. Only
        records ``usable`` accepts (the profile's: not idle) are carried: carrying
        never brings delay into the profile; spread over idle samples, it leaves."""
        records = list(records)
        out: list[tuple[Record, bool]] = []
        for r in records:
            carriable = not (has_stack(r) or r.get("long")) and usable(r)
            got = self._by_key.get(wait_key(r)) if carriable else None
            if got is None or end_mono_ns - got[0] > HORIZON_NS:
                out.append((r, False))
                continue
            samples = got[1]
            weights = [int(s.get("sampled_ns") or s.get("total_ns") or 0) for s in samples]
            counts = spread(int(r.get("count", 0)), weights)
            times = spread(int(r.get("total_ns", 0)), weights)
            out += [({**s, "count": c, "total_ns": ns, "sampled_count": 0, "sampled_ns": 0,
                      "hist_log2_ns": []}, True)
                    for s, c, ns in zip(samples, counts, times) if c or ns]
        self._remember(records, end_mono_ns)
        return out

    def _remember(self, records: list[Record], end_mono_ns: int) -> None:
        fresh: dict[WaitKey, list[Record]] = {}
        for r in records:
            if has_stack(r) and not r.get("long"):
                fresh.setdefault(wait_key(r), []).append(r)
        for k, rs in fresh.items():
            self._by_key.pop(k, None)   # re-inserted last: the dict's order is by age
            self._by_key[k] = (end_mono_ns, rs)
        # the oldest first: drop the stale, and the oldest past MAX_KEYS
        while self._by_key:
            k, (end, _) = next(iter(self._by_key.items()))
            if end_mono_ns - end <= HORIZON_NS and len(self._by_key) <= MAX_KEYS:
                break
            del self._by_key[k]


@dataclass
class StackMemories:
    """One memory per profile: off-CPU records (block) and lock waits (mutex)."""

    block: SampleMemory = field(default_factory=SampleMemory)
    mutex: SampleMemory = field(default_factory=SampleMemory)
