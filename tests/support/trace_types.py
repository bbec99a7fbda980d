"""A results.json checked against the TypedDicts of lockscope.schema."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lockscope import schema

ROOT = Path(__file__).resolve().parents[2]


def _check(td: Any, obj: dict, where: str, *, open_ended: bool = False) -> None:
    """`obj` has every required key of TypedDict `td` and, unless `open_ended`, no
    key the type does not name."""
    keys = set(obj)
    missing = td.__required_keys__ - keys
    assert not missing, f"{where}: missing {sorted(missing)}"
    if not open_ended:
        extra = keys - td.__required_keys__ - td.__optional_keys__
        assert not extra, f"{where}: keys not in {td.__name__}: {sorted(extra)}"


def check_trace_types(doc) -> None:
    """Every part of a sweep's results.json against its TypedDict."""
    _check(schema.ResultsDoc, doc, "results.json")
    _check(schema.Host, doc["host"], "host")
    for fs, facts in doc["host"]["filesystems"].items():
        _check(schema.FsFacts, facts, f"host.filesystems.{fs}", open_ended=True)
    for run in doc["runs"]:
        _check(schema.Run, run, "runs[]")
        trace = run["trace"]
        _check(schema.Trace, trace, "trace")
        for t in trace["threads"]:
            _check(schema.TraceThread, t, "trace.threads[]")
        for lock in trace["locks"]:
            _check(schema.TraceLock, lock, "trace.locks[]")
            for w in lock["waits"]:
                _check(schema.LockWait, w, "trace.locks[].waits[]")
        for rec in trace["offcpu"]:
            _check(schema.OffcpuRecord, rec, "trace.offcpu[]")
        for d in trace["dio"]:
            _check(schema.DioEntry, d, "trace.dio[]")
        holders = trace["holders"]
        _check(schema.TraceHolders, holders, "trace.holders")
        for s in holders.get("samples") or []:
            _check(schema.HolderSample, s, "trace.holders.samples[]")
        for r in holders.get("releasers") or []:
            _check(schema.ReleaserRecord, r, "trace.holders.releasers[]")
        _check(schema.TraceOverhead, trace["overhead"], "trace.overhead")
        for e in trace["syscalls"]:
            _check(schema.SyscallEntry, e, "trace.syscalls[]")
