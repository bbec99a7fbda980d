"""The report's speed-ups change nothing it writes: plots drawn in a forked child, stacks
stripped of their offsets once per distinct stack and frame."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

from lockscope.report import render_report
from lockscope.report.flame.folded import StrippedStacks, strip_lines, strip_offsets
from lockscope.report.forked import Forked

from recorded import recorded_sweep


def _render(out: Path) -> dict[str, bytes]:
    # without flame graphs: the plots are what the child draws (strip_lines is tested below)
    render_report(recorded_sweep(), out, formats=("html", "md"), source="results.json",
                  flame=False)
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*"))
            if p.is_file() and not p.name.startswith(".")}


def test_report_with_plots_in_a_child_is_the_one_drawn_in_process(tmp_path, monkeypatch):
    forked = _render(tmp_path / "forked")
    with monkeypatch.context() as m:
        m.delattr(os, "fork")  # Forked then calls the function in this process
        here = _render(tmp_path / "here")
    assert "report.html" in forked and any(k.endswith(".png") for k in forked)
    assert b"<svg" in forked["report.html"]
    assert forked == here


def test_forked_runs_the_function_in_a_child():
    assert Forked(os.getpid).result() != os.getpid()


def test_forked_child_failing_runs_the_function_here():
    parent = os.getpid()

    def only_here() -> str:
        if os.getpid() != parent:
            raise RuntimeError("in the child")
        return "here"

    assert Forked(only_here).result() == "here"


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
