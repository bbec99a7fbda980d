"""Every command's --help ends with examples (as libbpf-tools' do), and every example
is a command line the parser accepts."""

from __future__ import annotations

import shlex
import subprocess

import pytest

from lockscope.binaries import find_binary
from lockscope.cli.main import COMMANDS, build_parser


def _subparsers():
    parser = build_parser()
    action = next(a for a in parser._actions if a.dest == "command")
    return parser, action.choices


def test_every_subcommand_help_has_examples():
    parser, subs = _subparsers()
    assert len(subs) == len(COMMANDS)
    assert "examples:\n  lockscope sweep" in parser.format_help()
    for name, sub in subs.items():
        text = sub.format_help()
        assert "\nexamples:\n" in text, name
        shown = text.split("\nexamples:\n", 1)[1]
        assert f"  lockscope {name}" in shown, name


@pytest.mark.parametrize("module", COMMANDS, ids=lambda m: m.__name__.rsplit(".", 1)[-1])
def test_every_example_parses(module):
    for cmd, what in module.EXAMPLES:
        assert what and cmd.startswith("lockscope ")
        args = build_parser().parse_args(shlex.split(cmd)[1:])  # exits 2 on a bad option
        assert args.func is not None


@pytest.mark.parametrize("binary", ["lockscope-record", "lockscope-load"])
def test_binaries_help_has_examples(binary):
    res = subprocess.run([find_binary(binary), "--help"], capture_output=True, text=True,
                         timeout=30)
    assert res.returncode == 0, res.stderr
    examples = res.stdout.split("\nExamples:\n", 1)[1]
    assert examples.count(f"  {binary} ") >= 3
