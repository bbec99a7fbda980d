"""The session skeleton sweep and attach share: output directory, document, SIGTERM as an
interrupt, checkpoint and finish."""

from __future__ import annotations

import json
import os
import signal

import pytest

from lockscope.errors import UsageError
from lockscope.results import SCHEMA
from lockscope.run.session import Session


def test_a_session_makes_its_directory_and_starts_the_document(tmp_path):
    s = Session("attach", str(tmp_path / "out"), "lockscope-attach", kind="attach")
    assert s.out == tmp_path / "out" and s.out.is_dir()
    assert s.doc["schema"] == SCHEMA and s.doc["kind"] == "attach" and s.doc["partial"]
    assert s.doc["reproduce"][0].startswith("lockscope")
    assert "kind" not in Session("sweep", str(tmp_path / "sweep"), "lockscope").doc


def test_an_output_directory_that_holds_a_recording_is_refused(tmp_path):
    (tmp_path / "results.json").write_text("{}")
    with pytest.raises(UsageError, match="results.json exists"):
        Session("sweep", str(tmp_path), "lockscope")


def test_sigterm_inside_the_session_is_an_interrupt_and_is_restored_after(tmp_path):
    s = Session("sweep", str(tmp_path / "out"), "lockscope")
    before = signal.getsignal(signal.SIGTERM)
    with pytest.raises(KeyboardInterrupt), s.interruptible():
        os.kill(os.getpid(), signal.SIGTERM)
    assert signal.getsignal(signal.SIGTERM) is before


def test_checkpoint_then_finish(tmp_path):
    s = Session("sweep", str(tmp_path / "out"), "lockscope")
    s.doc["runs"] = [{"fs": "ext4"}]
    s.checkpoint()
    assert json.loads(s.results.read_text())["partial"] is True
    seen = []
    s.finish(lambda doc: {"n": len(doc["runs"])}, lambda doc, out, report: seen.append(report),
             render=False, partial=False)
    saved = json.loads(s.results.read_text())
    assert saved["partial"] is False and saved["analysis"] == {"n": 1} and seen == [None]
