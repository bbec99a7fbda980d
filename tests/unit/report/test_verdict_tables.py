"""Every verdict kind has its row in each table that names kinds: the sweep report's
label and colour, the attach report's colour, the attach verdict's wait classes."""

from __future__ import annotations

import pytest

from lockscope.analysis.attach_verdict import KINDS, REMEDIES
from lockscope.report.attach_report import VERDICT_CLASS
from lockscope.report.model import VERDICTS
from lockscope.schema import VerdictKind


@pytest.mark.parametrize("kind", list(VerdictKind))
def test_every_kind_has_a_label_and_a_colour(kind):
    assert kind.value in VERDICTS, kind
    assert kind.value in VERDICT_CLASS, kind
    assert VERDICTS[kind.value][1] in ("good", "warn", "bad", "unknown")
    assert VERDICT_CLASS[kind.value] in ("good", "warn", "bad", "unknown")


def test_the_tables_name_no_kind_that_is_not_one():
    kinds = {k.value for k in VerdictKind}
    assert set(VERDICTS) <= kinds
    assert set(VERDICT_CLASS) <= kinds
    assert set(KINDS.values()) <= set(VerdictKind)


def test_every_wait_class_with_a_kind_has_remedies_or_is_inconclusive():
    for cls, kind in KINDS.items():
        assert cls in REMEDIES or kind == VerdictKind.INCONCLUSIVE, cls
