"""Options that name where files go, and the order of the checks: a path lockscope cannot
write is one line and exit status 2 before anything is made, and a usage error is found
before the root check (so that it needs no root to be seen)."""

from __future__ import annotations

import os
import subprocess

import pytest

from lockscope.cli.main import main

from conftest import LOCKSCOPE, ROOT

DATA = ROOT / "tests" / "data"
# /proc takes no new directory (even from root); a regular file is no directory
UNMAKEABLE = ("/proc/lockscope-x", "/etc/hostname/lockscope-x")


def _one_line(res: subprocess.CompletedProcess) -> str:
    lines = res.stderr.strip().splitlines()
    assert res.returncode == 2, res.stderr
    assert len(lines) == 1 and "Traceback" not in res.stderr, res.stderr
    return lines[0]


@pytest.mark.parametrize("where", UNMAKEABLE)
@pytest.mark.parametrize("command", [
    ["sweep", "--fs", "ext4", "--out", "{}"],
    ["sweep", "--fs", "ext4", "--image-dir", "{}"],
    ["attach", "--pid", str(os.getpid()), "--duration", "1", "--out", "{}"],
    ["experiments", "--only", "1", "--scale", "quick", "--doc", "{doc}", "--out", "{}"],
    ["report", str(DATA / "attach-v1.json"), "-o", "{}/report.html"],
    ["flame", str(DATA / "attach-v1.json"), "--kind", "offcpu", "-o", "{}/flame.svg"],
], ids=lambda c: " ".join(c[:1] + [a for a in c if a.startswith("-")][-1:]))
def test_a_path_that_cannot_be_made_is_one_line_and_exit_2(tmp_path, command, where):
    # its own temporary directory (lockscope names none itself): other tests and
    # processes of the machine make theirs in /tmp meanwhile
    cwd, tmp = tmp_path / "cwd", tmp_path / "tmp"
    cwd.mkdir()
    tmp.mkdir()
    args = [a.replace("{}", where).replace("{doc}", str(tmp_path / "e.md")) for a in command]
    line = _one_line(LOCKSCOPE.run(*args, cwd=cwd, timeout=120, env=LOCKSCOPE.env(TMPDIR=str(tmp))))
    assert where.split("/lockscope-x")[0] in line and "cannot make" in line, line
    assert sorted(tmp_path.iterdir()) == [cwd, tmp]  # nothing made
    assert not list(cwd.iterdir()) and not list(tmp.iterdir())


def test_an_output_directory_that_holds_a_recording_is_refused(tmp_path):
    (tmp_path / "results.json").write_text("{}")
    line = _one_line(LOCKSCOPE.run("attach", "--pid", os.getpid(), "--out", tmp_path))
    assert "results.json exists" in line


@pytest.mark.parametrize("args", [
    ["sweep", "--runtime", "0"],
    ["sweep", "--repeat", "0"],
    ["sweep", "--time-limit", "-1"],
    ["sweep", "--out", "/proc/lockscope-x"],
    ["sweep", "--image-size", "1m"],
    ["attach", "--pid", str(os.getpid()), "--duration", "0"],
    ["attach", "--pid", str(os.getpid()), "--out", "/proc/lockscope-x"],
    ["experiments", "--only", "1", "--doc", "/tmp/lockscope-never.md", "--out",
     "/proc/lockscope-x"],
])
def test_usage_errors_come_before_the_root_check(monkeypatch, capsys, args):
    monkeypatch.setattr(os, "geteuid", lambda: 1000)   # as a user would run it
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "not root" not in err and len(err.strip().splitlines()) == 1, err
