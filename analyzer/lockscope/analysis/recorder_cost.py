"""What recording cost, from the recorder's own measurement (its ``overhead`` object,
docs/recorder-json.md): per point for results.json, one sentence for the terminal and
the report, and notes for what --max-overhead shed."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..schema import CostShed, Run, RunRecorderCost

_SHED_WORDS = {"user_stacks": "user stacks", "stacks": "all stacks"}
# the last resort's step: every probe detached for a while, then attached again
PAUSE = "all"
# a step that brought back what was shed (--restore-after-ms)
RESTORE = "restore"


def _shed_words(what: str) -> str:
    """A shed step in words; "duty 35%" lowered the time the probes were attached."""
    if what.startswith("duty "):
        return f"probe time down to {what[5:]} (--duty)"
    return _SHED_WORDS.get(what, f"the {what} probes")


def cost_shed(step: Mapping[str, Any], digits: int | None = None) -> CostShed:
    """One of the recorder's overhead.shed steps as results.json keeps it; a step that
    brought back what was shed (kind "restore") says so."""
    after = (step.get("after_ns") or 0) / 1e9
    out: CostShed = {"what": step.get("what"),
                     "after_s": round(after, digits) if digits is not None else after}
    if step.get("kind") == RESTORE:
        out["kind"] = RESTORE
    return out


def shed_phrase(shed: Sequence[Mapping[str, Any]]) -> str:
    """The steps in words, pauses folded into one part: "user stacks after 1.0 s, the
    syscalls probes after 3.0 s, every probe paused 3 times from 9.3 s, the syscalls
    probes back after 40.0 s"; "" for none."""
    parts = [f"{_shed_words(str(s['what']))}{' back' if s.get('kind') == RESTORE else ''} "
             f"after {s['after_s']:.1f} s" for s in shed if s.get("what") != PAUSE]
    pauses = [s for s in shed if s.get("what") == PAUSE]
    if pauses:
        times = "once" if len(pauses) == 1 else f"{len(pauses)} times"
        parts.append(f"every probe paused {times} from {pauses[0]['after_s']:.1f} s")
    return ", ".join(parts)


def recorder_cost(trace: Any) -> RunRecorderCost | None:
    """``runs[].recorder_cost``: the point's BPF and recorder-process CPU shares and what
    was shed; None without a trace or without the recorder's measurement."""
    o = trace.get("overhead") if isinstance(trace, dict) else None
    if not isinstance(o, dict):
        return None
    user = o.get("user")
    if not isinstance(user, dict):
        user = {}
    shed = [s for s in o.get("shed") or [] if isinstance(s, dict)]
    window, measured = o.get("window_ns"), o.get("measured_ns")
    return {"bpf_cpu_share": o.get("cpu_share"), "bpf_ns": o.get("bpf_ns"),
            # older recorders kept the statistics on throughout and had no measured_ns
            "stats_measured": (min(1.0, measured / window) if isinstance(measured, int)
                               and isinstance(window, int) and window > 0 else None),
            "user_cpu_share": user.get("cpu_share"),
            "max_overhead_pct": o.get("max_overhead_pct"),
            "shed": [cost_shed(s, 1) for s in shed],
            "detached": bool(o.get("detached"))}


def _cost(run: Run) -> RunRecorderCost | None:
    cost = run.get("recorder_cost")
    return cost if isinstance(cost, dict) else recorder_cost(run.get("trace"))


def _label(run: Run) -> str:
    return f"{run.get('fs', '?')} {run.get('threads', '?')} threads"


def _pct(share: float) -> str:
    """A CPU share as a percentage, with a second decimal below 0.1% (never a bare 0.0%)."""
    return f"{share:.1%}" if share >= 0.001 or share == 0 else f"{share:.2%}"


def cost_sentence(runs: list[Run]) -> str | None:
    """E.g. "the recorder used 0.6% of the CPUs (mean of 8 points; at most 0.9%, xfs 8
    threads), and its own process 0.2%"; None when no run measured it."""
    measured: list[tuple[Run, float]] = []
    users: list[float] = []
    parts: list[float] = []
    for r in runs:
        c = _cost(r) if isinstance(r, dict) else None
        share = c.get("bpf_cpu_share") if c else None
        if c and isinstance(share, (int, float)):
            measured.append((r, float(share)))
            part = c.get("stats_measured")
            if isinstance(part, (int, float)):
                parts.append(float(part))
            user = c.get("user_cpu_share")
            if isinstance(user, (int, float)):
                users.append(float(user))
    if not measured:
        return None
    shares = [s for _, s in measured]
    worst_run, worst = max(measured, key=lambda rs: rs[1])
    text = f"the recorder used {_pct(sum(shares) / len(shares))} of the CPUs"
    if len(measured) > 1:
        text += (f" (mean of {len(measured)} points; at most "
                 f"{_pct(worst)}, {_label(worst_run)})")
    if users:
        text += f", and its own process {_pct(sum(users) / len(users))}"
    if parts and min(parts) < 0.99:
        # the rest is the measured cost less the statistics' own clock reads
        text += (f" (BPF time measured over {sum(parts) / len(parts):.0%} of the time, "
                 "the rest estimated)")
    return text


def shed_notes(runs: list[Run]) -> list[str]:
    """One note per run where the recorder shed stacks or probes to keep its budget."""
    notes = []
    for run in runs:
        cost = _cost(run) if isinstance(run, dict) else None
        if not cost or not cost.get("shed"):
            continue
        note = (f"{_label(run)}: the recorder went over its --max-overhead budget of "
                f"{cost.get('max_overhead_pct')}% and shed {shed_phrase(cost['shed'])}")
        if cost.get("detached"):
            note += "; it was paused when the window ended (rates are per observed second)"
        notes.append(note + ".")
    return notes
