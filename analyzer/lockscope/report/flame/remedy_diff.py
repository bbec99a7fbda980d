"""``sweep --verify``'s differential flame graph: the off-CPU time of the sweep's highest
thread count against the remedied rerun's, drawn by inferno-diff-folded and
inferno-flamegraph (red: a larger share after the remedy, blue: a smaller one)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .folded import UNITS, write_point
from .inferno import INSTALL, InfernoError, find_inferno

KIND = "offcpu"


def remedy_diff(before: list[dict[str, Any]], after: list[dict[str, Any]], out: Path,
                title: str) -> dict[str, Any]:
    """Write ``out``/offcpu-{before,after,diff}.folded and the diff's SVG; returns
    ``{"folded", "svg", "error"}`` (paths as strings, None where not written)."""
    out.mkdir(parents=True, exist_ok=True)
    b, a = out / f"{KIND}-before.folded", out / f"{KIND}-after.folded"
    diff, svg = out / f"{KIND}-diff.folded", out / f"{KIND}-diff.svg"
    if write_point(b, before, KIND).total <= 0 or write_point(a, after, KIND).total <= 0:
        return {"folded": None, "svg": None,
                "error": "no off-CPU stacks recorded before or after the remedy"}
    inferno = find_inferno()
    if inferno is None or inferno.diff_folded is None:
        return {"folded": None, "svg": None, "error": "inferno-diff-folded not found "
                f"(install it with `{INSTALL}`); the two profiles are {b.name}, {a.name}"}
    try:
        inferno.diff(b, a, diff, normalize=True)
        inferno.render(diff, svg, title=title, countname=UNITS[KIND], minwidth=0.05,
                       subtitle="differential, both profiles normalized to equal totals: "
                       "red = larger share after the remedy, blue = smaller; width = after")
    except (InfernoError, OSError) as exc:
        return {"folded": str(diff) if diff.exists() else None, "svg": None,
                "error": str(exc)}
    return {"folded": str(diff), "svg": str(svg), "error": None}
