"""The ``lockscope`` command line: one subcommand per ``*_cmd`` module of ``cli/``, errors
as one line."""

from __future__ import annotations

import argparse
import sys

from .. import __version__
from ..errors import LockscopeError
from . import (
    attach_cmd,
    doctor_cmd,
    experiments_cmd,
    flame_cmd,
    report_cmd,
    scenarios_cmd,
    sweep_cmd,
)

# Each module adds its subparser and sets ``func``.
COMMANDS = [sweep_cmd, attach_cmd, scenarios_cmd, doctor_cmd, report_cmd, flame_cmd,
            experiments_cmd]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="lockscope",
        description="Explain why a filesystem stops scaling as threads are added: "
        "eBPF lock waits per file, tied to the throughput curve.")
    parser.add_argument("--version", action="version", version=f"lockscope {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for module in COMMANDS:
        module.add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)  # exits 2 with usage on bad input
    try:
        return int(args.func(args) or 0)
    except LockscopeError as exc:
        print(f"lockscope {args.command}: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print(f"lockscope {args.command}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 1
