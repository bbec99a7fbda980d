"""Every start of lockscope builds the whole parser, so building it imports no more than
argparse and the ``*_cmd`` modules: what a subcommand runs is imported only when it runs
(on an emulated machine the run side's and the analysis's modules took seconds)."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys

import pytest

from lockscope.cli.main import COMMANDS

from conftest import LOCKSCOPE, ROOT

# what the parser may import of the package: the rest waits for a subcommand to run
PARSER_MODULES = {"lockscope", "lockscope.cli", "lockscope.cli.main", "lockscope.errors",
                  "lockscope.sweep_choices"} | {m.__name__ for m in COMMANDS}
# the third-party packages the subcommands use (setup.py)
THIRD_PARTY = {"numpy", "matplotlib", "jinja2", "rich", "google", "prometheus_client", "yaml",
               "bcrypt", "pymysql", "psycopg"}

PROBE = """
import json, sys
from lockscope.cli.main import build_parser
for argv in (["--version"], ["attach", "--help"], ["sweep", "--help"]):
    try:
        build_parser().parse_args(argv)
    except SystemExit:
        pass
print(json.dumps(sorted(sys.modules)))
"""


def test_the_parser_imports_no_subcommand():
    res = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True,
                         env=LOCKSCOPE.env(), cwd=ROOT, timeout=60)
    assert res.returncode == 0, res.stderr
    loaded = json.loads(res.stdout.splitlines()[-1])
    ours = {m for m in loaded if m == "lockscope" or m.startswith("lockscope.")}
    assert ours <= PARSER_MODULES, sorted(ours - PARSER_MODULES)
    assert not {m.split(".")[0] for m in loaded} & THIRD_PARTY


@pytest.mark.parametrize("name", sorted(p.stem for p in (ROOT / "analyzer" / "lockscope" / "cli")
                                        .glob("*.py") if p.stem != "__init__"))
def test_every_command_module_imports(name):
    # those a subcommand imports when it runs are otherwise first imported by a kernel test
    importlib.import_module(f"lockscope.cli.{name}")
