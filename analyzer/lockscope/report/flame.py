"""Lock-wait, off-CPU and differential flame graphs of a recording, drawn by inferno.

For each filesystem and thread count the stacks of all repeats are summed and
kept as ``<fs>-<kind>-<N>threads.folded``; inferno draws the SVG beside it. The
differential graph compares the lowest with the highest thread count
(normalized to equal totals, so it shows how the *mix* changed: red grew).
"""

from __future__ import annotations

import os
import re
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

from . import fmt
from .folded import KIND_TITLES, KINDS, UNITS, has_kernel_annotations, merge, write_folded
from .inferno import Inferno, InfernoError

# Frames narrower than this percentage of the total are dropped from the SVG:
# it keeps huge profiles readable and the self-contained report small.
MINWIDTH_PCT = 0.05


@dataclass
class Graph:
    """One flame graph: its data files and how it was drawn (or why not)."""

    fs: str
    kind: str
    threads: int | None = None          # a single thread count…
    diff: tuple[int, int] | None = None  # …or (lowest, highest) for a differential graph
    folded: Path | None = None
    svg: Path | None = None
    title: str = ""
    subtitle: str = ""
    total: int = 0
    stacks: int = 0
    repeats: int = 0
    error: str | None = None
    annotated: bool = False              # frames carry perf-style "_[k]" kernel marks
    pair: tuple["Graph | None", "Graph"] | None = field(default=None, repr=False)

    @property
    def label(self) -> str:
        """Short text for captions and file names."""
        if self.diff:
            return f"{self.fs} {KIND_TITLES[self.kind]}: {self.diff[0]} → {self.diff[1]} threads"
        return f"{self.fs} {KIND_TITLES[self.kind]}: {threads_text(self.threads or 0)}"


@dataclass
class FlameSet:
    """Every graph of a recording, in report order, plus notes for the reader."""

    graphs: list[Graph] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def for_fs(self, fs: str) -> list[Graph]:
        """Graphs of one filesystem: differential ones first."""
        return [g for g in self.graphs if g.fs == fs and g.diff] + [
            g for g in self.graphs if g.fs == fs and not g.diff]


def threads_text(n: int) -> str:
    """``1 thread``, ``8 threads``."""
    return f"{n} thread" + ("" if n == 1 else "s")


def safe_name(text: str) -> str:
    """A file-name-safe form of a filesystem label."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", str(text)).strip("._") or "fs"


def group_runs(doc: dict[str, Any]) -> dict[str, dict[int, list[dict[str, Any]]]]:
    """runs grouped as {fs: {threads: [runs…]}}, filesystems in first-seen order."""
    out: dict[str, dict[int, list[dict[str, Any]]]] = {}
    for run in doc.get("runs") or []:
        if not isinstance(run, dict) or "fs" not in run:
            continue
        try:
            n = int(run.get("threads"))
        except (TypeError, ValueError):
            continue
        out.setdefault(str(run["fs"]), {}).setdefault(n, []).append(run)
    return out


def _title(fs: str, kind: str, threads: int, total: int, stacks: int, repeats: int
           ) -> tuple[str, str]:
    verb = "waited" if kind == "lockwait" else "blocked"
    title = f"{fs}: {KIND_TITLES[kind]} at {threads_text(threads)} ({UNITS[kind]})"
    sub = (f"{fmt.duration_ns(total)} {verb} over {stacks:,} distinct stacks, summed over "
           f"{repeats} repeat{'s' if repeats != 1 else ''}; width = {UNITS[kind]}")
    return title, sub


def collect(doc: dict[str, Any], flame_dir: str | os.PathLike, *,
            kinds: Iterable[str] = KINDS, only_fs: str | None = None,
            only_threads: int | None = None, diff: tuple[int, int] | None = None,
            with_diff: bool = True,
            claim: Callable[..., Path] | None = None) -> FlameSet:
    """Sum the stacks per (fs, kind, threads), write the .folded files, plan the graphs.

    `claim(path, stamped)` is called before any file is planned or written
    (see outputs.OutputGuard); it raises to refuse a path.
    """
    claim = claim or (lambda p, stamped=True: Path(p))
    flame_dir = Path(flame_dir)
    flame_dir.mkdir(parents=True, exist_ok=True)
    result = FlameSet()
    grouped = group_runs(doc)
    for fs, by_threads in grouped.items():
        if only_fs is not None and fs != only_fs:
            continue
        for kind in kinds:
            have: dict[int, Graph] = {}
            wanted = sorted(by_threads)
            if only_threads is not None:
                wanted = [only_threads]
            elif diff is not None:
                wanted = [diff[0], diff[1]]
            for n in wanted:
                stacks = merge(by_threads.get(n, []), kind)
                if not stacks:
                    continue
                path = claim(flame_dir / f"{safe_name(fs)}-{kind}-{n}threads.folded",
                             stamped=False)
                svg = claim(path.with_suffix(".svg"))
                write_folded(path, stacks)
                total = sum(stacks.values())
                reps = len(by_threads.get(n, []))
                title, sub = _title(fs, kind, n, total, len(stacks), reps)
                g = Graph(fs, kind, threads=n, folded=path, title=title, subtitle=sub,
                          total=total, stacks=len(stacks), repeats=reps)
                g.svg = svg
                g.annotated = has_kernel_annotations(stacks)
                have[n] = g
            if not have:
                if only_threads is None and diff is None:
                    result.notes.append(f"{fs}: no {KIND_TITLES[kind]} stacks recorded, "
                                        f"so no {kind} flame graph")
                continue
            if diff is None:
                result.graphs.extend(have[n] for n in sorted(have))
            ends = diff or (min(by_threads), max(by_threads))
            if (with_diff or diff) and ends[0] != ends[1] and ends[1] in have:
                result.graphs.append(_diff_graph(fs, kind, ends, have, flame_dir, claim))
    return result


def _diff_graph(fs: str, kind: str, ends: tuple[int, int], have: dict[int, Graph],
                flame_dir: Path, claim: Callable[..., Path]) -> Graph:
    lo, hi = ends
    base = flame_dir / f"{safe_name(fs)}-{kind}-diff-{lo}to{hi}threads"
    g = Graph(fs, kind, diff=(lo, hi), folded=claim(base.with_suffix(".folded"), stamped=False),
              svg=claim(base.with_suffix(".svg")), total=have[hi].total, stacks=have[hi].stacks,
              repeats=have[hi].repeats)
    g.title = (f"{fs}: what grew from {lo} to {hi} threads ({KIND_TITLES[kind]}, "
               f"{UNITS[kind]})")
    if lo in have:
        g.subtitle = (f"differential, both profiles normalized to equal totals: red = larger "
                      f"share at {hi} threads, blue = smaller; width = {hi} threads")
    else:
        g.subtitle = (f"no {KIND_TITLES[kind]} recorded at {threads_text(lo)}: every frame is "
                      f"growth; width = {hi} threads")
    g.pair = (have.get(lo), have[hi])
    g.annotated = have[hi].annotated
    return g


def _palette(g: Graph) -> str:
    # perf-style "_[k]" marks let the java palette tell kernel (orange) from user frames.
    if g.annotated:
        return "java"
    return "io" if g.kind == "offcpu" else "hot"


def _draw(inferno: Inferno, g: Graph) -> None:
    try:
        if g.diff:
            before, after = g.pair
            if before is None:
                fd, empty = tempfile.mkstemp(prefix=".empty-", suffix=".folded",
                                             dir=g.folded.parent)
                os.close(fd)
                try:
                    inferno.diff(Path(empty), after.folded, g.folded, normalize=False)
                finally:
                    os.unlink(empty)
            else:
                inferno.diff(before.folded, after.folded, g.folded, normalize=True)
            # Differential graphs use inferno's own red/blue hues; the palette is ignored.
            inferno.render(g.folded, g.svg, title=g.title, subtitle=g.subtitle,
                           countname=UNITS[g.kind], minwidth=MINWIDTH_PCT)
        else:
            inferno.render(g.folded, g.svg, title=g.title, subtitle=g.subtitle,
                           countname=UNITS[g.kind], colors=_palette(g), minwidth=MINWIDTH_PCT)
    except (InfernoError, OSError) as exc:
        g.error = str(exc)
        if g.svg is not None and g.svg.exists():
            g.svg.unlink()
        g.svg = None


def draw(flames: FlameSet, inferno: Inferno | None, jobs: int | None = None) -> FlameSet:
    """Run inferno for every planned graph, in parallel (each is its own process)."""
    if inferno is None:
        for g in flames.graphs:
            g.svg = None
        return flames
    if inferno.diff_folded is None:
        for g in flames.graphs:
            if g.diff:
                g.svg, g.error = None, "inferno-diff-folded not found"
    plain = [g for g in flames.graphs if not g.diff and g.svg is not None]
    diffs = [g for g in flames.graphs if g.diff and g.svg is not None]
    workers = max(1, jobs or os.cpu_count() or 1)
    with ThreadPoolExecutor(max_workers=workers) as pool:
        # Diffs read the per-thread .folded files, which exist already, so all can run at once.
        list(pool.map(lambda g: _draw(inferno, g), plain + diffs))
    for g in flames.graphs:
        if g.error:
            flames.notes.append(f"{g.label}: flame graph not drawn: {g.error}")
    return flames


def files_written(flames: FlameSet) -> list[Path]:
    """Every file the flame step left on disk."""
    out: list[Path] = []
    for g in flames.graphs:
        for p in (g.folded, g.svg):
            if p is not None and p.exists():
                out.append(p)
    return out

