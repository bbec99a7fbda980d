"""The sweep's view of a --command run: what the results say about the workload, the
space it needs, and the point that failed."""

from __future__ import annotations

from ..point_errors import PointFailed
from .command_point import CommandSpec
from .scope import cleanup_stale as cleanup_stale_cgroups

HEADROOM = 64 << 20  # what a command may write besides --span; the image must hold both

__all__ = ["cleanup_stale_cgroups", "command_space_needed", "command_workload",
           "failed_point"]


def command_workload(spec: CommandSpec) -> dict:
    """results.json ``workload`` for a --command sweep (the report shows ``job``)."""
    job = {"command": spec.command}
    if spec.prepare:
        job["prepare"] = spec.prepare
    job["throughput"] = spec.throughput or "trace (write system calls)"
    if spec.per_thread:
        job.update({"per_thread": "yes", "span": str(spec.split.span_bytes),
                    "block_size": str(spec.split.block_bytes)})
    if spec.trace_comm:
        job["trace_comm"] = spec.trace_comm
    return {"scenario": "command", "description": spec.command, "job": job,
            "command": {"template": spec.command, "prepare": spec.prepare,
                        "throughput": spec.throughput, "per_thread": spec.per_thread,
                        "span_bytes": spec.split.span_bytes,
                        "block_bytes": spec.split.block_bytes,
                        "trace_comm": spec.trace_comm}}


def command_space_needed(spec: CommandSpec) -> int:
    """Bytes a point needs at least: the --per-thread span, plus headroom."""
    return (spec.split.span_bytes if spec.per_thread else 0) + HEADROOM


def failed_point(fs: str, threads: int, repeat: int, exc: PointFailed,
                 went_on: bool = False) -> dict:
    return {"fs": fs, "threads": threads, "repeat": repeat, "error": str(exc),
            "exit_status": exc.exit_status, "stderr": exc.stderr_line, "went_on": went_on}
