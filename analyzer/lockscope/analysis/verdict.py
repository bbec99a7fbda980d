"""One structured verdict per filesystem, from the points, locks and causes."""

from __future__ import annotations

from collections.abc import Sequence

from ..schema import (
    Cause,
    DeviceFigures,
    Lock,
    ModeShare,
    Point,
    SweepIoWq,
    Verdict,
    VerdictKind,
)
from .device_verdict import capped, judge_device
from .explain import category_losses, cpu_capacity_bound, evidence_strength
from .iowq_sweep import hashed_note
from .lock_mode import mode_text
from .rules import GENERAL_REMEDIES
from .thresholds import EXPLAINS

SCALES_EFFICIENCY = 0.7      # E(N) at the highest N at or above this: it scales
# a lock is the cause when it is the largest part of the loss, at least EXPLAINS of it,
LOCK_MIN_SHARE = 0.1         # ...and at least this share of thread time
CATEGORY_NAMES = {"oncpu": "CPU work per I/O", "runqueue": "waiting for a CPU",
                  "block_io": "block I/O",
                  "journal": "the journal", "other_lock": "other locks",
                  "other_offcpu": "other off-CPU time"}


def decide(fstype: str, points: list[Point], locks: list[Lock], causes: list[Cause],
           cpus: int | None = None, *, mode: ModeShare | None = None,
           disagreements: Sequence[str] = (), iowq: SweepIoWq | None = None,
           device: DeviceFigures | None = None) -> Verdict:
    """`mode`: the measured lock mode of the class the causes blame (lock_mode.py);
    `disagreements`: where that mode contradicts the kernel version's rules;
    `iowq`: io-wq's hashed queue at the top point (iowq_sweep.py); `device`: the figures
    of the device its block waits were on (device_busy.py)."""
    if not points:
        return _verdict(VerdictKind.INCONCLUSIVE, evidence=["no completed runs"], confidence="low",
                        summary=f"{fstype} has no completed runs, so there is nothing to judge.")
    hi, lo = points[-1], points[0]
    eff = hi["efficiency"]
    speedup = hi["iops"]["mean"] / lo["iops"]["mean"] if lo["iops"]["mean"] else 0.0
    curve = (f"{speedup:.2f}x throughput from {lo['threads']} to {hi['threads']} threads "
             f"(efficiency {eff:.0%} at {hi['threads']})")
    if len(points) == 1:
        return _verdict(VerdictKind.INCONCLUSIVE,
                        evidence=[f"only one thread count ({lo['threads']}): nothing to compare"],
                        confidence="low",
                        summary=f"{fstype} ran at one thread count only ({lo['threads']}): "
                        "scaling needs at least two.")
    if eff >= SCALES_EFFICIENCY:
        return _verdict(VerdictKind.SCALES, evidence=[curve], confidence="high",
                        summary=f"{fstype} scales: {curve}.")
    if not hi.get("traced"):
        return _verdict(VerdictKind.INCONCLUSIVE, confidence="low",
                        evidence=[curve, "no trace for these runs, so the waits are unknown"],
                        summary=f"{fstype} does not scale ({curve}) but there is no trace.")
    ts = hi.get("time_share") or {}
    cpu_evidence = (f"{ts.get('oncpu', 0) + ts.get('runqueue', 0):.0%} of thread time at "
                    f"{hi['threads']} threads is on-CPU or waiting for a CPU "
                    f"({ts.get('runqueue', 0):.0%} runqueue) on {cpus or '?'} CPUs")
    if cpu_capacity_bound(points, cpus):
        return _cpu_verdict(fstype, curve, [cpu_evidence, "throughput is within 10% of what "
                            f"{cpus} CPUs allow at the 1-thread CPU cost per I/O"])
    # Request time, not thread time: the threads idle while their requests queue
    # behind the file's hash (iowq_sweep.py); no thread wait would name it.
    if iowq and iowq["named"]:
        return _iowq_verdict(fstype, points, curve, iowq)
    # The largest part of the loss decides; a lock must also be a real share of time.
    parts = category_losses(points, cpus)
    top = locks[0] if locks else None
    hi_share = top["share_by_threads"].get(str(hi["threads"]), 0.0) if top else 0.0
    if top and top["explained_loss"] >= max(EXPLAINS, *parts.values()) \
            and hi_share >= LOCK_MIN_SHARE:
        return _lock_verdict(fstype, top, points, causes, curve, hi_share, mode,
                             disagreements)
    biggest = max(parts, key=lambda k: parts[k])
    if parts[biggest] >= EXPLAINS and biggest == "block_io":
        # the device's own figures decide whether the block waits were its
        call = judge_device(device)
        evidence = [curve, f"{ts['block_io']:.0%} of thread time at {hi['threads']} threads "
                    f"is block I/O, which explains {parts['block_io']:.0%} of the lost "
                    "efficiency"] + call.evidence
        if call.kind == VerdictKind.IO_HELD_BEFORE_DEVICE:
            return _verdict(call.kind, confidence=capped("medium", call.most),
                            evidence=evidence, remedies=call.remedies,
                            summary=f"{fstype} does not scale ({curve}). {call.summary}")
        return _verdict(VerdictKind.DEVICE_BOUND, confidence=capped("medium", call.most),
                        evidence=evidence, summary=f"{fstype} is device-bound: {curve}; "
                        "threads wait on the block device.",
                        remedies=["a faster device, or more queue depth per thread "
                                  "(ioengine=io_uring)"])
    if parts[biggest] >= EXPLAINS and biggest in ("oncpu", "runqueue"):
        return _cpu_verdict(fstype, curve, [cpu_evidence, f"{CATEGORY_NAMES[biggest]} "
                            f"explains {parts[biggest]:.0%} of the lost efficiency"])
    evidence = [curve, "no single wait explains most of the lost efficiency: " + ", ".join(
        f"{CATEGORY_NAMES[k]} {v:.0%}" for k, v in sorted(parts.items(), key=lambda kv: -kv[1])
        if v > 0)]
    if top and top["explained_loss"] > 0:
        evidence.append(f"the largest wait, {top['name']} of {top['path'] or top['key']}, "
                        f"explains {top['explained_loss']:.0%} of it")
    how = "scales only partly" if speedup >= 1.5 else "does not scale"
    return _verdict(VerdictKind.INCONCLUSIVE, confidence="low", evidence=evidence,
                    summary=f"{fstype} {how} ({curve}) and no single wait explains most of "
                    "the loss.")


def _cpu_verdict(fstype: str, curve: str, evidence: list[str]) -> Verdict:
    return _verdict(VerdictKind.CPU_BOUND, confidence="medium", evidence=[curve] + evidence,
                    summary=f"{fstype} is CPU-bound: {curve}; threads compete for CPUs.",
                    remedies=["fewer threads than CPUs, or async I/O (ioengine=io_uring) "
                              "per thread"])


def _lock_verdict(fstype: str, top: Lock, points: list[Point], causes: list[Cause], curve: str,
                  hi_share: float, mode: ModeShare | None,
                  disagreements: Sequence[str]) -> Verdict:
    confidence, notes = evidence_strength(points, top["share_by_threads"], top["explained_loss"])
    where = top["path"] or top["name"]
    func = top["functions"][0] if top["functions"] else None
    bound = top["what_if"]["speedup"] if top["what_if"] else None
    evidence = [curve,
                f"{top['name']} of {where} took {hi_share:.0%} of thread time at "
                f"{points[-1]['threads']} threads ({top['count']} waits, "
                f"{top['total_ns'] / 1e9:.2f} s in all)",
                f"it explains {top['explained_loss']:.0%} of the lost efficiency; without it "
                f"throughput could reach at most {bound:.2f}x"
                if bound is not None else ""] + notes + [c["evidence"] for c in causes]
    reasons = [c["reason"] for c in causes]
    remedies = [c["remedy"] for c in causes] + GENERAL_REMEDIES.get(fstype, [])
    inode = top["inode"]
    why = (" because " + "; ".join(f"{c['rule']} ({c['kernel_source']})" for c in causes[:2])
           if causes else "")
    summary = (f"{fstype} stops scaling on {top['name']} of {where}"
               + (f", taken {top['mode']} in {func}" if func else "") + why + ".")
    if inode:
        # the measurement first: it says which rules this kernel follows
        evidence += [mode_text(mode)] if mode else []
        evidence += list(disagreements)
    verdict = _verdict(VerdictKind.INODE_LOCK_CONTENTION if inode
                       else VerdictKind.OTHER_LOCK_CONTENTION,
                       lock=top["name"], path=top["path"], mode=top["mode"], reasons=reasons,
                       explained_loss=top["explained_loss"], evidence=[e for e in evidence if e],
                       confidence=confidence, remedies=remedies, kernel_function=func,
                       summary=summary)
    if inode:
        verdict["lock_mode"] = mode
    return verdict


def _iowq_verdict(fstype: str, points: list[Point], curve: str, s: SweepIoWq) -> Verdict:
    c = s["cause"]
    assert c is not None and s["share"] is not None and s["explained_loss"] is not None
    confidence, notes = evidence_strength(points, s["share_by_threads"], s["explained_loss"])
    where = s["path"] or "one file"
    evidence = [curve,
                f"io-wq's hash of {where}: {s['behind']:,} of the {s['queued']:,} requests "
                f"io_uring queued to io-wq hashed waited behind another of the file's, "
                f"{s['behind_ns'] / 1e9:.2f} s: {s['share']:.0%} of the requests' time "
                f"at {s['threads']} threads (the threads meanwhile wait for completions)",
                f"it explains {s['explained_loss']:.0%} of the lost efficiency (a thread "
                "keeping iodepth requests in flight spends iodepth x its time per I/O on "
                "each: the same share of its time)"] + notes
    evidence.append(f"{c['rule']} ({c['kernel_source']}, kernels {c['kernel_range']}): "
                    f"{c['evidence']}")
    summary = (f"{fstype} stops scaling in io-wq: io_uring queued the O_DIRECT writes to "
               f"{where} to io-wq hashed by the inode, and io-wq runs them one at a time "
               f"({s['share']:.0%} of request time at {s['threads']} threads), because "
               f"{c['rule']} (kernels {c['kernel_range']}).")
    if s["disagreement"]:
        summary += f" Measured: {s['disagreement']}."
    return _verdict(VerdictKind.IO_URING_SERIALIZED, path=s["path"], reasons=[c["reason"]],
                    explained_loss=s["explained_loss"], evidence=evidence,
                    confidence=confidence, remedies=[c["remedy"]], summary=summary)


def note_iowq(verdict: Verdict, s: SweepIoWq | None, io_uring: bool) -> None:
    """A verdict that does not name io-wq still says what was measured of it: not
    measured (an io_uring workload), or its share of request time when any request went
    there."""
    line = hashed_note(s, io_uring) if s and not s["named"] else ""
    if line:
        verdict["evidence"].append(line)
    if s and not s["named"] and s["cause"] and s["share"] and s["share"] >= LOCK_MIN_SHARE:
        c = s["cause"]
        verdict["evidence"].append(f"{c['rule']} ({c['kernel_source']}, kernels "
                                   f"{c['kernel_range']}): {c['evidence']}")


def say_disagreement(verdict: Verdict, disagreements: Sequence[str]) -> None:
    """The first disagreement of the measured lock mode with the version's rules, as the
    summary's last sentence (after the holders' clause)."""
    if disagreements and verdict["kind"] == VerdictKind.INODE_LOCK_CONTENTION:
        verdict["summary"] += f" Measured: {disagreements[0]}."


def note_inode_lock(verdict: Verdict, top: Lock, points: list[Point],
                    causes: list[Cause]) -> None:
    """A verdict that blames something else still names an inode lock that holds a real
    share of thread time, and the rule that takes it exclusive."""
    threads = points[-1]["threads"] if points else None
    share = top["share_by_threads"].get(str(threads), 0.0)
    if share < LOCK_MIN_SHARE or not causes:
        return
    verdict["evidence"].append(
        f"{top['name']} of {top['path'] or top['key']} still takes {share:.0%} of thread time "
        f"at {threads} threads: " + "; ".join(f"{c['rule']} ({c['kernel_source']})"
                                             for c in causes[:2]))
    verdict["remedies"] += [c["remedy"] for c in causes if c["remedy"] not in
                            verdict["remedies"]]


def _verdict(kind: VerdictKind, *, lock: str | None = None, path: str | None = None,
             mode: str | None = None, reasons: list[str] | None = None,
             explained_loss: float = 0.0, evidence: list[str] | None = None,
             confidence: str = "low", remedies: list[str] | None = None,
             kernel_function: str | None = None, summary: str = "") -> Verdict:
    return {"kind": kind, "lock": lock, "path": path, "mode": mode, "reasons": reasons or [],
            "explained_loss": explained_loss, "evidence": evidence or [],
            "confidence": confidence, "remedies": remedies or [],
            "kernel_function": kernel_function,
            # every verdict says something, even one built without its own sentence
            "summary": summary or (f"{evidence[0]}." if evidence else f"{kind}.")}
