"""From an inode-lock finding to the file a follow script watches, and the report's
``follow-<N>.bt`` copies: a device number from the recording's ``dev``, or a file of
this host by stat."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from ..analysis.inode_findings import InodeLockFinding, followed_findings
from ..errors import UsageError
from ..schema import ResultsDoc
from .follow_script import Target, follow_script

SYS_BLOCK = Path("/sys/class/block")


def parse_dev(dev: str) -> tuple[int, int]:
    """(major, minor) of the recorder's ``dev``: "MAJOR:MINOR" (run/host.py, dev_name,
    and the recorder's own), or a block device's name, resolved through
    /sys/class/block/NAME/dev on this host."""
    text = dev
    if ":" not in text:
        try:
            text = (SYS_BLOCK / dev / "dev").read_text().strip()
        except OSError:
            raise UsageError(f"device {dev!r}: not MAJOR:MINOR and not a block device "
                             "of this host") from None
    try:
        major, minor = (int(x) for x in text.split(":"))
    except ValueError:
        raise UsageError(f"device {dev!r}: expected MAJOR:MINOR") from None
    return major, minor


def finding_line(n: int, f: InodeLockFinding) -> str:
    """One numbered line of the findings list."""
    return (f"{n}  {f.path or '(path not recorded)'}  dev {f.dev}  ino {f.ino}  {f.kind}  "
            f"{f.share_text} of lock wait time ({f.count} waits)")


def _what(n: int, f: InodeLockFinding, source: str) -> str:
    return f"finding {n} of {source}: {f.kind}, {f.share_text} of lock wait time"


def target_of(n: int, f: InodeLockFinding, source: str | os.PathLike) -> Target:
    major, minor = parse_dev(f.dev)
    return Target(f.path, major, minor, f.ino, _what(n, f, str(source)))


def target_of_file(path: str, n: int, f: InodeLockFinding,
                   source: str | os.PathLike) -> Target:
    """The finding followed on `path` of this host: its dev and ino (stat)."""
    try:
        st = os.stat(path)
    except OSError as exc:
        raise UsageError(f"--file {path}: {exc.strerror}") from None
    return Target(os.path.abspath(path), os.major(st.st_dev), os.minor(st.st_dev),
                  st.st_ino, f"this host's copy; recorded as dev {f.dev} ino {f.ino}, "
                  + _what(n, f, str(source)))


def follow_name(n: int) -> str:
    return f"follow-{n}.bt"


def write_follow_scripts(doc: ResultsDoc, out_dir: Path, claim: Callable[[Path], Path],
                         source: str = "") -> list[dict[str, str]]:
    """``follow-<N>.bt`` in `out_dir` for each i_rwsem finding (`claim` may refuse a
    path); what the report lists: name, path, dev, ino, share. A finding whose device
    this host cannot name is listed without a script."""
    rows = []
    for n, f in enumerate(followed_findings(doc), 1):
        row = {"name": follow_name(n), "path": f.path or "(path not recorded)",
               "dev": f.dev, "ino": str(f.ino), "share": f.share_text, "written": ""}
        try:
            target = target_of(n, f, source or "results.json")
        except UsageError as exc:
            row["name"] = ""
            row["written"] = str(exc)
            rows.append(row)
            continue
        path = claim(out_dir / row["name"])
        tmp = path.with_name(f".{path.name}.tmp")
        tmp.write_text(follow_script(target, name=row["name"]))
        os.replace(tmp, path)
        rows.append(row)
    return rows
