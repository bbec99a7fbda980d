"""The recorder's naming rule (bpf/recorder/README.md): every function or global a
user-side file NAME.c exports starts with NAME_, so a name says which file holds it."""

from __future__ import annotations

import re
from pathlib import Path

RECORDER = Path(__file__).resolve().parents[3] / "bpf" / "recorder"
# A definition at the start of a line: type words, then the name and "(" or " =" / "[".
DEFINITION = re.compile(
    r"^(?!static\b|extern\b|typedef\b|struct\s+\w+\s*\{|enum\b|#|\s|/|\*|\})"
    r"[A-Za-z_][\w \t\*]*?\b(\w+)\s*(?:\(|\[|=)", re.M)


def exported(path: Path) -> list[str]:
    text = re.sub(r"/\*.*?\*/", "", path.read_text(), flags=re.S)
    names = []
    for m in DEFINITION.finditer(text):
        line = text[m.start():text.index("\n", m.start())]
        if line.rstrip().endswith(";") and "(" in line and "=" not in line:
            continue  # a declaration (e.g. of a library function), not a definition
        names.append(m.group(1))
    return names


def test_every_export_carries_its_files_prefix():
    # every stage's folder; the test drivers (testbin/) have only main()
    sources = sorted(p for p in RECORDER.rglob("*.c") if p.name != "main.c"
                     and not p.name.endswith(".bpf.c") and "testbin" not in p.parts)
    assert len(sources) > 10
    wrong = {}
    for src in sources:
        bad = [n for n in exported(src)
               if not n.startswith(src.stem + "_") and n not in (src.stem, "__cxa_demangle")]
        if bad:
            wrong[src.name] = bad
    assert not wrong, wrong


def test_the_check_sees_exports():
    # the pattern finds what it must, or the test above could not fail
    assert "opts_parse" in exported(RECORDER / "setup" / "opts.c")
    assert "syscall_names" in exported(RECORDER / "setup" / "syscall_names.c")
    assert "probe_groups" in exported(RECORDER / "attach" / "probe.c")
