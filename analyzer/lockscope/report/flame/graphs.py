"""Lock-wait, off-CPU and differential flame graphs of a recording, drawn by inferno.

For each filesystem and thread count the stacks of all repeats are kept
together in ``<fs>-<kind>-<N>threads.folded`` (inferno sums repeated stacks);
inferno draws the SVG beside it. The
differential graph compares the lowest with the highest thread count
(normalized to equal totals, so it shows how the *mix* changed: red grew).
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...schema import ResultsDoc, traced_points
from .. import fmt
from .embed import embedding
from .folded import KIND_TITLES, KINDS, UNITS, StrippedStacks, run_folded, write_point
from .inferno import Inferno, InfernoError

KIND_NOUNS = {"lockwait": "lock-wait", "offcpu": "off-CPU", "holders": "lock-holder"}
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
    total: int = 0                       # weight in ns (the sum over all stacks)
    lines: int = 0                       # folded lines written (stacks × repeats at most)
    repeats: int = 0
    error: str | None = None
    annotated: bool = False              # frames carry perf-style "_[k]" kernel marks
    pair: tuple[Graph | None, Graph] | None = field(default=None, repr=False)
    embedded: tuple[int, str] | None = field(default=None, repr=False)  # embed.embedding()

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


def group_runs(doc: ResultsDoc) -> dict[str, dict[int, list[dict[str, Any]]]]:
    """The traced points (schema.traced_points: a sweep's runs, an attach's window)
    grouped as {fs: {threads: [runs…]}}, filesystems in first-seen order. Runs stay
    plain dicts: the graphs read whatever a document holds."""
    out: dict[str, dict[int, list[dict[str, Any]]]] = {}
    runs: list[Any] = list(traced_points(doc))
    for run in runs:
        if not isinstance(run, dict) or "fs" not in run:
            continue
        try:
            n = int(run["threads"])
        except (KeyError, TypeError, ValueError):
            continue
        out.setdefault(str(run["fs"]), {}).setdefault(n, []).append(run)
    return out


def verb(kind: str) -> str:
    """``waited`` or ``blocked``."""
    return "blocked" if kind == "offcpu" else "waited"


def _title(fs: str, kind: str, threads: int, total: int, repeats: int) -> tuple[str, str]:
    title = f"{fs}: {KIND_TITLES[kind]} at {threads_text(threads)} ({UNITS[kind]})"
    sub = (f"{fmt.duration_ns(total)} {verb(kind)} in all, summed over {repeats} "
           f"repeat{'s' if repeats != 1 else ''}; width = {UNITS[kind]}")
    return title, sub


def collect(doc: ResultsDoc, flame_dir: str | os.PathLike, *,
            kinds: Iterable[str] = KINDS, only_fs: str | None = None,
            only_threads: int | None = None, diff: tuple[int, int] | None = None,
            with_diff: bool = True,
            claim: Callable[..., Path] | None = None,
            on_graph: Callable[[Graph], None] | None = None) -> FlameSet:
    """Sum the stacks per (fs, kind, threads), write the .folded files, plan the graphs.

    `claim(path, stamped)` is called before any file is planned or written
    (see outputs.OutputGuard); it raises to refuse a path. `on_graph(graph)` is
    called as soon as a graph's input is on disk (Drawer.submit starts inferno
    then, so drawing overlaps with summing the next point's stacks).
    """
    claim = claim or (lambda p, stamped=True: Path(p))
    flame_dir = Path(flame_dir)
    flame_dir.mkdir(parents=True, exist_ok=True)
    result = FlameSet()
    grouped = group_runs(doc)
    stripped = StrippedStacks()  # stacks without offsets, shared by the points
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
            ends = diff or (min(by_threads), max(by_threads))
            # The highest and lowest thread counts first: their differential graph is
            # drawn while the points between are summed, so what is left to draw when
            # the last stacks are written is small. (The report's order is kept below.)
            order = sorted(wanted, key=lambda n: (n != ends[1], n != ends[0], n))
            ready = max((order.index(e) for e in ends if e in order), default=len(order) - 1)
            planned: Graph | None = None
            for i, n in enumerate(order):
                g = _point_graph(fs, kind, n, by_threads.get(n, []), flame_dir, claim, stripped)
                if g is not None:
                    have[n] = g
                    if diff is None and on_graph:
                        on_graph(g)
                if i == ready and (with_diff or diff) and ends[0] != ends[1] and ends[1] in have:
                    planned = _diff_graph(fs, kind, ends, have, flame_dir, claim)
                    if on_graph:
                        on_graph(planned)
            if not have:
                traced = any(isinstance(r.get("trace"), dict)
                             for runs in by_threads.values() for r in runs)
                # Untraced runs are explained once by notes.missing_notes already;
                # no holder snapshots just means no traced thread waited on a lock.
                if traced and only_threads is None and diff is None and kind != "holders":
                    result.notes.append(f"{fs}: no {KIND_NOUNS[kind]} stacks were recorded, "
                                        f"so there is no {KIND_NOUNS[kind]} flame graph")
                continue
            if diff is None:
                result.graphs.extend(have[n] for n in sorted(have))
            if planned is not None:
                result.graphs.append(planned)
    return result


def _point_graph(fs: str, kind: str, n: int, runs: list[dict[str, Any]], flame_dir: Path,
                 claim: Callable[..., Path], stripped: StrippedStacks) -> Graph | None:
    """Write the stacks of one point (its runs at `n` threads) and plan its graph;
    None when it has none."""
    path = flame_dir / f"{safe_name(fs)}-{kind}-{n}threads.folded"
    if not any(run_folded(r, kind) for r in runs):
        return None
    path = claim(path, stamped=False)
    svg = claim(path.with_suffix(".svg"))
    point = write_point(path, runs, kind, stripped)
    if point.total <= 0:
        path.unlink()
        return None
    title, sub = _title(fs, kind, n, point.total, len(runs))
    return Graph(fs, kind, threads=n, folded=path, svg=svg, title=title, subtitle=sub,
                 total=point.total, lines=point.lines, repeats=len(runs),
                 annotated=point.annotated)


def _diff_graph(fs: str, kind: str, ends: tuple[int, int], have: dict[int, Graph],
                flame_dir: Path, claim: Callable[..., Path]) -> Graph:
    lo, hi = ends
    base = flame_dir / f"{safe_name(fs)}-{kind}-diff-{lo}to{hi}threads"
    g = Graph(fs, kind, diff=(lo, hi), folded=claim(base.with_suffix(".folded"), stamped=False),
              svg=claim(base.with_suffix(".svg")), total=have[hi].total, lines=have[hi].lines,
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


def _draw(inferno: Inferno, g: Graph, embed: bool = False) -> None:
    assert g.folded is not None and g.svg is not None   # planned graphs have both
    try:
        if g.diff:
            assert g.pair is not None                      # a differential graph has its pair
            before, after = g.pair
            assert after.folded is not None
            if before is None:
                fd, empty = tempfile.mkstemp(prefix=".empty-", suffix=".folded",
                                             dir=g.folded.parent)
                os.close(fd)
                try:
                    inferno.diff(Path(empty), after.folded, g.folded, normalize=False)
                finally:
                    os.unlink(empty)
            else:
                assert before.folded is not None
                inferno.diff(before.folded, after.folded, g.folded, normalize=True)
            # Differential graphs use inferno's own red/blue hues; the palette is ignored.
            inferno.render(g.folded, g.svg, title=g.title, subtitle=g.subtitle,
                           countname=UNITS[g.kind], minwidth=MINWIDTH_PCT)
        else:
            inferno.render(g.folded, g.svg, title=g.title, subtitle=g.subtitle,
                           countname=UNITS[g.kind], colors=_palette(g), minwidth=MINWIDTH_PCT)
    except (InfernoError, OSError, subprocess.TimeoutExpired) as exc:
        g.error = str(exc)
        if g.svg is not None and g.svg.exists():
            g.svg.unlink()
        g.svg = None
        return
    if embed:
        try:
            g.embedded = embedding(g.svg)
        except OSError:
            pass  # the page's writer reads it again and says why not


class Drawer:
    """Runs inferno for each graph as soon as it is submitted, a few processes at a time;
    with `embed`, each drawn graph is packed for the HTML page (embed.embedding) too."""

    def __init__(self, inferno: Inferno | None, jobs: int | None = None, embed: bool = False):
        self.inferno = inferno
        self.embed = embed
        self.pool = (ThreadPoolExecutor(max_workers=max(1, jobs or os.cpu_count() or 1))
                     if inferno else None)
        self.futures: list[Future] = []

    def submit(self, g: Graph) -> None:
        """Start drawing `g` (its .folded input, and a diff's two inputs, exist already)."""
        if self.inferno is None or self.pool is None:
            g.svg = None
        elif g.diff and self.inferno.diff_folded is None:
            g.svg, g.error = None, "inferno-diff-folded not found"
        else:
            self.futures.append(self.pool.submit(_draw, self.inferno, g, self.embed))

    def finish(self, flames: FlameSet) -> FlameSet:
        """Wait for every drawing; failures become notes."""
        for f in self.futures:
            f.result()
        if self.pool is not None:
            self.pool.shutdown()
        for g in flames.graphs:
            if g.error:
                flames.notes.append(f"{g.label}: flame graph not drawn: {g.error}")
        return flames


def draw(flames: FlameSet, inferno: Inferno | None, jobs: int | None = None) -> FlameSet:
    """Draw every planned graph of `flames` (in parallel) and wait for them."""
    drawer = Drawer(inferno, jobs)
    for g in flames.graphs:
        drawer.submit(g)
    return drawer.finish(flames)


def files_written(flames: FlameSet) -> list[Path]:
    """Every file the flame step left on disk."""
    out: list[Path] = []
    for g in flames.graphs:
        for p in (g.folded, g.svg):
            if p is not None and p.exists():
                out.append(p)
    return out

