"""How long each phase of a slow fixture took, printed: pytest -rA shows a passed test's
setup output, and an emulated guest's log then says where its time went."""

from __future__ import annotations

import time


class PhaseClock:
    def __init__(self, what: str) -> None:
        self.what = what
        self.last = time.monotonic()

    def __call__(self, phase: str) -> None:
        now = time.monotonic()
        print(f"{self.what}: {phase}: {now - self.last:.1f} s", flush=True)
        self.last = now
