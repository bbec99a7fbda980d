"""Two sets of probe groups, each defined once: the groups a verdict needs loaded
(doctor's required lines, the matrix's core_groups: ``CORE_GROUPS``) and the groups the
recorder's budget never sheds alone (the group table in bpf/recorder/attach/probe.c,
``budget_kept_groups`` in ``lockscope-record --list-facts``). The docs list both; a list
that misses a group, or names one too many, fails here."""

from __future__ import annotations

import re
import sys

import pytest

from lockscope.binaries import recorder_facts
from lockscope.run.probe_groups import CORE_GROUPS

from conftest import ROOT

sys.path.insert(0, str(ROOT / "tools" / "kernels"))

import expectations  # noqa: E402

# (file, a pattern whose group holds the list)
CORE_LISTS = [
    ("docs/kernels.md", r"every core group \(([^;]*);"),
    ("docs/setup.md", r"each probe group \(([^:]*) are required"),
]
BUDGET_LISTS = [
    ("docs/recorder-json.md", r"never sheds alone\s+\(([^:]*):"),
    ("docs/recorder-json.md", r"only the \*\*core groups\*\*\s+\(([^:]*):"),
    ("bpf/recorder/README.md", r"if the core groups \(([^:]*):"),
]


def listed(path: str, place: str) -> list[str]:
    m = re.search(place, (ROOT / path).read_text())
    assert m, f"{path}: the list is gone ({place})"
    return re.findall(r"`(\w+)`", m.group(1))


def test_the_matrix_judges_doctors_groups():
    # imported, not copied; and a kernel's known gaps name only such groups
    assert expectations.CORE_GROUPS is CORE_GROUPS
    for release, expect in expectations.EXPECTED.items():
        assert set(expect.missing) <= set(CORE_GROUPS), release


@pytest.mark.parametrize(("path", "place"), CORE_LISTS)
def test_the_docs_list_the_groups_a_verdict_needs(path, place):
    assert sorted(listed(path, place)) == sorted(CORE_GROUPS)


@pytest.mark.parametrize(("path", "place"), BUDGET_LISTS)
def test_the_docs_list_the_groups_the_budget_keeps(path, place):
    assert sorted(listed(path, place)) == sorted(recorder_facts()["budget_kept_groups"])
