"""What a new user meets first: `lockscope` on PATH after set-up, a comparison that names
no lock when none differs, a sentence in every verdict, a bad job refused before set-up."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from lockscope.analysis.compare import compare
from lockscope.analysis.rules import match_causes
from lockscope.analysis.verdict import decide

from conftest import LOCKSCOPE, not_here

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "reports" / "examples" / "default-sweep-results.json"


def _point(threads: int, iops: float, locks: list[dict] | None = None) -> dict:
    return {"threads": threads, "iops": {"mean": iops}, "mib_s": iops / 256,
            "efficiency": iops / (threads * 1000.0), "inode_locks": locks or [],
            "other_locks": [], "traced": True, "time_share": {}}


def _fs(points: list[dict]) -> dict:
    return {"points": points, "verdict": {"kind": "cpu_bound"}}


def test_install_puts_a_launcher_on_path_that_reports(tmp_path):
    """`make install` (run by make demo and make test) gives a new shell a `lockscope`
    that runs this checkout, from any directory: the README's path to `lockscope report`."""
    if not (ROOT / ".venv" / "bin" / "lockscope").exists():
        not_here("no .venv: run make deps")
    prefix = tmp_path / "prefix"
    res = subprocess.run(["make", "-s", "install", f"PREFIX={prefix}"], cwd=ROOT,
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    shutil.copy(EXAMPLE, tmp_path / "results.json")
    shell = subprocess.run(
        ["sh", "-c", "lockscope report results.json -o out.md && echo done"],
        cwd=tmp_path, capture_output=True, text=True,
        env={"PATH": f"{prefix / 'bin'}:/usr/bin:/bin", "HOME": str(tmp_path)})
    assert shell.returncode == 0 and "done" in shell.stdout, shell.stderr
    assert (tmp_path / "out.md").stat().st_size > 0


def test_install_leaves_a_foreign_file_alone(tmp_path):
    launcher = tmp_path / "bin" / "lockscope"
    launcher.parent.mkdir()
    launcher.write_text("#!/bin/sh\necho someone else's\n")
    res = subprocess.run(["make", "-s", "install", f"PREFIX={tmp_path}"], cwd=ROOT,
                         capture_output=True, text=True)
    assert res.returncode != 0 and "not a lockscope launcher" in res.stderr
    assert launcher.read_text() == "#!/bin/sh\necho someone else's\n"


def test_comparison_names_no_lock_when_none_differs():
    idle = {"key": "0xffff8881024bf084", "name": None, "share": 0.0}
    per_fs = {"ext4": _fs([_point(1, 1000), _point(4, 1500)]),
              "xfs": _fs([_point(1, 1000), _point(4, 3000)])}
    for a in per_fs.values():
        a["points"][-1]["other_locks"] = [idle]
    cmp = compare(per_fs)
    assert cmp["difference_lock"] is None
    assert "0xffff" not in cmp["summary"] and "no lock wait differs" in cmp["summary"]


def test_comparison_names_the_lock_that_differs():
    per_fs = {"ext4": _fs([_point(1, 1000), _point(4, 1000,
                                                   [{"kind": "i_rwsem", "share": 0.6}])]),
              "xfs": _fs([_point(1, 1000), _point(4, 3500)])}
    cmp = compare(per_fs)
    assert cmp["difference_lock"] == "i_rwsem" and "ext4 60%" in cmp["summary"]


@pytest.mark.parametrize("points", [[], [_point(1, 1000)]], ids=["no-runs", "one-count"])
def test_every_verdict_has_a_sentence(points):
    v = decide("ext4", points, [], [], cpus=os.cpu_count())
    assert v["kind"] == "inconclusive"
    assert v["summary"].strip().endswith(".") and len(v["summary"].split()) > 3


def test_unaligned_writes_onto_a_preallocated_file_are_told_to_align():
    """fallocated file, half-block writes: half find unwritten extents, none a hole."""
    classes = {"writes": 1000, "unaligned": 1000, "unwritten": 500, "mapped": 500, "hole": 0,
               "block_size": 4096}
    causes = match_causes("ext4", classes, {})
    assert [c["reason"] for c in causes] == ["unaligned_unwritten"]
    assert "align the writes to the fs block size" in causes[0]["remedy"]
    assert "prealloc" not in causes[0]["remedy"]


def test_xfs_unaligned_overwrites_of_written_blocks_are_no_cause():
    """fs/xfs/xfs_file.c xfs_file_dio_write_unaligned: written blocks stay shared."""
    classes = {"writes": 1000, "unaligned": 1000, "mapped": 1000, "hole": 0, "unwritten": 0}
    assert match_causes("xfs", classes, {}) == []


@pytest.mark.kernel
def test_a_bad_job_is_refused_before_any_set_up(tmp_path):
    job = tmp_path / "bad.fio"
    job.write_text("[global]\ndirect=1\nrw=randwrite\nbs=-4k\nsize=64m\n[w]\n")
    images, out = tmp_path / "images", tmp_path / "out"
    images.mkdir()
    res = LOCKSCOPE.run("sweep", "--job", job, "--threads", "1,2", "--image-dir", images,
                        "--out", out)
    assert res.returncode == 2
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and "bs" in lines[0] and "-4k" in lines[0], res.stderr
    assert not out.exists() and not any(images.iterdir())
    assert "Traceback" not in res.stderr
