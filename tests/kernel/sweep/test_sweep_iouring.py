"""The io_uring sweep (scenario shared-iouring-holes) on this host's kernel: what the
recorder measured of io-wq's hashed queue decides whether the verdict names it.

lockscope-load writes through io_uring, 16 deep per thread, into holes of one sparse ext4
file: ext4 refuses those writes non-blocking (fs/ext4/file.c ext4_dio_write_checks()), so
io_uring queues them to io-wq. Whether io-wq then runs them one at a time is the kernel's
rule (io_uring/io_uring.c io_prep_async_work(): before 6.4 it hashes them by the inode;
from 6.4 not on ext4). The test does not read the kernel's version: each point's recorder
document says whether requests were hashed and how long they waited behind another of
their file's. Where they were, the verdict names io-wq, with the rule before 6.4, exactly when the
measured wait behind the hash holds enough of the request time and of the lost efficiency
(analysis/iowq_sweep.py): on a one-CPU emulated guest the engine, the worker and the
completions share the CPU, and hashed requests wait behind another of their file's for a
few percent of their time only, which the verdict must then call not the limit. Where none
was hashed, io-wq's figures are measured zero and the verdict names something else.
"""

from __future__ import annotations

import json
import os

import pytest

from lockscope.analysis.iowq_sweep import REQUEST_SHARE, request_ns
from lockscope.analysis.thresholds import EXPLAINS

from sweep_runs import assert_nothing_left, lockscope

pytestmark = pytest.mark.kernel
SCENARIO = "shared-iouring-holes"


def keep_finding(hashed: bool, figures: dict) -> None:
    """With LOCKSCOPE_FINDINGS=FILE, whether the sweep measured hashed requests waiting
    behind each other, for the kernel matrix's judge to set against the kernel's
    expectation (tools/kernels/judge.py), with the figures and the verdict."""
    path = os.environ.get("LOCKSCOPE_FINDINGS")
    if path:
        with open(path, "a") as f:
            f.write(f"sweep_io_wq_hashed\t{'yes' if hashed else 'no'}\n"
                    f"sweep_io_wq_figures\t{json.dumps(figures)}\n")


def recorded(runs: list[dict]) -> dict:
    """io-wq's figures as the points' recorder documents have them, summed."""
    traces = [r["trace"] for r in runs]
    entries = [e["io_wq_hashed"] for t in traces for e in t.get("dio") or []
               if e.get("io_wq_hashed")]
    return {"measured": all((t.get("io_wq_hashed") or {}).get("measured") for t in traces),
            "queued": sum(e["queued"] for e in entries),
            "unhashed": sum(e["unhashed"] for e in entries),
            "behind_ns": sum(e["behind"]["total_ns"] for e in entries),
            "request_ns": sum(request_ns(r) or 0.0 for r in runs)}


@pytest.mark.alone  # the verdict weighs throughput from 1 to 2 threads
def test_the_recorded_io_wq_hash_decides_the_verdict(tmp_path):
    out = tmp_path / SCENARIO
    res = lockscope("sweep", "--scenario", SCENARIO, "--fs", "ext4", "--threads", "1,2",
                    "--runtime", "2", "--image-size", "2g", "--out", str(out), "--no-report")
    assert res.returncode == 0, res.stderr[-2000:]
    doc = json.loads((out / "results.json").read_text())
    assert_nothing_left(doc)
    assert doc["workload"]["job"]["ioengine"] == "io_uring"
    runs = [r for r in doc["runs"] if r["threads"] == 2]
    assert runs and all(r["trace"] for r in runs), [r.get("trace_error") for r in doc["runs"]]
    a = doc["analysis"]["ext4"]
    h, v = a["io_uring_hashed"], a["verdict"]
    got = recorded(runs)
    named = v["kind"] == "io_uring_serialized"
    keep_finding(bool(got["measured"] and got["behind_ns"]), {
        "recorded": got, "analysis": {k: h[k] for k in (
            "measured", "share", "explained_loss", "named")}, "verdict": v["kind"]})
    assert h["threads"] == 2
    if not got["measured"]:
        # not measured: said so, never a zero, nothing named
        assert h["measured"] is False and h["reason"] and h["share"] is None
        assert not named and any("not measured" in e for e in v["evidence"]), v
        return
    assert got["queued"] + got["unhashed"] > 0, got   # the holes sent writes to io-wq
    assert h["measured"] is True
    assert (h["queued"], h["unhashed"], h["behind_ns"]) == (
        got["queued"], got["unhashed"], got["behind_ns"])
    assert h["share"] == pytest.approx(min(got["behind_ns"] / got["request_ns"], 1.0))
    if got["behind_ns"]:
        # hashed requests waited behind each other: a kernel before 6.4, or a backport;
        # the rule before 6.4 is the cause whether or not it is the limit
        assert h["cause"]["kernel_range"] == "< 6.4", h["cause"]
        assert "io_prep_async_work()" in h["cause"]["kernel_source"]
        limit = h["share"] >= REQUEST_SHARE and (h["explained_loss"] or 0) >= EXPLAINS
        assert h["named"] == limit, h
        # (a verdict of the curve itself, or of the CPUs' capacity, comes before
        # io-wq's: a 5.10 guest held to half a CPU once scaled from 1 to 2 threads)
        assert named == limit or v["kind"] in ("scales", "cpu_bound"), v
        if named:
            assert v["reasons"] == ["io_uring_hashed"]
            assert v["path"].endswith(f"/{SCENARIO}.dat")
            assert v["remedies"] and v["remedies"][0] == h["cause"]["remedy"]
        elif v["kind"] not in ("scales", "cpu_bound"):
            # said with its measured share, as not the limit
            line = next(e for e in v["evidence"] if e.startswith("io-wq's hashed queue"))
            assert f"{h['share']:.0%} of request time" in line and "not the limit" in line
    else:
        # none hashed (6.4 and later with ext4): measured zero, and not the verdict
        assert got["queued"] == 0 and h["share"] == 0 and h["cause"] is None, (h, got)
        assert not named and not h["named"], v
        assert any("measured, none hashed" in e for e in v["evidence"]), v["evidence"]
