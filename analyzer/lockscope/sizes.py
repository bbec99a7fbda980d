"""fio-style sizes: 4k, 1g, 512m (powers of 1024, as fio reads them by default)."""

from __future__ import annotations

import re

from .errors import UsageError

_UNITS = {"": 1, "b": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(?:i?b)?\s*$", re.IGNORECASE)


def parse_size(text: str) -> int:
    m = _SIZE.match(str(text))
    if not m:
        raise UsageError(f"'{text}' is not a size (e.g. 4k, 512m, 4g)")
    return int(float(m.group(1)) * _UNITS[m.group(2).lower()])

