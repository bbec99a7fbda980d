"""The kernel matrix's plan (tools/kernels/guest_tests.py) and its measured time limits
(guest_speed.py): every check runs in at least one guest of any run, the plan names only
tests that exist, and a slower guest gets a longer limit, never past the run's end."""

from __future__ import annotations

import ast
import json
import sys
from pathlib import Path

import pytest

from conftest import ROOT

sys.path.insert(0, str(ROOT / "tools" / "kernels"))

import guest_speed  # noqa: E402
from guest_tests import EVERY, ONE_GUESTS, PLAN, TESTS, planned, runs_on  # noqa: E402
from judge import judge  # noqa: E402
from pins import KERNELS  # noqa: E402

RELEASES = [k.release for k in KERNELS]


def _test_functions(path: Path) -> set[str]:
    """The test functions a test file defines, read from its source (not from the plan)."""
    tree = ast.parse(path.read_text())
    return {n.name for n in tree.body if isinstance(n, ast.FunctionDef)
            and n.name.startswith("test_")}


def test_every_planned_node_and_case_names_a_test_that_exists():
    for t in PLAN:
        path, _, func = t.node.partition("::")
        funcs = _test_functions(ROOT / path)
        if func:
            assert func.split("[")[0] in funcs, t.node
        for case in t.checks:
            assert case.split("[")[0] in funcs, (t.node, case)


def test_each_check_is_named_once():
    names = [c for t in PLAN for c in t.checks.values()]
    assert len(names) == len(set(names)) == len(TESTS)


@pytest.mark.parametrize("releases", [RELEASES, RELEASES[::-1], [RELEASES[-1]],
                                      [r for r in RELEASES if r not in ONE_GUESTS]])
def test_every_check_runs_in_exactly_the_guests_it_should(releases):
    ran = {r: {c for t in planned(r, releases) for c in t.checks.values()} for r in releases}
    for t in PLAN:
        where = [r for r in releases if set(t.checks.values()) <= ran[r]]
        if t.on == EVERY:
            assert where == releases, t.node
        else:   # its own guest when that one runs, else the run's first
            assert where == [t.on if t.on in releases else releases[0]], t.node
        assert where == runs_on(t, releases)


def test_the_one_guests_are_pinned_kernels_and_spread_the_work():
    assert set(ONE_GUESTS) <= set(RELEASES)
    # no guest carries them all
    assert len(ONE_GUESTS) > 1


def test_a_guest_is_judged_on_its_planned_checks_only(tmp_path):
    (tmp_path / "release").write_text(RELEASES[-1] + "\n")
    (tmp_path / "junit.xml").write_text("<testsuite/>")
    mine = {c for t in planned(RELEASES[-1], RELEASES) for c in t.checks.values()}
    checks = judge(tmp_path, {}, mine)["checks"]
    elsewhere = set(TESTS.values()) - mine
    assert elsewhere and not elsewhere & set(checks)
    assert all(checks[c]["detail"] == "did not run" for c in mine)


def test_a_slower_guest_waits_longer_and_a_faster_one_as_long():
    fast = guest_speed.limit(600, 1.0, 100.0, None) - 100.0
    slow = guest_speed.limit(600, 2.5, 100.0, None) - 100.0
    assert slow == pytest.approx(2.5 * fast) and fast > 600


def test_no_limit_passes_the_runs_end():
    end = 1000.0
    assert guest_speed.limit(600, 3.0, 100.0, end) == end - guest_speed.JUDGE_SECONDS
    booting = guest_speed.limit(600, None, 100.0, None)
    assert booting == 100.0 + guest_speed.BOOT_SECONDS


def test_the_speed_file_and_the_references(tmp_path):
    assert guest_speed.read_speed(tmp_path) is None
    (tmp_path / "speed").write_text("61.5 2.05\n")
    assert guest_speed.read_speed(tmp_path) == (61.5, 2.05)
    doc = {"kernels": [
        {"release": "a", "seconds": {"wall": 900, "install": 120, "doctor": 30},
         "speed": {"seconds": 40, "factor": 2.0}},
        {"release": "b", "seconds": {"wall": 500}, "speed": {"seconds": 30, "factor": 1.0}},
        {"release": "c", "seconds": {"wall": 700}}]}
    (tmp_path / "m.json").write_text(json.dumps(doc))
    refs = guest_speed.references(tmp_path / "m.json")
    assert refs == {"a": guest_speed.Reference(20.0, 450.0, (60.0, 15.0)),
                    "b": guest_speed.Reference(30.0, 500.0, (0.0, 0.0))}
    # a kernel the run has no figures of waits as the slowest and longest of the others
    assert guest_speed.reference_for("c", refs) == guest_speed.Reference(30.0, 500.0,
                                                                         (60.0, 15.0))
    assert guest_speed.reference_for("c", {}) is None
    assert guest_speed.references(tmp_path / "missing.json") == {}


def test_a_run_of_some_checks_plans_the_tests_holding_them_only():
    one = next(t for t in PLAN if t.on == EVERY)
    wanted = {next(iter(one.checks.values()))}
    for r in RELEASES:
        assert planned(r, RELEASES, wanted) == [one]
    assert planned(RELEASES[0], RELEASES, set()) == []


def test_a_guest_given_some_checks_is_judged_on_those_alone(tmp_path):
    (tmp_path / "release").write_text(RELEASES[0] + "\n")
    (tmp_path / "junit.xml").write_text("<testsuite/>")
    mine = {c for t in planned(RELEASES[0], RELEASES, {"attach_postgres_wal"})
            for c in t.checks.values()}
    checks = judge(tmp_path, {}, mine)["checks"]
    assert mine == {"attach_postgres_wal"} and checks["attach_postgres_wal"]["ok"] is False
    assert not set(TESTS.values()) - mine & set(checks)
