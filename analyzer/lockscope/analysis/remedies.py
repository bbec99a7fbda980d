"""A verdict's remedies as transformations of the workload, for ``sweep --verify``.

Each locking rule names, next to its prose remedy, a fix (rule_types.Holds.fix): a
change of the engine's job options (lockscope-load and fio job files share them) that
removes the write pattern the rule makes exclusive. A remedy without one (another
filesystem, a faster device, the file's security bits) is "not mechanically
applicable" and the report says so.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..schema import Cause, Verdict
from ..sizes import parse_size
from .rule_judge import RULES
from .rules import GENERAL_REMEDIES

# fdatasync after this many writes: the batch that replaces O_DSYNC on every write
SYNC_BATCH = 32
FS_BLOCK = 4096          # the alignment "align the writes to the fs block size" needs
MIN_FILE = 1 << 20       # a file per thread is never smaller than this


@dataclass(frozen=True)
class Fix:
    """One mechanical remedy: ``apply(job, top_threads)`` returns the remedied job
    options, or a string saying why the job does not need it."""

    name: str
    title: str
    apply: Callable[[dict[str, Any], int], dict[str, Any] | str]


def _written(job: dict[str, Any], top: int) -> dict[str, Any] | str:
    layout = job.get("layout", "auto")
    if layout == "written":
        return "the file is already written before the timed phase (layout=written)"
    if layout == "append":
        return "the job appends (layout=append): the size-the-file fix applies instead"
    return {**job, "layout": "written"}


def _presize(job: dict[str, Any], top: int) -> dict[str, Any] | str:
    if job.get("layout") != "append":
        return "the job does not append: its file is sized before the timed phase"
    return {**job, "layout": "written"}


def _per_thread(job: dict[str, Any], top: int) -> dict[str, Any] | str:
    if "nrfiles" in job:
        return "the job already gives each thread its own file (nrfiles)"
    # the same region in all, split between the threads of the highest count
    bs = parse_size(str(job.get("bs", "4k")))
    each = max(parse_size(str(job.get("size", "1g"))) // top, MIN_FILE)
    return {**job, "nrfiles": "1", "size": str(each - each % bs if each >= bs else bs)}


def _align(job: dict[str, Any], top: int) -> dict[str, Any] | str:
    out = dict(job)
    out.pop("unaligned", None)
    bs = parse_size(str(job.get("bs", "4k")))
    if bs % FS_BLOCK:
        out["bs"] = str((bs // FS_BLOCK + 1) * FS_BLOCK)
    return out if out != job else f"the writes are already {FS_BLOCK}-byte aligned"


def _batched(job: dict[str, Any], top: int) -> dict[str, Any] | str:
    out = dict(job)
    per_write = out.pop("dsync", "0") not in ("0", "false")
    if str(out.get("sync", "none")) in ("sync", "dsync", "1"):
        out.pop("sync")
        per_write = True
    if not per_write:
        return "the job does not open its files O_DSYNC/O_SYNC"
    out["fdatasync"] = str(SYNC_BATCH)
    return out


def _direct(job: dict[str, Any], top: int) -> dict[str, Any] | str:
    if str(job.get("direct", "0")) in ("1", "true") and \
            str(job.get("buffered", "0")) in ("0", "false"):
        return "the job already writes with O_DIRECT"
    out = {k: v for k, v in job.items() if k != "buffered"}
    out["direct"] = "1"
    return out


FIXES = {f.name: f for f in (
    Fix("written_layout", "written layout (the file written once before the timed writes)",
        _written),
    Fix("presize", "the file sized before the timed writes (no appends)", _presize),
    Fix("file_per_thread", "a file per thread", _per_thread),
    Fix("align", f"writes aligned to {FS_BLOCK} bytes", _align),
    Fix("batch_fdatasync", f"fdatasync every {SYNC_BATCH} writes instead of O_DSYNC",
        _batched),
    Fix("direct_io", "O_DIRECT writes instead of buffered", _direct),
)}

# the remedies every lock verdict of a filesystem adds (rules.GENERAL_REMEDIES)
GENERAL_FIXES = {
    "use a file per thread, so threads do not share one i_rwsem": "file_per_thread",
    "use a file per thread, so threads do not share one inode lock": "file_per_thread",
}
assert set(GENERAL_FIXES) <= {r for rs in GENERAL_REMEDIES.values() for r in rs}


def fix_of_cause(fstype: str, cause: Cause) -> str:
    """The fix of the rule range a cause came from ("" when it has none)."""
    for rule in RULES:
        if rule.fstype != fstype:
            continue
        for h in rule.ranges:
            if h.rule == cause["rule"] and h.source == cause["kernel_source"]:
                return h.fix
    return ""


def verdict_fixes(fstype: str, verdict: Verdict, causes: list[Cause]) -> list[tuple[str, str]]:
    """Each remedy of the verdict with its fix name ("" when none), in the verdict's
    order."""
    by_remedy = {c["remedy"]: fix_of_cause(fstype, c) for c in causes}
    return [(r, by_remedy.get(r) or GENERAL_FIXES.get(r, "")) for r in verdict["remedies"]]
