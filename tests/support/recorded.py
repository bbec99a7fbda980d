"""The recorded sweep in tests/data (see its README) with the real analyzer's analysis.

Report tests render this document: every figure they check comes from a real
recording and from the analysis the sweep itself would have written.
"""

from __future__ import annotations

import copy
import json
from functools import lru_cache
from pathlib import Path

from lockscope.analysis import analyze
from lockscope.report.flame.folded import KINDS, merge
from lockscope.results import load_results
from lockscope.schema import ResultsDoc, Run

RECORDED = Path(__file__).resolve().parents[1] / "data" / "sweep-ext4-xfs.json"


@lru_cache(maxsize=1)
def _analyzed() -> str:
    doc = load_results(RECORDED)
    doc["analysis"] = analyze(doc)
    # as results.json holds it: plain JSON values (verdict kinds are strings there)
    return json.dumps(doc)


def recorded_sweep() -> ResultsDoc:
    """A fresh copy of the recorded sweep, analyzed as `lockscope sweep` does."""
    doc: ResultsDoc = json.loads(_analyzed())
    return doc


def recorded_runs_only() -> ResultsDoc:
    """The same recording without its analysis section."""
    doc = copy.deepcopy(recorded_sweep())
    doc.pop("analysis", None)
    return doc


def thread_counts(doc: ResultsDoc, fs: str) -> list[int]:
    return sorted({r["threads"] for r in doc["runs"] if r["fs"] == fs})


def runs_at(doc: ResultsDoc, fs: str, threads: int) -> list[Run]:
    return [r for r in doc["runs"] if r["fs"] == fs and r["threads"] == threads]


def expected_flame_graphs(doc: ResultsDoc) -> set[str]:
    """The flame graphs a report must draw, from the recorded stacks themselves: one per
    (fs, kind, thread count) with stacks, and a differential one up to the highest."""
    names = set()
    for fs in sorted({r["fs"] for r in doc["runs"]}):
        threads = thread_counts(doc, fs)
        for kind in KINDS:
            have = [n for n in threads if sum(merge(runs_at(doc, fs, n), kind).values()) > 0]
            names |= {f"{fs}-{kind}-{n}threads.svg" for n in have}
            if threads[-1] in have and threads[0] != threads[-1]:
                names.add(f"{fs}-{kind}-diff-{threads[0]}to{threads[-1]}threads.svg")
    return names
