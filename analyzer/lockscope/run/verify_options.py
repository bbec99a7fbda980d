"""``sweep --verify`` and ``--remedy-command``: the options and their check before
anything is made."""

from __future__ import annotations

import argparse

from ..errors import UsageError
from .workload.options import _check_program
from .workload.template import check_template


def add_verify_arguments(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("verifying the diagnosis (--verify)")
    g.add_argument("--verify", action="store_true",
                   help="after the verdict, run the sweep again with each remedy that can be "
                   "applied to the workload mechanically (written layout, a file per thread, "
                   "aligned writes, batched fdatasync, O_DIRECT), at the lowest and highest "
                   "thread counts, and report before and after: verified, partly or not "
                   "verified (results.json verify; the reruns in OUT/verify/). --command: "
                   "give --remedy-command; --preset: no rule proposes a setting, nothing "
                   "reruns")
    g.add_argument("--remedy-command", metavar="TEMPLATE",
                   help="with --command and --verify: the remedied command, in the same "
                   "template language as --command (same fields and companions)")


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
