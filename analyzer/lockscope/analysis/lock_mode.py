"""The measured inode-lock mode of a file's DIO write classes.

The recorder reads, at each DIO write's iomap_dio_rw_begin, whether the writer held
i_rwsem exclusive or shared, and counts both per class (``dio[].<class>.exclusive`` /
``shared``, docs/recorder-json.md). A class without them was not measured: its share
is None, never 0.
"""

from __future__ import annotations

from typing import cast

from ..schema import ClassMode, Counted, DioEntry, ModeShare, WriteClasses

# The write classes the recorder measures the mode of ("writes": every DIO write), as
# its --list-facts says (dio_mode_classes; tests/kernel/recorder/test_record_facts.py).
MODE_CLASSES = ("writes", "aligned", "unaligned", "extending", "hole", "unwritten",
                "mapped", "dsync", "allocating", "aio")


def entry_modes(entry: DioEntry) -> dict[str, ClassMode]:
    """The measured classes of one recorder dio[] entry (the mode, the flags, or both)."""
    out: dict[str, ClassMode] = {}
    for key in MODE_CLASSES:
        value = entry.get(key)
        if isinstance(value, dict) and ("exclusive" in value or "force_wait" in value):
            counted = cast(Counted, value)
            out[key] = {"exclusive": int(counted.get("exclusive", 0)),
                        "shared": int(counted.get("shared", 0)),
                        "force_wait": (int(counted["force_wait"]) if "force_wait" in counted
                                       else None)}
    return out


def add_modes(total: dict[str, ClassMode], more: dict[str, ClassMode]) -> None:
    """Sums `more` into `total` (a file over several runs)."""
    for key, m in more.items():
        t = total.setdefault(key, {"exclusive": 0, "shared": 0, "force_wait": None})
        t["exclusive"] += m["exclusive"]
        t["shared"] += m["shared"]
        if m["force_wait"] is not None:
            t["force_wait"] = (t["force_wait"] or 0) + m["force_wait"]


def mode_share(classes: WriteClasses, key: str) -> ModeShare:
    """The measured mode of class `key` ("writes": all DIO writes) of one file."""
    writes = int(classes.get(key, 0) or 0)  # type: ignore[call-overload]  # a class key
    m = (classes.get("modes") or {}).get(key)
    measured = m["exclusive"] + m["shared"] if m else 0
    force = m["force_wait"] if m else None
    return {"class": key, "writes": writes, "measured": measured,
            "exclusive": m["exclusive"] if m else 0,
            "exclusive_share": round(m["exclusive"] / measured, 4) if m and measured else None,
            "force_wait_share": (round(force / writes, 4)
                                 if force is not None and writes else None)}


def writes_of(key: str) -> str:
    """'hole writes', or 'DIO writes' for all of them."""
    return "DIO writes" if key == "writes" else f"{key} writes"


def mode_text(share: ModeShare) -> str:
    """'97% of the 12112 measured hole writes ran with i_rwsem exclusive', or 'not measured'."""
    if share["exclusive_share"] is None:
        # the second sign: ext4 and XFS issue exclusive unaligned or extending writes
        # with IOMAP_DIO_FORCE_WAIT (ext4_dio_write_checks, xfs_file_dio_write_unaligned)
        force = share["force_wait_share"]
        return (f"the inode lock's mode of the {share['writes']} {writes_of(share['class'])} "
                "was not measured" + (f"; {force:.0%} of them were issued with "
                                      "IOMAP_DIO_FORCE_WAIT, which ext4 and XFS set for "
                                      "exclusive unaligned or extending writes"
                                      if force is not None else ""))
    return (f"{share['exclusive_share']:.0%} of the {share['measured']} measured "
            f"{writes_of(share['class'])} ran with i_rwsem exclusive")
