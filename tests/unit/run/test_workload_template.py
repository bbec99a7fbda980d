"""Command templates and the --command options: checked before anything starts."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from lockscope.errors import UsageError
from lockscope.run.workload.template import (
    POINT_FIELDS,
    THREAD_FIELDS,
    Split,
    check_template,
    render,
    template_fields,
)

from conftest import LOCKSCOPE

ROOT = Path(__file__).resolve().parents[3]


def test_fields_are_parsed_by_name():
    assert template_fields("fio --numjobs={threads} --runtime={runtime} {dir}/f", "x") == [
        "threads", "runtime", "dir"]
    assert template_fields("awk '{{print $1}}' {dir}/log", "x") == ["dir"]


@pytest.mark.parametrize("text, word", [
    ("fio --numjobs={thread_count}", "unknown field '{thread_count}'"),
    ("dd seek={part_offset}", "needs --per-thread"),
    ("echo {}", "not a field name"),
    ("echo {0}", "not a field name"),
    ("echo {dir.name}", "not a field name"),
    ("echo {threads:>4}", "takes no format"),
    ("echo {threads!r}", "takes no format"),
    ("echo {threads", "expected '}'"),
    ("   ", "empty command"),
])
def test_bad_templates_are_usage_errors(text, word):
    with pytest.raises(UsageError) as err:
        check_template(text, "--command", per_thread=False)
    assert word in str(err.value) and "\n" not in str(err.value)


def test_per_thread_fields_need_per_thread():
    for name in THREAD_FIELDS:
        check_template(f"x {{{name}}}", "--command", per_thread=True)
    for name in POINT_FIELDS:
        check_template(f"x {{{name}}}", "--command", per_thread=False)


def test_render_quotes_values_and_rounds_runtime_up(tmp_path):
    odd = tmp_path / "with space"
    line = render("fio --runtime={runtime} --numjobs={threads} --directory={dir}", 4, 2.5, odd)
    assert line == f"fio --runtime=3 --numjobs=4 --directory='{odd}'"
    assert render("x {runtime}", 1, 0.2, tmp_path) == "x 1"


def test_split_parts_tile_the_span_without_overlap():
    split = Split(span_bytes=10 << 20, block_bytes=64 << 10)
    parts = [split.part(i, 3) for i in range(3)]
    blocks = (10 << 20) // (64 << 10) // 3
    assert [p["part_offset"] for p in parts] == [0, blocks, 2 * blocks]
    for p in parts:
        assert p["part_blocks"] == blocks
        assert p["part_bytes"] == blocks * (64 << 10)
        assert p["part_offset_bytes"] == p["part_offset"] * (64 << 10)
    last = parts[-1]
    assert last["part_offset_bytes"] + last["part_bytes"] <= split.span_bytes


def lockscope(*args: str) -> subprocess.CompletedProcess:
    return LOCKSCOPE.run(*args, timeout=60)


@pytest.mark.parametrize("args, word", [
    (["--command", "fio --numjobs={nthreads}"], "unknown field '{nthreads}'"),
    (["--command", "dd count={part_blocks}"], "needs --per-thread"),
    (["--command", "true", "--prepare", "x {thread}"], "needs --per-thread"),
    (["--throughput", "fio"], "--throughput needs --command"),
    (["--command", "true", "--no-trace"], "--no-trace needs --throughput"),
    (["--command", "true", "--per-thread", "--span", "4k", "--threads", "1,3"],
     "fewer than 3 writers"),
    (["--command", "true", "--span", "1g"], "--span needs --per-thread"),
    (["--command", "true", "--block-size", "4k"], "--block-size needs --per-thread"),
    (["--command", "true", "--per-thread", "--span", "lots"], "--span: 'lots' is not a size"),
    (["--command", "true", "--trace-comm", "a-name-longer-than-15"], "--trace-comm"),
    (["--command", "no-such-tool-here --x={threads}"], "no-such-tool-here: command not found"),
    (["--command", "true", "--prepare", "no-such-tool-here"], "--prepare: no-such-tool-here"),
])
def test_cli_refuses_before_anything_starts(tmp_path, args, word):
    out = tmp_path / "out"
    res = lockscope("sweep", *args, "--out", str(out))
    assert res.returncode == 2, res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and word in lines[0], res.stderr
    assert lines[0].startswith("lockscope sweep: ")
    assert not out.exists()


def test_cli_command_excludes_scenario():
    res = lockscope("sweep", "--command", "true", "--scenario", "shared-sparse-randwrite")
    assert res.returncode == 2 and "not allowed with argument" in res.stderr


@pytest.mark.parametrize("line, execed", [
    ("dd if=/dev/zero of='/mnt/a b/big' bs=64k", True),
    ("fio --name=w --output-format=json >/dev/null", True),
    ("sysbench fileio run; echo done", False),
    ("fio a.fio | tee log", False),
    ("fio a.fio && true", False),
    ("if true; then fio a.fio; fi", False),
    ("FOO=1 fio a.fio", False),
    ("(cd /tmp && fio a.fio)", False),
    ("echo 'a;b'", True),
])
def test_one_simple_command_is_execed(line, execed):
    from lockscope.run.workload.gate import exec_form

    assert exec_form(line) == (f"exec {line}" if execed else line)
