"""Facts that two files must agree on: each copy is derived from one source, or checked
against it here."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import lockscope
from lockscope import sweep_choices
from lockscope.binaries import find_binary
from lockscope.cli import attach_cmd
from lockscope.run.dbserver.presets import PRESETS
from lockscope.run.scenarios import SCENARIOS
from lockscope.run.workload.parsers import PARSERS

ROOT = Path(__file__).resolve().parents[3]


def test_setup_reads_the_packages_version():
    res = subprocess.run([sys.executable, "setup.py", "--version"], cwd=ROOT,
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip().splitlines()[-1] == lockscope.__version__


def test_one_python_version_for_install_type_check_and_lint():
    requires = re.search(r'python_requires=">=(\d+)\.(\d+)"',
                         (ROOT / "setup.py").read_text())
    assert requires, "setup.py names no python_requires"
    major, minor = requires.groups()
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert project["tool"]["mypy"]["python_version"] == f"{major}.{minor}"
    assert project["tool"]["ruff"]["target-version"] == f"py{major}{minor}"
    assert sys.version_info >= (int(major), int(minor))


def test_attach_budget_default_is_the_recorders():
    """lockscope attach stores its --max-overhead in results.json, so it names the
    default itself: the recorder's own (opts.c, printed by --help)."""
    res = subprocess.run([find_binary("lockscope-record"), "--help"], capture_output=True,
                         text=True, timeout=30)
    line = next(ln for ln in res.stdout.splitlines() if ln.lstrip().startswith("--max-overhead"))
    help_text = res.stdout[res.stdout.index(line):].split("\n  --", 1)[0]
    recorder_default = float(re.search(r"\(default ([\d.]+)", help_text).group(1))
    assert attach_cmd.DEFAULT_MAX_OVERHEAD == recorder_default


def test_the_sweeps_choices_are_what_it_runs():
    """sweep_choices names for the parser, without importing them, what run/ has: the
    throughput parsers, the presets and the default scenario."""
    assert sweep_choices.THROUGHPUT_TOOLS == tuple(sorted(PARSERS))
    assert set(sweep_choices.PRESET_DESCRIPTIONS) == set(PRESETS)
    assert sweep_choices.DEFAULT_SCENARIO in {s.name for s in SCENARIOS}
