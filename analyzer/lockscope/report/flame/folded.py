"""Folded stacks (``frame;frame;leaf value``): read them from traces, sum, write them.

Folded stacks are built from a trace's records: ``locks[].waits[]`` (lock
waits), ``offcpu[]`` (off-CPU time) or ``holders.samples[]``, each with
``kstack``/``ustack`` (leaf first) and its weight. Kernel frames get perf's
``_[k]`` mark, so user and kernel frames are coloured apart.

A document without records may carry ``runs[].trace.folded.<kind>`` lines
instead (an older recorder's, or hand-made). To stay robust against small
shape differences, a folded value may be a list of lines,
one string with newlines, a ``{stack: value}`` mapping, or a list of
``[stack, value]`` pairs / ``{"stack"|"frames": …, "value"|"ns"|"count": …}``
objects, where a stack is a ``;``-joined string or a list of frames (root first).
"""

from __future__ import annotations

import os
import re
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, cast

from ...analysis.holders import sample_activity
from ...analysis.runs import lock_key, worker_tids
from ...schema import HolderSample, Run, TraceLock

KINDS = ("lockwait", "offcpu", "holders")
# The weight each kind carries, for titles and count names.
UNITS = {"lockwait": "ns waited", "offcpu": "ns blocked", "holders": "ns waited"}
KIND_TITLES = {"lockwait": "lock waits", "offcpu": "off-CPU time",
               "holders": "what the top lock's holder did"}
_VALUE_KEYS = ("value", "ns", "total_ns", "count", "weight")


def _stack_text(stack: Any) -> str:
    if isinstance(stack, (list, tuple)):
        return ";".join(str(f) for f in stack)
    return str(stack)


def _parse_line(line: str) -> tuple[str, int] | None:
    # The count is after the last space: frames themselves may contain spaces.
    stack, _, value = line.strip().rpartition(" ")
    if not stack:
        return None
    try:
        return stack, int(value)
    except ValueError:
        pass
    try:
        return stack, int(float(value))
    except ValueError:
        return None


def iter_folded(data: Any) -> Iterator[tuple[str, int]]:
    """Yield (stack, value) from any accepted folded representation; skips bad entries."""
    if not data:
        return
    if isinstance(data, str):
        data = data.splitlines()
    if isinstance(data, dict):
        for stack, value in data.items():
            try:
                yield str(stack), int(value)
            except (TypeError, ValueError):
                continue
        return
    for item in data:
        if isinstance(item, str):
            parsed = _parse_line(item)
            if parsed:
                yield parsed
        elif isinstance(item, (list, tuple)) and len(item) == 2:
            try:
                yield _stack_text(item[0]), int(item[1])
            except (TypeError, ValueError):
                continue
        elif isinstance(item, dict):
            stack = item.get("stack", item.get("frames"))
            value = next((item[k] for k in _VALUE_KEYS if k in item), None)
            if stack is None or value is None:
                continue
            try:
                yield _stack_text(stack), int(value)
            except (TypeError, ValueError):
                continue


# A return offset inside folded text: before a ';', a ']' (``[libc.so.6+0x1f2]``),
# the space before the value, or a line end.
_OFFSETS = re.compile(r"\+0x[0-9a-fA-F]+(?:/0x[0-9a-fA-F]+)?(?=[;\]\s]|$)")


def strip_offsets(text: str) -> str:
    """``vfs_write+0x1c4;ksys_write+0x6f 12`` → ``vfs_write;ksys_write 12``.

    Flame graphs merge frames by name; a return offset would split one
    function into as many frames as it has call sites.
    """
    return _OFFSETS.sub("", text) if "+0x" in text else text


class _StrippedFrames(dict[str, str]):
    """frame → the frame without its return offset, computed on first use."""

    def __missing__(self, frame: str) -> str:
        bare = self[frame] = strip_offsets(frame)
        return bare


class StrippedStacks(dict[str, str]):
    """stack → the stack without return offsets, computed on first use.

    The same stacks come back at every point of a sweep (and in every repeat), and
    a few hundred frames make up all of them: each distinct stack is stripped once,
    frame by frame, and each distinct frame once. Frame by frame is the same as
    strip_offsets over the whole stack: an offset never spans a ``;``, and a
    frame's end is where the whole stack has a ``;`` or the space before the value.
    """

    def __init__(self) -> None:
        super().__init__()
        self._frame = _StrippedFrames().__getitem__

    def __missing__(self, stack: str) -> str:
        bare = self[stack] = (";".join(map(self._frame, stack.split(";")))
                              if "+0x" in stack else stack)
        return bare


def strip_lines(lines: list[str], cache: StrippedStacks) -> tuple[str, int]:
    """strip_offsets over folded lines ``stack value``, each ended by a newline, and
    the sum of their values. ValueError when a line is not ``stack value`` with an
    integer value (then the careful path takes it); `cache` keeps the stripped
    stacks for the next calls."""
    out: list[str] = []
    put = out.append
    total = 0
    for line in lines:
        stack, _, value = line.rpartition(" ")
        if not stack:
            raise ValueError("a folded line without a value")
        total += int(value)
        put(f"{cache[stack]} {value}\n")
    return "".join(out), total


def _record_stack(rec: dict[str, Any]) -> str | None:
    """Root-first folded stack of a record with leaf-first kstack/ustack lists."""
    kstack: list[Any] = rec["kstack"] if isinstance(rec.get("kstack"), list) else []
    ustack: list[Any] = rec["ustack"] if isinstance(rec.get("ustack"), list) else []
    if not kstack and not ustack:
        return None
    # Offsets would split one function into many frames; flame graphs merge by name.
    user = [strip_offsets(str(f)) for f in reversed(ustack)]
    kern = [strip_offsets(str(f)) + "_[k]" for f in reversed(kstack)]
    comm = [str(rec["comm"])] if rec.get("comm") else []
    return ";".join(comm + user + kern)


def holders_folded(trace: dict[str, Any]) -> dict[str, int]:
    """The holder snapshots of the trace's most waited-for lock, as folded stacks:
    lock; activity (analysis/holders.py); holder's command; its kernel frames."""
    samples = (trace.get("holders") or {}).get("samples") or []
    sampled = {s.get("addr") for s in samples if isinstance(s, dict)}
    locks = [lk for lk in trace.get("locks") or [] if isinstance(lk, dict)
             and lk.get("addr") in sampled]
    if not locks:
        return {}
    top = max(locks, key=lambda lk: lk.get("total_ns") or 0)
    out: dict[str, int] = defaultdict(int)
    for s in samples:
        if not isinstance(s, dict) or s.get("addr") != top.get("addr"):
            continue
        act = sample_activity(cast(HolderSample, s)) or str(s.get("state") or "unknown")
        kstack: list[Any] = s["kstack"] if isinstance(s.get("kstack"), list) else []
        frames = [lock_key(cast(TraceLock, top)).replace(";", ","), act]
        if s.get("owner_comm"):
            frames.append(str(s["owner_comm"]))
        frames += [strip_offsets(str(f)) + "_[k]" for f in reversed(kstack)]
        try:
            value = int(s.get("wait_ns") or 0)
        except (TypeError, ValueError):
            continue
        if value > 0:
            out[";".join(frames)] += value
    return dict(out)


def records_folded(trace: dict[str, Any], kind: str,
                   tids: set[int] | None = None) -> dict[str, int]:
    """Folded stacks rebuilt from a trace's lock-wait, off-CPU or holder records
    (off-CPU: only the threads in `tids`, when given)."""
    if kind == "holders":
        return holders_folded(trace)
    if kind == "lockwait":
        recs = [w for lock in trace.get("locks") or [] if isinstance(lock, dict)
                for w in lock.get("waits") or [] if isinstance(w, dict)]
    else:
        recs = [r for r in trace.get("offcpu") or [] if isinstance(r, dict)
                and (not tids or r.get("tid") in tids)]
    out: dict[str, int] = defaultdict(int)
    for rec in recs:
        stack = _record_stack(rec)
        try:
            value = int(rec.get("total_ns") or 0)
        except (TypeError, ValueError):
            continue
        if stack and value > 0:
            out[stack] += value
    return dict(out)


def run_folded(run: dict[str, Any], kind: str) -> Any:
    """The folded data of one run for `kind`, or None.

    Folded stacks are built here, from the trace's records (records_folded): the
    recorder writes records, not folded lines. Lines a document carries in
    ``trace.folded`` (an older recorder's, or hand-made input) are taken as they
    are, except off-CPU ones when the workload's threads are known: lines carry no
    thread, and the workload's idle main thread is not I/O time.
    """
    trace = run.get("trace")
    if not isinstance(trace, dict):
        return None
    tids = worker_tids(cast(Run, run))
    if kind == "offcpu" and tids and any(
            isinstance(r, dict) and "tid" in r for r in trace.get("offcpu") or []):
        return records_folded(trace, kind, tids) or None
    folded = trace.get("folded")
    if kind != "holders" and isinstance(folded, dict) and folded.get(kind):
        return folded[kind]
    return records_folded(trace, kind) or None


def merge(runs: Iterable[dict[str, Any]], kind: str) -> dict[str, int]:
    """Sum the `kind` stacks of several runs (the repeats of one point)."""
    total: dict[str, int] = {}
    get = total.get
    for run in runs:
        data = run_folded(run, kind)
        if isinstance(data, list) and data and all(isinstance(x, str) for x in data[:3]):
            # The recorder's shape (folded lines): a tight loop, it is the hot path.
            for line in data:
                try:
                    stack, _, value = line.rpartition(" ")
                    v = int(value)
                except (AttributeError, ValueError):
                    parsed = _parse_line(line) if isinstance(line, str) else None
                    if not parsed:
                        continue
                    stack, v = parsed
                if v > 0 and stack:
                    total[stack] = get(stack, 0) + v
            continue
        for stack, value in iter_folded(data):
            if value > 0:
                total[stack] = get(stack, 0) + value
    return total


@dataclass
class PointStacks:
    """What write_point wrote: total weight, number of lines, kernel-frame marks."""

    total: int = 0
    lines: int = 0
    annotated: bool = False


def write_point(path: str | os.PathLike, runs: Iterable[dict[str, Any]], kind: str,
                cache: StrippedStacks | None = None) -> PointStacks:
    """Write the `kind` stacks of several runs (a point's repeats) into one folded file.

    The repeats' lines are concatenated, not merged: inferno, FlameGraph and
    speedscope all sum repeated stacks themselves, and skipping the merge
    keeps large recordings fast. Return offsets are stripped from frames
    (strip_offsets; `cache` keeps stripped stacks for the next points). Lines
    already in folded form are copied in one piece; anything else is converted
    line by line.
    """
    out = PointStacks()
    cache = StrippedStacks() if cache is None else cache
    with open(path, "w", buffering=1 << 20) as fh:
        for run in runs:
            data = run_folded(run, kind)
            if not data:
                continue
            if isinstance(data, list) and all(isinstance(x, str) for x in data[:3]):
                try:
                    if any("\n" in line for line in data[:3]):
                        raise ValueError("lines carry newlines")
                    text, total = strip_lines(data, cache)
                except (ValueError, TypeError, AttributeError):
                    pass  # not clean folded lines: take the careful path below
                else:
                    fh.write(text)
                    out.total += total
                    out.lines += len(data)
                    out.annotated = out.annotated or any("_[k]" in x for x in data[:200])
                    continue
            for stack, value in iter_folded(data):
                if value > 0:
                    fh.write(f"{strip_offsets(stack)} {value}\n")
                    out.total += value
                    out.lines += 1
                    out.annotated = out.annotated or "_[k]" in stack
    return out
