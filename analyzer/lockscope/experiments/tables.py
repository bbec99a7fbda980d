"""The tables of docs/experiments.md as data: rows of published and measured figures with
their ratios, lockscope's verdicts with their evidence, and each claim's outcome. Pure:
the template only lays these out."""

from __future__ import annotations

from .claims import HOLDS, MISSING
from .definition import Experiment, Key, Measured, Outcome, ratio_of


def figure_rows(exp: Experiment, measured: Measured) -> list[dict]:
    """One row per (case, fs, threads) published or measured, in that order; ratios
    computed within the published figures and within the measured ones alike."""
    keys = sorted(set(exp.figures) | set(measured.mib_s),
                  key=lambda k: (_case_order(exp, k[0]), k[1], k[2]))
    rows = []
    for key in keys:
        case, fs, threads = key
        rows.append({
            "case": case, "fs": fs, "threads": threads,
            "published": exp.figures.get(key),
            "published_ratios": [_shown(exp.figures, key, r) for r in exp.ratios],
            "measured": measured.mib_s.get(key),
            "measured_ratios": [_shown(measured.mib_s, key, r) for r in exp.ratios],
        })
    return rows


def _case_order(exp: Experiment, case: str) -> tuple[int, str]:
    order = list(dict.fromkeys(c for c, _, _ in exp.figures))
    return (order.index(case), case) if case in order else (len(order), case)


def _shown(values: dict[Key, float], key: Key, r) -> float | None:
    """The ratio, or 1.0 for the base figure itself when it exists."""
    case, fs, threads = key
    is_base = (r.over == "threads" and threads == int(r.base)) or \
              (r.over == "fs" and fs == str(r.base))
    if is_base:
        return 1.0 if key in values else None
    return ratio_of(values, key, r)


def verdict_rows(measured: Measured) -> list[dict]:
    rows = []
    for (case, fs), v in sorted(measured.verdicts.items()):
        rows.append({"case": case, "fs": fs, "kind": v.get("kind", "none"),
                     "confidence": v.get("confidence", ""),
                     "reasons": list(v.get("reasons") or []),
                     "summary": v.get("summary", ""),
                     "facts": fact_words(measured.facts.get((case, fs)) or {})})
    return rows


def fact_words(f: dict) -> str:
    """The trace's facts behind a verdict, in a few words."""
    words = []
    dio = f.get("dio_states")
    if dio:
        words.append("DIO writes found " + ", ".join(
            f"{share:.0%} {state}" for state, share in dio.items() if share >= 0.005))
    if "inode_lock_share" in f:
        n = f["inode_lock_threads"]
        words.append(f"inode-lock wait {f['inode_lock_share']:.0%} of thread time at "
                     f"{n} thread{'s' if n != 1 else ''}")
    j = f.get("journal")
    if j and not j["commits"]:
        words.append("no journal commits")
    elif j:
        words.append(f"journal {j['share']:.2%} of the bytes written "
                     f"({j['logged_bytes'] / 2**20:.1f} MiB in {j['commits']} commits), "
                     f"{j['wait_share']:.1%} of thread time waiting on it")
    return "; ".join(words)


def claim_rows(exp: Experiment, measured: Measured) -> list[dict]:
    rows = []
    for claim in exp.claims:
        try:
            outcome = claim.test(measured)
        except (KeyError, ValueError) as exc:  # a case that was not run
            outcome = Outcome(MISSING, f"not measured ({exc})")
        rows.append({"text": claim.text, "status": outcome.status, "detail": outcome.detail,
                     "why": claim.why.get(outcome.status, ""),
                     "holds": outcome.status == HOLDS})
    return rows
