"""The recorder's own verdict on each probe group: ``lockscope-record --list-features``
loads and attaches every group and says which are usable. Loading can take minutes on a
slow machine (every refused attach kind is a verifier run), so the listing runs under a
generous timeout with progress on stderr, and a listing that fails says why: it never
reads as an empty list."""

from __future__ import annotations

import json
import subprocess
import sys
import time

from ..binaries import find_binary
from ..errors import LockscopeError

# Probe groups without which the main job (a sweep or attach verdict) cannot run: doctor's
# required lines and the matrix's core_groups check. (The budget's own set, the groups it
# never sheds alone, is the recorder's: kept_by_budget in --list-features.)
CORE_GROUPS = ("lock", "dio", "sched", "syscalls", "block")
QUIET_S = 3.0       # a listing done this quickly prints no progress
PROGRESS_S = 15.0   # then a line every this many seconds


class ListingFailed(Exception):
    """The listing did not give groups; str() is the reason, one line."""


def list_groups(timeout: float, progress=sys.stderr) -> list[dict]:
    """The groups of ``--list-features``; raises ListingFailed with the reason."""
    try:
        exe = find_binary("lockscope-record")
    except LockscopeError as e:
        raise ListingFailed(f"lockscope-record is not built ({e})") from None
    cmd = [exe, "--list-features"]
    try:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    except OSError as e:
        raise ListingFailed(f"cannot run {exe}: {e.strerror}") from None
    start = time.monotonic()
    said = False
    while True:
        waited = time.monotonic() - start
        step = QUIET_S if waited < QUIET_S else PROGRESS_S
        try:
            out, err = proc.communicate(timeout=max(0.1, min(step, timeout - waited)))
            break
        except subprocess.TimeoutExpired:
            waited = time.monotonic() - start
            if waited >= timeout:
                proc.kill()
                proc.communicate()
                raise ListingFailed(
                    f"lockscope-record --list-features did not finish in {timeout:g} s "
                    "(raise --list-timeout on a slow machine)") from None
            if progress is not None:
                if not said:
                    print(f"lockscope doctor: loading every probe group (lockscope-record "
                          f"--list-features, up to {timeout:g} s) ...", file=progress)
                    said = True
                else:
                    print(f"lockscope doctor: still loading probe groups ({waited:.0f} s)",
                          file=progress)
                progress.flush()
    try:
        groups = json.loads(out).get("groups")
    except (ValueError, AttributeError):
        groups = None
    if not isinstance(groups, list):
        last = (err.strip().splitlines() or ["no output"])[-1]
        raise ListingFailed(f"lockscope-record --list-features exited {proc.returncode} "
                            f"without a listing: {last}")
    return [g for g in groups if isinstance(g, dict) and g.get("name")]


def fallback_note(g: dict) -> str:
    """How an enabled group got on when not through its first choice, or ''. A group
    passed over a kind (its "reason") when it loaded through a later one."""
    notes = []
    if g.get("alternative"):
        notes.append(f"through the alternative {g['alternative']}")
    if g.get("reason"):
        notes.append(f"through the fallback {g.get('attach')} (passed over: {g['reason']})")
    needs, used = g.get("needs") or [], g.get("tracepoints") or []
    if g.get("name") != "syscalls" and used and set(used) != set(needs):
        notes.append(f"attached to {', '.join(used)} in place of {', '.join(needs)}")
    return "; ".join(notes)
