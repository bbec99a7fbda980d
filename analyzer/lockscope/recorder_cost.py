"""What recording cost, from the recorder's own measurement (its ``overhead`` object,
docs/recorder-json.md): per point for results.json, one sentence for the terminal and
the report, and notes for what --max-overhead shed."""

from __future__ import annotations

from typing import Any

_SHED_WORDS = {"user_stacks": "user stacks", "stacks": "all stacks", "all": "every probe"}


def recorder_cost(trace: Any) -> dict[str, Any] | None:
    """``runs[].recorder_cost``: the point's BPF and recorder-process CPU shares and what
    was shed; None without a trace or without the recorder's measurement."""
    o = trace.get("overhead") if isinstance(trace, dict) else None
    if not isinstance(o, dict):
        return None
    user = o.get("user") if isinstance(o.get("user"), dict) else {}
    shed = [s for s in o.get("shed") or [] if isinstance(s, dict)]
    return {"bpf_cpu_share": o.get("cpu_share"), "bpf_ns": o.get("bpf_ns"),
            "user_cpu_share": user.get("cpu_share"),
            "max_overhead_pct": o.get("max_overhead_pct"),
            "shed": [{"what": s.get("what"), "after_s": round((s.get("after_ns") or 0) / 1e9, 1)}
                     for s in shed],
            "detached": bool(o.get("detached"))}


def _cost(run: dict) -> dict[str, Any] | None:
    cost = run.get("recorder_cost")
    return cost if isinstance(cost, dict) else recorder_cost(run.get("trace"))


def _label(run: dict) -> str:
    return f"{run.get('fs', '?')} {run.get('threads', '?')} threads"


def _pct(share: float) -> str:
    """A CPU share as a percentage, with a second decimal below 0.1% (never a bare 0.0%)."""
    return f"{share:.1%}" if share >= 0.001 or share == 0 else f"{share:.2%}"


def cost_sentence(runs: list[dict]) -> str | None:
    """E.g. "the recorder used 0.6% of the CPUs (mean of 8 points; at most 0.9%, xfs 8
    threads), and its own process 0.2%"; None when no run measured it."""
    measured = [(r, c) for r in runs if isinstance(r, dict) and (c := _cost(r))
                and isinstance(c.get("bpf_cpu_share"), (int, float))]
    if not measured:
        return None
    shares = [c["bpf_cpu_share"] for _, c in measured]
    worst_run, worst = max(measured, key=lambda rc: rc[1]["bpf_cpu_share"])
    users = [c["user_cpu_share"] for _, c in measured
             if isinstance(c.get("user_cpu_share"), (int, float))]
    text = f"the recorder used {_pct(sum(shares) / len(shares))} of the CPUs"
    if len(measured) > 1:
        text += (f" (mean of {len(measured)} points; at most "
                 f"{_pct(worst['bpf_cpu_share'])}, {_label(worst_run)})")
    if users:
        text += f", and its own process {_pct(sum(users) / len(users))}"
    return text


def shed_notes(runs: list[dict]) -> list[str]:
    """One note per run where the recorder shed stacks or probes to keep its budget."""
    notes = []
    for run in runs:
        cost = _cost(run) if isinstance(run, dict) else None
        if not cost or not cost.get("shed"):
            continue
        steps = ", ".join(f"{_SHED_WORDS.get(s['what'], 'the ' + str(s['what']) + ' probes')} "
                          f"after {s['after_s']:.1f} s" for s in cost["shed"])
        note = (f"{_label(run)}: the recorder went over its --max-overhead budget of "
                f"{cost.get('max_overhead_pct')}% and shed {steps}")
        if cost.get("detached"):
            note += "; its trace covers only the time before it detached"
        notes.append(note + ".")
    return notes
