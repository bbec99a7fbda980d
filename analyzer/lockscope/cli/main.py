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
    follow_cmd,
    report_cmd,
    scenarios_cmd,
    sweep_cmd,
)

# Each module adds its subparser and sets ``func``.
COMMANDS = [sweep_cmd, attach_cmd, scenarios_cmd, doctor_cmd, report_cmd, flame_cmd,
            follow_cmd, experiments_cmd]


EXAMPLES_TITLE = "examples:\n"


class ExamplesFormatter(argparse.HelpFormatter):
    """Wraps descriptions as usual; keeps the examples' lines (the epilog) as written."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if text.startswith(EXAMPLES_TITLE):
            return "".join(indent + line for line in text.splitlines(keepends=True))
        return super()._fill_text(text, width, indent)


def examples(rows: list[tuple[str, str]]) -> str:
    """``examples:`` and one line per (command, comment), the comments in one column."""
    long = 66  # a longer command gets its comment on the line above
    width = max([len(cmd) for cmd, _ in rows if len(cmd) <= long], default=0) + 2
    return EXAMPLES_TITLE + "".join(f"  {cmd:<{width}}# {what}\n" if len(cmd) <= long
                                    else f"  # {what}\n  {cmd}\n" for cmd, what in rows)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="lockscope", formatter_class=ExamplesFormatter,
        description="Explain why a filesystem stops scaling as threads are added: "
        "eBPF lock waits per file, tied to the throughput curve.",
        epilog=examples([m.EXAMPLES[0] for m in COMMANDS])
        + "\n'lockscope COMMAND --help' shows more examples of each.")
    parser.add_argument("--version", action="version", version=f"lockscope {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for module in COMMANDS:
        module.add_parser(sub)
    for module, p in zip(COMMANDS, sub.choices.values()):
        p.formatter_class = ExamplesFormatter
        p.epilog = examples(module.EXAMPLES) + getattr(module, "NOTES", "")
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
