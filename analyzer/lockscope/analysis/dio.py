"""DIO write classes per file, summed over a filesystem's runs."""

from __future__ import annotations

CLASS_KEYS = ("aligned", "unaligned", "extending", "hole", "unwritten", "mapped", "dsync")


def _count(entry: dict, key: str) -> int:
    v = entry.get(key) or {}
    return int(v.get("count", 0)) if isinstance(v, dict) else int(v)


def file_classes(runs: list[dict]) -> list[dict]:
    """One row per (dev, ino) or path, largest write count first."""
    rows: dict[str, dict] = {}
    lat: dict[str, list[float]] = {}
    for run in runs:
        for e in ((run.get("trace") or {}).get("dio") or []):
            key = e.get("path") or f"{e.get('dev')}:{e.get('ino')}"
            row = rows.setdefault(key, {
                "path": e.get("path"), "dev": e.get("dev"), "ino": e.get("ino"),
                "block_size": e.get("fs_block_size"), "writes": 0, "write_bytes": 0,
                **{k: 0 for k in CLASS_KEYS}, "buffered_writes": 0, "reads": 0,
                "latency_mean_ns": 0.0})
            writes = e.get("writes") or {}
            row["writes"] += int(writes.get("count", 0))
            row["write_bytes"] += int(writes.get("bytes", 0))
            for k in CLASS_KEYS:
                row[k] += _count(e, k)
            row["buffered_writes"] += _count(e, "buffered_writes")
            row["reads"] += _count(e, "reads")
            l = e.get("latency") or {}
            acc = lat.setdefault(key, [0.0, 0.0])
            acc[0] += float(l.get("total_ns", 0))
            acc[1] += float(l.get("count", 0))
    for key, row in rows.items():
        total, n = lat.get(key, (0.0, 0.0))
        row["latency_mean_ns"] = total / n if n else 0.0
    return sorted(rows.values(), key=lambda r: -(r["writes"] + r["buffered_writes"]))


def classes_for(rows: list[dict], path: str | None, dev: str | None, ino) -> dict:
    for r in rows:
        if (path and r["path"] == path) or (dev and r["dev"] == dev and r["ino"] == ino):
            return r
    return {}
