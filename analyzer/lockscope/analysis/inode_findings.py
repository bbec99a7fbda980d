"""The inode locks a recording found threads waiting on, one finding per file and lock
kind, summed over the document's traced points (a sweep's runs, or an attach's window).

``lockscope follow`` and the report's ``follow-<N>.bt`` scripts read these: a finding
names the file by its ``dev`` and ``ino`` (and path), never by the recording's lock
address, which means nothing after the run.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..schema import ResultsDoc, traced_points
from .lockkinds import INODE_LOCK_KINDS

# The kinds a follow script can find again on any host from the inode alone: i_rwsem
# (XFS's IOLOCK is the VFS inode's i_rwsem: fs/xfs/xfs_inode.c, xfs_ilock).
FOLLOWED_KINDS = ("i_rwsem",)


@dataclass(frozen=True)
class InodeLockFinding:
    """Waits on one file's inode lock of one kind, over the whole recording."""

    path: str | None
    dev: str              # "MAJOR:MINOR" of the filesystem, as the recorder writes it
    ino: int
    kind: str
    count: int
    total_ns: int
    share: float          # of the wait time on every lock the recording saw

    @property
    def share_text(self) -> str:
        return f"{100 * self.share:.1f}%"


def inode_lock_findings(doc: ResultsDoc, kinds: tuple[str, ...] = INODE_LOCK_KINDS
                        ) -> list[InodeLockFinding]:
    """The findings of `kinds` with a known dev and ino, most wait time first."""
    paths: dict[tuple[str, int, str], str | None] = {}
    sums: dict[tuple[str, int, str], tuple[int, int]] = {}
    all_ns = 0
    for point in traced_points(doc):
        for lock in (point.get("trace") or {}).get("locks") or []:
            ns = int(lock.get("total_ns") or 0)
            all_ns += ns
            dev, ino, kind = lock.get("dev"), lock.get("ino"), lock.get("kind")
            if kind not in kinds or not dev or ino is None:
                continue
            key = (str(dev), int(ino), str(kind))
            paths[key] = paths.get(key) or lock.get("path")
            count, total = sums.get(key, (0, 0))
            sums[key] = (count + int(lock.get("count") or 0), total + ns)
    found = [InodeLockFinding(paths[key], key[0], key[1], key[2], count, ns,
                              ns / all_ns if all_ns else 0.0)
             for key, (count, ns) in sums.items() if count]
    return sorted(found, key=lambda f: (-f.total_ns, f.dev, f.ino, f.kind))


def followed_findings(doc: ResultsDoc) -> list[InodeLockFinding]:
    """The findings a follow script can watch (numbered from 1 in this order)."""
    return inode_lock_findings(doc, FOLLOWED_KINDS)
