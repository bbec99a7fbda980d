"""``sweep --preset``: a database preset expressed as the external-command runner (the
client, its template and its parser) plus a server set up on each filesystem.

Per filesystem, before the first point: the server's datadir is made in a new
directory beside the sweep's point directory there, the database initialized and
started (private socket, unique port, own cgroup) and the data prepared; the client
then runs at each point like any ``--command``, with the recorder on the server's
processes instead of the client's.
The servers stop with the sweep's other resources (its ExitStack) on every exit path,
and after a kill through the process ledger (procledger).
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

from ...errors import LockscopeError, UsageError
from ...sweep_choices import DEFAULT_DB_SCALE
from .. import procledger
from ..dbserver.common import Server
from ..dbserver.presets import PRESETS, Preset
from .command_point import CommandSpec

# Bytes a preset needs on each filesystem per unit of --db-scale (data, indexes, and
# what the run appends), plus the logs (redo, binary log, WAL).
SPACE_PER_SCALE = 64 << 20
SPACE_LOGS = 1 << 30
COMMAND_OPTIONS = ("prepare", "throughput", "per_thread", "trace_comm")


def preset_of(args) -> Preset | None:
    """The checked preset, or None. Options that a preset sets itself, and a preset whose
    server or client is not installed, are refused before anything is made."""
    name = getattr(args, "preset", None)
    if not name:
        if getattr(args, "db_scale", None) is not None:
            raise UsageError("--db-scale needs --preset")
        return None
    for opt in COMMAND_OPTIONS:
        if getattr(args, opt, None):
            raise UsageError(f"--{opt.replace('_', '-')} cannot be used with --preset "
                             "(the preset sets its client, parser and traced processes)")
    if args.db_scale is None:
        args.db_scale = DEFAULT_DB_SCALE
    if args.db_scale < 1:
        raise UsageError("--db-scale must be >= 1")
    preset = PRESETS[name]
    why = preset.missing()
    if why:
        raise LockscopeError(f"--preset {name}: {why}")
    return preset


def space_needed(preset: Preset, scale: int) -> int:
    return scale * SPACE_PER_SCALE + SPACE_LOGS


def workload_facts(preset: Preset, scale: int) -> dict:
    """results.json ``workload`` for a preset sweep."""
    return {"scenario": preset.name, "description": preset.description,
            "job": {"preset": preset.name, "server": preset.server.kind,
                    "client": preset.client, "throughput": preset.throughput,
                    "db_scale": str(scale)},
            "preset": {"name": preset.name, "server": preset.server.kind,
                       "client": preset.client, "throughput": preset.throughput,
                       "db_scale": scale, "commands": {}}}


@contextmanager
def _server_dir(base: Path) -> Iterator[Path]:
    """The server's directory, new (never one that exists); removed with all it holds."""
    base.mkdir()
    try:
        yield base
    finally:
        shutil.rmtree(base, ignore_errors=True)


@dataclass(frozen=True)
class PresetServer:
    """A preset's server on one filesystem and the client spec that talks to it."""

    server: Server
    spec: CommandSpec


def start_servers(stack: ExitStack, preset: Preset, scale: int,
                  workdirs: dict[str, Path], roots: dict[str, Path],
                  on_started: Callable[[str, PresetServer], None]) -> dict[str, PresetServer]:
    """A prepared server on each filesystem, stopped by ``stack``; the client's command
    spec for each (its template carries the server's socket and port). ``roots``: the
    highest directory lockscope made above each working directory (opened to the
    server's user; nothing above it is changed). ``on_started(fs, server)`` as each
    one is up (a later one may fail)."""
    procledger.cleanup_stale()  # servers a killed sweep left (on a --target, say)
    out = {}
    for fs, wd in workdirs.items():
        print(f"lockscope sweep: {fs}: starting {preset.server.kind} and preparing its data "
              f"(--db-scale {scale})", file=sys.stderr, flush=True)
        # beside the points' directory, which is emptied after every point
        base = stack.enter_context(_server_dir(wd.parent / f"{wd.name}-{preset.server.kind}"))
        try:
            server = stack.enter_context(preset.running(base, scale, roots.get(fs)))
        except LockscopeError as exc:
            raise LockscopeError(f"{fs}: {exc}") from None
        template = preset.template(server, scale)
        out[fs] = PresetServer(server, CommandSpec(template, throughput=preset.throughput,
                                                   trace_target=_trace_target(server)))
        on_started(fs, out[fs])
    return out


def _trace_target(server: Server) -> tuple[str, ...]:
    """The recorder's filter for the server: its cgroup (every process, forked or not);
    without cgroup v2, MariaDB's pid (one process, many threads) or PostgreSQL's
    command name (a backend per client)."""
    if server.cgroup and os.path.isdir(server.cgroup):
        return ("--cgroup", server.cgroup)
    if server.kind == "mariadb":
        return ("--pid", str(server.pid))
    return ("--comm", server.comm)
