"""The report's plots (matplotlib, no pyplot state): SVG text for HTML, PNG files for Markdown.

- scaling: MiB/s and IOPS versus threads for every filesystem, min/max error
  bars over repeats, the USL fit and the ideal linear line N·X(1);
- time share: per thread count, where thread time went (stacked bars);
- latency: completion latency p50/p99/p99.9 versus threads.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..analysis.runs import DEFAULT_OPS_UNIT
from .fmt import as_float
from .model import FsView

# What drawing and saving the plots imports (matplotlib ~0.4 s): forked.Standby's list.
PLOT_MODULES = ("matplotlib", "matplotlib.figure", "matplotlib.ticker",
                "matplotlib.backends.backend_svg", "matplotlib.backends.backend_agg")
FS_COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"]
# Time-share categories: label and colour; inode locks get their own shades of red.
SHARE_CATEGORIES = [
    ("oncpu", "on-CPU", "#4daf4a"),
    ("runqueue", "runqueue (waiting for a CPU)", "#b8e186"),
    ("inode_lock", "inode locks", None),
    ("other_lock", "other locks", "#fdae61"),
    ("block_io", "block I/O", "#4575b4"),
    ("journal", "journal", "#9e76c8"),
    ("other_offcpu", "other off-CPU", "#bdbdbd"),
]
INODE_SHADES = ["#b2182b", "#e34a33", "#fc8d59", "#d6604d", "#f4a582", "#67001f"]
MAX_INODE_LOCKS = 4
RC = {"svg.fonttype": "none", "font.size": 10, "axes.titlesize": 11, "axes.grid": True,
      "grid.alpha": 0.3, "legend.fontsize": 8, "font.family": "sans-serif"}


@dataclass
class Plot:
    """One rendered plot: its SVG for HTML and, when asked, its PNG file."""

    name: str
    title: str
    svg: str
    png: Path | None = None


def _figure(width: float, height: float):
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), layout="constrained")


def _mean(stat: Any) -> float | None:
    return as_float(stat.get("mean")) if isinstance(stat, dict) else as_float(stat)


def _usl_curve(usl: dict[str, Any] | None, n: float) -> float | None:
    """X(N) = λN / (1 + σ(N−1) + κN(N−1)), or None without a usable fit."""
    if not usl or not usl.get("ok"):
        return None
    lam, sig, kap = (as_float(usl.get(k)) for k in ("lambda", "sigma", "kappa"))
    if lam is None or sig is None:
        return None
    kap = kap or 0.0
    den = 1 + sig * (n - 1) + kap * n * (n - 1)
    return lam * n / den if den > 0 else None


def _thread_axis(ax, threads: list[int]) -> None:
    if threads and max(threads) / max(1, min(threads)) >= 4:
        ax.set_xscale("log", base=2)
    ax.set_xticks(threads)
    ax.set_xticklabels([str(t) for t in threads])
    ax.minorticks_off()
    ax.set_xlabel("threads")


def scaling_figure(views: list[FsView]):
    """MiB/s and IOPS versus threads, one line per filesystem, with USL and ideal lines."""
    fig = _figure(10, 4.2)
    ax_bw, ax_iops = fig.subplots(1, 2)
    threads: set[int] = set()
    for i, v in enumerate(views):
        color = FS_COLORS[i % len(FS_COLORS)]
        pts = [p for p in v.points if _mean(p.get("iops")) is not None]
        if not pts:
            continue
        ns = [int(p["threads"]) for p in pts]
        threads.update(ns)
        # Bytes per I/O converts the IOPS-based USL fit into MiB/s.
        bw = [_mean(p.get("bw_bytes")) for p in pts]
        iops = [_mean(p.get("iops")) for p in pts]
        per_io = [b / x for b, x in zip(bw, iops) if b is not None and x]
        bytes_per_io = sum(per_io) / len(per_io) if per_io else None
        for ax, key, scale in ((ax_iops, "iops", 1.0), (ax_bw, "bw_bytes", 1 / 2**20)):
            if key == "bw_bytes" and bytes_per_io is None:
                continue
            ys, lo, hi = [], [], []
            for p in pts:
                given = p.get(key)
                s: dict[str, Any] = given if isinstance(given, dict) else {"mean": given}
                m = as_float(s.get("mean")) or 0.0
                ys.append(m * scale)
                lo.append(max(0.0, (m - (as_float(s.get("min")) or m)) * scale))
                hi.append(max(0.0, ((as_float(s.get("max")) or m) - m) * scale))
            ax.errorbar(ns, ys, yerr=[lo, hi], color=color, marker="o", capsize=4, lw=2,
                        label=f"{v.name} measured (min–max over repeats)")
            conv = scale * (bytes_per_io or 1.0) if key == "bw_bytes" else scale
            fine = [ns[0] + (ns[-1] - ns[0]) * k / 100 for k in range(101)]
            curve = [_usl_curve(v.usl, n) for n in fine]
            if all(c is not None for c in curve) and len(ns) > 1:
                ax.plot(fine, [c * conv for c in curve if c is not None], color=color, ls="--",
                        lw=1.2, label=f"{v.name} USL fit")
            x1 = ys[0] / ns[0]
            ax.plot([ns[0], ns[-1]], [x1 * ns[0], x1 * ns[-1]], color=color, ls=":", lw=1.2,
                    alpha=0.8, label=f"{v.name} ideal N·X(1)")
    tl = sorted(threads)
    unit = views[0].ops_unit if views else DEFAULT_OPS_UNIT
    for ax, title, ylabel in ((ax_bw, "Throughput", "MiB/s"), (ax_iops, unit, unit)):
        _thread_axis(ax, tl)
        ax.set_title(f"{title} versus threads")
        ax.set_ylabel(ylabel)
        ax.set_ylim(bottom=0)
    # Measured lines first, then the fits, then the ideal lines.
    handles, labels = ax_iops.get_legend_handles_labels()
    rank = {"measured": 0, "USL fit": 1, "ideal": 2}
    order = sorted(range(len(labels)), key=lambda i: (
        next((r for k, r in rank.items() if k in labels[i]), 3), i))
    ax_iops.legend([handles[i] for i in order], [labels[i] for i in order], loc="upper left",
                   handlelength=3.0)
    return fig


def _share_columns(v: FsView) -> tuple[list[int], list[tuple[str, str, list[float]]]]:
    """x thread counts and stacked series (label, colour, values in %) for one filesystem."""
    pts = [p for p in v.points if isinstance(p.get("time_share"), dict)]
    ns = [int(p["threads"]) for p in pts]
    # Inode locks by key, largest overall first; the rest folded into one series.
    weight: dict[str, float] = {}
    for p in pts:
        for lk in p.get("inode_locks") or []:
            if isinstance(lk, dict) and lk.get("key"):
                weight[lk["key"]] = weight.get(lk["key"], 0.0) + (as_float(lk.get("share")) or 0)
    keys = sorted(weight, key=lambda k: -weight[k])[:MAX_INODE_LOCKS]
    series: list[tuple[str, str, list[float]]] = []
    for cat, label, color in SHARE_CATEGORIES:
        if color is not None:    # every category but the inode locks, split below
            vals = [100 * (as_float(p["time_share"].get(cat)) or 0.0) for p in pts]
            series.append((label, color, vals))
            continue
        named = [0.0] * len(pts)
        for j, key in enumerate(keys):
            vals = []
            for i, p in enumerate(pts):
                s = sum(as_float(lk.get("share")) or 0 for lk in p.get("inode_locks") or []
                        if isinstance(lk, dict) and lk.get("key") == key)
                vals.append(100 * s)
                named[i] += 100 * s
            series.append((_lock_label(key), INODE_SHADES[j % len(INODE_SHADES)], vals))
        rest = [max(0.0, 100 * (as_float(p["time_share"].get("inode_lock")) or 0) - named[i])
                for i, p in enumerate(pts)]
        if any(r > 0.05 for r in rest):
            series.append(("other inode locks" if keys else "inode locks", "#f1b6b6", rest))
    return ns, series


def _lock_label(key: str) -> str:
    # The file's name keeps the legend narrow; the tables give the full path.
    kind, _, path = key.partition(":")
    return f"{kind} on {path.rstrip('/').rsplit('/', 1)[-1]}" if path else kind


def time_share_figure(views: list[FsView]):
    """Per filesystem, stacked bars of where thread time went at each thread count."""
    shown = [v for v in views if any(isinstance(p.get("time_share"), dict) for p in v.points)]
    if not shown:
        return None
    fig = _figure(max(5.0, 5.0 * len(shown)), 5.2)
    axes = fig.subplots(1, len(shown), sharey=True, squeeze=False)[0]
    for ax, v in zip(axes, shown):
        ns, series = _share_columns(v)
        xs = list(range(len(ns)))
        bottom = [0.0] * len(ns)
        for label, color, vals in series:
            if not any(x > 0 for x in vals):
                continue
            ax.bar(xs, vals, bottom=bottom, color=color, width=0.7, label=label,
                   edgecolor="white", linewidth=0.5)
            bottom = [b + x for b, x in zip(bottom, vals)]
        ax.set_xticks(xs)
        ax.set_xticklabels([str(n) for n in ns])
        ax.set_xlabel("threads")
        ax.set_title(f"{v.name}: where thread time went")
        ax.set_ylim(0, 100)
        ax.grid(axis="x", visible=False)
        # Each filesystem has its own locks, so each panel has its own legend.
        handles, labels = ax.get_legend_handles_labels()
        ax.legend(handles[::-1], labels[::-1], loc="upper center",
                  bbox_to_anchor=(0.5, -0.16), ncol=2, frameon=False)
    axes[0].set_ylabel("% of thread time")
    return fig


def latency_figure(views: list[FsView]):
    """Completion latency percentiles (ms, log scale) versus threads."""
    fig = _figure(10, 4.0)
    ax = fig.subplots()
    threads: set[int] = set()
    drawn = False
    for i, v in enumerate(views):
        color = FS_COLORS[i % len(FS_COLORS)]
        for key, label, ls in (("p50", "p50", "-"), ("p99", "p99", "--"),
                               ("p999", "p99.9", ":")):
            pts = [(int(p["threads"]), as_float((p.get("clat_ns") or {}).get(key)))
                   for p in v.points if isinstance(p.get("clat_ns"), dict)]
            pts = [(n, y / 1e6) for n, y in pts if y is not None and y > 0]
            if not pts:
                continue
            threads.update(n for n, _ in pts)
            ax.plot([n for n, _ in pts], [y for _, y in pts], color=color, ls=ls, marker="o",
                    ms=4, lw=1.8, label=f"{v.name} {label}")
            drawn = True
    if not drawn:
        return None
    from matplotlib.ticker import FuncFormatter, LogLocator

    _thread_axis(ax, sorted(threads))
    ax.set_yscale("log")
    # Plain numbers (0.2, 1, 5 ms) read better than powers of ten.
    ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda y, _: f"{y:g}"))
    ax.yaxis.set_minor_formatter(FuncFormatter(lambda y, _: ""))
    ax.set_ylabel("completion latency (ms)")
    ax.set_title("Completion latency percentiles versus threads")
    ax.legend(ncol=max(1, len(views)), loc="upper left", handlelength=3.5)
    return fig


FIGURES: list[tuple[str, str, Callable]] = [
    ("scaling", "Throughput and IOPS versus threads", scaling_figure),
    ("time-share", "Where thread time went", time_share_figure),
    ("latency", "Completion latency versus threads", latency_figure),
]


def render_plots(views: Any, png_dir: Path | None = None, png_prefix: str = "report",
                 svg: bool = True, figures: list[tuple[str, str, Callable]] | None = None
                 ) -> list[Plot]:
    """Render every plot that has data: SVG text (if `svg`) and PNGs into `png_dir` (if given).

    `figures` (default: the sweep's) are (name, title, make); make(views) returns a
    figure or None."""
    import matplotlib

    plots = []
    for name, title, make in figures or FIGURES:
        # A per-plot hash salt keeps matplotlib's generated ids distinct between plots.
        rc: Any = {**RC, "svg.hashsalt": f"lockscope-{name}"}
        with matplotlib.rc_context(rc):
            fig = make(views)
            if fig is None:
                continue
            text = ""
            if svg:
                buf = io.StringIO()
                fig.savefig(buf, format="svg", metadata={"Date": None})
                text = buf.getvalue()
            png = None
            if png_dir is not None:
                png = Path(png_dir) / f"{png_prefix}-{name}.png"
                fig.savefig(png, format="png", dpi=110,
                            metadata={"Software": "lockscope report"})
        plots.append(Plot(name, title, text, png))
    return plots
