"""The README and the documents link only to files that exist, and the README stays a
short overview that still holds the two set-up commands."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")),
        *sorted(ROOT.glob("*/README.md")), *sorted(ROOT.glob("*/*/README.md"))]
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(doc):
    broken = [target for target in LINK.findall(doc.read_text())
              if "://" not in target and not (doc.parent / target).exists()]
    assert not broken, f"{doc.relative_to(ROOT)}: {broken}"


def test_readme_is_an_overview_with_the_two_commands():
    text = (ROOT / "README.md").read_text()
    assert len(text.splitlines()) <= 200
    assert "make demo" in text and "make test" in text
    for doc in ("docs/index.md", "docs/architecture.md", "docs/sweep.md", "docs/attach.md"):
        assert f"]({doc})" in text and (ROOT / doc).is_file(), doc


def test_every_document_is_in_the_index():
    index = (ROOT / "docs" / "index.md").read_text()
    for doc in sorted((ROOT / "docs").glob("*.md")):
        if doc.name != "index.md":
            assert f"]({doc.name})" in index, f"docs/{doc.name}: link it from docs/index.md"


COMMAND = re.compile(r"^(?:\$ )?(?:sudo )?(lockscope (?:sweep|attach|report|flame|doctor|"
                     r"scenarios|experiments)(?:\s.*)?)$")


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_documented_command_parses(doc):
    """Each `lockscope ...` command line in a code block is one the parser accepts (a
    shell substitution such as $(pidof mariadbd) stands for one word)."""
    from lockscope.cli.main import build_parser

    for block in re.findall(r"```[a-z]*\n(.*?)```", doc.read_text(), re.S):
        for line in re.sub(r"\\\n\s*", " ", block).splitlines():
            m = COMMAND.match(line.strip())
            if not m:
                continue
            argv = shlex.split(re.sub(r"\$\([^)]*\)", "1", m.group(1)), comments=True)[1:]
            try:
                build_parser().parse_args(argv)
            except SystemExit:
                pytest.fail(f"{doc.relative_to(ROOT)}: {line.strip()}")
