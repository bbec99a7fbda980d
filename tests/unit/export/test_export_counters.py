"""Cumulative sources made into Prometheus counters: the recorder's drops began with
the exporter, so their first value counts whole; a database's commits began with
the database, so only what happens after the first sight counts. Restarts of
either source (counts back to 0) are absorbed."""

from __future__ import annotations

from lockscope.export import ExportState


def test_first_drops_count_whole_and_a_recorder_restart_is_absorbed():
    state = ExportState()
    state.set_context(drops={"nested_begin": 5, "map_full_by_map": {"offcpu": 2}})
    assert state.snapshot().drops == {"nested_begin": 5, "map_full.offcpu": 2}
    state.set_context(drops={"nested_begin": 6, "map_full_by_map": {"offcpu": 2}})
    state.set_context(drops={"nested_begin": 1, "map_full_by_map": {"offcpu": 0}})
    assert state.snapshot().drops == {"nested_begin": 7, "map_full.offcpu": 2}


def test_commits_count_from_first_sight_and_a_database_restart_is_absorbed():
    state = ExportState()
    state.set_context(db_commits=1000)
    assert state.snapshot().db_commits == 0
    state.set_context(db_commits=1040)
    state.set_context(db_commits=15)
    assert state.snapshot().db_commits == 55


def test_pauses_add_up_across_recorder_restarts():
    state = ExportState()
    state.set_context(pauses={"pauses": 2, "paused_ns": 3_000_000_000})
    state.set_context(pauses={"pauses": 3, "paused_ns": 4_500_000_000})
    state.set_context(pauses={"pauses": 1, "paused_ns": 1_000_000_000})   # a new recorder
    assert state.snapshot().pauses == {"pauses": 4, "paused_ns": 5_500_000_000}
