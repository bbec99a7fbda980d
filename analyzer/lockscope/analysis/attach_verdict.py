"""The verdict of an attach, in the sweep's shape: which wait class holds the lost
thread time (waiting for work excluded), on which file or lock, and why."""

from __future__ import annotations

from ..schema import AttachFigures, ModeShare, Verdict, VerdictKind
from .dbfiles import LOG_ROLES
from .device_verdict import capped, judge_device
from .lock_mode import mode_text
from .thresholds import EXPLAINS, STRONG
from .wait_classes import WAIT_CLASSES

IDLE_LOSS_THREADS = 0.05  # lost threads (average) below this: the server waited for work

# what each loss class holding the lost time says, and what to do (wait_classes.py)
KINDS = {c.key: c.verdict for c in WAIT_CLASSES if c.verdict is not None}
REMEDIES = {c.key: c.remedies for c in WAIT_CLASSES if c.remedies}


def _thr(ns: float, window_s: float) -> str:
    return f"{ns / 1e9 / window_s:.2f} threads" if window_s else f"{ns / 1e9:.1f} s"


def decide_attach(a: AttachFigures, cpus: int | None) -> Verdict:
    wall = a.get("window_s") or 0.0
    window = a.get("observed_s") or wall  # thread averages: over the observed time
    if not window or not a.get("threads"):
        return _verdict(VerdictKind.INCONCLUSIVE, evidence=["no traced thread time in the window"])
    classes = {c["class"]: c for c in a["classes"]}
    lost, idle = a["lost_ns"], a["idle_ns"]
    base = [f"{a['threads']} threads over {wall or window:.1f} s"
            + (f" ({a['sampling']})" if a.get("sampling") else "")
            + f": {a['oncpu_ns'] / 1e9:.1f} thread-s on CPU, {idle / 1e9:.1f} waiting for "
            f"work (not counted as loss), {lost / 1e9:.1f} lost"]
    db = a.get("db") or {}
    if db.get("commits_per_s") is not None:
        base.append(f"{db['commits_per_s']:,.0f} commits/s by the database's own counters")
    if db.get("lacks"):
        base.append(f"{db.get('engine')} {db.get('version') or ''} has no "
                    f"{', '.join(db['lacks'])}: not measured".replace("  ", " "))
    if lost / 1e9 / window < IDLE_LOSS_THREADS:
        return _verdict(VerdictKind.IDLE, confidence="medium", evidence=base,
                        summary="The server mostly waited for work: no wait class holds "
                        "a measurable share of its threads.")
    loss = sorted((c for c in a["classes"] if c["class"] != "idle"), key=lambda c: -c["ns"])
    top = loss[0]
    how = ", ".join(f"{h['method']}: {h['detail']}" for h in top["how"][:3])
    ev = base + [f"{top['name']} holds {top['loss_share']:.0%} of the lost time "
                 f"({_thr(top['ns'], window)} on average; classed by {how})"]
    if len(loss) > 1 and loss[1]["ns"] > 0:
        ev.append("next: " + ", ".join(f"{c['name']} {c['loss_share']:.0%}" for c in loss[1:4]
                                       if c["ns"] > 0))
    fall = a.get("falls") or {}
    ftop = fall.get("top")
    if ftop:
        ev.append(f"throughput fell in {len(fall['fallen'])} of {fall['intervals']} intervals;"
                  f" {classes[ftop['class']]['name']} rose with it (r = {ftop['r']:.2f} at lag "
                  f"{ftop['lag_s']} s over {ftop['n']} intervals; {ftop['slope_per_thread']:+,.0f}"
                  f" {a['throughput']['signal'].split(' (')[0]} per extra waiting thread)")
    elif fall.get("fallen"):
        ev.append(f"throughput fell in {len(fall['fallen'])} of {fall['intervals']} intervals;"
                  " no wait class rose with it")
    share = top["loss_share"]
    if top["class"] == "unclassified" or share < EXPLAINS:
        return _verdict(VerdictKind.INCONCLUSIVE, evidence=ev, explained=share, confidence="low",
                        summary="No single wait class holds most of the lost time"
                        + (f"; the largest is {top['name']} ({share:.0%})." if share else "."))
    confidence = "high" if share >= STRONG and (not ftop or ftop["class"] == top["class"]) \
        else "medium"
    kind = KINDS[top["class"]]
    lock = path = func = None
    lock_mode: ModeShare | None = None
    reasons: list[str] = []
    remedies = list(REMEDIES.get(top["class"], []))
    held = None
    if kind == VerdictKind.DEVICE_BOUND:
        # the device's own figures decide whether the block waits were its
        call = judge_device(a.get("device"))
        kind, confidence = call.kind, capped(confidence, call.most)
        ev += call.evidence
        remedies = call.remedies or remedies
        held = call.summary
    files = a.get("files") or []
    if top["class"] == "inode_lock":
        f = next((f for f in files if f["inode_lock_ns"]), None)
        if f:
            path, lock = f["path"], "/".join(f["inode_lock_kinds"]) or "inode lock"
            ev.append(f"{lock} of {f['label']} ({path}): {f['inode_lock_waits']} waits, "
                      f"{f['inode_lock_ns'] / 1e9:.2f} s")
            for c in f["causes"]:
                reasons.append(c["reason"])
                ev.append(f"{c['rule']} ({c['kernel_source']}): {c['evidence']}")
                remedies.insert(0, c["remedy"])
            lock_mode = f["causes"][0]["mode"] if f["causes"] else None
            ev += ([mode_text(lock_mode)] if lock_mode else []) + f["rule_disagreements"]
    elif top["class"] in ("durability", "journal"):
        f = max((f for f in files if f["role"] in LOG_ROLES),
                key=lambda f: (f["fsync_ns"] + f["dsync_write_ns"], f["fsyncs"] + f["dsync_writes"],
                               f["dio_writes"] + f["buffered_writes"]),
                default=None)
        if f:
            path = f["path"]
            synced = [f"{f['fsyncs']} fsyncs, {f['fsync_ns'] / 1e9:.2f} s" if f["fsyncs"] else "",
                      f"{f['dsync_writes']} O_DSYNC writes, {f['dsync_write_ns'] / 1e9:.2f} s"
                      if f["dsync_writes"] else ""]
            said = "; ".join(x for x in synced if x)
            ev.append(f"the commit path writes {f['label']} ({path})"
                      + (f": {said}" if said else ""))
    elif top["class"] == "io_uring_hashed":
        f = max(files, key=lambda f: f.get("io_wq_behind_ns", 0), default=None)
        if f and f.get("io_wq_behind_ns"):
            path = f["path"]
            ev.append(f"io-wq's hash of {f['label']} ({path}): {f.get('io_wq_queued', 0)} "
                      f"requests queued, {f['io_wq_behind_ns'] / 1e9:.2f} s behind another")
            for c in f["causes"]:
                if c["reason"] == "io_uring_hashed":
                    reasons.append(c["reason"])
                    ev.append(f"{c['rule']} ({c['kernel_source']}, kernels "
                              f"{c['kernel_range']}): {c['evidence']}")
                    remedies.insert(0, c["remedy"])
    elif top["class"] in ("kernel_lock", "user_lock"):
        lock = func = top["how"][0]["detail"] if top["how"] else None
    summary = f"The server's lost time is mostly {top['name']} ({share:.0%})"
    if path:
        summary += f", on {path}"
    elif lock:
        summary += f", in {lock}"
    summary += "."
    if held:
        summary += " " + held
    if top["class"] == "inode_lock" and f and f["rule_disagreements"]:
        summary += f" Measured: {f['rule_disagreements'][0]}."
    verdict = _verdict(kind, lock=lock, path=path, reasons=reasons, explained=share,
                       evidence=ev, confidence=confidence, remedies=remedies,
                       kernel_function=func if top["class"] == "kernel_lock" else None,
                       summary=summary, wait_class=top["class"])
    if top["class"] == "inode_lock":
        verdict["lock_mode"] = lock_mode
    return verdict


def _verdict(kind: VerdictKind, *, lock: str | None = None, path: str | None = None,
             reasons: list[str] | None = None, explained: float = 0.0,
             evidence: list[str] | None = None, confidence: str = "low",
             remedies: list[str] | None = None, kernel_function: str | None = None,
             summary: str = "", wait_class: str | None = None) -> Verdict:
    return {"kind": kind, "wait_class": wait_class, "lock": lock, "path": path, "mode": None,
            "reasons": reasons or [], "explained": explained, "explained_loss": explained,
            "evidence": evidence or [], "confidence": confidence, "remedies": remedies or [],
            "kernel_function": kernel_function, "summary": summary}
