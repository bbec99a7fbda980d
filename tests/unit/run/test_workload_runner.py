"""Command points without the recorder (no root needed): templates filled, throughput
read from the tool's real report, failures reported with the tool's last stderr line."""

from __future__ import annotations

import shutil

import pytest

from lockscope.run.workload.command_point import CommandSpec, PointFailed, run_command_point
from lockscope.run.workload.template import Split


def run(tmp_path, spec: CommandSpec, threads: int = 1):
    workdir = tmp_path / "dir"
    workdir.mkdir(exist_ok=True)
    return run_command_point(spec, threads, 1, workdir, tmp_path / "scratch", trace=False)


def test_prepare_then_per_thread_dd_writers(tmp_path):
    if not shutil.which("dd"):
        pytest.skip("dd not installed")
    spec = CommandSpec("dd if=/dev/zero of={dir}/f bs=4k conv=notrunc seek={part_offset} "
                       "count={part_blocks}",
                       prepare="dd if=/dev/zero of={dir}/f bs=4k count=64 status=none",
                       throughput="dd", per_thread=True, split=Split(64 << 12, 4 << 10))
    res = run(tmp_path, spec, threads=2)
    assert res.trace is None
    jobs = res.workload["jobs"]
    assert [j["jobname"] for j in jobs] == ["writer 0", "writer 1"]
    for job in jobs:
        assert job["write"]["bw_bytes"] * job["job_runtime"] / 1e3 == pytest.approx(32 << 12)
    assert res.workload["command"]["exit_status"] == [0, 0]
    assert (tmp_path / "dir" / "f").stat().st_size == 64 << 12


def test_failing_command_reports_its_last_stderr_line(tmp_path):
    spec = CommandSpec("echo first >&2; echo 'tool: cannot go on' >&2; exit 4")
    with pytest.raises(PointFailed) as err:
        run(tmp_path, spec)
    assert str(err.value) == "command exited 4: tool: cannot go on"
    assert err.value.exit_status == 4 and err.value.stderr_line == "tool: cannot go on"


def test_failing_prepare_ends_the_point_before_the_command(tmp_path):
    marker = tmp_path / "dir" / "ran"
    spec = CommandSpec(f"touch {marker}", prepare="echo 'no data' >&2; exit 2")
    with pytest.raises(PointFailed) as err:
        run(tmp_path, spec)
    assert str(err.value) == "--prepare exited 2: no data"
    assert not marker.exists()


def test_unreadable_report_names_the_tool_and_the_line(tmp_path):
    spec = CommandSpec("echo 'tps = many'", throughput="pgbench")
    with pytest.raises(PointFailed) as err:
        run(tmp_path, spec)
    assert str(err.value) == "pgbench output line 1: 'tps = many': tps is not a number here"


def test_the_point_directory_is_emptied_of_what_the_command_made(tmp_path):
    from lockscope.run.point import clean_workdir

    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep").write_text("x")
    spec = CommandSpec(f"mkdir -p {{dir}}/data/sub && touch {{dir}}/data/sub/f {{dir}}/top "
                       f"&& ln -s {outside} {{dir}}/link && dd if=/dev/zero of=/dev/null count=1",
                       throughput="dd")
    res = run(tmp_path, spec)
    assert res.workload["command"]["exit_status"] == [0]
    workdir = tmp_path / "dir"
    assert {p.name for p in workdir.iterdir()} == {"data", "top", "link"}
    clean_workdir(workdir)
    assert list(workdir.iterdir()) == []
    assert (outside / "keep").read_text() == "x"  # a link is removed, not followed


def test_without_parser_or_trace_there_is_no_throughput(tmp_path):
    with pytest.raises(PointFailed) as err:
        run(tmp_path, CommandSpec("true"))
    assert str(err.value).startswith("no throughput: ")


def test_a_parsed_tool_speaks_the_c_locale(tmp_path):
    if not shutil.which("dd"):
        pytest.skip("dd not installed")
    spec = CommandSpec("env > {dir}/env; dd if=/dev/zero of=/dev/null count=1",
                       throughput="dd")
    run(tmp_path, spec)
    assert "LC_ALL=C" in (tmp_path / "dir" / "env").read_text().splitlines()
