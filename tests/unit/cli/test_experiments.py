"""The experiments' tables and claim tests, on figures given here (no root, no kernel):
ratios, the claims' bounds, the rendered Markdown, the sweeps' arguments, bad input."""

from __future__ import annotations

import subprocess

import pytest

from lockscope.cli.main import build_parser
from lockscope.experiments import claims as c
from lockscope.experiments.catalog import EXPERIMENTS, SCALES
from lockscope.experiments.definition import Measured, Ratio, ratio_of
from lockscope.experiments.page import MARKER, experiment_view, render
from lockscope.experiments.tables import figure_rows
from lockscope.run.workload.template import check_template

from conftest import LOCKSCOPE


def measured(values: dict, verdicts: dict | None = None) -> Measured:
    return Measured(dict(values), dict(verdicts or {}))


# ---- ratios ---------------------------------------------------------------------------

def test_ratios_within_one_set_of_figures():
    figs = EXPERIMENTS[1].figures
    speedup = ratio_of(figs, ("4k", "xfs", 8), Ratio("threads", 1, ""))
    assert speedup == pytest.approx(290 / 73.7)
    vs = ratio_of(figs, ("64k", "xfs", 8), Ratio("fs", "ext4", ""))
    assert vs == pytest.approx(1236 / 374)
    # no base figure, no ratio (XFS at 1 thread is not published for experiment 4)
    assert ratio_of(EXPERIMENTS[4].figures, ("sync", "xfs", 4), Ratio("threads", 1, "")) \
        is None


def test_rows_hold_published_and_measured_side_by_side():
    exp = EXPERIMENTS[5]
    m = measured({("dd", "ext4", 1): 500.0, ("dd", "ext4", 2): 1000.0,
                  ("dd", "xfs", 1): 400.0, ("dd", "xfs", 2): 300.0})
    rows = {(r["case"], r["fs"], r["threads"]): r for r in figure_rows(exp, m)}
    assert set(rows) == set(exp.figures)
    ext4_2 = rows[("dd", "ext4", 2)]
    speed, vs_ext4 = exp.ratios
    assert speed.over == "threads" and vs_ext4.over == "fs"
    assert ext4_2["published"] == 1048
    assert ext4_2["published_ratios"][0] == pytest.approx(1048 / 1400)
    assert ext4_2["measured_ratios"][0] == pytest.approx(2.0)
    assert rows[("dd", "xfs", 2)]["measured_ratios"][1] == pytest.approx(0.3)
    # the base of a ratio reads 1.00x where its figure exists
    assert rows[("dd", "ext4", 1)]["measured_ratios"] == [1.0, 1.0]


# ---- claims ---------------------------------------------------------------------------

@pytest.mark.parametrize("x8,status", [(c.SCALES * 100, c.HOLDS), (c.FLAT * 100 - 1, c.FAILS),
                                       ((c.FLAT + c.SCALES) / 2 * 100, c.INCONCLUSIVE)])
def test_scales_bounds(x8, status):
    m = measured({("k", "xfs", 1): 100.0, ("k", "xfs", 8): x8})
    assert c.scales(m, "k", "xfs", 8).status == status


def test_descales_and_missing():
    m = measured({("k", "ext4", 1): 100.0, ("k", "ext4", 2): 100.0 * c.LOSS - 1})
    assert c.descales(m, "k", "ext4", 2).status == c.HOLDS
    m.mib_s[("k", "ext4", 2)] = 100.0
    assert c.descales(m, "k", "ext4", 2).status == c.FAILS
    assert c.descales(m, "k", "ext4", 4).status == c.MISSING


def test_flat_while_other_scales_tells_the_device_from_the_lock():
    def outcome(ext4_8, xfs_8):
        m = measured({("4k", "ext4", 1): 100.0, ("4k", "ext4", 8): ext4_8,
                      ("4k", "xfs", 1): 100.0, ("4k", "xfs", 8): xfs_8})
        return c.flat_while_other_scales(m, ["4k"], "ext4", "xfs", 8).status

    assert outcome(101, 300) == c.HOLDS           # the published shape
    assert outcome(250, 300) == c.FAILS           # ext4 scales too
    assert outcome(101, 105) == c.INCONCLUSIVE    # neither scales: the device's limit
    assert c.flat_while_other_scales(measured({}), [], "ext4", "xfs", 8).status == c.MISSING


def test_beats_at_all_or_most_counts():
    vals = {("r", "ext4", n): 100.0 * (c.LEAD if n != 4 else 1.0) for n in (1, 2, 4)}
    vals.update({("r", "xfs", n): 100.0 for n in (1, 2, 4)})
    m = measured(vals)
    assert c.beats(m, "r", "ext4", "xfs", [1, 2, 4]).status == c.FAILS
    assert c.beats(m, "r", "ext4", "xfs", [1, 2, 4], most=True).status == c.HOLDS


def test_converges():
    m = measured({("w", "xfs", 1): 150.0, ("w", "ext4", 1): 100.0,
                  ("w", "xfs", 16): 100.0, ("w", "ext4", 16): 100.0})
    assert c.converges(m, "w", "xfs", "ext4", 1, 16).status == c.HOLDS
    m.mib_s[("w", "xfs", 16)] = 150.0
    assert c.converges(m, "w", "xfs", "ext4", 1, 16).status == c.FAILS
    m.mib_s[("w", "xfs", 1)] = 100.0
    assert c.converges(m, "w", "xfs", "ext4", 1, 16).status == c.INCONCLUSIVE


def test_all_of_mixed_parts_are_inconclusive():
    h, f = c.Outcome(c.HOLDS, "a"), c.Outcome(c.FAILS, "b")
    assert c.all_of([h, h]).status == c.HOLDS
    assert c.all_of([f, c.Outcome(c.MISSING, "")]).status == c.FAILS
    assert c.all_of([h, f]).status == c.INCONCLUSIVE


def test_every_claim_of_every_experiment_answers_on_no_figures():
    for exp in EXPERIMENTS.values():
        for claim in exp.claims:
            assert claim.test(measured({})).status == c.MISSING, claim.text


# ---- the document ---------------------------------------------------------------------

def test_render_has_a_table_per_experiment_with_verdicts_and_claims():
    exp = EXPERIMENTS[5]
    m = measured({("dd", "ext4", 1): 500.0, ("dd", "ext4", 2): 1000.0,
                  ("dd", "xfs", 1): 400.0, ("dd", "xfs", 2): 300.0},
                 {("dd", "ext4"): {"kind": "scales", "confidence": "high",
                                   "summary": "a | b"}})
    views = [experiment_view(exp, m, ["lockscope sweep --fs ext4,xfs"], "small")]
    views += [experiment_view(e, measured({}), [], "small", "not run yet")
              for n, e in sorted(EXPERIMENTS.items()) if n != 5]
    text = render(views, {"kernel": "k", "cpus": 2, "backing": "vda", "date": "d"}, "full")
    assert text.startswith(MARKER)
    for n in EXPERIMENTS:
        assert f"\n## {n}. " in text
    section = text.split("## 5. ")[1]
    lines = section.splitlines()
    header = next(i for i, ln in enumerate(lines) if ln.startswith("| case | fs | threads"))
    assert lines[header - 1] == ""               # a Markdown table starts after a blank line
    assert lines[header + 1].startswith("|---|")
    rows = [ln for ln in lines[header + 2:header + 6]]
    assert rows[1] == "| dd | ext4 | 2 | 1,048 | 0.75x | 1.00x | 1,000 | 2.00x | 1.00x |"
    assert "a \\| b" in section                  # cell text cannot break the table
    assert "| two ext4 writers are slower than one (de-scaling) | **does not hold** |" \
        in section
    # experiments without published numbers have no published columns
    sec2 = text.split("## 2. ")[1].split("## 3. ")[0]
    assert "published MB/s" not in sec2


# ---- the sweeps -----------------------------------------------------------------------

@pytest.mark.parametrize("scale", sorted(SCALES))
def test_every_sweep_parses_as_the_sweep_would(scale, tmp_path):
    parser = build_parser()
    for exp in EXPERIMENTS.values():
        for sweep in exp.sweeps(SCALES[scale]):
            args = list(sweep.args) + (["--job", str(tmp_path / "j.fio")] if sweep.job
                                       else [])
            ns = parser.parse_args(["sweep", *args])
            assert ns.threads == list(sweep.threads)
            assert ns.fs == list(sweep.fss)
            for opt in ("command", "prepare"):
                if getattr(ns, opt, None):
                    check_template(getattr(ns, opt), f"--{opt}", ns.per_thread)


def _cli(*args: str) -> subprocess.CompletedProcess:
    return LOCKSCOPE.run("experiments", *args, timeout=60)


def test_unknown_experiment_is_a_usage_error():
    res = _cli("--only", "1,9")
    assert res.returncode == 2
    assert "'9' is not an experiment" in res.stderr
    assert "Traceback" not in res.stderr


def test_a_document_not_written_by_it_is_never_overwritten(tmp_path):
    doc = tmp_path / "experiments.md"
    doc.write_text("my notes\n")
    res = _cli("--doc", str(doc), "--out", str(tmp_path / "out"))
    assert res.returncode == 2
    assert len(res.stderr.strip().splitlines()) == 1
    assert doc.read_text() == "my notes\n"
    assert not (tmp_path / "out").exists()


# ---- figures from a recorded sweep ----------------------------------------------------

def test_figures_from_a_recorded_sweep():
    """A recorded experiment-3 write sweep (ext2, ext3, ext4; trimmed to what is read)."""
    import json
    from pathlib import Path

    from lockscope.experiments import figures

    doc = json.loads((Path(__file__).resolve().parents[2] / "data" / "experiments"
                      / "exp3-write-results.json").read_text())
    pts = figures.points(doc, "write")
    assert set(pts) == {("write", fs, 1) for fs in ("ext2", "ext3", "ext4")}
    assert pts[("write", "ext3", 1)] == doc["analysis"]["ext3"]["points"][0]["mib_s"]
    verdicts = figures.verdicts(doc, "write")
    assert verdicts[("write", "ext4")]["kind"] == doc["analysis"]["ext4"]["verdict"]["kind"]
    facts = figures.facts(doc, "write")
    # ext2 has no journal; ext3's commits are counted on its own device only, not on the
    # other images' journals that committed meanwhile
    assert facts[("write", "ext2")]["journal"]["commits"] == 0
    ext3 = facts[("write", "ext3")]["journal"]
    run = next(r for r in doc["runs"] if r["fs"] == "ext3")
    dev = run["files"][0]["dev"]
    own = [c for c in run["trace"]["jbd2"]["commits"] if c["dev"] == dev]
    assert len(own) < len(run["trace"]["jbd2"]["commits"])
    assert ext3["commits"] == sum(c["count"] for c in own)
    logged = sum(c["blocks_logged"] for c in own) * doc["host"]["filesystems"]["ext3"]["block_size"]
    data = run["workload"]["jobs"][0]["write"]["io_bytes"]
    assert ext3["share"] == pytest.approx(logged / (logged + data))
