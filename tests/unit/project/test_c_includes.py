"""The C sources' #include "..." graph (workloads/, common/, bpf/): no circle, and each
folder with a stage rule includes only the folders the rule allows.

Each quoted include is resolved as the compiler does: the including file's folder
first, then the -I folders of the command that compiles it, read from what make would
run (``make -n -B``) for every Makefile under those folders, so a new folder or -I
flag needs no change here. Includes that resolve outside them (system headers, the
generated skeletons under build/) are not followed."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from pathlib import Path

from graph_cycles import find_cycle

ROOT = Path(__file__).resolve().parents[3]
TREES = ("workloads", "common", "bpf")

# Stage order: folder (from the repository's root) → the folders (or single files) its
# files may include besides their own; a folder not listed may include any. A rule
# admits what the folder may use, so stages stay one-way when each rule lists only the
# stages below it.
# The engine (workloads/README.md): engines, job, stats, io, report, then main.c and
# control.c at the top; each stage may use the ones before it.
_ENGINE_ORDER = ["workloads/engines", "workloads/job", "workloads/stats", "workloads/io",
                 "workloads/report", "workloads"]
ENGINE_STAGES: dict[str, set[str]] = {
    stage: {"common", *_ENGINE_ORDER[:i]} for i, stage in enumerate(_ENGINE_ORDER)}
# The recorder (bpf/recorder/README.md, "Stages"): setup, attach, read, resolve, emit,
# then main.c and session.c at the top; each stage may use the ones before it and the
# two headers every stage shares at the top (the kernel/user record layouts, messages).
_RECORDER_ORDER = ["bpf/recorder/setup", "bpf/recorder/attach", "bpf/recorder/read",
                   "bpf/recorder/resolve", "bpf/recorder/emit"]
_RECORDER_SHARED = {"bpf/recorder/record.h", "bpf/recorder/msg.h"}
RECORDER_STAGES: dict[str, set[str]] = {
    stage: {"common", *_RECORDER_SHARED, *_RECORDER_ORDER[:i]}
    for i, stage in enumerate(_RECORDER_ORDER)}
STAGES: dict[str, set[str]] = {
    # the shared C code includes nothing of the programs built on it
    "common": set(),
    **ENGINE_STAGES,
    **RECORDER_STAGES,
}

INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"([^"]+)"', re.M)
ENTERING = re.compile(r"Entering directory [`']([^']*)'")


def compile_commands(root: Path, trees: tuple[str, ...]) -> list[tuple[list[Path], list[Path]]]:
    """(C sources, -I folders) of every command the trees' Makefiles would run."""
    commands = []
    env = {**os.environ, "LC_ALL": "C"}  # make's "Entering directory" in English
    for tree in trees:
        for makefile in sorted((root / tree).rglob("Makefile")):
            res = subprocess.run(["make", "-n", "-B", "-w", "-C", str(makefile.parent)],
                                 capture_output=True, text=True, timeout=120, env=env)
            assert res.returncode == 0, f"make -n in {makefile.parent}: {res.stderr}"
            cwd = [makefile.parent]
            for line in res.stdout.splitlines():
                if m := ENTERING.search(line):
                    cwd.append(Path(m.group(1)))
                    continue
                if "Leaving directory" in line:
                    cwd.pop()
                    continue
                try:
                    words = shlex.split(line)
                except ValueError:
                    continue
                sources = [cwd[-1] / w for w in words if w.endswith(".c")]
                if not sources:
                    continue
                dirs = []
                for i, w in enumerate(words):
                    if w == "-I" and i + 1 < len(words):
                        dirs.append(cwd[-1] / words[i + 1])
                    elif w.startswith("-I") and len(w) > 2:
                        dirs.append(cwd[-1] / w[2:])
                commands.append(([s.resolve() for s in sources], [d.resolve() for d in dirs]))
    return commands


def include_graph(root: Path, trees: tuple[str, ...]) -> dict[str, set[str]]:
    """Every .c/.h under the trees → the files under the trees it includes (paths from
    root). A file no command reaches is read with the -I folders of its own tree."""
    root = root.resolve()
    scope = [root / t for t in trees]
    files = sorted(p.resolve() for t in scope for p in t.rglob("*") if p.suffix in (".c", ".h"))
    commands = compile_commands(root, trees)
    texts: dict[Path, list[str]] = {}
    graph: dict[str, set[str]] = {}
    seen: set[tuple[Path, tuple[Path, ...]]] = set()

    def rel(p: Path) -> str:
        return p.relative_to(root).as_posix()

    def in_scope(p: Path) -> bool:
        return any(p.is_relative_to(t) for t in scope)

    def walk(f: Path, dirs: tuple[Path, ...]) -> None:
        if (f, dirs) in seen:
            return
        seen.add((f, dirs))
        if f not in texts:
            texts[f] = INCLUDE.findall(f.read_text(errors="replace"))
        edges = graph.setdefault(rel(f), set())
        for name in texts[f]:
            for d in (f.parent, *dirs):
                target = (d / name).resolve()
                if target.is_file():
                    if in_scope(target):
                        edges.add(rel(target))
                        walk(target, dirs)
                    break

    for sources, dirs in commands:
        for src in sources:
            if in_scope(src) and src.is_file():
                walk(src, tuple(dirs))
    for f in files:
        if rel(f) not in graph:
            tree = next(t for t in scope if f.is_relative_to(t))
            own = dict.fromkeys(d for srcs, ds in commands for d in ds
                                if any(s.is_relative_to(tree) for s in srcs))
            walk(f, tuple(own))
    return graph



def stage_violations(graph: dict[str, set[str]], stages: dict[str, set[str]]) -> list[str]:
    wrong = []
    for src, deps in sorted(graph.items()):
        here = os.path.dirname(src)
        if here not in stages:
            continue
        for dep in sorted(deps):
            there = os.path.dirname(dep)
            if there != here and there not in stages[here] and dep not in stages[here]:
                wrong.append(f"{src} includes {dep}")
    return wrong


def module_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """The same graph with NAME.c and NAME.h as one node NAME: a .c that includes a
    header whose .c includes its header back is a circle of the two modules, which no
    single file's includes show."""
    out: dict[str, set[str]] = {}
    for src, deps in graph.items():
        node = os.path.splitext(src)[0]
        out.setdefault(node, set()).update(
            d for d in (os.path.splitext(dep)[0] for dep in deps) if d != node)
    return out


def test_no_include_cycle():
    graph = include_graph(ROOT, TREES)
    assert find_cycle(graph) is None, " -> ".join(find_cycle(graph) or [])
    modules = module_graph(graph)
    assert find_cycle(modules) is None, " -> ".join(find_cycle(modules) or [])


def test_the_graph_sees_the_includes():
    # resolved the compiler's way, or the test above could pass on an empty graph
    graph = include_graph(ROOT, TREES)
    assert "workloads/control.h" in graph["workloads/main.c"]      # from the file's own folder
    assert "workloads/io/run.h" in graph["workloads/control.h"]    # through -I.
    assert "common/clock.h" in graph["workloads/io/worker.c"]      # through -I../common
    assert "common/json_out.h" in graph["common/json_out.c"]
    assert any(deps for src, deps in graph.items() if src.startswith("bpf/"))


def test_folders_include_only_what_their_stage_allows():
    for folder in STAGES:
        assert (ROOT / folder).is_dir(), f"a stage rule names no folder: {folder}"
    assert stage_violations(include_graph(ROOT, TREES), STAGES) == []


def plant(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


def test_a_planted_cycle_is_found(tmp_path):
    # lib/a.c → inc/x.h → inc/y.h → inc/x.h, resolved through the Makefile's -Iinc
    plant(tmp_path, {
        "src/Makefile": "all:\n\tcc -I../inc -c lib/a.c -o /dev/null\n",
        "src/lib/a.c": '#include "x.h"\n#include <stdio.h>\n',
        "inc/x.h": '#ifndef X_H\n#define X_H\n#include "y.h"\n#endif\n',
        "inc/y.h": '#ifndef Y_H\n#define Y_H\n #  include "x.h"\n#endif\n',
    })
    graph = include_graph(tmp_path, ("src", "inc"))
    assert graph["src/lib/a.c"] == {"inc/x.h"}
    assert find_cycle(graph) == ["inc/x.h", "inc/y.h", "inc/x.h"]

    (tmp_path / "inc/y.h").write_text("#ifndef Y_H\n#define Y_H\n#endif\n")
    assert find_cycle(include_graph(tmp_path, ("src", "inc"))) is None


def test_a_planted_module_cycle_is_found(tmp_path):
    # p.c includes a.h and a.c includes p.h: no file includes itself back, the modules do
    plant(tmp_path, {
        "src/Makefile": "all:\n\tcc -c p.c a.c -o /dev/null\n",
        "src/p.c": '#include "p.h"\n#include "a.h"\n', "src/p.h": "",
        "src/a.c": '#include "a.h"\n#include "p.h"\n', "src/a.h": "",
    })
    graph = include_graph(tmp_path, ("src",))
    assert find_cycle(graph) is None
    assert find_cycle(module_graph(graph)) in (["src/a", "src/p", "src/a"],
                                               ["src/p", "src/a", "src/p"])


def test_a_planted_upward_include_is_found(tmp_path):
    # core/ may include nothing else; core/b.h reaches up into app/ through its own path
    plant(tmp_path, {
        "t/Makefile": "all:\n\tcc -I. -c app/main.c -o /dev/null\n",
        "t/app/main.c": '#include "core/b.h"\n',
        "t/app/app.h": "int app;\n",
        "t/core/b.h": '#include "../app/app.h"\n',
    })
    graph = include_graph(tmp_path, ("t",))
    assert find_cycle(graph) is None
    rules = {"t/core": set(), "t/app": {"t/core"}}
    assert stage_violations(graph, rules) == ["t/core/b.h includes t/app/app.h"]
    assert stage_violations(graph, {"t/app": {"t/core"}}) == []
