"""Why an inode lock was taken exclusive: DIO write classes matched against each
filesystem's locking rules for the recorded kernel. Every rule cites the kernel code it
rests on in the kernel range it holds for, and the commit that made it so; the tables
are rules_ext4.py and rules_xfs.py, the history docs/kernel-locking.md. Which range
applies is the kernel version's call unless the recorder measured the writes' lock
mode, which wins (rule_judge.py).
"""

from __future__ import annotations

from ..schema import Cause, WriteClasses
from .kernel_release import KernelVersion
from .rule_judge import RULES, Judgment, judge, kernel_rules
from .rule_types import FileFacts
from .write_shares import MIN_FRACTION

__all__ = ["GENERAL_REMEDIES", "MIN_FRACTION", "RULES", "FileFacts", "Judgment", "judge",
           "kernel_rules", "match_causes"]

GENERAL_REMEDIES = {
    "ext4": ["use a file per thread, so threads do not share one i_rwsem",
             "XFS issues aligned DIO writes, allocating or not, under a shared IOLOCK"],
    "xfs": ["use a file per thread, so threads do not share one inode lock"],
}


def match_causes(fstype: str, classes: WriteClasses, facts: FileFacts,
                 min_fraction: float = MIN_FRACTION,
                 version: KernelVersion | None = None) -> list[Cause]:
    """The rules that fire for one file's write classes, strongest first, on kernel
    `version` (None: the newest rules).

    ``min_fraction``: the share of writes a class needs to count as a cause."""
    return judge(fstype, classes, facts, version, min_fraction).causes
