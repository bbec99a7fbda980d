"""The attach report's plots: throughput per second, and thread time per wait class
per second (stacked), on one time axis."""

from __future__ import annotations

from pathlib import Path

from ..analysis.wait_classes import COLOURS, ONCPU, RECORD_CLASSES, REQUEST_CLASSES, WORDS
from .plots import Plot, _figure, render_plots


def _mark_shedding(ax, a: dict) -> None:
    """Where the recorder shed stacks or probe groups (--max-overhead): what follows
    has less detail, and the reader should see why."""
    for x in ((a.get("overhead") or {}).get("shed") or []):
        ax.axvline(x["after_s"], color="#555555", lw=0.8, ls="--")
        label = f"{x['what']} back" if x.get("kind") == "restore" else f"shed {x['what']}"
        ax.annotate(label, (x["after_s"], 1.0), xycoords=("data", "axes fraction"),
                    rotation=90, va="top", ha="right", fontsize=7, color="#555555")


def _times(rows: list[dict]) -> list[float]:
    return [r["t_s"] + r["duration_s"] / 2 for r in rows]


def throughput_figure(a: dict):
    rows = a.get("series") or []
    if not rows:
        return None
    fig = _figure(10, 3.4)
    ax = fig.subplots()
    t = _times(rows)
    tp = a.get("throughput") or {}
    ax.plot(t, tp.get("values") or [], marker="o", ms=3, lw=1.8, color="#1f77b4",
            label=tp.get("signal", "throughput"))
    for ts in (a.get("falls") or {}).get("fallen") or []:
        ax.axvspan(ts, ts + rows[0]["duration_s"], color="#d62728", alpha=0.12, lw=0)
    ax2 = ax.twinx()
    ax2.plot(t, [r["trace"]["fsync_calls_s"] for r in rows], color="#9e76c8", lw=1.2, ls="--",
             label="fsync calls/s (trace)")
    ax2.plot(t, [r["trace"]["write_calls_s"] for r in rows], color="#ff7f0e", lw=1.2, ls=":",
             label="write calls/s (trace)")
    ax2.set_ylabel("calls/s (trace)")
    ax2.grid(False)
    ax.set_xlabel("seconds into the window")
    ax.set_ylabel(tp.get("signal", "throughput").split(" (")[0])
    ax.set_ylim(bottom=0)
    ax2.set_ylim(bottom=0)
    h1, l1 = ax.get_legend_handles_labels()
    h2, l2 = ax2.get_legend_handles_labels()
    ax.legend(h1 + h2, l1 + l2, loc="lower left", fontsize=8)
    _mark_shedding(ax, a)
    ax.set_title("Throughput per interval (shaded: intervals where it fell)")
    return fig


def classes_figure(a: dict):
    rows = a.get("series") or []
    if not rows:
        return None
    fig = _figure(10, 4.0)
    ax = fig.subplots()
    t = _times(rows)
    def per_s(k: str) -> list[float]:
        # an interval the probes never watched (--duty) is a gap, not zero threads
        return [r["classes_ns"].get(k, 0.0) / 1e9 / r["duration_s"] if r["duration_s"] > 0
                else float("nan") for r in rows]
    stacks, labels, colors = [], [], []
    for k in (ONCPU, *RECORD_CLASSES):
        vals = per_s(k)
        if any(v > 0 for v in vals):
            stacks.append(vals)
            labels.append(WORDS[k])
            colors.append(COLOURS[k])
    # request time is not thread time: a line over the threads' stack, not a layer of it
    lines = [k for k in REQUEST_CLASSES if any(k in r["classes_ns"] for r in rows)]
    if not stacks and not lines:
        return None
    if len(rows) == 1:
        bottom = 0.0
        for vals, label, color in zip(stacks, labels, colors):
            ax.bar([t[0]], vals, bottom=[bottom], width=rows[0]["duration_s"] * 0.6,
                   color=color, label=label)
            bottom += vals[0]
    else:
        ax.stackplot(t, *stacks, labels=labels, colors=colors, alpha=0.9)
    for k in lines:
        ax.plot(t, per_s(k), color=COLOURS[k], lw=2, ls="--", marker="o" if len(rows) == 1
                else None, label=f"{WORDS[k]} (requests, not threads)")
    ax.set_xlabel("seconds into the window")
    ax.set_ylabel("threads (average)")
    _mark_shedding(ax, a)
    ax.set_title("Where the threads' time went, per interval")
    handles, lab = ax.get_legend_handles_labels()
    ax.legend(handles[::-1], lab[::-1], loc="upper left", bbox_to_anchor=(1.01, 1.0),
              fontsize=8, frameon=False)
    return fig


def db_waits_figure(a: dict, top: int = 7):
    """PostgreSQL's own view beside the kernel's: active sessions per wait event."""
    rows = a.get("series") or []
    totals: dict[str, float] = {}
    for r in rows:
        for k, n in (r.get("db_waits") or {}).items():
            totals[k] = totals.get(k, 0.0) + n
    if len(rows) < 2 or not totals:
        return None
    keys = sorted(totals, key=lambda k: -totals[k])[:top]
    fig = _figure(10, 3.4)
    ax = fig.subplots()
    t = _times(rows)
    stacks = [[(r.get("db_waits") or {}).get(k, 0.0) for r in rows] for k in keys]
    ax.stackplot(t, *stacks, labels=keys, alpha=0.9)
    ax.set_xlabel("seconds into the window")
    ax.set_ylabel("active sessions")
    ax.set_title("The database's view: active sessions by wait event (pg_stat_activity)")
    handles, lab = ax.get_legend_handles_labels()
    ax.legend(handles[::-1], lab[::-1], loc="upper left", bbox_to_anchor=(1.01, 1.0),
              fontsize=8, frameon=False)
    return fig


FIGURES = [("throughput", "Throughput per interval", throughput_figure),
           ("classes", "Thread time per wait class over time", classes_figure),
           ("db-waits", "Active sessions by wait event over time", db_waits_figure)]


def render_attach_plots(a: dict, png_dir: Path | None = None, png_prefix: str = "report",
                        svg: bool = True) -> list[Plot]:
    return render_plots(a, png_dir, png_prefix, svg, figures=FIGURES)
