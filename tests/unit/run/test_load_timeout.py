"""How long lockscope waits for its recorder to load (run/recording.py load_timeout_s)."""

from __future__ import annotations

import pytest

from lockscope.errors import LockscopeError
from lockscope.run.recording import LOAD_TIMEOUT_S, LOAD_TIMEOUT_VARIABLE, load_timeout_s


def test_the_default_and_a_slow_machines_own(monkeypatch):
    monkeypatch.delenv(LOAD_TIMEOUT_VARIABLE, raising=False)
    assert load_timeout_s() == LOAD_TIMEOUT_S
    monkeypatch.setenv(LOAD_TIMEOUT_VARIABLE, "406.2")
    assert load_timeout_s() == 406.2


@pytest.mark.parametrize("raw", ["0", "-5", "soon", "inf", "nan"])
def test_a_value_that_is_not_seconds_is_one_line(monkeypatch, raw):
    monkeypatch.setenv(LOAD_TIMEOUT_VARIABLE, raw)
    with pytest.raises(LockscopeError, match=f"{LOAD_TIMEOUT_VARIABLE}=.*positive number"):
        load_timeout_s()


def test_a_bad_value_stops_a_window_before_its_recorder_starts(monkeypatch, tmp_path):
    from lockscope.run.recording import RecorderWindow

    monkeypatch.setenv(LOAD_TIMEOUT_VARIABLE, "soon")
    with pytest.raises(LockscopeError, match=LOAD_TIMEOUT_VARIABLE):
        RecorderWindow(["--pid", "1"], tmp_path)
    assert not list(tmp_path.iterdir())     # no log opened, no recorder started
