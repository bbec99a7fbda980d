"""The kind of each system call the recorder counted (write, sync, sync_range, received,
sent). Documents carry it on every ``syscalls`` entry (``kind``), so an analysis needs no
recorder binary; documents written before that name only the call, and for them the
recorder's own list is asked (``lockscope-record --list-facts``)."""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from typing import Any


@functools.cache
def _kinds_of_names() -> dict[str, str]:
    from ..binaries import recorder_facts

    return {str(name): kind for kind, names in recorder_facts()["syscalls"].items()
            for name in names}


def syscall_kind(entry: Mapping[str, Any]) -> str | None:
    """An entry's kind, as the recorder wrote it (or, for an older document, its list)."""
    kind = entry.get("kind")
    if kind:
        return str(kind)
    return _kinds_of_names().get(str(entry.get("name")))


def calls_of_kind(entries: Iterable[Mapping[str, Any]], kind: str) -> int:
    """The calls counted of one kind."""
    return sum(int(e.get("count", 0)) for e in entries
               if isinstance(e, Mapping) and "name" in e and syscall_kind(e) == kind)
