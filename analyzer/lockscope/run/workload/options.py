"""``sweep --command`` and its companions: the options, and their check before anything
is made."""

from __future__ import annotations

import argparse
import shlex
import shutil

from ...errors import UsageError
from ...sizes import parse_size
from ..target import COMM_MAX
from .command_point import CommandSpec
from .gate import exec_form
from .parsers import PARSERS
from .template import Split, check_template

DEFAULT_SPAN = "1g"
DEFAULT_BLOCK = "64k"


def add_command_arguments(p: argparse.ArgumentParser, source_group) -> None:
    """The external-command options of ``lockscope sweep`` (``--command`` joins the
    group that also holds --scenario and --job: one workload source)."""
    source_group.add_argument(
        "--command", metavar="TEMPLATE", dest="command_template",
        help="run this shell command at each point instead of the built-in engine, in a "
        "fresh directory on the filesystem under test; fields: {threads}, {runtime} "
        "(whole seconds), {dir}; with --per-thread also {thread}, {part_blocks}, "
        "{part_offset} (--block-size units), {part_bytes}, {part_offset_bytes}")
    g = p.add_argument_group("external command (with --command)")
    g.add_argument("--prepare", metavar="TEMPLATE",
                   help="run this first at each point, untraced, in the same directory "
                   "(same fields as --command, except the per-thread ones)")
    g.add_argument("--throughput", choices=sorted(PARSERS),
                   help="read throughput from the tool's report (fio: JSON on stdout, "
                   "sysbench and pgbench: text on stdout, dd: stderr); default: write "
                   "system calls per second counted by the trace")
    g.add_argument("--per-thread", action="store_true",
                   help="start the command once per thread (one process per writer)")
    g.add_argument("--span", metavar="SIZE",
                   help=f"the region --per-thread writers split (default: {DEFAULT_SPAN})")
    g.add_argument("--block-size", metavar="SIZE",
                   help=f"the unit of {{part_blocks}} and {{part_offset}} "
                   f"(default: {DEFAULT_BLOCK})")
    g.add_argument("--trace-comm", metavar="NAME",
                   help="trace the threads named NAME (a server the command talks to) "
                   "instead of the command's own processes")


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
