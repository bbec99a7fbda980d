"""The recorder's measured i_rwsem mode of DIO writes (dio[].<class>.exclusive/shared),
against an independent route and against the locking rules of the running kernel.

The independent route is the lock's own contention records: writers that fill holes
take i_rwsem exclusive on every kernel (fs/ext4/file.c, ext4_dio_write_checks), so the
file's lock waits include writers (down_write: LCB_F_WRITE) and find it writer-held;
aligned overwrites of written blocks keep it shared, so no writer ever waits on it.

The matrix tests (test_the_running_kernel_follows_its_rule) derive what they expect
from the kernel they run on: whether a kernel has a shared-lock path for a pattern
cannot be detected, so its version picks the rule (docs/kernel-locking.md), and the
measured mode, the analysis's reason and the source it cites must all agree with it.

Every case is one job of one engine run, traced by one recorder: each writes its own
file, and what is checked is per file.
"""

from __future__ import annotations

import platform

import pytest

from lockscope.analysis.dio import file_classes
from lockscope.analysis.kernel_release import parse_release
from lockscope.analysis.lock_mode import mode_share
from lockscope.analysis.rules import RULES, judge

from conftest import not_here
from dio_cases import DioCase, record_cases

pytestmark = pytest.mark.kernel

KERNEL = parse_release(platform.release())


def preempt_rt() -> bool:
    """The kernel is PREEMPT_RT (/sys/kernel/realtime), whose rw_semaphore has no count
    or owner word to read the mode from."""
    try:
        return open("/sys/kernel/realtime").read().strip() == "1"
    except OSError:
        return False


def measured(doc: dict, entry: dict, key: str) -> float:
    mode = doc["dio_lock_mode"]
    if not mode["measured"]:
        if preempt_rt():
            pytest.skip(f"lock mode not measured on PREEMPT_RT: {mode['reason']}")
        # anywhere else the recorder reads it (tp_btf, raw_tp, fentry or kprobe): its
        # giving up is the failure
        not_here(f"the lock mode was not measured: {mode['reason']}")
    share = mode_share(file_classes([{"trace": {"dio": [entry]}}])[0], key)
    assert share["measured"] >= 0.9 * share["writes"] > 0, share
    return share["exclusive_share"]


def file_waits(doc: dict, entry: dict) -> list[dict]:
    return [w for lk in doc["locks"] if lk.get("kind") == "i_rwsem"
            and lk.get("path") == entry["path"] for w in lk.get("waits") or []]


# case -> (the class it is about, whether this kernel takes the lock exclusive for it,
# the reason the analysis then gives): docs/kernel-locking.md, by version
MATRIX = {
    # ext4 aligned writes onto fallocate()d extents: shared from 6.3 (240930fb7e6b)
    DioCase("ext4", "fallocated", False): ("unwritten", lambda v: v < (6, 3), "unwritten"),
    # ext4 unaligned overwrites of written blocks: shared from 6.5 (310ee0902b8d)
    DioCase("ext4", "written", True): ("unaligned", lambda v: v < (6, 5), "unaligned"),
    # XFS unaligned overwrites of written blocks: shared from 5.12 (ed1128c2d0c8)
    DioCase("xfs", "written", True): ("unaligned", lambda v: v < (5, 12), "unaligned"),
    # the same on every kernel: ext4 holes exclusive, XFS aligned appends shared
    DioCase("ext4", "sparse", False): ("hole", lambda v: True, "holes"),
    DioCase("xfs", "append", False): ("extending", lambda v: False, None),
}


HOLES = DioCase("ext4", "sparse", False)
OVERWRITES = DioCase("ext4", "written", False)


@pytest.fixture(scope="module")
def recorded(filesystems, tmp_path_factory) -> tuple[dict, dict[DioCase, dict]]:
    """Every case of this module in one recording (dio_cases.record_cases): the
    holes and the aligned overwrites with 4 writers each, so that writers wait on the
    file's lock, the other cases of MATRIX with 2."""
    cases = {case: (filesystems[case.fstype].path, 2) for case in MATRIX}
    cases[HOLES] = (filesystems["ext4"].path, 4)
    cases[OVERWRITES] = (filesystems["ext4"].path, 4)
    return record_cases(cases, tmp_path_factory.mktemp("dio-lock-mode") / "trace.json")


def test_hole_writes_measure_exclusive_as_their_lock_waits_say(recorded):
    doc, entries = recorded
    entry = entries[HOLES]
    assert measured(doc, entry, "hole") >= 0.95
    waits = file_waits(doc, entry)
    assert any("WRITE" in w["flag_names"] for w in waits), waits
    assert sum((w.get("exclusive_held") or {}).get("count", 0) for w in waits) > 0


def test_aligned_overwrites_measure_shared_and_no_writer_waits(recorded):
    doc, entries = recorded
    entry = entries[OVERWRITES]
    assert entry["hole"]["count"] == entry["unwritten"]["count"] == 0
    assert measured(doc, entry, "mapped") <= 0.05
    assert not any("WRITE" in w["flag_names"] for w in file_waits(doc, entry))


@pytest.mark.parametrize("case", list(MATRIX), ids=lambda c: c.name)
def test_the_running_kernel_follows_its_rule(recorded, case):
    key, exclusive_here, reason = MATRIX[case]
    doc, entries = recorded
    entry = entries[case]
    share = measured(doc, entry, key)
    version = parse_release(doc["kernel"])
    expect_exclusive = exclusive_here(version)
    assert (share >= 0.9) if expect_exclusive else (share <= 0.1), (doc["kernel"], share)

    classes = file_classes([{"trace": {"dio": [entry]}}])[0]
    judged = judge(case.fstype, classes, {}, version)
    assert judged.disagreements == [], judged.disagreements
    causes = {c["reason"]: c for c in judged.causes}
    if expect_exclusive:
        rule = next(r for r in RULES if r.fstype == case.fstype and r.write_class == key
                    and any(h.reason == reason for h in r.ranges))
        assert causes[reason]["kernel_source"] == rule.holds_for(version).source
        assert causes[reason]["mode"]["exclusive_share"] == pytest.approx(share)
    else:
        assert reason not in causes
    if doc["dio_lock_mode"]["dio_flags"] and key == "unaligned":
        # the second sign: both filesystems issue an exclusive unaligned write with
        # IOMAP_DIO_FORCE_WAIT and a shared one without (ext4_dio_write_checks,
        # xfs_file_dio_write_unaligned)
        assert mode_share(classes, key)["force_wait_share"] == pytest.approx(share, abs=0.05)
