"""dd's closing line on stderr: "N bytes (...) copied, S s, R MB/s"."""

from __future__ import annotations

import re

from .throughput import Throughput, ToolOutputError

# coreutils dd.c, print_xfer_stats: "%jd bytes ... copied, %s s, %s/s"; the rate is
# rounded for humans, so bytes and seconds are read instead.
COPIED = re.compile(r"^([0-9]+) bytes? .*copied, ([0-9.]+(?:e[-+]?[0-9]+)?) s, ")
RECORDS_OUT = re.compile(r"^([0-9]+)\+([0-9]+) records out$")


def parse_dd(text: str) -> Throughput:
    lines = text.splitlines()
    for i, line in enumerate(lines, 1):
        if " copied, " not in line:
            continue
        m = COPIED.match(line.strip())
        if not m:
            raise ToolOutputError("dd", "a 'copied' line without bytes and seconds", i, line)
        nbytes, seconds = int(m.group(1)), float(m.group(2))
        if seconds <= 0:
            raise ToolOutputError("dd", "copied in 0 seconds", i, line)
        records = _records_out(lines)
        ops = (records if records is not None else 0) / seconds
        return Throughput("dd", ops, nbytes / seconds, "write", runtime_s=seconds)
    raise ToolOutputError("dd", "no 'bytes ... copied, ... s' line (was status=none given?)",
                          len(lines) or None, lines[-1] if lines else None)


def _records_out(lines: list[str]) -> int | None:
    """Full plus partial blocks written (``N+M records out``): dd's operations."""
    for line in lines:
        m = RECORDS_OUT.match(line.strip())
        if m:
            return int(m.group(1)) + int(m.group(2))
    return None
