"""io-wq's hashed queue in a sweep's verdict, on constructed sweep documents of an
io_uring engine (tests/support/iouring_sweep_docs.py): named with the rule of the
recorded kernel where the hashed requests' wait holds the request time at the top thread
count; measured and unhashed, nothing named but said; not measured, said and never 0; a
measurement against the kernel's range, the contradiction line."""

from __future__ import annotations

import pytest
from iouring_sweep_docs import DATA, doc, flat, run

from lockscope.analysis import analyze
from lockscope.analysis.iowq_sweep import REQUEST_SHARE
from lockscope.analysis.thresholds import EXPLAINS


def test_hashed_requests_holding_request_time_name_io_wq_with_the_rule_before_6_4():
    a = flat("6.1.0-56-amd64", (0.9, 0.93, 0.95))
    h = a["io_uring_hashed"]
    assert h["measured"] is True and h["threads"] == 4
    assert h["share"] == pytest.approx(0.95, abs=0.01)
    # t(N) = N / X: from 0.5 ms to 2 ms per I/O; the hashed part went 0.45 -> 1.9 ms
    assert h["explained_loss"] == pytest.approx((0.95 * 4 - 0.9) / 3, abs=0.01)
    assert h["named"] and h["share"] >= REQUEST_SHARE and h["explained_loss"] >= EXPLAINS
    v = a["verdict"]
    assert v["kind"] == "io_uring_serialized"
    assert v["path"] == DATA and v["reasons"] == ["io_uring_hashed"]
    c = h["cause"]
    assert c["kernel_range"] == "< 6.4" and "io_prep_async_work()" in c["kernel_source"]
    assert "a kernel upgrade removes this" in v["remedies"][0]
    assert any("kernels < 6.4" in e for e in v["evidence"])
    assert "io-wq" in v["summary"] and "Measured:" not in v["summary"]
    assert a["kernel_rules"]["disagreements"] == []
    # every point carries its own measure, in request time
    p1 = a["points"][0]["io_uring_hashed"]
    assert p1["share"] == pytest.approx(0.9, abs=0.01) and p1["request_ns"] > 0


def test_measured_and_unhashed_names_nothing_and_says_none_was_hashed():
    a = flat("6.18.44", (None, None, None), unhashed=True)
    h = a["io_uring_hashed"]
    assert h["measured"] is True and h["share"] == 0 and h["queued"] == 0
    assert h["named"] is False and h["cause"] is None
    v = a["verdict"]
    assert v["kind"] != "io_uring_serialized"
    assert any("measured, none hashed" in e and "unhashed" in e for e in v["evidence"])


def test_a_small_hashed_share_is_said_and_not_named():
    a = flat("6.1.0-56-amd64", (0.02, 0.03, 0.05))
    h = a["io_uring_hashed"]
    assert h["measured"] and h["share"] == pytest.approx(0.05, abs=0.01)
    assert h["named"] is False
    assert a["verdict"]["kind"] != "io_uring_serialized"
    assert any("5% of request time" in e and "not the limit" in e
               for e in a["verdict"]["evidence"])


@pytest.mark.parametrize("measured", [False, None])
def test_not_measured_is_said_and_never_zero(measured):
    a = flat("6.1.0-56-amd64", (0.9, 0.93, 0.95), measured=measured)
    h = a["io_uring_hashed"]
    assert h["measured"] is False and h["reason"]
    assert h["share"] is None and h["explained_loss"] is None and h["share_by_threads"] == {}
    assert all(p["io_uring_hashed"]["share"] is None for p in a["points"])
    v = a["verdict"]
    assert v["kind"] != "io_uring_serialized"
    assert any("not measured" in e and h["reason"] in e for e in v["evidence"])


def test_a_psync_sweep_gets_no_io_wq_line():
    runs = [run(n, 2000, None, "6.18.44") for n in (1, 2, 4)]
    a = analyze(doc(runs, "6.18.44", ioengine="psync"))["ext4"]
    assert a["io_uring_hashed"]["measured"] is True
    assert not any("io-wq" in e for e in a["verdict"]["evidence"])


def test_hashed_writes_on_a_kernel_whose_range_says_not_are_the_contradiction_line():
    # ext4 sets the parallel-DIO flag from 6.4: hashed writes fit only the older rule
    a = flat("6.12.117+deb12-amd64", (0.9, 0.93, 0.95))
    c = a["io_uring_hashed"]["cause"]
    assert c["kernel_range"] == "< 6.4" and "behaves like < 6.4" in c["evidence"]
    v = a["verdict"]
    assert v["kind"] == "io_uring_serialized"
    assert "Measured:" in v["summary"] and "behaves like < 6.4" in v["summary"]
    (d,) = a["kernel_rules"]["disagreements"]
    assert ">= 6.10" in d and "behaves like < 6.4" in d
