"""pgbench's text report: transactions per second."""

from __future__ import annotations

from .textfigures import find_number
from .throughput import Throughput


def parse_pgbench(text: str) -> Throughput:
    lines = text.splitlines()
    tps = find_number("pgbench", lines, r"^tps =", "tps")
    latency = find_number("pgbench", lines, r"^latency average =", "latency average",
                          required=False)
    runtime = find_number("pgbench", lines, r"^duration:", "duration", required=False)
    return Throughput("pgbench", tps or 0.0, 0.0, "write",
                      {"mean": latency * 1e6} if latency is not None else {}, runtime)
