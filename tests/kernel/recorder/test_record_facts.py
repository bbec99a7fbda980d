"""The recorder's fixed names (``lockscope-record --list-facts``) are the one source of
each: the analyzer's copies and the other binaries' lists must say the same."""

from __future__ import annotations

import json
import subprocess
import typing

from lockscope import schema
from lockscope.analysis.lock_mode import MODE_CLASSES
from lockscope.analysis.lockkinds import INODE_LOCK_KINDS
from lockscope.analysis.series import interval_throughput
from lockscope.binaries import find_binary, recorder_facts, recorder_syscalls
from lockscope.cli.attach_cmd import MAX_DURATION_S
from lockscope.cli.doctor_checks import ATTACH_KINDS
from lockscope.cli.long_wait_option import MAX_LONG_WAIT_MS

from patience import patience


def _run_json(*argv: str) -> dict:
    res = subprocess.run(list(argv), capture_output=True, text=True, timeout=patience(600))
    return json.loads(res.stdout)


def test_list_features_carries_the_same_facts():
    features = _run_json(find_binary("lockscope-record"), "--list-features")
    facts = recorder_facts()
    assert {k: features[k] for k in facts} == facts


def test_dio_write_classes_are_the_schemas():
    assert tuple(recorder_facts()["dio_write_classes"]) == schema.CLASS_KEYS
    assert tuple(typing.get_type_hints(schema.ClassCounts)) == schema.CLASS_KEYS
    assert typing.get_args(schema.ClassKey) == schema.CLASS_KEYS


def test_the_classes_whose_lock_mode_is_read_are_the_analyzers():
    assert tuple(recorder_facts()["dio_mode_classes"]) == MODE_CLASSES


def test_inode_lock_kinds_are_the_recorders():
    assert tuple(recorder_facts()["inode_lock_kinds"]) == INODE_LOCK_KINDS


def test_attach_kinds_agree_across_binaries_and_doctor():
    kinds = recorder_facts()["attach_kinds"]
    probed = _run_json(find_binary("lockscope-features"))["attach"]
    doctor = [k for k, _what, _lost in ATTACH_KINDS]
    assert set(kinds) <= set(probed), "lockscope-features must probe every recorder kind"
    assert sorted(doctor) == sorted(probed), "doctor must explain every probed kind"


def _section(counts: dict[str, int]) -> dict:
    return {"interval": {"duration_ns": 1_000_000_000},
            "syscalls": [{"name": n, "count": c, "total_ns": 0} for n, c in counts.items()]}


def test_write_calls_per_second_count_exactly_the_recorders_write_calls():
    """Each call the recorder lists as a write (io_submit and io_uring_enter included:
    a database's libaio writes) counts once; a name it never records counts nothing."""
    writes = recorder_syscalls("write")
    assert "io_submit" in writes and "io_uring_enter" in writes
    for name in writes:
        assert interval_throughput(_section({name: 7}))["write_calls_s"] == 7
    others = [*recorder_syscalls("sync"), *recorder_syscalls("sync_range"),
              *recorder_syscalls("received"), "writev"]
    assert interval_throughput(_section(dict.fromkeys(others, 5)))["write_calls_s"] == 0
    syncs = recorder_syscalls("sync")
    assert interval_throughput(_section(dict.fromkeys(syncs, 2)))["fsync_calls_s"] == \
        2 * len(syncs)


def test_the_analyzer_checks_options_within_the_recorders_ranges():
    ranges = recorder_facts()["option_ranges"]
    assert ranges["long-wait-us"] == [0, MAX_LONG_WAIT_MS * 1000]
    assert ranges["max-overhead"] == [0, 100]        # sweep's --max-overhead check
    assert ranges["duration"][0] == 0 and MAX_DURATION_S <= ranges["duration"][1]
    # the budget lowers --duty down to its floor, a value --duty itself accepts
    low, high = ranges["duty"]
    assert low <= recorder_facts()["duty_floor_pct"] <= high


def test_the_groups_the_budget_keeps_are_the_listings():
    groups = _run_json(find_binary("lockscope-record"), "--list-features")["groups"]
    kept = [g["name"] for g in groups if g["kept_by_budget"]]
    assert kept == recorder_facts()["budget_kept_groups"]
    assert {"lock", "dio", "sched"} <= set(kept), "the analysis cannot stand without them"
