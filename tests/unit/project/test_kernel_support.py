"""README's kernel table and docs/kernels.md's group table are what the kernel matrix
measured (docs/kernel-matrix.json, written by `tools/kernels/run-matrix --update-docs`),
and that measurement is of the pinned kernels and met their expectations."""

from __future__ import annotations

import json
import sys

from conftest import ROOT

sys.path.insert(0, str(ROOT / "tools" / "kernels"))

from expectations import CORE_GROUPS, EXPECTED  # noqa: E402
from pins import KERNELS  # noqa: E402
from support import (  # noqa: E402
    groups_table,
    readme_table,
    support_doc,
    with_groups_table,
    with_readme_table,
)

MEASURED = ROOT / "docs" / "kernel-matrix.json"


def measured() -> dict:
    return json.loads(MEASURED.read_text())


def test_readme_and_docs_tables_are_the_measured_ones():
    doc = measured()
    readme = (ROOT / "README.md").read_text()
    kernels_md = (ROOT / "docs" / "kernels.md").read_text()
    assert readme_table(doc) in readme
    assert with_readme_table(readme, doc) == readme
    assert groups_table(doc) in kernels_md
    assert with_groups_table(kernels_md, doc) == kernels_md


def test_the_measurement_is_of_the_pinned_kernels_and_met_expectations():
    doc = measured()
    assert [(k["release"], k["package"], k["package_version"]) for k in doc["kernels"]] == [
        (k.release, k.package, k.version) for k in KERNELS]
    for k in doc["kernels"]:
        expect = EXPECTED[k["release"]]
        assert set(k["core_missing"]) == set(expect.missing), k["release"]
        assert set(k["checks_failed"]) <= set(expect.gaps), (k["release"], k["checks_failed"])
        assert set(k["core_loaded"]) | set(k["core_missing"]) == set(CORE_GROUPS)


def _summary(lock: dict) -> dict:
    groups = {g: {"enabled": True, "attach": "tp_btf", "not_needed": False, "extra": False,
                  "reason": None} for g in CORE_GROUPS}
    groups["lock"] = lock
    groups["holders"] = {"enabled": False, "attach": None, "not_needed": False,
                         "extra": False, "reason": "E2BIG"}
    missing = {"lock": "EACCES"} if not (lock["enabled"] or lock["not_needed"]) else {}
    return {"host_release": "h", "sweep": [], "cpus": 1, "jobs": 1, "seconds": 1.0,
            "kernels": [{"release": "r", "upstream": "9.9", "package": "p",
                         "package_version": "v", "stands_for": "Some OS",
                         "core_missing": missing, "groups": groups, "doctor_ok": not missing,
                         "checks": {"core_groups": {"ok": True}, "sweep_findings": {"ok": False}},
                         "wall_seconds": 12.0, "steps": {"doctor": {"rc": 0, "seconds": 3.2}}}]}


def test_the_tables_say_what_is_missing_replaced_and_failing():
    off = support_doc(_summary({"enabled": False, "attach": None, "not_needed": False,
                                "extra": False, "reason": "EACCES"}))
    row = readme_table(off).splitlines()[2]
    assert row.startswith(
        "| ? | 9.9 | ? | ? | - / - | Some OS | yes | dio, sched, syscalls, block |")
    assert "lock (core)" in row and "holders" in row and "checks failing: sweep_findings" in row
    assert "| lock | off |" in groups_table(off) and "| matrix time (s) | 12 |" in groups_table(off)
    stand_in = support_doc(_summary({"enabled": False, "attach": None, "not_needed": True,
                                     "extra": False, "reason": "from the slow paths"}))
    row = readme_table(stand_in).splitlines()[2]
    assert "lock (stand-in)" in row and "lock (core)" not in row
    assert "lock waits other than rwsem and mutex" in row
    assert "| lock | not needed |" in groups_table(stand_in)
