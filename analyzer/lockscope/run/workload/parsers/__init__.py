"""Throughput parsers by tool name: pure functions of the tool's output text."""

from __future__ import annotations

from collections.abc import Callable

from .dd import parse_dd
from .fio import parse_fio
from .pgbench import parse_pgbench
from .sysbench import parse_sysbench
from .throughput import Throughput, ToolOutputError, fio_job

PARSERS: dict[str, tuple[Callable[[str], Throughput], str]] = {
    # name: (parser, the stream that carries the report)
    "fio": (parse_fio, "stdout"),
    "sysbench": (parse_sysbench, "stdout"),
    "pgbench": (parse_pgbench, "stdout"),
    "dd": (parse_dd, "stderr"),
}

__all__ = ["PARSERS", "Throughput", "ToolOutputError", "fio_job", "parse_dd", "parse_fio",
           "parse_pgbench", "parse_sysbench"]
