"""The engine's naming rule (workloads/README.md): a file NAME.c exports only NAME or
NAME_* (functions and globals; static ones are free), so a name says which file holds
it; and no two of its files call each other, directly or round a circle.

Read from the objects make builds (``nm``): exactly the symbols the linker sees."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from graph_cycles import find_cycle

ROOT = Path(__file__).resolve().parents[3]
WORKLOADS = ROOT / "workloads"
OBJDIR = ROOT / "build" / "workloads"  # workloads/Makefile's default OUT


def symbols(obj: Path) -> tuple[set[str], set[str]]:
    """(global symbols the object defines, symbols it needs from elsewhere)."""
    out = subprocess.run(["nm", str(obj)], capture_output=True, text=True, check=True).stdout
    defined, undefined = set(), set()
    for line in out.splitlines():
        words = line.split()
        if len(words) == 2 and words[0] == "U":
            undefined.add(words[1])
        elif len(words) == 3 and words[1].isupper():  # lower case: static
            defined.add(words[2])
    return defined, undefined


def misnamed(stem: str, defined: set[str]) -> list[str]:
    return sorted(s for s in defined if s != stem and not s.startswith(stem + "_"))


def call_graph(objects: dict[str, Path]) -> dict[str, set[str]]:
    """Source → the other sources whose exports it uses."""
    syms = {src: symbols(obj) for src, obj in objects.items()}
    owner = {s: src for src, (defined, _) in syms.items() for s in defined}
    return {src: {owner[s] for s in undefined if s in owner and owner[s] != src}
            for src, (_, undefined) in syms.items()}



@pytest.fixture(scope="module")
def objects() -> dict[str, Path]:
    """workloads/X/NAME.c → its object, brought up to date by make."""
    res = subprocess.run(["make", "-s", "-C", str(WORKLOADS)], capture_output=True,
                         text=True, timeout=600)
    assert res.returncode == 0, res.stderr
    out = {}
    for src in sorted(WORKLOADS.rglob("*.c")):
        rel = src.relative_to(WORKLOADS)
        obj = OBJDIR / rel.with_suffix(".o")
        assert obj.is_file(), f"make built no object for workloads/{rel}"
        out[rel.as_posix()] = obj
    return out


def test_every_export_is_named_after_its_file(objects):
    assert len(objects) > 20
    wrong = {}
    for src, obj in objects.items():
        if bad := misnamed(Path(src).stem, symbols(obj)[0]):
            wrong[src] = bad
    assert not wrong, wrong


def test_no_two_files_call_each_other(objects):
    graph = call_graph(objects)
    assert "job/options.c" in graph["job/cmdline.c"]  # the graph sees calls
    assert find_cycle(graph) is None, " -> ".join(find_cycle(graph) or [])


def test_the_checks_fail_on_planted_faults(tmp_path):
    # an export named after no file, beside a static and a well-named one; and two
    # files that call each other
    files = {
        "probe.c": "static int probe_hidden(void) { return 1; }\n"
                   "int probe_count;\n"
                   "int probe_run(void) { return probe_hidden(); }\n"
                   "int run_probe(void) { return 2; }\n",
        "ping.c": "int pong_back(void);\nint ping_go(void) { return pong_back(); }\n",
        "pong.c": "int ping_go(void);\nint pong_back(void) { return ping_go(); }\n",
    }
    objs = {}
    for name, text in files.items():
        (tmp_path / name).write_text(text)
        obj = tmp_path / name.replace(".c", ".o")
        subprocess.run(["cc", "-c", str(tmp_path / name), "-o", str(obj)], check=True)
        objs[name] = obj
    defined, _ = symbols(objs["probe.c"])
    assert defined == {"probe_count", "probe_run", "run_probe"}
    assert misnamed("probe", defined) == ["run_probe"]
    assert misnamed("probe_run", {"probe_run"}) == []
    assert find_cycle(call_graph(objs)) == ["ping.c", "pong.c", "ping.c"]
