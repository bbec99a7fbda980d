"""Every table keyed by wait class covers the registry (analysis/wait_classes.py): a
class added there without its words, colour, verdict, remedies, metric or doc lines
(results-schema.md, fleet.md's labels) fails here, not as a KeyError in a user's
report."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from lockscope.analysis import attach_verdict, iowq, waitclass
from lockscope.analysis.wait_classes import (
    BY_KEY,
    COLOURS,
    LOSS_KEYS,
    ONCPU,
    RECORD_CLASSES,
    REQUEST_CLASSES,
    WAIT_CLASSES,
    WORDS,
    kind_of,
)
from lockscope.schema import VerdictKind

DOCS = Path(__file__).resolve().parents[3] / "docs"


def test_each_class_is_one_entry_with_words_and_a_colour_of_its_own():
    keys = [c.key for c in WAIT_CLASSES]
    assert len(keys) == len(set(keys))
    assert set(WORDS) == set(COLOURS) == {ONCPU, *keys}
    assert all(WORDS[k] for k in WORDS)
    assert len(set(COLOURS.values())) == len(COLOURS), "two classes share a colour"
    assert all(re.fullmatch(r"#[0-9a-f]{6}", c) for c in COLOURS.values())


def test_the_classifier_and_the_verdict_tables_are_the_registry():
    assert tuple(waitclass.CLASSES) == RECORD_CLASSES
    assert all(waitclass.CLASSES[k] == BY_KEY[k].words for k in RECORD_CLASSES)
    assert set(waitclass.LOSS_CLASSES) == set(LOSS_KEYS) - set(REQUEST_CLASSES)
    assert set(attach_verdict.KINDS) == set(LOSS_KEYS)
    assert "idle" not in LOSS_KEYS and kind_of("idle") == "idle"
    assert iowq.CLASS in REQUEST_CLASSES and iowq.NAME == WORDS[iowq.CLASS]


@pytest.mark.parametrize("key", LOSS_KEYS)
def test_every_loss_class_says_what_to_do_unless_it_is_inconclusive(key):
    c = BY_KEY[key]
    assert kind_of(key) == "loss"
    if c.verdict == VerdictKind.INCONCLUSIVE:
        assert not c.remedies
    else:
        assert attach_verdict.REMEDIES[key] and all(r.strip() for r in c.remedies)


def test_the_results_schema_lists_every_class_in_report_order():
    text = (DOCS / "results-schema.md").read_text()
    row = next(line for line in text.splitlines() if line.startswith("| `classes` |"))
    listed, then = row.split("then", 1)
    assert re.findall(r"`(\w+)`", listed)[1:] == list(RECORD_CLASSES)
    assert re.findall(r"`(\w+)`", then)[:len(REQUEST_CLASSES)] == list(REQUEST_CLASSES)


def test_the_metrics_labels_list_every_class_in_report_order():
    text = (DOCS / "fleet.md").read_text()
    start = text.index("- `class` (thread time")
    item = text[start:text.index("\n- ", start)].split("where the recorder measures it")[0]
    listed = re.findall(r"`(\w+)`", item)
    assert listed[listed.index(ONCPU):] == [ONCPU, *RECORD_CLASSES, *REQUEST_CLASSES]


def test_the_plot_draws_request_time_beside_the_threads_stack():
    from lockscope.report.attach_plots import classes_figure

    rows = [{"t_s": float(i), "duration_s": 1.0,
             "classes_ns": {**dict.fromkeys((ONCPU, *RECORD_CLASSES), 0.0), ONCPU: 1e9,
                            "block_io": 5e8, iowq.CLASS: 2e9}} for i in range(3)]
    fig = classes_figure({"series": rows})
    labels = fig.axes[0].get_legend_handles_labels()[1]
    assert WORDS[ONCPU] in labels and WORDS["block_io"] in labels
    assert any(label.startswith(WORDS[iowq.CLASS]) for label in labels)
    line = next(ln for ln in fig.axes[0].get_lines()
                if str(ln.get_label()).startswith(WORDS[iowq.CLASS]))
    assert list(line.get_ydata()) == [2.0, 2.0, 2.0]
