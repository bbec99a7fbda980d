"""Where a database server's time went at each client count of a sweep, and why its
throughput stops scaling.

A server is not N busy threads: most of its threads wait for work (connections
between queries, idle pools, background timers). The wait classes of an attach
(waitclass.py, userwait.py) split its threads' time; waiting for work is set apart
and everything else off CPU is lost time. Per transaction, the server spends
t(N) = (on-CPU + lost thread time) / transactions. When throughput stops growing
with clients, t(N) grows; each class explains the part of that growth its own time
per transaction accounts for, t_c(N_hi) − t_c(N_lo) over t(N_hi) − t(N_lo), so the
parts sum to one (a class already there with few clients explains nothing). The
largest part decides the verdict, with the file, lock and rule behind it from the
attach analysis of the highest client count.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any, cast

from ..schema import AttachAnalysis, Run, Trace, Verdict, VerdictKind
from .attach import classes_of
from .attach_verdict import KINDS, REMEDIES
from .device_verdict import capped, judge_device
from .observed import observed_ns
from .runs import workload_figures
from .stats import spread
from .thresholds import EXPLAINS, STRONG
from .verdict import SCALES_EFFICIENCY
from .wait_classes import ONCPU, ONCPU_WORDS
from .waitclass import CLASSES, LOSS_CLASSES, UserClassifier, load_user_classifier

# A server point (analysis.<fs>.server.points[]): threads, tps, traced, and when traced
# the time by class; read by the report and the terminal table.
ServerPoint = dict[str, Any]

# oncpu is work, not a wait, but it grows per transaction too (more CPU per commit).
PARTS = (ONCPU,) + LOSS_CLASSES
PART_NAMES = {ONCPU: ONCPU_WORDS, **CLASSES}


def run_classes(trace: Trace | None, user_classifier: UserClassifier | None = None
                ) -> dict[str, Any] | None:
    """Thread time (ns) of one traced run by wait class, on-CPU time and the window."""
    if not trace:
        return None
    window = observed_ns(trace)
    if not window:
        return None
    ns, _how, idle = classes_of(trace, user_classifier)
    threads = trace.get("threads") or []
    out = {c: float(ns[c]) for c in CLASSES}
    out["oncpu"] = float(sum(t.get("oncpu_ns", 0) for t in threads))
    return {"ns": out, "window_ns": float(window), "threads": len(threads),
            "idle_threads": len(idle)}


def server_points(runs: list[Run]) -> list[ServerPoint]:
    """Per client count (ascending): TPS over repeats and the server's time by class."""
    classifier = load_user_classifier()
    by_n: dict[int, list[Run]] = defaultdict(list)
    for run in runs:
        by_n[int(run["threads"])].append(run)
    points = []
    for n in sorted(by_n):
        tps = [workload_figures(r)["iops"] for r in by_n[n]]
        point: ServerPoint = {"threads": n, "tps": spread(tps), "traced": False}
        ns: dict[str, float] = defaultdict(float)
        window = txns = 0.0
        threads = idle = 0
        for run, x in zip(by_n[n], tps):
            rc = run_classes(run.get("trace"), classifier)
            if rc is None:
                continue
            for k, v in rc["ns"].items():
                ns[k] += v
            window += rc["window_ns"]
            txns += x * rc["window_ns"] / 1e9
            threads, idle = max(threads, rc["threads"]), max(idle, rc["idle_threads"])
        if window:
            total = sum(ns.values())
            lost = sum(ns[c] for c in LOSS_CLASSES)
            point.update({
                "traced": True, "server_threads": threads, "idle_threads": idle,
                "thread_time_ns": total, "lost_ns": lost, "window_s": window / 1e9,
                # average threads in each state, over the window
                "threads_by_class": {k: ns[k] / window for k in ("oncpu",) + tuple(CLASSES)},
                "share": {k: ns[k] / total if total else 0.0 for k in ("oncpu",) + tuple(CLASSES)},
                "loss_share": {c: ns[c] / lost if lost else 0.0 for c in LOSS_CLASSES},
                "per_txn_us": {k: ns[k] / txns / 1e3 if txns else None for k in PARTS},
            })
        points.append(point)
    x1 = points[0]["tps"]["mean"] if points else 0.0
    n1 = points[0]["threads"] if points else 1
    for p in points:
        p["efficiency"] = (p["tps"]["mean"] / p["threads"]) / (x1 / n1) if x1 > 0 else 0.0
    return points


def explained_growth(points: list[ServerPoint]) -> dict[str, float] | None:
    """Each part's share of the growth of the server's time per transaction, from the
    lowest to the highest client count; None when it did not grow (or is unmeasured)."""
    traced = [p for p in points if p.get("traced") and all(
        v is not None for v in p["per_txn_us"].values())]
    if len(traced) < 2:
        return None
    lo, hi = traced[0]["per_txn_us"], traced[-1]["per_txn_us"]
    grew = {k: hi[k] - lo[k] for k in PARTS}
    total = sum(hi.values()) - sum(lo.values())
    if total <= 0:
        return None
    return {k: min(max(v / total, 0.0), 1.0) for k, v in grew.items()}


def server_verdict(points: list[ServerPoint], top_attach: AttachAnalysis | None = None
                   ) -> Verdict:
    """The sweep's verdict shape for a database server. ``top_attach``: the attach
    analysis of a run at the highest client count (files, locks and rules)."""
    if len(points) < 2:
        return _verdict(VerdictKind.INCONCLUSIVE,
                        summary="one client count only: scaling needs two.",
                        evidence=[f"only {len(points)} client count(s)"])
    lo, hi = points[0], points[-1]
    x_lo, x_hi = lo["tps"]["mean"], hi["tps"]["mean"]
    speedup = x_hi / x_lo if x_lo else 0.0
    curve = (f"{speedup:.2f}x transactions/s from {lo['threads']} to {hi['threads']} clients "
             f"(efficiency {hi['efficiency']:.0%} at {hi['threads']})")
    if hi["efficiency"] >= SCALES_EFFICIENCY:
        return _verdict(VerdictKind.SCALES, confidence="high", evidence=[curve],
                        summary=f"The server scales: {curve}.")
    if not hi.get("traced"):
        return _verdict(VerdictKind.INCONCLUSIVE, evidence=[curve, "no trace at the highest count"],
                        summary=f"The server does not scale ({curve}) and was not traced.")
    ev = [curve, _where(hi)]
    parts = explained_growth(points)
    if parts is None:
        return _verdict(VerdictKind.INCONCLUSIVE, evidence=ev + [
            "the server's time per transaction did not grow: the clients, not the server, "
            "set the pace"], summary=f"The server does not scale ({curve}) but spends no "
            "more time per transaction: the limit is outside it (the clients, or the CPUs "
            "they share).")
    ranked = sorted(parts.items(), key=lambda kv: -kv[1])
    top, share = ranked[0]
    ev.append("growth of the server's time per transaction, "
              f"{lo['threads']} → {hi['threads']} clients: " + ", ".join(
                  f"{PART_NAMES[k]} {v:.0%} ({_us(lo, k)} → {_us(hi, k)} µs)"
                  for k, v in ranked[:4] if v > 0))
    if share < EXPLAINS or top == "unclassified":
        return _verdict(VerdictKind.INCONCLUSIVE, evidence=ev, explained=share, summary=(
            f"The server does not scale ({curve}) and no single wait class explains most "
            f"of it; the largest part is {PART_NAMES[top]} ({share:.0%})."))
    if top == "oncpu":
        return _verdict(VerdictKind.CPU_BOUND, evidence=ev, explained=share, wait_class="oncpu",
                        confidence="medium", remedies=list(REMEDIES["runqueue"]), summary=(
                            f"The server does not scale ({curve}): each transaction costs "
                            f"more CPU ({share:.0%} of the growth)."))
    kind, confidence = KINDS[top], "high" if share >= STRONG else "medium"
    remedies, held = list(REMEDIES.get(top, [])), None
    if kind == VerdictKind.DEVICE_BOUND:
        # the device's figures at the highest client count decide whether it was busy
        call = judge_device(top_attach.get("device") if top_attach else None)
        kind, confidence = call.kind, capped(confidence, call.most)
        ev += call.evidence
        remedies, held = call.remedies or remedies, call.summary
    verdict = _verdict(kind, evidence=ev, explained=share, wait_class=top,
                       confidence=confidence, remedies=remedies, summary=(
                           f"The server does not scale ({curve}): {PART_NAMES[top]} explains "
                           f"{share:.0%} of the growth of its time per transaction"))
    detail = cast("dict[str, Any]", top_attach["verdict"] if top_attach else {})
    if detail.get("wait_class") == top:
        # the attach analysis names the file, the lock and the kernel rule behind it
        verdict["lock"] = detail.get("lock") or verdict["lock"]
        verdict["path"] = detail.get("path") or verdict["path"]
        verdict["reasons"] = detail.get("reasons") or verdict["reasons"]
        verdict["kernel_function"] = detail.get("kernel_function") or verdict["kernel_function"]
        verdict["evidence"] += [e for e in detail.get("evidence") or [] if e not in ev][1:]
        verdict["remedies"] = list(dict.fromkeys(detail.get("remedies") or [])) or \
            verdict["remedies"]
    verdict["summary"] += (f", on {verdict['path']}." if verdict.get("path") else
                           f", in {verdict['lock']}." if verdict.get("lock") else ".")
    if held:
        verdict["summary"] += " " + held
    return verdict


def _us(point: ServerPoint, key: str) -> str:
    v = (point.get("per_txn_us") or {}).get(key)
    return f"{v:,.0f}" if v is not None else "?"


def _where(p: ServerPoint) -> str:
    t = p["threads_by_class"]
    top = sorted(LOSS_CLASSES, key=lambda c: -t[c])[:3]
    return (f"at {p['threads']} clients the server's {p['server_threads']} threads were "
            f"{t['oncpu']:.2f} on CPU, {t['idle']:.2f} waiting for work (not lost) and "
            f"{p['lost_ns'] / p['window_s'] / 1e9:.2f} lost on average: " + ", ".join(
                f"{CLASSES[c]} {t[c]:.2f}" for c in top if t[c] > 0))


def _verdict(kind: VerdictKind, *, summary: str, evidence: list[str], explained: float = 0.0,
             confidence: str = "low", wait_class: str | None = None,
             remedies: list[str] | None = None) -> Verdict:
    return {"kind": kind, "wait_class": wait_class, "lock": None, "path": None, "mode": None,
            "reasons": [], "explained_loss": explained, "evidence": evidence,
            "confidence": confidence, "remedies": remedies or [], "kernel_function": None,
            "summary": summary, "holders": [], "releasers": []}
