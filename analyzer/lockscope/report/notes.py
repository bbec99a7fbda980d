"""What is missing from a recording, and why, in sentences for the reader.

A report must still render when BPF was unavailable (``trace: null``) or when
some recorder features were off; it then says what is missing and the reason
the recorder gave (``runs[].trace_error``, ``trace.features[].reason``).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from ..schema import ResultsDoc

_ON_KEYS = ("enabled", "on", "ok", "attached", "available")


def normalize_features(table: Any) -> list[dict[str, Any]]:
    """The recorder's feature table as [{name, enabled, attach, probe, reason, lost,
    extra, not_needed}].

    Accepts a list of objects (lockscope-record writes ``{name, enabled,
    attach, tracepoints, reason, extra, fs, not_needed, lost}``) or a ``{name: entry |
    bool}`` mapping; an entry's on/off flag may be called enabled, on, ok, attached or
    available. ``not_needed``: off because the target's files are on another filesystem
    (lockscope-record --fs), so nothing the target did is missing.
    """
    items: list[tuple[str, Any]] = []
    if isinstance(table, dict):
        items = list(table.items())
    elif isinstance(table, list):
        for e in table:
            if isinstance(e, dict):
                items.append((str(e.get("name") or e.get("feature") or e.get("probe") or "?"), e))
    out = []
    for name, e in items:
        if isinstance(e, bool):
            e = {"enabled": e}
        if not isinstance(e, dict):
            continue
        on = next((e[k] for k in _ON_KEYS if k in e), None)
        reason = e.get("reason") or e.get("error") or e.get("why")
        if on is None:
            on = not reason
        probe = e.get("probe") or e.get("tracepoint")
        if not probe and isinstance(e.get("tracepoints"), list):
            probe = ", ".join(str(t) for t in e["tracepoints"])
        out.append({"name": name, "enabled": bool(on),
                    "attach": e.get("attach") or e.get("via") or e.get("how"),
                    "probe": probe, "reason": reason, "lost": e.get("lost"),
                    "extra": bool(e.get("extra")),
                    "not_needed": bool(e.get("not_needed")) and not on})
    return out


def _threads_text(threads: set[int]) -> str:
    ts = sorted(threads)
    return ", ".join(map(str, ts)) + (" thread" if ts == [1] else " threads")


def missing_notes(doc: ResultsDoc) -> list[str]:
    """Sentences saying which data is absent and why; empty when the recording is complete."""
    notes: list[str] = []
    if doc.get("partial"):
        notes.append("The sweep was interrupted: this report covers only the points that "
                     "completed.")
    failed_all = doc.get("failed_points")
    for failed in failed_all if isinstance(failed_all, list) else [doc.get("failed_point")]:
        if not isinstance(failed, dict):
            continue
        status = failed.get("exit_status")
        notes.append(f"The point {failed.get('fs', '?')} {failed.get('threads', '?')} threads "
                     f"(repeat {failed.get('repeat', '?')}) failed"
                     + (": " if failed.get("went_on") else " and the sweep stopped there: ")
                     + f"{failed.get('error') or 'no reason recorded'}"
                     + (f" (exit status {status})" if status is not None else ""))
    # Runs without a trace, grouped by filesystem and reason.
    untraced: dict[tuple[str, str], set[int]] = defaultdict(set)
    traced_runs = 0
    off: dict[tuple[str, str, str, bool], set[str]] = {}
    drops: dict[str, int] = defaultdict(int)
    for run in doc.get("runs") or []:
        if not isinstance(run, dict):
            continue
        fs = str(run.get("fs", "?"))
        trace = run.get("trace")
        if not isinstance(trace, dict):
            why = run.get("trace_error") or "no reason recorded"
            untraced[(fs, str(why))].add(int(run.get("threads") or 0))
            continue
        traced_runs += 1
        for f in normalize_features(trace.get("features")):
            if not f["enabled"] and not f["not_needed"]:
                key = (f["name"], str(f["reason"] or "no reason recorded"), f["lost"] or "",
                       f["extra"])
                off.setdefault(key, set()).add(fs)
        for k, v in (trace.get("drops") or {}).items():
            if isinstance(v, (int, float)) and v > 0:
                drops[k] += int(v)
    for (fs, why), threads in sorted(untraced.items(), key=lambda kv: kv[0]):
        notes.append(f"{fs} ({_threads_text({t for t in threads if t is not None})}): not "
                     f"traced, so no lock waits, stacks, DIO classes or time shares: {why}")
    for (name, why, lost, extra), fss in sorted(off.items(), key=lambda kv: (kv[0][3], kv[0])):
        what = "optional recorder extra" if extra else "recorder feature"
        notes.append(f"{what} '{name}' was off ({', '.join(sorted(fss))}): {why}"
                     + (f"; so: {lost}" if lost else ""))
    if drops:
        what = ", ".join(f"{k.replace('_', ' ')} {v:,}" for k, v in sorted(drops.items()))
        notes.append(f"the recorder counted losses over all runs ({what}); figures from the "
                     "traces are lower bounds")
    analysis = doc.get("analysis")
    if not isinstance(analysis, dict):
        notes.append("results.json has no analysis section: throughput and latency below are "
                     "computed from the runs' workload statistics; there is no verdict, USL "
                     "fit or lock ranking.")
    else:
        ran = {str(r.get("fs")) for r in doc.get("runs") or [] if isinstance(r, dict)}
        for fs in sorted(ran):
            if not isinstance(analysis.get(fs), dict):
                notes.append(f"{fs}: no analysis in results.json; its figures come from the "
                             "workload statistics only.")
    return notes


def feature_rows(doc: ResultsDoc) -> list[dict[str, Any]]:
    """The host's recorder feature table (host.features), normalized."""
    return normalize_features((doc.get("host") or {}).get("features"))
