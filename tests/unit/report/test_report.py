"""lockscope report, rendered in-process from a real recorded sweep and the real analyzer's
analysis of it (tests/support/recorded.py): HTML, Markdown, JSON."""

from __future__ import annotations

import base64
import gzip
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from markupsafe import escape

from lockscope.analysis import analyze
from lockscope.errors import UsageError
from lockscope.report import render_report
from lockscope.report.flame.embed import flame_for_embedding
from lockscope.report.flame.folded import iter_folded, merge, records_folded, strip_offsets
from lockscope.report.html import inline_svg
from lockscope.report.model import VERDICTS
from lockscope.schema import SCHEMA

from conftest import require_tool
from recorded import (
    expected_flame_graphs,
    recorded_runs_only,
    recorded_sweep,
    runs_at,
    thread_counts,
)

CARGO_BIN = str(Path.home() / ".cargo" / "bin")


@pytest.fixture(scope="module")
def inferno_path():
    """inferno on PATH the way the Makefile puts it there (cargo's bin directory)."""
    mp = pytest.MonkeyPatch()
    mp.setenv("PATH", f"{CARGO_BIN}:{__import__('os').environ.get('PATH', '')}")
    try:
        yield require_tool("inferno-flamegraph")
    finally:
        mp.undo()


@pytest.fixture(scope="module")
def doc():
    return recorded_sweep()


@pytest.fixture(scope="module")
def rendered(tmp_path_factory, doc, inferno_path):
    out = tmp_path_factory.mktemp("report")
    result = render_report(doc, out, formats=("html", "md", "json"), source="results.json")
    return out, result


def _html(rendered) -> str:
    return (rendered[0] / "report.html").read_text()


def _section(html: str, name: str, following: str) -> str:
    return html[html.index(f'<section id="{name}">'):html.index(f'<section id="{following}">')]


def test_render_report_writes_every_format(rendered):
    out, result = rendered
    assert set(result.outputs) == {"html", "md", "json"}
    for name in ("report.html", "report.md", "report.json", "report-scaling.png",
                 "report-time-share.png", "report-latency.png"):
        assert (out / name).is_file(), name
    assert result.flame_dir == out / "flame"
    assert all(p.exists() for p in result.files)


def test_html_verdict_comes_first_with_evidence_and_remedies(rendered, doc):
    html = _html(rendered)
    order = [html.index(f'<section id="{s}">') for s in
             ("verdict", "scaling", "time", "latency", "locks", "dio", "flame", "host",
              "reproduce")]
    assert order == sorted(order)
    verdict = html[order[0]:order[1]]
    for fs in ("ext4", "xfs"):
        v = doc["analysis"][fs]["verdict"]
        assert VERDICTS[v["kind"]][0] in verdict        # the label of each verdict kind
        assert str(escape(v["summary"])) in verdict
        for text in v["evidence"][:2] + v["remedies"][:1]:
            assert str(escape(text)) in verdict
        if v["kernel_function"]:
            assert v["kernel_function"] in verdict
    for cause in doc["analysis"]["ext4"]["causes"]:        # the kernel rules that fired
        assert str(escape(cause["kernel_source"])) in verdict


def test_html_is_self_contained(rendered):
    html = _html(rendered)
    assert '<meta name="generator" content="lockscope report' in html
    assert "Content-Security-Policy" in html and "default-src 'none'" in html
    # Nothing to fetch: no external scripts, styles, images or frames.
    assert not re.search(r'<(script|img|iframe|link)[^>]+(src|href)="(https?:)?//', html)
    assert not re.search(r"url\((['\"])?(https?:)?//", html)
    assert "<link" not in html


def test_html_plots_are_inline_svg_with_unique_ids(rendered, doc):
    html = _html(rendered)
    figures = re.findall(r'<figure class="plot" id="(plot-[a-z-]+)">(.*?)</figure>', html, re.S)
    assert [f[0] for f in figures] == ["plot-scaling", "plot-time-share", "plot-latency"]
    ids: list[str] = []
    for _name, body in figures:
        svg = body[body.index("<svg"):body.index("</svg>") + 6]
        root = ET.fromstring(svg)
        assert root.tag.endswith("svg")
        ids += re.findall(r'\sid="([^"]+)"', svg)
    assert len(ids) == len(set(ids)), "ids collide between plots"
    scaling = figures[0][1]
    for label in ("MiB/s", "IOPS", "threads", "ideal N·X(1)", "ext4", "xfs"):
        assert label in scaling, label
    if all(doc["analysis"][fs]["usl"]["ok"] for fs in ("ext4", "xfs")):
        assert "USL fit" in scaling
    # the heaviest inode lock at the highest thread count, named by its file
    top = doc["analysis"]["ext4"]["points"][-1]["inode_locks"][0]
    assert "% of thread time" in figures[1][1]
    assert f"{top['kind']} on {Path(top['path']).name}" in figures[1][1]
    assert "completion latency (ms)" in figures[2][1] and "p99.9" in figures[2][1]


def test_html_tables(rendered, doc):
    html = _html(rendered)
    locks = _section(html, "locks", "dio")
    ext4 = doc["analysis"]["ext4"]["locks"][0]
    for text in (ext4["name"], ext4["path"], ext4["mode"], ext4["functions"][0],
                 doc["analysis"]["xfs"]["locks"][0]["name"],
                 "total wait", "max wait", "p99 wait"):
        assert text in locks, text
    dio = _section(html, "dio", "flame")
    row = doc["analysis"]["ext4"]["dio_classes"][0]
    assert f"{row['hole']:,} ({100 * row['hole'] / row['writes']:.0f}%)" in dio
    assert "unwritten" in dio and "hole" in dio
    host = html[html.index('<section id="host">'):]
    facts = doc["host"]["filesystems"]["ext4"]
    recorder_groups = [f["name"] for f in doc["runs"][0]["trace"]["features"]]
    for text in (doc["host"]["kernel"], facts["mount_options"], facts["device"],
                 doc["workload"]["job"]["rw"], recorder_groups[0]):
        assert text in host, text


def test_html_reproduce_shows_every_command(rendered, doc):
    html = _html(rendered)
    repro = html[html.index('<section id="reproduce">'):]
    for cmd in doc["reproduce"]:
        assert cmd in repro
    assert " ".join(doc["command"]) in repro


def test_flame_graphs_are_written_and_valid(rendered, doc):
    out, _ = rendered
    flame = out / "flame"
    svgs = sorted(flame.glob("*.svg"))
    assert {p.name for p in svgs} == expected_flame_graphs(doc)
    for svg in svgs:
        root = ET.parse(svg).getroot()
        assert root.tag.endswith("svg")
        assert svg.with_suffix(".folded").is_file()
    hi = thread_counts(doc, "ext4")[-1]
    titles = ET.tostring(ET.parse(flame / f"ext4-lockwait-{hi}threads.svg").getroot(), "unicode")
    assert "ns waited" in titles and f"lock waits at {hi} threads" in titles
    assert "ns blocked" in (flame / f"ext4-offcpu-{hi}threads.svg").read_text()
    # The folded file holds the repeats' stacks: its total is their sum.
    folded = (flame / f"ext4-lockwait-{hi}threads.folded").read_text()
    total = sum(int(line.rsplit(" ", 1)[1]) for line in folded.splitlines())
    runs = runs_at(doc, "ext4", hi)
    assert total == sum(merge(runs, "lockwait").values())
    # Frames are merged by function: the recorder's return offsets are gone.
    assert any("+0x" in frame for lk in runs[0]["trace"]["locks"] for w in lk["waits"]
               for frame in w["kstack"])
    assert "+0x" not in folded


def test_differential_graph(rendered, doc):
    flame = rendered[0] / "flame"
    lo, hi = thread_counts(doc, "ext4")[0], thread_counts(doc, "ext4")[-1]
    diff = flame / f"ext4-lockwait-diff-{lo}to{hi}threads.folded"
    rows = [line.split(" ") for line in diff.read_text().splitlines()]
    assert rows and all(len(r) == 3 for r in rows), "diff folded has before and after counts"
    # Normalized: both columns carry the same total.
    before, after = (sum(int(r[i]) for r in rows) for i in (1, 2))
    assert abs(before - after) <= 0.01 * after + len(rows)
    svg_path = diff.with_suffix(".svg")
    assert ET.parse(svg_path).getroot().tag.endswith("svg")
    svg = svg_path.read_text()
    assert f"what grew from {lo} to {hi} threads" in svg and "red = larger share" in svg


def test_embedded_flame_graphs_unpack_to_the_svg(rendered, doc):
    out, _ = rendered
    html = _html(rendered)
    blobs = re.findall(r'<script type="application/octet-stream" id="([^"]+)">([^<]+)</script>',
                       html)
    assert len(blobs) == len(expected_flame_graphs(doc))
    svg = gzip.decompress(base64.b64decode(blobs[0][1])).decode()
    lo, hi = thread_counts(doc, "ext4")[0], thread_counts(doc, "ext4")[-1]
    on_disk = (out / "flame" / f"ext4-lockwait-diff-{lo}to{hi}threads.svg").read_text()
    assert svg == flame_for_embedding(on_disk)
    assert "lockscopeReplaceState" in svg
    # The lock-wait differential graphs (one per filesystem) are open by default.
    opened = re.findall(r'<details data-flame="[^"]+" data-title="([^"]+)"[^>]*\sopen>', html)
    assert len(opened) == 2 and all("what grew" in t and "lock waits" in t for t in opened)


def test_markdown(rendered, doc):
    out, _ = rendered
    md = (out / "report.md").read_text()
    assert md.startswith("<!-- generator: lockscope report")
    for fs in ("ext4", "xfs"):
        assert doc["analysis"][fs]["verdict"]["summary"] in md
    for img in re.findall(r"!\[[^\]]*\]\(([^)]+)\)", md):
        data = (out / img).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and b"lockscope report" in data[:4096]
    assert md.count("![") == 3
    top = doc["analysis"]["ext4"]["locks"][0]
    assert (f"| `{top['name']}` | {top['path']} | `{', '.join(top['functions'])}` "
            f"| {top['mode']} |") in md
    lo, hi = thread_counts(doc, "ext4")[0], thread_counts(doc, "ext4")[-1]
    assert f"flame/ext4-lockwait-diff-{lo}to{hi}threads.svg" in md
    assert "```sh" in md and doc["reproduce"][0] in md


def test_json_is_the_analysis(rendered, doc):
    out, _ = rendered
    text = (out / "report.json").read_text()
    data = json.loads(text)
    assert next(iter(data)) == "generator"
    assert data["analysis"]["ext4"]["verdict"] == doc["analysis"]["ext4"]["verdict"]
    assert data["derived"] == [] and data["schema"] == SCHEMA


def _untraced(doc, why: str):
    """The recording as a sweep with --no-trace or a refused recorder would hold it."""
    for run in doc["runs"]:
        run["trace"], run["trace_error"], run["recorder_cost"] = None, why, None
    doc["analysis"] = analyze(doc)
    return doc


def test_untraced_recording_renders_workload_and_says_why(tmp_path):
    why = "lockscope-record: bpf(BPF_MAP_CREATE) failed: Operation not permitted (EPERM)"
    doc = _untraced(recorded_sweep(), why)
    result = render_report(doc, tmp_path, formats=("html", "md", "json"))
    html = (tmp_path / "report.html").read_text()
    assert "not traced" in html and "bpf(BPF_MAP_CREATE) failed" in html
    assert 'id="plot-scaling"' in html and 'id="plot-latency"' in html
    assert 'id="plot-time-share"' not in html
    assert "No lock waits recorded for ext4" in html
    assert html.count("not traced, so no lock waits") == 2      # once per filesystem
    assert not list((tmp_path / "flame").glob("*.svg"))
    md = (tmp_path / "report.md").read_text()
    assert "not traced" in md and not (tmp_path / "report-time-share.png").exists()
    notes = json.loads((tmp_path / "report.json").read_text())["notes"]
    assert any("EPERM" in n for n in notes)
    assert result.outputs["html"].exists()


def test_features_off_are_explained(tmp_path, inferno_path):
    """The recorder's lock group off (as a kernel without lock:contention_* would leave
    it): the report says why and draws no lock-wait graphs."""
    why = "tp_btf: load failed: Permission denied; raw_tp: load failed: Permission denied"
    doc = recorded_sweep()
    for run in doc["runs"]:
        trace = run["trace"]
        for f in trace["features"]:
            if f["name"] in ("lock", "holders", "releasers"):
                f.update(enabled=False, attach=None, reason=why)
        trace["locks"], trace["holders"] = [], {}
        trace.pop("folded", None)
        for rec in trace["offcpu"]:
            if rec["reason"] == "lock":
                rec["reason"], rec["lock_addr"] = "other", None
    doc["analysis"] = analyze(doc)
    render_report(doc, tmp_path, formats=("html",))
    html = (tmp_path / "report.html").read_text()
    assert "&#39;lock&#39;" in html and why in html
    assert "no lock-wait stacks were recorded" in html
    flame = tmp_path / "flame"
    assert not list(flame.glob("*lockwait*.svg"))
    assert list(flame.glob("*offcpu*.svg"))


def test_no_analysis_falls_back_to_workload_stats(tmp_path):
    doc = recorded_runs_only()
    render_report(doc, tmp_path, formats=("html", "json"), flame=False)
    html = (tmp_path / "report.html").read_text()
    assert "no analysis section" in html and 'id="plot-scaling"' in html
    assert "computed from the workload statistics" in html
    data = json.loads((tmp_path / "report.json").read_text())
    assert sorted(data["derived"]) == ["ext4", "xfs"]
    pts = data["analysis"]["ext4"]["points"]
    assert [p["threads"] for p in pts] == thread_counts(doc, "ext4") and pts[0]["efficiency"] == 1.0
    # the same figures the analysis would have given
    assert pts == recorded_sweep()["analysis"]["ext4"]["points"]


def test_flame_graphs_from_lock_records_when_no_folded_stacks(tmp_path, inferno_path):
    doc = recorded_sweep()
    for run in doc["runs"]:
        run["trace"].pop("folded", None)    # older recorders wrote folded lines too
    render_report(doc, tmp_path, formats=("html",))
    lo, hi = thread_counts(doc, "ext4")[0], thread_counts(doc, "ext4")[-1]
    folded = (tmp_path / "flame" / f"ext4-lockwait-{hi}threads.folded").read_text()
    # the heaviest wait's leaf frame, rebuilt from the lock records, offsets stripped
    heaviest = max((w for r in runs_at(doc, "ext4", hi) for lk in r["trace"]["locks"]
                    for w in lk["waits"]), key=lambda w: w["total_ns"])
    assert heaviest["kstack"][0].split("+")[0] + "_[k]" in folded and "+0x" not in folded
    assert (tmp_path / "flame" / f"ext4-offcpu-diff-{lo}to{hi}threads.svg").exists()


def test_refuses_to_overwrite_foreign_files(tmp_path):
    doc = recorded_sweep()
    (tmp_path / "report.html").write_text("<html>my own notes</html>")
    with pytest.raises(UsageError, match="--force"):
        render_report(doc, tmp_path, formats=("html",), flame=False)
    assert (tmp_path / "report.html").read_text() == "<html>my own notes</html>"
    render_report(doc, tmp_path, formats=("html",), flame=False, force=True)
    assert "lockscope report" in (tmp_path / "report.html").read_text()
    # A report lockscope wrote may be rewritten without --force.
    render_report(doc, tmp_path, formats=("html",), flame=False)


def test_refuses_foreign_file_in_flame_dir(tmp_path):
    doc = recorded_sweep()
    (tmp_path / "flame").mkdir()
    mine = tmp_path / "flame" / f"ext4-lockwait-{thread_counts(doc, 'ext4')[-1]}threads.folded"
    mine.write_text("a;b 1\n")
    with pytest.raises(UsageError, match="not written by lockscope"):
        render_report(doc, tmp_path, formats=("html",))
    assert mine.read_text() == "a;b 1\n"


def test_rerender_overwrites_its_own_flame_files(tmp_path, inferno_path):
    doc = recorded_sweep()
    render_report(doc, tmp_path, formats=("html",))
    render_report(doc, tmp_path, formats=("html", "md"))
    assert (tmp_path / "flame" / ".lockscope-files").is_file()


def test_folded_shapes():
    lines = ["a;b 3", "a;c d 4", "bad", "x;y 2.0"]
    assert list(iter_folded(lines)) == [("a;b", 3), ("a;c d", 4), ("x;y", 2)]
    assert list(iter_folded("a;b 3\na 1\n")) == [("a;b", 3), ("a", 1)]
    assert list(iter_folded({"a;b": 5})) == [("a;b", 5)]
    assert list(iter_folded([["a;b", 2], {"frames": ["a", "b"], "ns": 7}])) == [
        ("a;b", 2), ("a;b", 7)]
    runs = [{"trace": {"folded": {"lockwait": ["a;b 3", "c 1"]}}},
            {"trace": {"folded": {"lockwait": ["a;b 4"]}}}, {"trace": None}]
    assert merge(runs, "lockwait") == {"a;b": 7, "c": 1}


def test_strip_offsets():
    assert strip_offsets("load;[libc.so.6+0x1f2];vfs_write+0x1c4;f+0x1a/0x40 12\ng+0x10 3") == \
        "load;[libc.so.6];vfs_write;f 12\ng 3"
    assert strip_offsets("a+0xzz;b 1") == "a+0xzz;b 1"


def test_records_folded_builds_root_first_stacks():
    trace = {"locks": [{"waits": [{"total_ns": 10, "kstack": ["schedule+0x1", "down_write+0x2"],
                                   "ustack": ["pwrite64", "main"]}]}],
             "offcpu": [{"total_ns": 5, "kstack": ["io_schedule/0x10"], "comm": "load"}]}
    assert records_folded(trace, "lockwait") == {
        "main;pwrite64;down_write_[k];schedule_[k]": 10}
    assert records_folded(trace, "offcpu") == {"load;io_schedule/0x10_[k]": 5}


def test_inline_svg_prefixes_ids_and_references():
    svg = ('<?xml version="1.0"?><!DOCTYPE svg><svg><metadata>x</metadata><defs>'
           '<path id="m1"/></defs><use xlink:href="#m1"/><g clip-path="url(#p2)" id="a"/></svg>')
    out = inline_svg(svg, "plot-x")
    assert out.startswith("<svg>") and "<metadata>" not in out
    assert 'id="plot-x-m1"' in out and 'xlink:href="#plot-x-m1"' in out
    assert "url(#plot-x-p2)" in out and 'id="plot-x-a"' in out


def test_model_hides_idle_files_and_names_unknown_locks():
    from lockscope.report.model import fs_view

    analysis = {"points": [{"threads": 1, "iops": {"mean": 10.0}}],
                "locks": [{"kind": "unknown", "name": "unknown", "addr": "0xffff1", "count": 3}],
                "dio_classes": [{"path": "/f", "writes": 5, "hole": 5},
                                {"path": "/g", "writes": 0, "buffered_writes": 0, "reads": 0}]}
    v = fs_view("ext4", analysis, [], {})
    assert v.locks[0]["lock"] == "unknown lock at 0xffff1"
    assert [d["path"] for d in v.dio] == ["/f"] and v.dio_idle == 1
    assert v.dio[0]["hole"] == "5 (100%)"


def test_render_result_reads_as_the_report_path(tmp_path):
    result = render_report(recorded_sweep(), tmp_path, flame=False)
    assert str(result) == str(tmp_path / "report.html")
    assert Path(result) == tmp_path / "report.html"


def test_a_database_clients_operations_are_named_transactions(tmp_path):
    doc = recorded_sweep()
    render_report(doc, tmp_path / "io", formats=("md",), flame=False)
    for run in doc["runs"]:
        run["workload"]["ops_unit"] = "TPS"  # as a preset's sweep marks its client's runs
    render_report(doc, tmp_path / "db", formats=("md",), flame=False)
    io_md = (tmp_path / "io" / "report.md").read_text()
    db_md = (tmp_path / "db" / "report.md").read_text()
    assert "| IOPS |" in io_md and "| TPS |" not in io_md
    assert "| TPS |" in db_md and "| IOPS |" not in db_md
    assert "x TPS from" in db_md and "x IOPS from" not in db_md


def test_groups_of_another_filesystem_are_not_missing(tmp_path):
    """ext4's probe groups left out of the XFS runs (lockscope-record --fs) are no
    missing feature: no note, "not needed" in the table, no sentence of what is lost."""
    doc = recorded_sweep()
    reason = "target files are on xfs (--fs)"
    for run in doc["runs"]:
        for f in run["trace"]["features"]:
            if run["fs"] == "xfs" and f["name"].startswith(("ext4_", "jbd2")):
                f.update(enabled=False, attach=None, reason=reason, not_needed=True, fs="ext4")
                f.pop("lost", None)
    # the host's table (--list-features) carries every group's sentence of what is lost
    xfs_run = next(r for r in doc["runs"] if r["fs"] == "xfs")
    lost = {f["name"]: f"without {f['name']} something is lost" for f in
            xfs_run["trace"]["features"]}
    doc["host"]["features"] = [{**f, "lost": lost[f["name"]]}
                               for f in xfs_run["trace"]["features"]]
    doc["analysis"] = analyze(doc)
    render_report(doc, tmp_path, formats=("html", "md"), flame=False)
    html = (tmp_path / "report.html").read_text()
    md = (tmp_path / "report.md").read_text()
    assert "ext4_map&#39; was off" not in html and "ext4_map' was off" not in md
    # an extra off on ext4 (no fentry/kprobe here) is still said, for ext4 alone
    said = [line for line in html.splitlines() if "ext4_write_entry&#39; was off" in line]
    assert said and all("(ext4)" in line for line in said), said
    assert "not needed" in html and "| not needed |" in md
    assert lost["ext4_map"] not in html


def test_an_attach_recorded_as_lockscope_1_still_renders(tmp_path):
    """Before lockscope/2 an attach kept its window as a sweep run (runs[0]); it is read
    into ``window`` and renders like a new one."""
    from lockscope.results import load_results

    doc = load_results(Path(__file__).resolve().parents[2] / "data" / "attach-v1.json")
    assert doc["schema"] == SCHEMA and "runs" not in doc
    window = doc["window"]
    assert window["label"] and window["threads"] >= 1 and window["trace"]["threads"]
    result = render_report(doc, tmp_path, ["html", "md", "json"], flame=False)
    page = result.outputs["html"].read_text()
    assert window["label"] in page
    data = json.loads(result.outputs["json"].read_text())
    assert data["kind"] == "attach" and data["analysis"]["attach"]["verdict"]["kind"]
