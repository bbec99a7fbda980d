"""The share of a file's writes each locking rule concerns, from its write classes.

The recorder counts classes per file, not their combinations (dio[] in
docs/recorder-json.md), so a rule about two classes (unaligned *and* onto unwritten
extents) takes the smaller of the two shares: the most writes that can have both.
"""

from __future__ import annotations

from ..schema import ClassKey, WriteClasses
from .rule_types import FileFacts

# Below this fraction of a file's writes, a class does not explain contention.
MIN_FRACTION = 0.05


def frac(classes: WriteClasses, key: ClassKey) -> float:
    total = classes.get("writes", 0)
    return classes.get(key, 0) / total if total else 0.0


def _of(c: WriteClasses) -> int:
    return c.get("writes", 0)


def extending(c: WriteClasses, facts: FileFacts) -> tuple[float, str]:
    f = frac(c, "extending")
    return f, f"{f:.0%} of {_of(c)} DIO writes extended i_size (pos + count > isize)"


def unaligned_extending(c: WriteClasses, facts: FileFacts) -> tuple[float, str]:
    f = min(frac(c, "unaligned"), frac(c, "extending"))
    return f, (f"{frac(c, 'unaligned'):.0%} of {_of(c)} DIO writes were unaligned and "
               f"{frac(c, 'extending'):.0%} extended i_size")


def holes(c: WriteClasses, facts: FileFacts) -> tuple[float, str]:
    f = frac(c, "hole")
    return f, f"{f:.0%} of {_of(c)} DIO writes mapped a hole (not an overwrite)"


def unwritten(c: WriteClasses, facts: FileFacts) -> tuple[float, str]:
    f = frac(c, "unwritten")
    return f, f"{f:.0%} of {_of(c)} DIO writes landed on unwritten (preallocated) extents"


def unaligned(c: WriteClasses, facts: FileFacts) -> tuple[float, str]:
    f = frac(c, "unaligned")
    return f, (f"{f:.0%} of {_of(c)} DIO writes were unaligned to the "
               f"{c.get('block_size') or 'fs'}-byte block")


def unaligned_unwritten(c: WriteClasses, facts: FileFacts) -> tuple[float, str]:
    un, uw = frac(c, "unaligned"), frac(c, "unwritten")
    return min(un, uw), (f"{un:.0%} of DIO writes were unaligned to the "
                         f"{c.get('block_size') or 'fs'}-byte block and {uw:.0%} landed on "
                         "unwritten extents")


def unaligned_needs_block(c: WriteClasses, facts: FileFacts) -> tuple[float, str]:
    un, fresh = frac(c, "unaligned"), frac(c, "hole") + frac(c, "unwritten")
    return min(un, fresh), (f"{un:.0%} of {_of(c)} DIO writes were unaligned to the fs block "
                            f"and {fresh:.0%} found a hole or unwritten extent")


def unaligned_overwrites(c: WriteClasses) -> float:
    """Unaligned writes onto written blocks: what ext4 6.5 and XFS 5.12 run shared."""
    return min(frac(c, "unaligned"), frac(c, "mapped"))


def aligned_unwritten(c: WriteClasses) -> float:
    """Aligned writes onto unwritten extents: what ext4 6.3 runs shared."""
    return min(frac(c, "aligned"), frac(c, "unwritten"))


def buffered(c: WriteClasses, facts: FileFacts) -> tuple[float, str]:
    total = c.get("writes", 0) + c.get("buffered_writes", 0)
    f = c.get("buffered_writes", 0) / total if total else 0.0
    return f, f"{c.get('buffered_writes', 0)} buffered writes ({f:.0%} of writes to the file)"


def not_nosec(c: WriteClasses, facts: FileFacts) -> tuple[float, str]:
    why = []
    if facts.get("setuid") or facts.get("setgid"):
        why.append("setuid/setgid bits")
    if facts.get("security_xattrs"):
        why.append("security xattrs " + ", ".join(facts["security_xattrs"]))
    return (1.0 if why else 0.0), "the file has " + " and ".join(why) if why else ""


def dsync(c: WriteClasses, facts: FileFacts) -> tuple[float, str]:
    f = frac(c, "dsync")
    jshare = facts.get("journal_share", 0.0)
    hit = f if (f >= MIN_FRACTION and jshare >= 0.02) else 0.0
    return hit, (f"{f:.0%} of DIO writes were O_DSYNC/O_SYNC and {jshare:.0%} of thread time "
                 "went to the journal")
