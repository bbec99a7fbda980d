"""A continuous attach's scratch directory: named with its pid, and the ones a killed
attach left are removed by the next attach, never another's or a live one's."""

from __future__ import annotations

import os
import subprocess
import sys

from lockscope.run.continuous import SCRATCH_PREFIX, remove_stale_scratch, scratch_dir


def _dead_pid() -> int:
    # a pid that existed and has exited (reaped): no process has it now
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_a_killed_attachs_scratch_goes_and_the_rest_stays(tmp_path):
    dead, alive = _dead_pid(), os.getpid()
    stale = tmp_path / f"{SCRATCH_PREFIX}{dead}-abc"
    stale.mkdir()
    (stale / ".record.log").write_text("x")
    (stale / ".trace.json").write_text("{}")
    live = tmp_path / f"{SCRATCH_PREFIX}{alive}-def"
    live.mkdir()
    foreign = tmp_path / f"{SCRATCH_PREFIX}{dead}-ghi"     # holds what we never write
    foreign.mkdir()
    (foreign / "notes.txt").write_text("someone else's")
    unnamed = tmp_path / f"{SCRATCH_PREFIX}oldstyle"       # no pid in its name
    unnamed.mkdir()
    assert remove_stale_scratch(tmp_path) == [stale]
    assert not stale.exists() and live.exists() and foreign.exists() and unnamed.exists()


def test_a_new_scratch_is_named_with_its_pid_and_sweeps_first(tmp_path):
    stale = tmp_path / f"{SCRATCH_PREFIX}{_dead_pid()}-x"
    stale.mkdir()
    path, made = scratch_dir(None, tmp_path)
    assert made and path.parent == tmp_path
    assert path.name.startswith(f"{SCRATCH_PREFIX}{os.getpid()}-") and not stale.exists()
    out = tmp_path / "out"
    assert scratch_dir(out, tmp_path) == (out, False)


def test_a_symlink_is_not_followed(tmp_path):
    target = tmp_path / "elsewhere"
    target.mkdir()
    (target / ".record.log").write_text("x")
    link = tmp_path / f"{SCRATCH_PREFIX}{_dead_pid()}-lnk"
    link.symlink_to(target)
    assert remove_stale_scratch(tmp_path) == []
    assert (target / ".record.log").exists()
