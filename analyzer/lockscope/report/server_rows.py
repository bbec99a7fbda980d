"""Report rows of a database preset sweep (analysis.<fs>.server): per client count,
TPS and where the server's threads' time went."""

from __future__ import annotations

from typing import Any

from ..analysis.waitclass import CLASSES, LOSS_CLASSES
from . import fmt


def server_rows(server: dict[str, Any]) -> list[dict[str, str]]:
    rows = []
    for p in server.get("points") or []:
        if not isinstance(p, dict):
            continue
        row = {"clients": str(p.get("threads")), "tps": fmt.count((p.get("tps") or {}).get("mean")),
               "efficiency": fmt.share(p.get("efficiency")), "threads": "-", "oncpu": "-",
               "idle": "-", "lost": "-", "classes": "not traced", "per_txn": "-"}
        if p.get("traced"):
            t = p.get("threads_by_class") or {}
            loss = p.get("loss_share") or {}
            per = p.get("per_txn_us") or {}
            lost_threads = (p.get("lost_ns") or 0) / 1e9 / (p.get("window_s") or 1)
            row.update({
                "threads": str(p.get("server_threads")), "oncpu": f"{t.get('oncpu', 0):.2f}",
                "idle": f"{t.get('idle', 0):.2f}", "lost": f"{lost_threads:.2f}",
                "classes": ", ".join(f"{CLASSES[c]} {fmt.share(loss[c])}" for c in
                                     sorted(LOSS_CLASSES, key=lambda c: -loss.get(c, 0))
                                     if loss.get(c, 0) >= 0.05),
                "per_txn": fmt.count(sum(v for v in per.values() if v is not None)),
            })
        rows.append(row)
    return rows
