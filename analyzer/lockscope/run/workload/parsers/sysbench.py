"""sysbench's text report: fileio (operations and MiB/s) or an OLTP test (transactions)."""

from __future__ import annotations

from .textfigures import find_number
from .throughput import Throughput, ToolOutputError

MIB = 1 << 20


def parse_sysbench(text: str) -> Throughput:
    lines = text.splitlines()
    runtime = find_number("sysbench", lines, r"^\s*total time:", "total time",
                          required=False)
    latency = _latency_ns(lines)
    if any(line.strip() == "File operations:" for line in lines):
        f = {key: find_number("sysbench", lines, rf"^\s*{key}:", key)
             for key in ("reads/s", "writes/s", "read, MiB/s", "written, MiB/s")}
        write = (f["writes/s"] or 0) >= (f["reads/s"] or 0)
        return Throughput("sysbench", (f["reads/s"] or 0) + (f["writes/s"] or 0),
                          ((f["read, MiB/s"] or 0) + (f["written, MiB/s"] or 0)) * MIB,
                          "write" if write else "read", latency, runtime)
    if any(line.strip() == "SQL statistics:" for line in lines):
        # "    transactions:  12345  (1234.56 per sec.)"
        tps = find_number("sysbench", lines, r"^\s*transactions:", "transactions per second",
                          between=r"\s*[0-9]+\s*\(")
        return Throughput("sysbench", tps or 0.0, 0.0, "write", latency, runtime)
    raise ToolOutputError("sysbench", "neither a fileio ('File operations:') nor an OLTP "
                          "('SQL statistics:') report", 1 if lines else None,
                          lines[0] if lines else None)


def _latency_ns(lines: list[str]) -> dict[str, float]:
    """The 'Latency (ms):' block's avg and 95th percentile, in ns."""
    out: dict[str, float] = {}
    for key, label in (("mean", r"^\s*avg:"), ("p95", r"^\s*95th percentile:")):
        ms = find_number("sysbench", lines, label, f"latency {key}", required=False)
        if ms is not None:
            out[key] = ms * 1e6
    return out
