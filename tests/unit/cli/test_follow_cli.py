"""``lockscope follow`` on recorded results: which finding, what the script's header and
defaults say, bad input as one line, and the report's follow-<N>.bt copies. The script
itself runs against the recorder in test_follow_kernel.py."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from lockscope.analysis.inode_findings import followed_findings
from lockscope.errors import UsageError
from lockscope.report.follow_script import STAMP, mkdev
from lockscope.report.follow_targets import parse_dev

ROOT = Path(__file__).resolve().parents[3]
SWEEP = ROOT / "reports" / "examples" / "default-sweep-results.json"
EXT4_XFS = ROOT / "tests" / "data" / "sweep-ext4-xfs.json"
ATTACH_V1 = ROOT / "tests" / "data" / "attach-v1.json"


def _one_line_error(res, code: int = 2) -> str:
    assert res.returncode == code, (res.stdout, res.stderr)
    assert "Traceback" not in res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("lockscope follow: "), res.stderr
    return lines[0]


@pytest.fixture
def two_recordings(tmp_path) -> Path:
    """The runs of two real sweeps in one document: two i_rwsem findings."""
    doc = json.loads(SWEEP.read_text())
    doc["runs"] += json.loads(EXT4_XFS.read_text())["runs"]
    out = tmp_path / "two" / "results.json"
    out.parent.mkdir()
    out.write_text(json.dumps(doc))
    return out


def test_one_finding_is_written_with_its_file_in_the_header(lockscope_cli, tmp_path):
    finding = followed_findings(json.loads(SWEEP.read_text()))[0]
    script = tmp_path / "follow-1.bt"
    res = lockscope_cli.run("follow", SWEEP.parent / SWEEP.name, "-o", script)
    assert res.returncode == 0, res.stderr
    text = script.read_text()
    major, minor = parse_dev(finding.dev)
    header = text.split("\nBEGIN\n")[0]
    assert text.startswith(STAMP)
    assert str(finding.path) in header
    assert f"dev {finding.dev}, ino {finding.ino}" in header and finding.share_text in header
    assert "Tested:" in header and "bpftrace follow-1.bt MAJOR MINOR INO" in header
    # the finding's dev and ino are the defaults of the positional parameters
    assert f"$# >= 3 ? $3 : {finding.ino})" in text
    assert f"($1 << 20) | $2 : {mkdev(major, minor)})" in text
    assert "tracepoint:lock:contention_begin" in text and "kprobe:" not in text
    assert "sched_waking" not in text
    # written again (it is lockscope's), and the kprobe variant with holders
    res = lockscope_cli.run("follow", SWEEP, "--probes", "kprobe", "--holders", "-o", script)
    assert res.returncode == 0, res.stderr
    text = script.read_text()
    assert "kprobe:rwsem_down_write_slowpath" in text and "lock:contention" not in \
        text.split("\nBEGIN\n")[1]
    assert "tracepoint:sched:sched_waking" in text


def test_stdout_and_one_liner(lockscope_cli):
    finding = followed_findings(json.loads(SWEEP.read_text()))[0]
    res = lockscope_cli.run("follow", SWEEP)
    assert res.returncode == 0 and res.stdout.startswith(STAMP), res.stderr
    res = lockscope_cli.run("follow", SWEEP, "--one-liner")
    assert res.returncode == 0, res.stderr
    line = res.stdout.strip()
    assert line.startswith("bpftrace -e '") and "\n" not in line
    assert f"i_ino == {finding.ino} " in line
    assert f"s_dev == {mkdev(*parse_dev(finding.dev))})" in line
    assert "script" in _one_line_error(lockscope_cli.run("follow", SWEEP, "--one-liner",
                                                         "--probes", "kprobe"))


def test_several_findings_are_listed_and_one_is_chosen(lockscope_cli, two_recordings,
                                                       tmp_path):
    findings = followed_findings(json.loads(two_recordings.read_text()))
    assert len(findings) == 2
    res = lockscope_cli.run("follow", two_recordings.parent)
    assert "--lock N" in _one_line_error(res)
    rows = res.stdout.splitlines()
    assert len(rows) == 2
    for n, (row, f) in enumerate(zip(rows, findings), 1):
        assert row.startswith(f"{n}  {f.path}  dev {f.dev}  ino {f.ino}  i_rwsem  ")
        assert f.share_text in row
    script = tmp_path / "second.bt"
    res = lockscope_cli.run("follow", two_recordings, "--lock", "2", "-o", script)
    assert res.returncode == 0, res.stderr
    assert f"$# >= 3 ? $3 : {findings[1].ino})" in script.read_text()
    assert "1 to 2" in _one_line_error(lockscope_cli.run("follow", two_recordings,
                                                         "--lock", "3"))


def test_no_finding_is_one_line(lockscope_cli, tmp_path):
    assert "no i_rwsem finding" in _one_line_error(lockscope_cli.run("follow", ATTACH_V1))
    # XFS's ILOCK is an inode lock a script cannot find from the inode: named, not followed
    doc = json.loads(EXT4_XFS.read_text())
    for run in doc["runs"]:
        run["trace"]["locks"] = [lk for lk in run["trace"]["locks"] if lk["kind"] != "i_rwsem"]
    only_ilock = tmp_path / "results.json"
    only_ilock.write_text(json.dumps(doc))
    assert "xfs_ilock" in _one_line_error(lockscope_cli.run("follow", only_ilock))
    assert "no such file" in _one_line_error(lockscope_cli.run("follow", tmp_path / "none"))


def test_file_of_this_host_gives_the_defaults(lockscope_cli, tmp_path):
    mine = tmp_path / "data.ibd"
    mine.write_bytes(b"x")
    st = os.stat(mine)
    script = tmp_path / "mine.bt"
    res = lockscope_cli.run("follow", SWEEP, "--file", mine, "-o", script)
    assert res.returncode == 0, res.stderr
    text = script.read_text()
    assert f"dev {os.major(st.st_dev)}:{os.minor(st.st_dev)}, ino {st.st_ino}" in text
    assert f"$# >= 3 ? $3 : {st.st_ino})" in text
    assert "No such file" in _one_line_error(
        lockscope_cli.run("follow", SWEEP, "--file", tmp_path / "absent"))


def test_never_overwrites_a_file_it_did_not_write(lockscope_cli, tmp_path):
    theirs = tmp_path / "theirs.bt"
    theirs.write_text("BEGIN { printf(\"mine\\n\"); }\n")
    assert "refusing to overwrite" in _one_line_error(
        lockscope_cli.run("follow", SWEEP, "-o", theirs))
    assert theirs.read_text().startswith("BEGIN")


def test_dev_as_major_minor_or_a_block_device_name():
    assert parse_dev("7:3") == (7, 3)
    block = Path("/sys/class/block")
    names = sorted(p.name for p in block.iterdir()) if block.is_dir() else []
    if names:
        major, minor = (int(x) for x in (block / names[0] / "dev").read_text().split(":"))
        assert parse_dev(names[0]) == (major, minor)
    with pytest.raises(UsageError):
        parse_dev("no-such-device-here")


def test_the_report_writes_and_lists_the_scripts(lockscope_cli, tmp_path):
    out = tmp_path / "rep"
    out.mkdir()
    (out / "results.json").write_text(SWEEP.read_text())
    res = lockscope_cli.run("report", out, "--format", "md", "--no-flame")
    assert res.returncode == 0, res.stderr
    finding = followed_findings(json.loads(SWEEP.read_text()))[0]
    script = (out / "follow-1.bt").read_text()
    assert script.startswith(STAMP) and f"ino {finding.ino}" in script
    md = (out / "report.md").read_text()
    assert "## Follow the lock elsewhere" in md
    assert f"| [follow-1.bt](follow-1.bt) | `{finding.path}` | {finding.dev} |" in md
    res = lockscope_cli.run("report", out, "--no-flame")
    assert res.returncode == 0, res.stderr
    assert "<code>follow-1.bt</code>" in (out / "report.html").read_text()
