"""``sweep --verify`` and ``--remedy-command``: their check before anything is made (the
options themselves: cli.sweep_cmd)."""

from __future__ import annotations

from ..errors import UsageError
from .workload.options import _check_program
from .workload.template import check_template


def check_verify(args) -> None:
    """Refuse a --verify that cannot judge anything (one line, exit 2)."""
    if args.remedy_command is not None:
        if not args.verify:
            raise UsageError("--remedy-command needs --verify")
        if not args.command_template:
            raise UsageError("--remedy-command needs --command (the engine's and a job "
                             "file's remedies are applied by lockscope itself)")
        check_template(args.remedy_command, "--remedy-command", args.per_thread)
        _check_program(args.remedy_command, "--remedy-command")
    if args.verify and args.no_trace:
        raise UsageError("--verify needs the trace: without it the blamed wait is not "
                         "measured after the remedy (drop --no-trace)")
