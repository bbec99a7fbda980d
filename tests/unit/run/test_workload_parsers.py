"""Throughput parsers on real reports of the real tools (tests/data/workload/), and their
errors on bad output: one line naming the tool and the line."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from lockscope.analysis.runs import workload_figures
from lockscope.run.workload.parsers import (
    PARSERS,
    ToolOutputError,
    parse_dd,
    parse_fio,
    parse_pgbench,
    parse_sysbench,
)

DATA = Path(__file__).resolve().parents[2] / "data" / "workload"


def sample(name: str) -> str:
    return (DATA / name).read_text()


def number_after(text: str, label: str) -> float:
    """The figure as the report prints it, found by a route of the test's own."""
    for line in text.splitlines():
        if line.strip().startswith(label):
            return float(re.findall(r"[0-9.]+", line.split(label, 1)[1])[0])
    raise AssertionError(f"{label} not in sample")


def test_fio_json_keeps_the_jobs_and_sums_them():
    text = sample("fio-randwrite-2jobs.json")
    doc = json.loads(text)
    tp = parse_fio(text)
    assert tp.tool == "fio" and tp.direction == "write"
    assert len(tp.jobs) == len(doc["jobs"]) == 2
    assert tp.ops_s == pytest.approx(sum(j["write"]["iops"] for j in doc["jobs"]))
    assert tp.bytes_s == pytest.approx(sum(j["write"]["bw_bytes"] for j in doc["jobs"]))
    figs = workload_figures({"workload": {"jobs": tp.fio_jobs("fio")}})
    assert figs["iops"] == pytest.approx(tp.ops_s)
    assert figs["clat_ns"]["p99"] == doc["jobs"][0]["write"]["clat_ns"]["percentile"][
        "99.000000"]


def test_fio_notes_before_the_json_are_skipped():
    text = "note: both iodepth >= 1 and synchronous I/O engine are selected\n" + \
        sample("fio-randwrite-2jobs.json")
    assert parse_fio(text).ops_s == parse_fio(sample("fio-randwrite-2jobs.json")).ops_s


def test_sysbench_fileio_random_write():
    text = sample("sysbench-fileio-rndwr.txt")
    tp = parse_sysbench(text)
    assert tp.direction == "write"
    assert tp.ops_s == pytest.approx(number_after(text, "writes/s:")
                                     + number_after(text, "reads/s:"))
    assert tp.bytes_s == pytest.approx(number_after(text, "written, MiB/s:") * 2**20)
    assert tp.latency_ns["mean"] == pytest.approx(number_after(text, "avg:") * 1e6)
    assert tp.runtime_s == pytest.approx(number_after(text, "total time:"))


def test_sysbench_fileio_mixed_async_counts_both_directions():
    text = sample("sysbench-fileio-rndrw-async.txt")
    tp = parse_sysbench(text)
    reads, writes = number_after(text, "reads/s:"), number_after(text, "writes/s:")
    assert reads > 0 and writes > 0
    assert tp.ops_s == pytest.approx(reads + writes)
    assert tp.direction == ("read" if reads > writes else "write")
    assert tp.bytes_s == pytest.approx((number_after(text, "read, MiB/s:")
                                        + number_after(text, "written, MiB/s:")) * 2**20)


def test_pgbench_tps_and_latency():
    text = sample("pgbench.txt")
    tp = parse_pgbench(text)
    assert tp.ops_s == pytest.approx(number_after(text, "tps ="))
    assert tp.latency_ns["mean"] == pytest.approx(number_after(text, "latency average =")
                                                  * 1e6)
    assert tp.bytes_s == 0


def test_dd_reads_bytes_and_seconds_not_the_rounded_rate():
    text = sample("dd-stderr.txt")
    tp = parse_dd(text)
    copied = re.search(r"^(\d+) bytes .* copied, ([0-9.]+) s", text, re.M)
    assert tp.bytes_s == pytest.approx(int(copied[1]) / float(copied[2]))
    records = int(re.search(r"^(\d+)\+0 records out", text, re.M)[1])
    assert tp.ops_s == pytest.approx(records / float(copied[2]))


@pytest.mark.parametrize("tool, text, line_no", [
    ("fio", "fio: pid=12, err=28/file:io_u.c:1889, error=No space left on device\n", 1),
    ("fio", '{\n  "jobs" : [\n    { "jobname" : "w", \n', 3),
    ("fio", '{"fio version": "fio-3.33"}\n', 1),
    ("sysbench", "FATAL: Cannot open file 'test_file.0' errno = 2 (No such file)\n", 1),
    ("sysbench", "File operations:\n    reads/s:   n/a\n", 2),
    ("pgbench", "pgbench: error: connection to server failed\n", None),
    ("pgbench", "tps = fast (without initial connection time)\n", 1),
    ("dd", "dd: error writing 'x': No space left on device\n", 1),
    ("dd", "1+0 records out\nlots bytes copied, 1 s, 1 MB/s\n", 2),
    ("dd", "", None),
])
def test_bad_output_names_the_tool_and_the_line(tool, text, line_no):
    parser = PARSERS[tool][0]
    with pytest.raises(ToolOutputError) as err:
        parser(text)
    msg = str(err.value)
    assert msg.startswith(f"{tool} output") and "\n" not in msg
    assert err.value.line_no == line_no
    if line_no is not None:
        assert f"line {line_no}" in msg


def test_every_parser_reads_its_own_stream():
    assert {name: stream for name, (_, stream) in PARSERS.items()} == {
        "fio": "stdout", "sysbench": "stdout", "pgbench": "stdout", "dd": "stderr"}


def test_sysbench_oltp_transactions_per_second():
    text = sample("sysbench-oltp-write-only.txt")
    tp = parse_sysbench(text)
    line = next(ln for ln in text.splitlines() if ln.strip().startswith("transactions:"))
    assert tp.ops_s == pytest.approx(float(line.split("(")[1].split()[0]))
    assert tp.bytes_s == 0
    assert tp.latency_ns["p95"] == pytest.approx(number_after(text, "95th percentile:") * 1e6)
