"""``sweep --command`` and its companions: their check before anything is made (the
options themselves: cli.sweep_cmd)."""

from __future__ import annotations

import shlex
import shutil

from ...errors import UsageError
from ...sizes import parse_size
from ...sweep_choices import DEFAULT_BLOCK, DEFAULT_SPAN
from ..target import COMM_MAX
from .command_point import CommandSpec
from .gate import exec_form
from .template import Split, check_template

COMPANIONS = ("prepare", "throughput", "per_thread", "span", "block_size", "trace_comm")


def command_spec(args) -> CommandSpec | None:
    """The checked --command spec, or None for the built-in engine. A bad template or
    option is a UsageError (exit 2) before anything starts."""
    if not getattr(args, "command_template", None):
        given = [f"--{name.replace('_', '-')}" for name in COMPANIONS if getattr(args, name)]
        if given:
            raise UsageError(f"{given[0]} needs --command")
        return None
    check_template(args.command_template, "--command", args.per_thread)
    _check_program(args.command_template, "--command")
    if args.prepare is not None:
        check_template(args.prepare, "--prepare", per_thread=False)
        _check_program(args.prepare, "--prepare")
    if args.trace_comm is not None and not 0 < len(args.trace_comm) <= COMM_MAX:
        raise UsageError(f"--trace-comm: a command name has 1 to {COMM_MAX} characters: "
                         f"'{args.trace_comm}'")
    if args.no_trace and not args.throughput:
        raise UsageError("--no-trace needs --throughput: without a trace, nothing counts "
                         "the command's operations")
    for name in ("span", "block_size"):
        if getattr(args, name) is not None and not args.per_thread:
            raise UsageError(f"--{name.replace('_', '-')} needs --per-thread")
    split = Split(_size(args.span or DEFAULT_SPAN, "--span"),
                  _size(args.block_size or DEFAULT_BLOCK, "--block-size"))
    if args.per_thread and split.span_bytes // split.block_bytes < max(args.threads):
        raise UsageError(f"--span holds {split.span_bytes // split.block_bytes} blocks of "
                         f"--block-size, fewer than {max(args.threads)} writers")
    return CommandSpec(args.command_template, args.prepare, args.throughput, args.per_thread,
                       args.trace_comm, split)


def _check_program(template: str, option: str) -> None:
    """The program of a simple command must exist here (checked before any image is
    made); a program named through a field, or a shell list, is left to the shell."""
    if exec_form(template) == template:
        return
    program = shlex.split(template)[0]
    if "{" not in program and shutil.which(program) is None:
        raise UsageError(f"{option}: {program}: command not found")


def _size(text: str, option: str) -> int:
    try:
        value = parse_size(text)
    except UsageError as exc:
        raise UsageError(f"{option}: {exc}") from None
    if value <= 0:
        raise UsageError(f"{option}: must be > 0")
    return value
