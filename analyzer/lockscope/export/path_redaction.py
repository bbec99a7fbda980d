"""``--redact-paths-outside DIR``: file paths outside the given directories never leave the
host. Applied by the recording side before anything reaches the exporter process, so the
process that faces the network never holds them: such a path becomes
``[redacted dev D ino N]`` (one series per file still, none of its name)."""

from __future__ import annotations

import os
from typing import Any


class PathRedactor:
    def __init__(self, allowed: list[str]) -> None:
        self.allowed = [os.path.join(os.path.realpath(d), "") for d in allowed]

    def keeps(self, path: str) -> bool:
        return any(path.startswith(d) for d in self.allowed)

    def _one(self, path: str, where: dict[str, Any]) -> str:
        if not path.startswith("/") or self.keeps(path):
            return path
        if where.get("ino") is not None:
            return f"[redacted dev {where.get('dev')} ino {where.get('ino')}]"
        return "[redacted]"

    def __call__(self, obj: Any) -> Any:
        """A copy of ``obj`` with every ``path`` value outside the directories redacted
        (the input is not changed)."""
        if not self.allowed:
            return obj
        if isinstance(obj, dict):
            out = {k: self(v) for k, v in obj.items()}
            for key in ("path", "file"):
                if isinstance(obj.get(key), str):
                    out[key] = self._one(obj[key], obj)
            return out
        if isinstance(obj, list):
            return [self(v) for v in obj]
        return obj

    def keys(self, mapping: dict[str, Any]) -> dict[str, Any]:
        """A path-keyed mapping (file roles) with the keys outside dropped."""
        if not self.allowed:
            return mapping
        return {k: v for k, v in mapping.items() if self.keeps(k)}
