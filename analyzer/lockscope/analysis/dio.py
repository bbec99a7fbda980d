"""DIO write classes per file, summed over a filesystem's runs."""

from __future__ import annotations

from ..schema import CLASS_KEYS, Counted, DioClass, Run, WriteClasses, no_classes
from .lock_mode import add_modes, entry_modes

__all__ = ["CLASS_KEYS", "classes_for", "count_of", "file_classes", "no_writes"]


def count_of(value: Counted | int | None) -> int:
    """A class's count: ``{count, bytes}``, or a bare number (older recordings)."""
    if isinstance(value, dict):
        return int(value.get("count", 0))
    return int(value or 0)


def file_classes(runs: list[Run]) -> list[DioClass]:
    """One row per (dev, ino) or path, largest write count first."""
    rows: dict[str, DioClass] = {}
    lat: dict[str, list[float]] = {}
    for run in runs:
        for e in ((run.get("trace") or {}).get("dio") or []):
            key = e.get("path") or f"{e.get('dev')}:{e.get('ino')}"
            row = rows.setdefault(key, {
                "path": e.get("path"), "dev": e.get("dev"), "ino": e.get("ino"),
                "block_size": e.get("fs_block_size"), "writes": 0, "write_bytes": 0,
                **no_classes(), "buffered_writes": 0, "reads": 0, "latency_mean_ns": 0.0,
                "modes": {}})
            writes = e.get("writes") or {}
            row["writes"] += int(writes.get("count", 0))
            row["write_bytes"] += int(writes.get("bytes", 0))
            for k in CLASS_KEYS:
                row[k] += count_of(e.get(k))
            row["buffered_writes"] += count_of(e.get("buffered_writes"))
            row["reads"] += count_of(e.get("reads"))
            add_modes(row["modes"], entry_modes(e))
            latency = e.get("latency") or {}
            acc = lat.setdefault(key, [0.0, 0.0])
            acc[0] += float(latency.get("total_ns", 0))
            acc[1] += float(latency.get("count", 0))
    for key, row in rows.items():
        total, n = lat.get(key, [0.0, 0.0])
        row["latency_mean_ns"] = total / n if n else 0.0
    return sorted(rows.values(), key=lambda r: -(r["writes"] + r["buffered_writes"]))


def no_writes() -> WriteClasses:
    """The classes of a file nothing was written to."""
    return {"writes": 0, "buffered_writes": 0, "block_size": None, **no_classes(), "modes": {}}


def classes_for(rows: list[DioClass], path: str | None, dev: str | None,
                ino: int | None) -> DioClass | None:
    for r in rows:
        if (path and r["path"] == path) or (dev and r["dev"] == dev and r["ino"] == ino):
            return r
    return None
