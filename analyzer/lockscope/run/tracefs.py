"""tracefs: find it, or mount it when it is missing."""

from __future__ import annotations

import os
import subprocess

TRACEFS = "/sys/kernel/tracing"


def ensure_tracefs() -> tuple[bool, str]:
    """Mount tracefs at /sys/kernel/tracing when it is missing (needs root)."""
    if os.path.isdir(os.path.join(TRACEFS, "events")):
        return True, f"mounted at {TRACEFS}"
    res = subprocess.run(["mount", "-t", "tracefs", "nodev", TRACEFS],
                         capture_output=True, text=True)
    if res.returncode == 0 and os.path.isdir(os.path.join(TRACEFS, "events")):
        return True, f"was not mounted: mounted it at {TRACEFS}"
    return False, f"not mounted, and mounting failed: {res.stderr.strip() or 'unknown error'}"
