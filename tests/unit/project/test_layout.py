"""The package's shape: every Python file name is used once, no module imports itself
back (directly or through others, nor a folder through its siblings), and the layers
only import downwards: ``cli`` → ``run`` → ``report`` → ``analysis`` → ``schema``
(``export``, the metrics and profiles server, sits beside ``report``: over ``analysis``,
under ``run`` and ``cli``)."""

from __future__ import annotations

import ast
import re
import subprocess
from collections import Counter
from pathlib import Path

from graph_cycles import find_cycle

ROOT = Path(__file__).resolve().parents[3]
PACKAGE = ROOT / "analyzer" / "lockscope"
# names every package needs, and pytest's own
SHARED_NAMES = {"__init__.py", "__main__.py", "conftest.py"}
# what each layer may import from the others (the foundation modules at the top of the
# package, such as schema and errors, are open to all)
LAYERS = {"cli": {"run", "report", "analysis", "experiments", "export"},
          "experiments": {"run", "report", "analysis"},
          "run": {"report", "analysis", "export"},
          "export": {"analysis"},
          "report": {"analysis"},
          "analysis": set()}


def python_files() -> list[Path]:
    listed = subprocess.run(["git", "ls-files", "*.py"], cwd=ROOT, capture_output=True,
                            text=True, check=True).stdout.split()
    return [ROOT / p for p in listed if (ROOT / p).exists()]


def modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = ["lockscope", *path.relative_to(PACKAGE).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def imports(mods: dict[str, Path]) -> dict[str, set[str]]:
    """Module → the package modules it imports, at any depth of its code (an import
    inside a function is still a dependency)."""
    graph: dict[str, set[str]] = {}
    for name, path in mods.items():
        is_pkg = path.name == "__init__.py"
        here = name.split(".") if is_pkg else name.split(".")[:-1]
        deps: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = here[: len(here) - node.level + 1]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                for alias in node.names:
                    sub = f"{target}.{alias.name}"
                    deps.add(sub if sub in mods else target)
            elif isinstance(node, ast.Import):
                deps.update(a.name for a in node.names)
        graph[name] = {d for d in deps if d in mods and d != name}
    return graph



def test_no_file_name_twice():
    counts = Counter(p.name for p in python_files() if p.name not in SHARED_NAMES)
    twice = sorted(name for name, n in counts.items() if n > 1)
    assert not twice, f"file names used more than once: {twice}"


def test_no_module_import_cycle():
    assert find_cycle(imports(modules())) is None, find_cycle(imports(modules()))


def test_no_cycle_between_the_members_of_a_folder():
    # workload/ → procledger → workload/ is a cycle even when no single module repeats
    graph = imports(modules())
    packages = {m for m, p in modules().items() if p.name == "__init__.py"}
    for package in packages:
        def member(mod: str, package: str = package) -> str | None:
            if not mod.startswith(package + "."):
                return None
            return package + "." + mod[len(package) + 1:].split(".")[0]

        folded: dict[str, set[str]] = {}
        for src, deps in graph.items():
            a = member(src)
            if a:
                folded.setdefault(a, set()).update(
                    b for d in deps if (b := member(d)) and b != a)
        assert find_cycle(folded) is None, f"in {package}: {find_cycle(folded)}"


def test_layers_import_only_downwards():
    wrong = []
    for src, deps in imports(modules()).items():
        layer = src.split(".")[1] if src.count(".") else ""
        if layer not in LAYERS:
            continue
        for dep in deps:
            other = dep.split(".")[1] if dep.count(".") else ""
            if other in LAYERS and other != layer and other not in LAYERS[layer]:
                wrong.append(f"{src} imports {dep}")
    assert not wrong, wrong


def test_the_checks_see_a_cycle_and_a_repeat():
    # the checks themselves: a made-up cycle is found, a made-up repeat is counted
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None
    assert imports(modules())["lockscope.run.procledger"] >= {"lockscope.run.cgroups"}


def test_the_kind_of_a_recording_is_read_in_one_place():
    # report/forms.py picks the report's form; results.py only upgrades old attach files
    readers = sorted(str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py")
                     if re.search(r"""(get\(["']kind["']\)|\[["']kind["']\])\s*(==|!=|or)\s*"""
                                  r"""["'](attach|sweep)["']""", p.read_text()))
    assert readers == ["report/forms.py", "results.py"], readers


def test_cgroup_membership_is_read_in_one_place():
    readers = sorted(str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py")
                     if re.search(r"""cgroup\.procs["']\)?\.read_text|rglob\(["']cgroup\.procs""",
                                  p.read_text()))
    assert readers == ["run/cgroups.py"], readers
