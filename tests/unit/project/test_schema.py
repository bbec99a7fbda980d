"""The typed schema (lockscope.schema) against real documents: the recorded sweep's
recorder JSON and the analyzer's own output carry exactly the keys the types name."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from lockscope import schema
from lockscope.schema import VerdictKind

from recorded import recorded_runs_only, recorded_sweep
from trace_types import _check, check_trace_types

ROOT = Path(__file__).resolve().parents[3]


def test_recorder_documents_match_the_trace_types():
    """The recorded fixture; test_report_without_build checks a document the recorder
    writes in the kernel phase the same way."""
    check_trace_types(recorded_runs_only())


def test_the_analysis_matches_the_analysis_types():
    analysis = recorded_sweep()["analysis"]
    for fs, a in schema.fs_analyses(analysis).items():
        _check(schema.FsAnalysis, a, fs)
        _check(schema.UslFit, a["usl"], f"{fs}.usl")
        for p in a["points"]:
            _check(schema.Point, p, f"{fs}.points[]")
            for row in p.get("inode_locks", []) + p.get("other_locks", []):
                _check(schema.PointLock, row, f"{fs}.points[].*_locks[]")
        for lk in a["locks"]:
            _check(schema.Lock, lk, f"{fs}.locks[]")
        for d in a["dio_classes"]:
            _check(schema.DioClass, d, f"{fs}.dio_classes[]")
        for c in a["causes"]:
            _check(schema.Cause, c, f"{fs}.causes[]")
        v = a["verdict"]
        _check(schema.Verdict, v, f"{fs}.verdict")
        VerdictKind(v["kind"])
        for h in v["holders"]:
            _check(schema.HolderShare, h, f"{fs}.verdict.holders[]")
        for r in v["releasers"]:
            _check(schema.ReleaserShare, r, f"{fs}.verdict.releasers[]")
    comparison = schema.comparison_of(analysis)
    assert comparison is not None
    _check(schema.Comparison, comparison, "comparison")
    for fs, row in comparison["filesystems"].items():
        _check(schema.ComparisonRow, row, f"comparison.filesystems.{fs}")


def test_verdict_kinds_stay_plain_strings_in_json():
    import json

    kind = VerdictKind.INODE_LOCK_CONTENTION
    assert json.dumps({"kind": kind}) == '{"kind": "inode_lock_contention"}'
    assert f"{kind}" == str(kind) == "inode_lock_contention" and kind == "inode_lock_contention"
    assert {"inode_lock_contention": 1}[kind] == 1


@pytest.mark.parametrize("kind", list(VerdictKind))
def test_every_verdict_kind_is_documented(kind):
    text = (ROOT / "docs" / "results-schema.md").read_text()
    assert re.search(rf"\b{kind.value}\b", text), kind


def _schema_types() -> list[Any]:
    import typing

    return [t for t in vars(schema).values()
            if isinstance(t, type) and typing.is_typeddict(t) and t.__module__ == schema.__name__]


@pytest.mark.parametrize("td", _schema_types(), ids=lambda t: t.__name__)
def test_every_schema_key_is_documented(td):
    """Each key a type in schema.py names is written in docs/results-schema.md or
    docs/recorder-json.md, as a whole word."""
    text = "\n".join((ROOT / "docs" / name).read_text()
                     for name in ("results-schema.md", "recorder-json.md"))
    missing = [k for k in td.__annotations__
               if not re.search(rf"(?<![\w-]){re.escape(k)}(?![\w])", text)]
    assert not missing, f"{td.__name__}: not in the docs: {missing}"
