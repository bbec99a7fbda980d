"""Basic auth against the web config's bcrypt hashes, with the CPU it may take bounded.

bcrypt is slow by design (about 70 ms at cost 10), so a client sending wrong passwords
in a loop could keep a CPU busy. Checks run one at a time, and only while the time spent
in them over the last ``WINDOW_S`` stays under ``CPU_SHARE`` of one CPU; past that a
request is answered 429 without a check. A password that passed is remembered (by a
salted digest, for ``REMEMBER_S``), so a scraper that authenticated costs nothing after
its first scrape and is never held up by someone else's wrong guesses, as the
exporter-toolkit caches its checks too.
"""

from __future__ import annotations

import base64
import hashlib
import os
import threading
import time
from collections import deque

import bcrypt

WINDOW_S = 10.0
CPU_SHARE = 0.10        # of one CPU, over WINDOW_S
REMEMBER_S = 3600.0
REMEMBERED_MAX = 64


class BasicAuth:
    """``check(header)`` -> "ok", "denied" or "busy" (the CPU bound is reached)."""

    def __init__(self, users: dict[str, bytes]) -> None:
        self.users = users
        self._salt = os.urandom(16)
        self._lock = threading.Lock()          # one bcrypt check at a time
        self._spent: deque[tuple[float, float]] = deque()   # (end, seconds) per check
        self._passed: dict[bytes, float] = {}  # digest -> when it passed
        self.checks = 0
        self.refused_busy = 0

    def _key(self, user: str, password: bytes) -> bytes:
        return hashlib.sha256(self._salt + user.encode() + b"\0" + password
                              + self.users.get(user, b"")).digest()

    def _spent_recently(self, now: float) -> float:
        while self._spent and self._spent[0][0] < now - WINDOW_S:
            self._spent.popleft()
        return sum(s for _, s in self._spent)

    def check(self, header: str | None) -> str:
        if not self.users:
            return "ok"
        if not header or not header.startswith("Basic "):
            return "denied"
        try:
            user, sep, pw = base64.b64decode(header[6:].strip(), validate=True) \
                .decode("utf-8").partition(":")
        except (ValueError, UnicodeDecodeError):
            return "denied"
        if not sep:
            return "denied"
        password = pw.encode()
        key = self._key(user, password)
        now = time.monotonic()
        seen = self._passed.get(key)
        if seen is not None and now - seen < REMEMBER_S:
            return "ok"
        if not self._lock.acquire(blocking=False):
            return "busy"
        try:
            if self._spent_recently(now) >= CPU_SHARE * WINDOW_S:
                self.refused_busy += 1
                return "busy"
            start = time.thread_time()
            hashed = self.users.get(user)
            # an unknown user costs the same check, so a name cannot be probed for by time
            ok = bcrypt.checkpw(password, hashed or _dummy_hash()) and hashed is not None
            self._spent.append((time.monotonic(), time.thread_time() - start))
            self.checks += 1
        finally:
            self._lock.release()
        if ok:
            if len(self._passed) >= REMEMBERED_MAX:
                self._passed.pop(next(iter(self._passed)))
            self._passed[key] = now
            return "ok"
        return "denied"


_DUMMY: list[bytes] = []


def _dummy_hash() -> bytes:
    if not _DUMMY:
        _DUMMY.append(bcrypt.hashpw(b"lockscope", bcrypt.gensalt(10)))
    return _DUMMY[0]
