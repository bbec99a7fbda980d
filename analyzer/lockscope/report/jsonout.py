"""``--format json``: the analysis as JSON, with what is missing and why."""

from __future__ import annotations

import json
from typing import Any

from ..schema import ResultsDoc
from .model import ReportModel


def report_json(doc: ResultsDoc, model: ReportModel) -> dict[str, Any]:
    """``{generator, source, schema, created_wall, analysis, derived, notes}``.

    ``analysis`` is results.json's own analysis section, keyed by filesystem.
    A filesystem without one gets points computed from its runs' workload
    statistics (no verdict), and is listed in ``derived``.
    """
    analysis = doc.get("analysis")
    if not isinstance(analysis, dict):
        analysis = {}
    out_analysis: dict[str, Any] = dict(analysis)
    derived = []
    for v in model.filesystems:
        if not isinstance(analysis.get(v.name), dict) or not v.from_analysis:
            out_analysis[v.name] = {"fs": v.name, "points": v.points, "verdict": None}
            derived.append(v.name)
    return {
        "generator": model.generator,   # first key: marks the file as lockscope's
        "source": model.source,
        "schema": doc.get("schema"),
        "created_wall": doc.get("created_wall"),
        "analysis": out_analysis,
        "derived": derived,
        "notes": model.notes + model.flame_notes,
    }


def dumps(data: dict[str, Any]) -> str:
    """Stable, readable JSON text."""
    return json.dumps(data, indent=1, sort_keys=False, default=str) + "\n"
