"""lockscope-record --fs: the xfs_* and ext4/jbd2 probe groups are attached only for the
filesystems the target uses; the others are reported not needed, never as missing."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import time
from pathlib import Path

import pytest

from lockscope.report.notes import missing_notes

from conftest import require_tool
from patience import patience
from record_common import (
    dio_entry,
    prepare_file,
    record_binary,
    recorder,
    start_fio,
    stop,
    wait_threads,
)

pytestmark = pytest.mark.kernel

# coreutils' names (stat -f %T) for filesystems that pass I/O on to another one
STACKING = ("overlayfs", "fuse", "fuseblk", "ecryptfs")


@pytest.fixture
def fio() -> str:
    return require_tool("fio")


def statfs_type(path: str) -> str:
    """The type coreutils names from the superblock magic: a route independent of the
    recorder's st_dev -> mountinfo lookup."""
    res = subprocess.run(["stat", "-f", "-L", "-c", "%T", path], capture_output=True,
                         text=True, timeout=patience(10))
    return res.stdout.strip() or "?"


def target_types(pid: int) -> set[str]:
    """Types of the process's open regular files and of its working directory."""
    types = {statfs_type(f"/proc/{pid}/cwd")}
    for fd in os.listdir(f"/proc/{pid}/fd"):
        p = f"/proc/{pid}/fd/{fd}"
        try:
            if stat.S_ISREG(os.stat(p).st_mode):
                types.add(statfs_type(p))
        except OSError:
            continue  # closed meanwhile
    return types


def wait_open(pid: int, path: Path, timeout: float = 20) -> None:
    """Until the process has path open (fio opens its file after starting its threads)."""
    real = os.path.realpath(path)
    deadline = time.time() + patience(timeout)
    while time.time() < deadline:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                if os.readlink(f"/proc/{pid}/fd/{fd}") == real:
                    return
            except OSError:
                continue
        time.sleep(0.05)
    raise AssertionError(f"process {pid} did not open {path}")


def list_features(*args: str) -> dict[str, dict]:
    res = subprocess.run([record_binary(), "--list-features", *args], capture_output=True,
                         text=True, timeout=patience(120))
    assert res.returncode == 0, res.stderr
    return {g["name"]: g for g in json.loads(res.stdout)["groups"]}


@pytest.fixture
def xfs_writer(xfs_fs, fio):
    """4 fio threads writing O_DIRECT into a file on XFS, working directory there too,
    the file open; yields (pid, path)."""
    path = xfs_fs.path / "written"
    prepare_file(path, "overwrite", 64)
    writers = start_fio(fio, path, "overwrite", 64, cwd=xfs_fs.path)
    try:
        wait_threads(writers.pid, 5)
        wait_open(writers.pid, path)
        types = target_types(writers.pid)
        assert "xfs" in types, types
        if any(t.startswith("ext") or t in STACKING for t in types):
            pytest.skip(f"the writer also has files on {sorted(types)} here")
        yield writers.pid, path
    finally:
        stop(writers)


def test_auto_leaves_out_the_ext4_groups_of_a_target_on_xfs(xfs_writer, tmp_path):
    pid, path = xfs_writer
    everything = list_features("--pid", str(pid), "--fs", "all")
    tagged = {n: g["fs"] for n, g in everything.items()}
    assert tagged["xfs_ilock"] == "xfs" and tagged["jbd2"] == "ext4", tagged
    # --pid's default is auto
    assert list_features("--pid", str(pid)) == list_features("--pid", str(pid), "--fs", "auto")
    out = tmp_path / "r.json"
    with recorder(["--pid", str(pid), "--fs", "auto"], out) as (proc, start, finish):
        start()
        time.sleep(1.0)
        doc = finish()
        said = proc.stderr.read().strip().splitlines()
    feats = {f["name"]: f for f in doc["features"]}
    for name, f in feats.items():
        if f["fs"] == "ext4":
            assert f["not_needed"] and not f["enabled"] and f["attach"] is None, f
            assert "xfs" in f["reason"] and "--fs auto" in f["reason"], f
            assert "lost" not in f, f
        else:
            # the XFS and untagged groups as --fs all has them (a lock source the
            # kernel does not need reads not_needed whatever --fs says)
            assert f["not_needed"] == everything[name]["not_needed"], f
            assert f["enabled"] == everything[name]["enabled"], (f, everything[name])
    assert feats["lock"]["enabled"] and feats["dio"]["enabled"]
    # one line names what was left out and how to get it back
    left = [line for line in said if "left out" in line]
    assert len(left) == 1, said
    assert all(n in left[0] for n, fs in tagged.items() if fs == "ext4"), left
    assert "--fs all" in left[0]
    # the target's direct writes are still counted
    assert dio_entry(doc, path)["writes"]["count"] > 0
    # a group that is not needed is no missing feature
    notes = missing_notes({"runs": [{"fs": "xfs", "threads": 4, "trace": doc}],
                           "analysis": {"xfs": {}}})
    assert not any(n in note for note in notes for n, fs in tagged.items() if fs == "ext4"), \
        notes


def test_fs_all_and_a_named_type_decide_alone(xfs_writer):
    """--fs all attaches the ext4 groups for the same target (those the kernel offers:
    as --list-features without a target has them); --fs ext4 leaves out XFS's."""
    pid, _ = xfs_writer
    base = list_features()
    for g in list_features("--pid", str(pid), "--fs", "all").values():
        assert g["not_needed"] == base[g["name"]]["not_needed"], g
        assert g["enabled"] == base[g["name"]]["enabled"], (g, base[g["name"]])
    named = list_features("--pid", str(pid), "--fs", "ext4")
    for g in named.values():
        assert g["not_needed"] is (g["fs"] == "xfs" or base[g["name"]]["not_needed"]), g
        if g["fs"] == "ext4":
            assert g["enabled"] == base[g["name"]]["enabled"], (g, base[g["name"]])
