"""The report's speed-ups change nothing it writes: plots drawn in a forked child (forked
once the results are loaded, or before, importing matplotlib meanwhile), stacks stripped
of their offsets once per distinct stack and frame."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

from lockscope.errors import UsageError
from lockscope.report import render_report
from lockscope.report.flame.folded import StrippedStacks, strip_lines, strip_offsets
from lockscope.report.forked import Forked, Standby
from lockscope.report.render import plot_standby
from lockscope.results import load_results
from lockscope.schema import ResultsDoc

from recorded import recorded_sweep


def _attach() -> ResultsDoc:
    return load_results(Path(__file__).resolve().parents[2] / "data" / "attach-v1.json")


def _render(doc: ResultsDoc, out: Path, standby: Standby | None = None) -> dict[str, bytes]:
    # without flame graphs: the plots are what the child draws (strip_lines is tested below)
    render_report(doc, out, formats=("html", "md"), source="results.json", flame=False,
                  standby=standby)
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*"))
            if p.is_file() and not p.name.startswith(".")}


@pytest.mark.parametrize("make", [recorded_sweep, _attach], ids=["sweep", "attach"])
def test_report_with_plots_in_a_child_is_the_one_drawn_in_process(make, tmp_path, monkeypatch):
    forked = _render(make(), tmp_path / "forked")
    with plot_standby() as standby:
        assert standby.pid
        early = _render(make(), tmp_path / "early", standby)
    with monkeypatch.context() as m:
        m.delattr(os, "fork")  # Forked then calls the function in this process
        here = _render(make(), tmp_path / "here")
    assert "report.html" in forked and any(k.endswith(".png") for k in forked)
    assert b"<svg" in forked["report.html"]
    assert forked == here
    assert early == here


def _children() -> set[int]:
    me = str(os.getpid())
    kids = set()
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            fields = dict(line.split(":\t", 1) for line in status.read_text().splitlines()
                          if ":\t" in line)
        except OSError:
            continue  # ended meanwhile
        if fields.get("PPid", "").strip() == me:
            kids.add(int(status.parent.name))
    return kids


def test_a_refused_report_leaves_no_plot_child_behind(tmp_path):
    doc = recorded_sweep()
    (tmp_path / "flame").mkdir()
    top = max(run["threads"] for run in doc["runs"] if run["fs"] == "ext4")
    (tmp_path / "flame" / f"ext4-lockwait-{top}threads.folded").write_text("a;b 1\n")
    before = _children()
    with pytest.raises(UsageError, match="not written by lockscope"):
        render_report(doc, tmp_path, formats=("html",))
    assert _children() <= before


def test_forked_runs_the_function_in_a_child():
    assert Forked(os.getpid).result() != os.getpid()


def test_forked_child_failing_runs_the_function_here():
    parent = os.getpid()

    def only_here() -> str:
        if os.getpid() != parent:
            raise RuntimeError("in the child")
        return "here"

    assert Forked(only_here).result() == "here"


def test_standby_runs_the_call_in_its_child():
    with Standby(("json",)) as standby:
        child = standby.pid
        pending = standby.run(os.getpid)
    assert child and pending.result() == child != os.getpid()


def test_standby_not_called_ends_its_child():
    with Standby(("json",)) as standby:
        child = standby.pid
    assert child
    with pytest.raises(ChildProcessError):
        os.waitpid(child, os.WNOHANG)  # reaped already


def test_standby_runs_here_what_it_cannot_hand_over_or_what_fails():
    parent = os.getpid()
    with Standby(()) as standby:
        assert standby.run(lambda: os.getpid()).result() == parent  # a lambda: not picklable
    with Standby(()) as standby:
        assert standby.run(_only_here, parent).result() == "here"


def _only_here(parent: int) -> str:
    if os.getpid() != parent:
        raise RuntimeError("in the child")
    return "here"


@pytest.mark.parametrize("lines", [
    ["a+0x1c4;b+0x6f/0x200 12", "a+0x1c4;c 3", "a+0x1c4;b+0x6f/0x200 12"],
    ["comm;[libc.so.6+0x1f2];x+0xff_[k] 7", "weird+0xzz;y+0x1 1", "no_offsets 4"],
    ["a frame with spaces+0x10;b+0x2 5", "x+0x10 1", "x+0x10/0x2g;y+0xAB 2"],
])
def test_strip_lines_strips_like_strip_offsets(lines):
    cache = StrippedStacks()
    text, total = strip_lines(lines, cache)
    assert text == strip_offsets("\n".join(lines)) + "\n"
    assert total == sum(int(line.rpartition(" ")[2]) for line in lines)
    assert strip_lines(lines, cache) == (text, total)  # from the cache


@pytest.mark.parametrize("line", ["a;b", "a;b 1.5", " 12", "a;b 12 "])
def test_strip_lines_refuses_what_is_not_stack_and_integer(line):
    with pytest.raises(ValueError):
        strip_lines(["a;b 1", line], StrippedStacks())


def test_stacks_stripped_frame_by_frame_are_stripped_as_a_whole():
    # random frames of the characters an offset is made of and ends at
    rng = random.Random(23)
    alphabet = ["+0x", "+0x", "/0x", "1", "a", "F", "g", "]", "[", " ", "\t", "_", "+"]
    cache = StrippedStacks()
    for _ in range(3000):
        frames = ["".join(rng.choices(alphabet, k=rng.randint(0, 7)))
                  for _ in range(rng.randint(1, 5))]
        stack = ";".join(frames)
        assert cache[stack] == strip_offsets(stack), stack
        assert f"{cache[stack]} 3" == strip_offsets(f"{stack} 3"), stack
