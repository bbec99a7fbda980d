"""DIO write classes by the extent state each write found, against FIEMAP, on ext4 and XFS.

For each layout of the engine (written, fallocated, sparse, append) and each alignment
(the fs block, half of it), one thread writes every slot of a small region once. FIEMAP
on the laid-out file, before the timed phase, gives each block's state; the first write
into a block finds that state, a second write (half-block I/O) finds the block written by
the first. The recorder's hole / unwritten / mapped / allocating counts must match, and
the causes matched from them must be the ones docs/kernel-locking.md derives from the
same FIEMAP facts for the running kernel: e.g. ext4 + fallocated + unaligned ->
unaligned_unwritten from 6.5 (unaligned before), never holes.
"""

from __future__ import annotations

import json
import os
import platform
from pathlib import Path

import pytest

from lockscope.analysis.dio import file_classes
from lockscope.analysis.kernel_release import parse_release
from lockscope.analysis.rules import match_causes

from conftest import LOCKSCOPE
from fiemap import block_states
from record_common import ROOT, dio_entry, record_engine, start_engine

pytestmark = pytest.mark.kernel

LOAD = ROOT / "build" / "bin" / "lockscope-load"
REGION = 2 << 20     # small: one pass of 512..1024 writes per case
# The kernel's version picks the rules expected (docs/kernel-locking.md); the recorder's
# measured lock mode is checked against the same rules (test_record_dio_lock_mode.py).
KERNEL = parse_release(platform.release())



def run_case(path: Path, layout: str, bs: int, out: Path) -> tuple[list[str], dict, dict]:
    """Lay out, FIEMAP, record one single-threaded pass; (block states, trace, workload)."""
    path.unlink(missing_ok=True)
    work = out.with_suffix(".load.json")
    argv = [str(LOAD), "--name=w", f"--filename={path}", f"--layout={layout}", "--direct=1",
            f"--bs={bs}", f"--size={REGION}", "--numjobs=1", "--group_reporting",
            "--rw=write" if layout == "append" else "--rw=randwrite",
            "--output-format=json", f"--output={work}", "--start_on_stdin=1"]
    engine = start_engine(argv)
    try:
        states = block_states(str(path), REGION)
    except BaseException:
        engine.kill()
        engine.communicate()
        raise
    doc = record_engine(engine, out, 120)
    return states, doc, json.loads(work.read_text())


def expected_reasons(fstype: str, states: list[str], writes: int, unaligned: bool,
                     extending: bool, kernel: tuple[int, int] | None = KERNEL) -> set[str]:
    """The causes docs/kernel-locking.md gives for these FIEMAP states on `kernel` (5%
    floor, as analysis/rules.py): ext4 is exclusive for holes and extending writes, for
    unwritten extents before 6.3, for every unaligned write before 6.5 and for unaligned
    writes onto unwritten extents after; XFS for unaligned writes before 5.12, and from
    5.12 for unaligned writes that reach EOF or need a block allocated or zeroed."""
    first_hole = states.count("hole") / writes
    first_unwritten = states.count("unwritten") / writes
    newest = kernel is None
    reasons = set()
    if fstype == "ext4":
        if extending:
            reasons.add("extending")
        if first_hole >= 0.05:
            reasons.add("holes")
        if not newest and kernel < (6, 3) and first_unwritten >= 0.05:
            reasons.add("unwritten")
        if unaligned and not newest and kernel < (6, 5):
            reasons.add("unaligned")
        elif unaligned and first_unwritten >= 0.05:
            reasons.add("unaligned_unwritten")
    elif unaligned and not newest and kernel < (5, 12):
        reasons.add("unaligned")
    elif unaligned:
        if extending:
            reasons.add("extending")
        if first_hole + first_unwritten >= 0.05:
            reasons.add("unaligned")
    return reasons


@pytest.mark.parametrize("fstype", ["ext4", "xfs"])
@pytest.mark.parametrize("layout", ["written", "fallocated", "sparse", "append"])
@pytest.mark.parametrize("aligned", [True, False], ids=["aligned", "unaligned"])
def test_write_classes_match_fiemap(filesystems, tmp_path, fstype, layout, aligned):
    path = filesystems[fstype].path / f"{layout}-{'a' if aligned else 'u'}"
    blk = os.statvfs(filesystems[fstype].path).f_bsize
    bs = blk if aligned else blk // 2
    states, doc, work = run_case(path, layout, bs, tmp_path / "trace.json")
    writes = REGION // bs
    assert work["jobs"][0]["write"]["total_ios"] == writes
    d = dio_entry(doc, path)
    got = {k: d[k]["count"] for k in ("writes", "hole", "unwritten", "mapped", "allocating",
                                      "extending", "aligned", "unaligned")}
    # Each block's first write finds the FIEMAP state, any later one finds it written.
    want = {"writes": writes, "hole": states.count("hole"),
            "unwritten": states.count("unwritten"),
            "mapped": writes - states.count("hole") - states.count("unwritten"),
            "allocating": states.count("hole"),
            "extending": writes if layout == "append" else 0,
            "aligned": writes if aligned else 0, "unaligned": 0 if aligned else writes}
    assert got == want, (states.count("hole"), states.count("unwritten"), got)

    row = file_classes([{"trace": doc}])[0]
    causes = match_causes(fstype, row, {}, version=KERNEL)
    assert {c["reason"] for c in causes} == expected_reasons(
        fstype, states, writes, not aligned, layout == "append")
    if fstype == "ext4" and layout == "fallocated" and not aligned and KERNEL >= (6, 5):
        # The preallocated file's cause and remedy: align, never preallocate.
        assert causes[0]["reason"] == "unaligned_unwritten"
        assert "align" in causes[0]["remedy"] and "prealloc" not in causes[0]["remedy"]


def test_sweep_of_a_preallocated_file_in_half_blocks_blames_alignment(filesystems, tmp_path):
    """The sweep's own analysis for the fallocated + half-block case on ext4: the cause of
    the i_rwsem waits is unaligned_unwritten and the remedy is to align, never holes and
    never "preallocate" (fs/ext4/file.c ext4_dio_write_checks, docs/kernel-locking.md)."""
    half = os.statvfs(filesystems["ext4"].path).f_bsize // 2   # same image size below
    job = tmp_path / "prealloc.fio"
    job.write_text(f"[global]\ndirect=1\nrw=randwrite\nbs={half}\nsize=64m\n"
                   "layout=fallocated\n[w]\n")
    out = tmp_path / "sweep"
    res = LOCKSCOPE.run("sweep", "--job", job, "--fs", "ext4", "--threads", "1,4",
                        "--runtime", "1", "--image-size", "512m", "--image-dir", tmp_path,
                        "--out", out, "--no-report")
    assert res.returncode == 0, res.stderr[-2000:]
    ext4 = json.loads((out / "results.json").read_text())["analysis"]["ext4"]
    row = ext4["dio_classes"][0]
    assert row["hole"] == 0 and row["unwritten"] > 0 and row["unaligned"] == row["writes"]
    # before 6.5 every unaligned write is exclusive (docs/kernel-locking.md)
    reason = "unaligned_unwritten" if KERNEL >= (6, 5) else "unaligned"
    assert [c["reason"] for c in ext4["causes"]][:1] == [reason]
    assert not any(c["reason"] == "holes" for c in ext4["causes"])
    verdict = ext4["verdict"]
    if verdict["kind"] == "inode_lock_contention":
        assert verdict["reasons"][:1] == [reason]
        assert "align the writes" in verdict["remedies"][0]
        assert not any("prealloc" in r for r in verdict["remedies"])
