"""A sweep's lock verdict confidence (analysis/explain.py, evidence_strength) from the
size of the wait, its growth with threads and the repeats' noise, on hand-built points."""

from __future__ import annotations

from lockscope.analysis.explain import evidence_strength


def points(threads: list[int], spread: float = 0.02) -> list[dict]:
    return [{"threads": t, "iops": {"mean": 1000.0, "stddev": 1000.0 * spread}} for t in threads]


def shares(threads: list[int], values: list[float]) -> dict[str, float]:
    return {str(t): v for t, v in zip(threads, values)}


T = [1, 2, 4, 8]
GROWING = shares(T, [0.05, 0.2, 0.35, 0.5])


def test_a_large_growing_wait_that_explains_the_loss_is_high():
    level, notes = evidence_strength(points(T), GROWING, explained=0.7)
    assert level == "high"
    assert notes[0].startswith("the wait share grows at every added thread count")


def test_noisy_repeats_take_a_step_off():
    level, notes = evidence_strength(points(T, spread=0.2), GROWING, explained=0.7)
    assert level == "medium"
    assert any("noisy" in n for n in notes)


def test_a_wait_that_does_not_grow_and_explains_little_is_low():
    level, notes = evidence_strength(points(T), shares(T, [0.4, 0.1, 0.4, 0.3]), explained=0.2)
    assert level == "low"
    assert notes[0].startswith("the wait share does not grow steadily")


def test_two_thread_counts_are_never_high():
    level, notes = evidence_strength(points([1, 8]), shares([1, 8], [0.05, 0.5]), explained=0.9)
    assert level == "medium"
    assert "only 2 thread counts" in notes
