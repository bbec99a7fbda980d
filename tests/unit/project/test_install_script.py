"""The release's install and uninstall scripts (tools/dist/install, uninstall) on a small
release tree of their layout: one command installs, another install over it replaces it,
uninstall removes exactly what install made, and what another tool made is never
overwritten (one line, exit 2). The host matrix runs them on the real artifact."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import ROOT

DIST = ROOT / "tools" / "dist"


@pytest.fixture
def release(tmp_path: Path) -> Path:
    """An unpacked release: the real scripts and launcher, a payload that only says its
    version (the real python/ is ~100 MB and built by make dist)."""
    rel = tmp_path / "lockscope-9.9"
    for d in ("bin", "libexec", "python/bin", "share/systemd"):
        (rel / d).mkdir(parents=True)
    shutil.copy(DIST / "install", rel / "install")
    shutil.copy(DIST / "uninstall", rel / "uninstall")
    shutil.copy(DIST / "launcher", rel / "bin" / "lockscope")
    py = rel / "python" / "bin" / "python3"
    py.write_text('#!/bin/sh\necho "lockscope 9.9 $LOCKSCOPE_BIN_DIR"\n')
    py.chmod(0o755)
    (rel / "share" / "systemd" / "lockscope-attach.service").write_text(
        "# lockscope release\nExecStart=@PREFIX@/bin/lockscope attach\n")
    (rel / "VERSION").write_text("9.9\n")
    return rel


def install(rel: Path, tmp: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(rel / "install"), "--prefix", str(tmp / "opt" / "lockscope"),
                           "--bindir", str(tmp / "bin"), "--unitdir", str(tmp / "units"),
                           *extra], capture_output=True, text=True, timeout=60)


def one_line_refusal(res: subprocess.CompletedProcess, words: str) -> None:
    assert res.returncode == 2, res.stdout + res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and words in lines[0], res.stderr


def test_install_runs_from_the_link_and_uninstall_leaves_nothing(release, tmp_path):
    before = {p for p in tmp_path.rglob("*") if not p.is_relative_to(release)}
    res = install(release, tmp_path)
    assert res.returncode == 0, res.stderr
    prefix, link = tmp_path / "opt" / "lockscope", tmp_path / "bin" / "lockscope"
    assert os.readlink(link) == str(prefix / "bin" / "lockscope")
    # the launcher finds its prefix through the link: binaries in its libexec
    out = subprocess.run([str(link), "--version"], capture_output=True, text=True).stdout
    assert out.split() == ["lockscope", "9.9", str(prefix / "libexec")]
    unit = (tmp_path / "units" / "lockscope-attach.service").read_text()
    assert f"ExecStart={prefix}/bin/lockscope attach" in unit
    # again over its own install: replaced, still one install
    assert install(release, tmp_path).returncode == 0
    assert not list((tmp_path / "opt").glob("lockscope.*"))
    res = subprocess.run([str(prefix / "uninstall")], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    after = {p for p in tmp_path.rglob("*") if not p.is_relative_to(release)}
    # only the directories install made for its files may stay (empty)
    assert all(p.is_dir() and not any(p.iterdir()) for p in after - before), after - before


def test_what_another_tool_made_is_never_overwritten(release, tmp_path):
    theirs = tmp_path / "opt" / "lockscope"
    theirs.mkdir(parents=True)
    (theirs / "data").write_text("not ours")
    one_line_refusal(install(release, tmp_path), "is not a lockscope install")
    assert (theirs / "data").read_text() == "not ours"
    shutil.rmtree(theirs)
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "lockscope").write_text("#!/bin/sh\n")
    one_line_refusal(install(release, tmp_path), "is not ours")
    assert not theirs.exists()
    (tmp_path / "bin" / "lockscope").unlink()
    (tmp_path / "units").mkdir()
    (tmp_path / "units" / "lockscope-attach.service").write_text("[Service]\n")
    one_line_refusal(install(release, tmp_path), "is not ours")
    assert install(release, tmp_path, "--no-unit").returncode == 0
    assert (tmp_path / "units" / "lockscope-attach.service").read_text() == "[Service]\n"


@pytest.mark.parametrize("args, words", [
    (["--prefix", "relative/dir"], "must be an absolute path"),
    (["--bogus"], "unknown argument"),
    (["--prefix"], "needs a directory"),
])
def test_bad_arguments_are_one_line(release, args, words):
    res = subprocess.run([str(release / "install"), *args], capture_output=True, text=True)
    one_line_refusal(res, words)


def test_uninstall_refuses_a_directory_install_did_not_make(tmp_path):
    shutil.copy(DIST / "uninstall", tmp_path / "uninstall")
    (tmp_path / "keep").write_text("x")
    res = subprocess.run([str(tmp_path / "uninstall")], capture_output=True, text=True)
    one_line_refusal(res, "is not a lockscope install")
    assert (tmp_path / "keep").exists()
