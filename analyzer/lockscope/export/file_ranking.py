"""Bounded file labels: the top N files by recent time spent on them, the rest `other`.

Each file's score is the time the traced threads spent on it (lock waits, DIO, syncs),
decayed with a half-life (default 5 minutes). A file gets its own label while there is
room; once N files hold one, a new file takes the place of the lowest-scored one only
when its own last interval outscores it. The evicted file's counters are folded into
`other` by the caller, so every exported counter stays monotonic and the sum over
files is unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping

OTHER = "other"


class FileRanking:
    """Which files have their own label."""

    def __init__(self, top: int = 50, half_life_s: float = 300.0) -> None:
        if top < 1:
            raise ValueError("top files must be at least 1")
        self.top = top
        self.half_life_s = half_life_s
        self.scores: dict[str, float] = {}

    def label(self, key: str) -> str:
        """The file label a key's figures go under: itself if ranked, else `other`;
        "" (no file) stays ""."""
        if not key:
            return ""
        return key if key in self.scores else OTHER

    def rename(self, old: str, new: str) -> None:
        """The same file under a new key (its path became known)."""
        if old in self.scores:
            self.scores[new] = self.scores.get(new, 0.0) + self.scores.pop(old)

    def update(self, activity: Mapping[str, float], seconds: float) -> list[str]:
        """Decay by ``seconds``, add this interval's activity, admit newcomers;
        returns the keys evicted (their counters go to `other`)."""
        decay = 0.5 ** (max(seconds, 0.0) / self.half_life_s)
        for k in self.scores:
            self.scores[k] *= decay
        evicted: list[str] = []
        for k, v in sorted(activity.items(), key=lambda kv: -kv[1]):
            if not k or k == OTHER:
                continue
            if k in self.scores:
                self.scores[k] += v
                continue
            if len(self.scores) < self.top:
                self.scores[k] = v
                continue
            low = min(self.scores, key=lambda f: self.scores[f])
            if v > self.scores[low]:
                del self.scores[low]
                evicted.append(low)
                self.scores[k] = v
        return evicted
