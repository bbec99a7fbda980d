"""The HTML report in a real browser (headless Chromium over the DevTools pipe).

The page is loaded from a file with the network unused; every <details> is
opened so that each embedded flame graph is unpacked into its frame. The test
fails on any console error, uncaught exception or browser log error, in the
page or in a flame graph frame, and on any request that is not the page
itself or its own blob:/data: content.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from lockscope.report import render_report

from browser import check_page
from conftest import require_tool
from recorded import expected_flame_graphs, recorded_sweep, thread_counts

CARGO_BIN = str(Path.home() / ".cargo" / "bin")


@pytest.fixture(scope="module")
def chromium():
    return require_tool("chromium")


@pytest.fixture(scope="module")
def page(tmp_path_factory, chromium):
    mp = pytest.MonkeyPatch()
    mp.setenv("PATH", f"{CARGO_BIN}:{__import__('os').environ.get('PATH', '')}")
    try:
        require_tool("inferno-flamegraph")
        out = tmp_path_factory.mktemp("browser")
        render_report(recorded_sweep(), out, formats=("html",))
    finally:
        mp.undo()
    shot = out / "report.png"
    return check_page(out / "report.html", screenshot=shot, chromium=chromium), out


def test_page_loads_without_errors_or_fetches(page):
    report, _ = page
    assert report.errors == []
    assert report.requests, "the page itself was requested"
    assert all(u.startswith(("file:", "blob:", "data:")) for u in report.requests), \
        report.requests


def test_plots_and_tables_are_rendered(page):
    facts = page[0].facts
    assert facts["title"].startswith("lockscope:")
    assert facts["sections"] == ["verdict", "scaling", "time", "latency", "device", "locks", "dio",
                                 "flame", "follow", "host", "reproduce"]
    assert [p["id"] for p in facts["plots"]] == ["plot-scaling", "plot-time-share",
                                                 "plot-latency"]
    for p in facts["plots"]:
        assert p["svg"] and p["width"] > 600 and p["height"] > 250, p
    assert facts["tables"] >= 8


def test_every_flame_graph_is_unpacked_and_drawn(page):
    report, _ = page
    doc = recorded_sweep()
    graphs = len(expected_flame_graphs(doc))
    assert report.facts["flames"] == graphs and report.facts["all_flames_unpacked"]
    assert report.facts["flameErrors"] == []
    assert len(report.facts["iframes"]) == graphs
    assert all(f["width"] > 600 and f["height"] > 100 for f in report.facts["iframes"])
    drawn = [f for f in report.frames if f.get("root") == "svg"]
    assert len(drawn) == graphs
    # a holder graph may hold a few snapshots: all, the lock, an activity, a command
    assert all(f["frames"] > (3 if "holder did" in f["title"] else 10) for f in drawn), \
        [(f["frames"], f["title"]) for f in drawn]
    titles = {f["title"] for f in drawn}
    lo, hi = thread_counts(doc, "ext4")[0], thread_counts(doc, "ext4")[-1]
    assert f"ext4: what grew from {lo} to {hi} threads (lock waits, ns waited)" in titles
    assert f"xfs: off-CPU time at {thread_counts(doc, 'xfs')[-1]} threads (ns blocked)" in titles


def test_screenshot_is_taken(page):
    report, _ = page
    data = report.screenshot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000


def test_the_check_catches_errors_in_page_and_frames(tmp_path, chromium):
    # A control: errors in the page and inside a blob: frame must be reported.
    bad = tmp_path / "bad.html"
    bad.write_text(
        "<!DOCTYPE html><html><body><script>console.error('page error');</script>"
        "<script>var svg = '<svg xmlns=\"http://www.w3.org/2000/svg\"><script>"
        "missingFunction()<\\/script></svg>';"
        "var f = document.createElement('iframe');"
        "f.src = URL.createObjectURL(new Blob([svg], {type: 'image/svg+xml'}));"
        "document.body.appendChild(f);</script></body></html>")
    report = check_page(bad, chromium=chromium, settle_s=0.8)
    joined = "\n".join(report.errors)
    assert "page error" in joined
    assert "missingFunction" in joined
