"""Read and write results.json, the one file every command after recording reads."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import cast

from .errors import LockscopeError, UsageError
from .schema import READABLE_SCHEMAS, SCHEMA, ResultsDoc, window_of_run

__all__ = ["SCHEMA", "load_results", "save_results"]


def load_results(path: str | os.PathLike[str]) -> ResultsDoc:
    """Load and check a results.json; every failure is one line naming the file."""
    p = Path(path)
    if p.is_dir():
        p = p / "results.json"
    try:
        text = p.read_text()
    except FileNotFoundError:
        raise UsageError(f"{p}: no such file") from None
    except OSError as exc:
        raise UsageError(f"{p}: cannot read: {exc.strerror}") from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise LockscopeError(f"{p}: not valid JSON (truncated or damaged? {exc.msg} at "
                             f"line {exc.lineno})") from None
    if not isinstance(doc, dict) or "schema" not in doc:
        raise LockscopeError(f"{p}: not a lockscope results file (no 'schema' key)")
    if doc["schema"] not in READABLE_SCHEMAS:
        raise LockscopeError(f"{p}: schema '{doc['schema']}' is not supported "
                             f"(this lockscope reads {', '.join(map(repr, READABLE_SCHEMAS))})")
    doc = _upgrade(doc)
    for key in ("host", "window" if "window" in doc else "runs"):
        if key not in doc:
            raise LockscopeError(f"{p}: incomplete results file: missing '{key}'")
    return cast(ResultsDoc, doc)


def _upgrade(doc: dict) -> dict:
    """A lockscope/1 document in today's shape: an attach's window was its one run."""
    if doc["schema"] == "lockscope/1" and doc.get("kind") == "attach" and "runs" in doc:
        runs = doc.pop("runs") or [{}]
        doc["window"] = window_of_run(runs[0])
    doc["schema"] = SCHEMA
    return doc


def save_results(path: str | os.PathLike[str], doc: ResultsDoc) -> None:
    """Write atomically (temp file + rename), so a crash never leaves half a file."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".results-", suffix=".json", dir=p.parent)
    try:
        with os.fdopen(fd, "w") as fh:
            json.dump(doc, fh, indent=1, sort_keys=False)
            fh.write("\n")
        os.replace(tmp, p)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
