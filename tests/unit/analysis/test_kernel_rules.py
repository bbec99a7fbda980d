"""The locking rules of the recorded kernel (analysis/rules.py, docs/kernel-locking.md).

The rules read a file's recorded DIO write classes and the kernel version, so real
recordings (tests/data/dio-lock-modes.json, tests/data/sweep-ext4-xfs.json, both from a
6.18 kernel) are set to other releases to check each rule's range, reason and source as
the history gives them. Without the recorder's lock-mode counts the version decides;
with them (as recorded on 6.18) the measurement does, and says so where the version's
rule disagrees.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from lockscope.analysis import analyze
from lockscope.analysis.dio import file_classes
from lockscope.analysis.kernel_release import parse_release, release_of
from lockscope.analysis.lock_mode import mode_share, mode_text
from lockscope.analysis.rules import RULES, judge, kernel_rules

from recorded import recorded_runs_only

DATA = Path(__file__).resolve().parents[2] / "data" / "dio-lock-modes.json"
CASES = json.loads(DATA.read_text())["cases"]
MODE_KEYS = ("exclusive", "shared", "force_wait", "overwrite_only")


def classes(case: str, measured: bool = True):
    """The file's classes as the analysis sums them; without the mode counts, as a
    recorder that could not measure them (or an older one) writes them."""
    trace = copy.deepcopy(CASES[case])
    if not measured:
        for entry in trace["dio"]:
            for value in entry.values():
                if isinstance(value, dict):
                    for k in MODE_KEYS:
                        value.pop(k, None)
    return file_classes([{"trace": trace}])[0]


def causes_on(case: str, release: str, measured: bool = False):
    fstype = case.split("-")[0]
    judged = judge(fstype, classes(case, measured), {}, parse_release(release))
    return {c["reason"]: c for c in judged.causes}, judged.disagreements


# (case, release, reasons, a piece of the first cause's source): the history of
# docs/kernel-locking.md, on the classes recorded for each pattern.
HISTORY = [
    # ext4 aligned writes onto fallocate()d extents: exclusive before 6.3 (240930fb7e6b)
    ("ext4-fallocated-aligned", "6.1.0-18-amd64", {"unwritten"}, "EXT4_MAP_MAPPED"),
    ("ext4-fallocated-aligned", "6.4.16", set(), None),
    ("ext4-fallocated-aligned", "6.18.44", set(), None),
    # ext4 unaligned overwrites of written blocks: exclusive before 6.5 (310ee0902b8d)
    ("ext4-written-unaligned", "5.10.0-30-amd64", {"unaligned"}, "ext4_unaligned_io()"),
    ("ext4-written-unaligned", "6.1.0-18-amd64", {"unaligned"}, "ext4_dio_write_iter()"),
    ("ext4-written-unaligned", "6.4.16", {"unaligned"}, "ext4_dio_write_iter()"),
    ("ext4-written-unaligned", "6.18.44", set(), None),
    # ext4 unaligned writes onto unwritten extents: exclusive throughout, for other reasons
    ("ext4-fallocated-unaligned", "6.1.0", {"unaligned", "unwritten"}, None),
    ("ext4-fallocated-unaligned", "6.4.0", {"unaligned"}, "ext4_dio_write_iter()"),
    ("ext4-fallocated-unaligned", "6.18.0", {"unaligned_unwritten"}, "ext4_dio_write_checks()"),
    # ext4 holes: exclusive throughout; the source names what counted as an overwrite
    ("ext4-sparse-aligned", "6.1.0", {"holes"}, "EXT4_MAP_MAPPED"),
    ("ext4-sparse-aligned", "6.18.0", {"holes"}, "ext4_overwrite_io(..., &unwritten)"),
    ("ext4-written-aligned", "5.10.0", set(), None),
    ("ext4-written-aligned", "6.18.0", set(), None),
    # XFS unaligned overwrites of written blocks: exclusive before 5.12 (ed1128c2d0c8)
    ("xfs-written-unaligned", "5.10.0-30-amd64", {"unaligned"}, "xfs_file_dio_aio_write()"),
    ("xfs-written-unaligned", "6.1.0", set(), None),
    ("xfs-written-unaligned", "6.18.0", set(), None),
    ("xfs-sparse-unaligned", "5.10.0", {"unaligned"}, "xfs_file_dio_aio_write()"),
    ("xfs-sparse-unaligned", "6.18.0", {"unaligned"}, "xfs_file_dio_write_unaligned()"),
    # XFS aligned appends keep the IOLOCK shared on every kernel
    ("xfs-append-aligned", "5.10.0", set(), None),
    ("xfs-append-aligned", "6.18.0", set(), None),
]


@pytest.mark.parametrize(("case", "release", "reasons", "source"), HISTORY,
                         ids=[f"{c}@{r.split('-')[0]}" for c, r, *_ in HISTORY])
def test_each_rule_holds_for_its_kernel_range(case, release, reasons, source):
    causes, disagreements = causes_on(case, release)
    assert set(causes) == reasons
    assert disagreements == []      # nothing measured: nothing to disagree with
    if source:
        first = max(causes.values(), key=lambda c: c["fraction"])
        assert source in first["kernel_source"], first
    for c in causes.values():
        assert c["mode"] is None or c["mode"]["exclusive_share"] is None  # not measured


def test_a_cause_cites_its_range_and_commit():
    old, _ = causes_on("ext4-fallocated-aligned", "6.1.0")
    assert old["unwritten"]["kernel_range"] == ">= 5.6, < 6.3"
    assert old["unwritten"]["commit"].startswith("aa9714d0e397")
    new, _ = causes_on("ext4-sparse-aligned", "6.18.0")
    assert new["holes"]["kernel_range"] == ">= 6.3"
    assert new["holes"]["commit"].startswith("240930fb7e6b")
    xfs, _ = causes_on("xfs-written-unaligned", "5.10.0")
    assert xfs["unaligned"]["kernel_range"] == "< 5.12"


@pytest.mark.parametrize(("case", "release", "reason", "upgrade"), [
    ("ext4-fallocated-aligned", "6.1.0", "unwritten", "from 6.3, preallocated extents are "
     "overwritten under a shared lock (240930fb7e6b): a kernel upgrade also removes this"),
    ("ext4-written-unaligned", "6.4.0", "unaligned", "from 6.5, unaligned overwrites of "
     "written blocks run under a shared lock"),
    ("xfs-written-unaligned", "5.10.0", "unaligned", "from 5.12, unaligned overwrites of "
     "written blocks run under a shared IOLOCK"),
])
def test_a_remedy_says_when_a_newer_kernel_removes_the_contention(case, release, reason,
                                                                  upgrade):
    causes, _ = causes_on(case, release)
    assert upgrade in causes[reason]["remedy"]
    newest, _ = causes_on("ext4-sparse-aligned", "6.18.0")
    assert "upgrade" not in newest["holes"]["remedy"]


def test_an_upgrade_is_not_offered_where_it_would_not_help():
    """Unaligned writes onto unwritten extents stay exclusive after 6.5: on 6.4 the
    unaligned rule's remedy promises no upgrade for more writes than it relieves."""
    causes, _ = causes_on("ext4-fallocated-unaligned", "6.4.0")
    c = classes("ext4-fallocated-unaligned")
    relieved = min(c["unaligned"], c["mapped"]) / c["writes"]
    assert ("a kernel upgrade" in causes["unaligned"]["remedy"]) == (relieved >= 0.05)


def test_the_measured_mode_agrees_with_the_newest_rules_on_the_kernel_it_was_recorded_on():
    for case, trace in CASES.items():
        release = trace["kernel"]
        assert parse_release(release) >= (6, 5), "re-record on a kernel >= 6.5"
        _, disagreements = causes_on(case, release, measured=True)
        assert disagreements == [], (case, disagreements)


@pytest.mark.parametrize(("case", "release", "line", "dropped"), [
    ("ext4-fallocated-aligned", "6.1.0", "this kernel behaves like >= 6.3 for writes onto "
     "preallocated extents: a backport?", "unwritten"),
    ("ext4-written-unaligned", "6.1.0", "this kernel behaves like >= 6.5 for unaligned "
     "overwrites of written blocks: a backport?", "unaligned"),
    ("ext4-written-unaligned", "6.4.0", "this kernel behaves like >= 6.5 for unaligned "
     "overwrites of written blocks: a backport?", "unaligned"),
    ("xfs-written-unaligned", "5.10.0", "this kernel behaves like >= 5.12 for unaligned "
     "overwrites of written blocks: a backport?", "unaligned"),
])
def test_a_measured_mode_that_contradicts_the_versions_rule_wins_and_says_so(case, release,
                                                                             line, dropped):
    """Recorded on 6.18, labelled older: what a distribution kernel with the change
    backported looks like (CentOS Stream 9's 5.14 carries 310ee0902b8d)."""
    causes, disagreements = causes_on(case, release, measured=True)
    assert len(disagreements) == 1 and disagreements[0].startswith(line), disagreements
    assert "ran with i_rwsem exclusive" in disagreements[0]
    assert dropped not in causes


def test_an_exclusive_mode_the_version_has_shared_brings_the_older_rule_back():
    """The reverse: unaligned overwrites measured exclusive on a kernel labelled 6.18
    are cited with the rule (and source) of the kernels before 6.5."""
    c = classes("ext4-written-unaligned")
    for mode in c["modes"].values():
        mode["exclusive"], mode["shared"] = mode["exclusive"] + mode["shared"], 0
    judged = judge("ext4", c, {}, (6, 18))
    assert [d.split(":")[0] for d in judged.disagreements] == [
        "this kernel behaves like >= 5.6, < 6.5 for unaligned overwrites of written blocks"]
    assert "an older rule kept?" in judged.disagreements[0]
    cause = {x["reason"]: x for x in judged.causes}["unaligned"]
    assert "ext4_dio_write_iter() -> ext4_unaligned_io()" in cause["kernel_source"]
    assert "upgrade" not in cause["remedy"]     # the kernel is new already


def test_a_rule_the_measurement_contradicts_in_every_range_is_dropped_with_its_line():
    c = classes("ext4-sparse-aligned")
    c["modes"]["hole"] = {"exclusive": 0, "shared": c["hole"], "force_wait": 0}
    judged = judge("ext4", c, {}, (6, 18))
    assert judged.causes == []
    assert judged.disagreements[0].startswith(
        "the measured lock mode contradicts the rule for writes into holes")


def test_an_exclusive_share_another_rule_explains_is_no_disagreement():
    """Unaligned writes into holes are exclusive on 6.18 for the holes rule, not because
    the unaligned rule of older kernels came back."""
    causes, disagreements = causes_on("xfs-sparse-unaligned", "6.18.0", measured=True)
    assert disagreements == [] and set(causes) == {"unaligned"}
    causes, disagreements = causes_on("ext4-fallocated-unaligned", "6.18.0", measured=True)
    assert disagreements == [] and set(causes) == {"unaligned_unwritten"}


def test_causes_carry_the_measured_share_of_their_class():
    causes, _ = causes_on("ext4-sparse-aligned", "6.18.0", measured=True)
    mode = causes["holes"]["mode"]
    assert mode["class"] == "hole" and mode["measured"] == mode["writes"] > 0
    assert mode["exclusive_share"] >= 0.95
    assert mode_text(mode).startswith(f"{mode['exclusive_share']:.0%} of the ")
    # the dio_flags sign: ext4 sets IOMAP_DIO_FORCE_WAIT only for exclusive unaligned
    # or extending writes (fs/ext4/file.c, ext4_dio_write_checks)
    fw = mode_share(classes("ext4-fallocated-unaligned"), "unwritten")
    assert fw["force_wait_share"] == pytest.approx(fw["exclusive_share"], abs=0.02)


def test_not_measured_is_none_never_zero():
    share = mode_share(classes("ext4-sparse-aligned", measured=False), "hole")
    assert share["exclusive_share"] is None and share["measured"] == 0
    assert share["force_wait_share"] is None
    assert mode_text(share).endswith("was not measured")


def test_without_the_mode_the_dio_flags_are_the_sign_left():
    """A classic-tracepoint recording reads dio_flags but not the lock (no inode)."""
    trace = copy.deepcopy(CASES["ext4-fallocated-unaligned"])
    for value in trace["dio"][0].values():
        if isinstance(value, dict):
            value.pop("exclusive", None)
            value.pop("shared", None)
    share = mode_share(file_classes([{"trace": trace}])[0], "unwritten")
    assert share["exclusive_share"] is None and share["force_wait_share"] == 1.0
    assert "not measured; 100% of them were issued with IOMAP_DIO_FORCE_WAIT" in mode_text(share)


def test_every_range_is_cited_with_file_and_function_and_ranges_do_not_overlap():
    for rule in RULES:
        for h in rule.ranges:
            assert h.source.startswith("fs/") and "()" in h.source, h
        for a, b in zip(rule.ranges, rule.ranges[1:]):
            assert a.until == b.since, rule.about


def _with_release(release: str | None):
    doc = recorded_runs_only()
    doc["host"]["kernel"] = release
    for run in doc["runs"]:
        if release is None:
            run["trace"].pop("kernel", None)
        else:
            run["trace"]["kernel"] = release
    return doc


def test_the_analysis_picks_the_rules_of_the_recorded_kernel():
    old = analyze(_with_release("6.1.0-18-amd64"))["ext4"]
    new = analyze(_with_release("6.18.44"))["ext4"]
    assert old["kernel_rules"]["version"] == "6.1" and new["kernel_rules"]["version"] == "6.18"
    assert [c["reason"] for c in old["causes"]] == [c["reason"] for c in new["causes"]] == [
        "holes"]
    assert "EXT4_MAP_MAPPED" in old["causes"][0]["kernel_source"]
    assert "&unwritten" in new["causes"][0]["kernel_source"]
    assert old["kernel_rules"]["note"] is None


def test_a_document_without_a_kernel_release_uses_the_newest_rules_and_says_so():
    doc = _with_release(None)
    assert release_of(doc) is None
    ext4 = analyze(doc)["ext4"]
    assert ext4["kernel_rules"]["release"] is None
    assert ext4["kernel_rules"]["note"].startswith("no kernel release in the document")
    assert "newest rules (>= 6.5)" in ext4["kernel_rules"]["note"]
    assert "&unwritten" in ext4["causes"][0]["kernel_source"]
    assert kernel_rules("4.19.0", [], "ext4")["note"].startswith(
        "kernel 4.19 is older than the oldest ext4 rules")
    assert kernel_rules("4.19.0", [], "xfs")["note"] is None


def test_an_inode_lock_verdict_carries_the_measured_share_and_the_disagreement():
    """The recorded sweep's ext4 writes filled holes under an exclusive i_rwsem; given
    lock-mode counts that say they ran shared, the verdict says so in one line."""
    doc = _with_release("6.18.44")
    ext4 = analyze(copy.deepcopy(doc))["ext4"]
    assert ext4["verdict"]["kind"] == "inode_lock_contention"
    assert ext4["verdict"]["lock_mode"]["exclusive_share"] is None     # not measured
    assert any("was not measured" in e for e in ext4["verdict"]["evidence"])
    for run in doc["runs"]:
        if run["fs"] != "ext4":
            continue
        for e in run["trace"]["dio"]:
            for key in ("writes", "hole"):
                e[key].update(exclusive=0, shared=e[key]["count"])
    ext4 = analyze(doc)["ext4"]
    verdict = ext4["verdict"]
    assert verdict["lock_mode"]["class"] == "writes"     # no cause left to blame a class
    assert verdict["lock_mode"]["exclusive_share"] == 0.0
    assert ext4["causes"] == [] and ext4["kernel_rules"]["disagreements"]
    line = ext4["kernel_rules"]["disagreements"][0]
    assert line.startswith("the measured lock mode contradicts the rule for writes into holes")
    assert line in verdict["evidence"]
    assert verdict["summary"].endswith(f"Measured: {line}.")


def test_a_verdict_of_another_kind_still_names_the_inode_lock_and_its_rule():
    """6.1, aligned writes into fallocated extents: i_rwsem holds 24% of thread time at 2
    threads but the CPUs explain more of the loss; the cpu_bound verdict still names the
    lock, the pre-6.3 rule and its remedies (the upgrade among them)."""
    from lockscope.analysis.verdict import note_inode_lock

    verdict = {"kind": "cpu_bound", "evidence": ["curve"], "remedies": ["fewer threads"]}
    lock = {"name": "i_rwsem", "path": "/f", "key": "i_rwsem:/f",
            "share_by_threads": {"1": 0.0, "2": 0.24}}
    causes, _ = causes_on("ext4-fallocated-aligned", "6.1.0")
    note_inode_lock(verdict, lock, [{"threads": 1}, {"threads": 2}], list(causes.values()))
    line = verdict["evidence"][-1]
    assert line.startswith("i_rwsem of /f still takes 24% of thread time at 2 threads: ")
    assert "EXT4_MAP_MAPPED" in line
    assert any("a kernel upgrade also removes this" in r for r in verdict["remedies"])
    quiet = {"kind": "cpu_bound", "evidence": [], "remedies": []}
    note_inode_lock(quiet, {**lock, "share_by_threads": {"2": 0.05}}, [{"threads": 2}],
                    list(causes.values()))
    assert quiet["evidence"] == []
