"""The shape of a locking rule: what takes an inode lock exclusive, on which kernels.

A ``Rule`` is one filesystem's answer to one question (does a write past i_size take
the lock exclusive? an unaligned one?), as a series of ``Holds``: the answer over one
kernel range, with the commit that made it so and the source it rests on in that range.
The tables are analysis/rules_ext4.py and analysis/rules_xfs.py; docs/kernel-locking.md
gives the same rules with their history.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypedDict

from ..schema import WriteClasses
from .kernel_release import KernelVersion, version_text


class FileFacts(TypedDict, total=False):
    """What the rules know of a file besides its writes (runs[].files[] and the points)."""

    setuid: bool
    setgid: bool
    security_xattrs: list[str]
    journal_share: float    # the largest share of thread time in the journal, any point


# (classes, facts) -> (fraction of the file's writes the rule makes exclusive, evidence)
Share = Callable[[WriteClasses, FileFacts], tuple[float, str]]


@dataclass(frozen=True)
class Holds:
    """One rule over the kernels [since, until): None is open-ended."""

    since: KernelVersion | None
    until: KernelVersion | None
    commit: str             # the commit that made kernels behave so from `since`
    source: str             # file: function() as named in that range
    reason: str | None      # None: nothing in this range takes the lock exclusive
    rule: str
    share: Share | None
    remedy: str = ""
    # the remedy as a transformation of the workload (analysis/remedies.py FIXES), or ""
    # when it cannot be applied mechanically (sweep --verify says so)
    fix: str = ""
    # what a later kernel does instead, and the share of writes it relieves
    later: str = ""
    relieved: Callable[[WriteClasses], float] | None = None

    def covers(self, version: KernelVersion) -> bool:
        return ((self.since is None or version >= self.since)
                and (self.until is None or version < self.until))

    def range_text(self) -> str:
        if self.since and self.until:
            return f">= {version_text(self.since)}, < {version_text(self.until)}"
        if self.until:
            return f"< {version_text(self.until)}"
        return f">= {version_text(self.since)}" if self.since else "all kernels"


@dataclass(frozen=True)
class Rule:
    """One filesystem's rule for one kind of write, over kernel ranges (oldest first)."""

    fstype: str
    write_class: str | None  # the DIO class whose measured lock mode tests it (None: none)
    about: str               # "unaligned overwrites of written blocks": for the notes
    ranges: tuple[Holds, ...]

    def newest(self) -> Holds:
        return self.ranges[-1]

    def holds_for(self, version: KernelVersion | None) -> Holds:
        """The range's rule; a kernel older than the oldest range gets the oldest."""
        if version is None:
            return self.newest()
        return next((h for h in self.ranges if h.covers(version)), self.ranges[0])
