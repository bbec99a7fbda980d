"""Shrink a recorded results.json into a test fixture: the largest records only.

Keeps each run's workload figures and the heaviest entries of every trace list
(locks and their waits, off-CPU records, holder snapshots, folded lines), cuts
stacks to their first frames, and drops the analysis (tests run the analyzer on
the runs). What is cut is the small tail, so the analysis of the result tells
the same story as the full recording::

    python tools/trim_results.py RECORDED/results.json tests/data/sweep-small.json
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

TOP = {"offcpu": 10, "locks": 5, "waits": 2, "samples": 8, "releasers": 4, "folded": 8,
       "per_program": 4}
FRAMES = 12


def _heaviest(rows: list[Any], n: int, key: str) -> list[Any]:
    return sorted(rows, key=lambda r: -(r.get(key) or 0))[:n]


def _cut_stacks(row: dict[str, Any]) -> None:
    for key in ("kstack", "ustack"):
        if isinstance(row.get(key), list):
            row[key] = row[key][:FRAMES]


def _folded(lines: list[str]) -> list[str]:
    def weight(line: str) -> int:
        return int(line.rsplit(" ", 1)[1])
    return sorted(lines, key=lambda ln: -weight(ln))[:TOP["folded"]]


def trim_trace(trace: dict[str, Any]) -> None:
    argv = trace.get("argv")
    if argv and "/build/bin/" in str(argv[0]):
        # the checkout's location on the machine that recorded it means nothing elsewhere
        argv[0] = "build/bin/" + str(argv[0]).rsplit("/build/bin/", 1)[1]
    trace["offcpu"] = _heaviest(trace.get("offcpu") or [], TOP["offcpu"], "total_ns")
    for rec in trace["offcpu"]:
        _cut_stacks(rec)
    trace["locks"] = _heaviest(trace.get("locks") or [], TOP["locks"], "total_ns")
    for lock in trace["locks"]:
        lock["waits"] = _heaviest(lock.get("waits") or [], TOP["waits"], "total_ns")
        for w in lock["waits"]:
            _cut_stacks(w)
    holders = trace.get("holders") or {}
    for what in ("samples", "releasers"):
        if what in holders:
            holders[what] = _heaviest(holders[what], TOP[what], "wait_ns")
            for s in holders[what]:
                _cut_stacks(s)
    folded = trace.get("folded") or {}
    for kind, lines in folded.items():
        folded[kind] = _folded(lines)
    overhead = trace.get("overhead") or {}
    if "per_program" in overhead:
        overhead["per_program"] = _heaviest(overhead["per_program"], TOP["per_program"],
                                            "run_time_ns")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    p.add_argument("recorded", help="a results.json written by lockscope sweep")
    p.add_argument("out", help="the trimmed copy to write")
    args = p.parse_args(argv)
    with open(args.recorded) as fh:
        doc = json.load(fh)
    doc.pop("analysis", None)
    for run in doc.get("runs") or []:
        if run.get("trace"):
            trim_trace(run["trace"])
    with open(args.out, "w") as fh:
        json.dump(doc, fh, indent=None, separators=(",", ":"))
        fh.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
