"""attach's progress without a terminal: a plain line every few seconds, and the window's
last state when the window ends, whatever the cadence left unsaid."""

from __future__ import annotations

import json

from lockscope.run.attach_progress import AttachProgress


def test_the_last_state_is_printed_when_the_window_ends(tmp_path, capsys):
    series = tmp_path / "series.jsonl"
    series.write_text(json.dumps({
        "interval": {"start_mono_ns": 0, "end_mono_ns": 10**9, "duration_ns": 10**9},
        "syscalls": [{"name": "pwrite64", "count": 120, "total_ns": 0}],
        "threads": [], "offcpu": []}) + "\n")
    with AttachProgress("db", 8.0, series) as progress:
        progress.tick([])           # under a second in: no plain line yet
        assert capsys.readouterr().err == ""
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "120 writes/s" in err, err


def test_a_line_already_printed_is_not_printed_again(tmp_path, capsys):
    with AttachProgress("db", 8.0, None) as progress:
        progress.started -= 2.0     # past the first plain line's second
        progress.tick([])
        first = capsys.readouterr().err
        assert first.startswith("db: 2/8 s"), first
    assert capsys.readouterr().err == ""
