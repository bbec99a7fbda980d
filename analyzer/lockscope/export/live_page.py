"""The exporter's `/` page: what it serves, and the last minute's per-interval lines
(threads on CPU, waiting for work, lost and to what, the file whose lock held them)."""

from __future__ import annotations

import html
import time
from collections.abc import Mapping
from typing import Any

from ..analysis.wait_classes import WORDS
from .export_state import ExportSnapshot

LINKS = (
    ("/metrics", "Prometheus metrics (text 0.0.4, or OpenMetrics by Accept)"),
    ("/debug/pprof/mutex", "kernel lock waits, pprof (cumulative)"),
    ("/debug/pprof/mutex?seconds=30", "the same, last 30 s"),
    ("/debug/pprof/block", "off-CPU waits that are loss, pprof (cumulative)"),
    ("/debug/pprof/block?seconds=30", "the same, last 30 s"),
)


def _line(row: Mapping[str, Any]) -> str:
    t = time.strftime("%H:%M:%S", time.gmtime(row["wall_ns"] / 1e9))
    cells = [t, f"{row['oncpu_threads']:.2f}", f"{row['idle_threads']:.2f}",
             f"{row['loss_threads']:.2f}"]
    top = row.get("top_loss")
    cells.append(f"{WORDS[top]} {row['top_loss_threads']:.2f}" if top else "-")
    f = row.get("top_lock_file")
    cells.append(f"{f} {row['top_lock_file_threads']:.2f}" if f else "-")
    cells.append(f"{row['dio_writes_s']:.0f}")
    cells.append(f"{row['syncs_s']:.0f}")
    share = row.get("recorder_cpu_share")
    cells.append(f"{share:.2%}" if share is not None else "-")
    obs = row.get("observed_share")
    cells.append(f"{obs:.0%}" if obs is not None else "-")
    return "<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in cells) + "</tr>"


def render_page(s: ExportSnapshot) -> bytes:
    c = s.context
    target = html.escape(c.target or "the traced threads")
    up = "" if c.target_up is None else (" (up)" if c.target_up else " (<b>down</b>)")
    links = "".join(f'<li><a href="{html.escape(h)}">{html.escape(h)}</a>: '
                    f"{html.escape(d)}</li>" for h, d in LINKS)
    head = ("UTC", "threads on CPU", "waiting for work", "lost", "top loss (threads)",
            "top lock-wait file (threads)", "DIO writes/s", "syncs/s", "recorder BPF CPU",
            "observed")
    rows = "".join(_line(r) for r in reversed(s.lines))
    body = (f"<h1>lockscope: {target}{up}</h1>"
            f"<p>{s.intervals} intervals exported; thread counts are averages over each "
            f"interval's observed time.</p><ul>{links}</ul>"
            "<table border=1 cellspacing=0 cellpadding=3><tr>"
            + "".join(f"<th>{h}</th>" for h in head) + f"</tr>{rows}</table>")
    return ("<!doctype html><html><head><meta charset=utf-8>"
            "<meta http-equiv=refresh content=2><title>lockscope</title></head>"
            f"<body>{body}</body></html>").encode()
