"""What a throughput parser returns, and how it fails."""

from __future__ import annotations

from dataclasses import dataclass, field

from ....errors import LockscopeError


class ToolOutputError(LockscopeError):
    """The tool's output does not say what the parser needs; names the tool and the line."""

    def __init__(self, tool: str, reason: str, line_no: int | None = None,
                 line: str | None = None) -> None:
        where = f" line {line_no}" if line_no is not None else ""
        shown = f": {line.strip()[:120]!r}" if line is not None and line.strip() else ""
        super().__init__(f"{tool} output{where}{shown}: {reason}")
        self.tool = tool
        self.line_no = line_no


@dataclass(frozen=True)
class Throughput:
    """One run of a tool, as its own report says.

    ``ops_s`` counts the tool's operations: I/Os for fio, sysbench fileio and dd (blocks),
    transactions for pgbench and sysbench OLTP. ``bytes_s`` is 0 where the tool does not
    say. ``jobs`` are fio-style job records (``jobs[].write.iops`` ...), one per worker
    where the tool reports each worker apart.
    """

    tool: str
    ops_s: float
    bytes_s: float = 0.0
    direction: str = "write"             # where the figures go in fio's shape
    latency_ns: dict[str, float] = field(default_factory=dict)  # mean, p95, p99 if given
    runtime_s: float | None = None       # the tool's own timed phase, if it says
    jobs: tuple[dict, ...] = ()          # the tool's own per-worker records (fio)

    def fio_jobs(self, name: str) -> list[dict]:
        """Fio-shaped job records for the sweep's analysis."""
        if self.jobs:
            return [dict(j) for j in self.jobs]
        return [fio_job(name, self.ops_s, self.bytes_s, self.direction, self.latency_ns,
                        self.runtime_s)]


def fio_job(name: str, ops_s: float, bytes_s: float, direction: str = "write",
            latency_ns: dict[str, float] | None = None,
            runtime_s: float | None = None) -> dict:
    """One job record in fio's JSON shape (only the keys the analysis reads)."""
    lat = latency_ns or {}
    pct = {key: lat[src] for key, src in (("50.000000", "p50"), ("95.000000", "p95"),
                                           ("99.000000", "p99")) if src in lat}
    d = {"iops": ops_s, "bw_bytes": bytes_s, "bw": bytes_s / 1024,
         # total_ios: the analysis reads latency from the first direction that has I/Os
         "total_ios": int(ops_s * runtime_s) if runtime_s else int(ops_s > 0),
         "clat_ns": {"mean": lat.get("mean", 0.0), "percentile": pct}}
    job: dict = {"jobname": name, "write": {}, "read": {}}
    job[direction] = d
    if runtime_s:
        job["job_runtime"] = runtime_s * 1e3  # ms, as fio
    return job
