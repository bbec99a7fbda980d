"""fio's JSON report (``--output-format=json``): its jobs as they are."""

from __future__ import annotations

import json

from .throughput import Throughput, ToolOutputError


def parse_fio(text: str) -> Throughput:
    # fio may print notes before the document; the JSON starts at the first "{" line.
    lines = text.splitlines()
    start = next((i for i, ln in enumerate(lines) if ln.startswith("{")), None)
    if start is None:
        raise ToolOutputError("fio", "no JSON document (run fio with --output-format=json)",
                              1 if lines else None, lines[0] if lines else None)
    try:
        doc = json.loads("\n".join(lines[start:]))
    except json.JSONDecodeError as exc:
        line_no = start + exc.lineno
        raise ToolOutputError("fio", f"bad JSON ({exc.msg})", line_no,
                              lines[line_no - 1] if line_no <= len(lines) else None) from None
    jobs = doc.get("jobs") if isinstance(doc, dict) else None
    if not isinstance(jobs, list) or not jobs:
        raise ToolOutputError("fio", "the JSON document has no jobs", start + 1, lines[start])
    ops = bw = 0.0
    for job in jobs:
        for ddir in ("read", "write", "trim"):
            d = job.get(ddir) if isinstance(job, dict) else None
            if isinstance(d, dict):
                ops += float(d.get("iops", 0) or 0)
                bw += float(d.get("bw_bytes", 0) or 0)
    writes = sum(float((j.get("write") or {}).get("iops", 0) or 0) for j in jobs)
    runtime = max(float(j.get("job_runtime", 0) or 0) for j in jobs) / 1e3
    return Throughput("fio", ops, bw, "write" if writes else "read",
                      runtime_s=runtime or None, jobs=tuple(jobs))
