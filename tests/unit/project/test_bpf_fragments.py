"""bpf/recorder/README.md's table of which kern/ fragment holds which probe group names
every group of the recorder's group table (attach/probe.c) once, and each group's
programs are where it says."""

from __future__ import annotations

import re
from pathlib import Path

RECORDER = Path(__file__).resolve().parents[3] / "bpf" / "recorder"
# a handler's program names: the handler, or it with its attach kind's suffix
SUFFIX = r"(_(btf|raw|tp|fentry|kprobe|fexit|kretprobe))?\b"


def group_table() -> dict[str, list[str]]:
    """Each group's handler names, in the table's order."""
    src = (RECORDER / "attach" / "probe.c").read_text()
    return {m[1]: re.findall(r'"(\w+)"', m[2]) for m in re.finditer(
        r'\[GROUP_\w+\]\s*=\s*\{\s*"(\w+)",\s*\{[^}]*\},\s*\{([^}]*)\}', src)}


def readme_table() -> dict[str, list[str]]:
    text = (RECORDER / "README.md").read_text()
    section = text.split("## Which fragment holds which group", 1)[1].split("\n## ", 1)[0]
    return {m[1]: re.findall(r"`(kern/[\w.]+)`", m[2])
            for m in re.finditer(r"^\| `(\w+)` \| (.+) \|$", section, re.M)}


def included(name: str, seen: set[str]) -> set[str]:
    """The fragments a file includes, transitively."""
    for inc in re.findall(r'#include "((?:kern/)?[\w.]+\.bpf\.inc)"',
                          (RECORDER / name).read_text()):
        path = inc if inc.startswith("kern/") else f"kern/{inc}"
        if path not in seen:
            seen.add(path)
            included(path, seen)
    return seen


def test_the_readme_names_every_group_once_in_the_tables_order():
    groups = group_table()
    assert len(groups) >= 15, "the group table was not parsed"
    assert list(readme_table()) == list(groups)


def test_each_groups_programs_are_in_its_fragments():
    where = readme_table()
    built = included("record.bpf.c", set())
    for group, handlers in group_table().items():
        assert set(where[group]) <= built, f"{group}: a fragment record.bpf.c never includes"
        text = "".join((RECORDER / f).read_text() for f in where[group])
        for h in handlers:
            assert re.search(r"\b" + h + SUFFIX, text), f"{group}: {h} not in {where[group]}"
