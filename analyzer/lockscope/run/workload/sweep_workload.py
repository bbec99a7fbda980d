"""What a sweep runs at each point, chosen once from its options: the engine on a
built-in scenario or a job file (``EngineWorkload``), an external ``--command``
(``CommandWorkload``) or a database ``--preset`` (``PresetWorkload``: a server on each
filesystem and its benchmark client as the command).

The sweep asks the workload, never which one it is: ``validate`` (before anything is
made or the root check), ``prepare_host`` (as root, before anything is made),
``space_needed``, ``facts`` (results.json ``workload``), ``start`` (per filesystem,
before the first point; what it started is stopped by the sweep's ExitStack) and
``run_point``.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...errors import UsageError
from ...sizes import parse_size
from ...sweep_choices import DEFAULT_SCENARIO
from ..dbserver.presets import Preset
from ..fs_health import FsHealth
from ..pids import pid_running
from ..point import PointResult, engine_argv, run_point
from ..point_errors import PointFailed
from ..scenarios import Scenario, get_scenario, scenario_from_job_file
from .command_point import CommandSpec, run_command_point
from .options import command_spec
from .points import cleanup_stale_cgroups, command_space_needed, command_workload
from .preset_sweep import PresetServer, preset_of, space_needed, start_servers, workload_facts


@dataclass
class PointContext:
    """What every point of a sweep shares, whichever the workload."""

    runtime_s: float
    trace: bool
    limit_s: float | None           # --time-limit of a --command or --preset point
    on_status: Callable[[dict], None] | None = None
    on_phase: Callable[[str], None] | None = None
    health: FsHealth | None = None  # the point's filesystem, watched (run/fs_health.py)


class SweepWorkload:
    """The interface; see the module docstring."""

    def validate(self, threads: list[int], runtime_s: float) -> None:
        """Refuse a bad workload (one line, exit 2) before anything is made."""

    def prepare_host(self) -> None:
        """As root, before anything is made: clean up what a killed sweep left."""

    def space_needed(self, threads: list[int]) -> int:
        raise NotImplementedError

    def facts(self) -> dict:
        """results.json ``workload`` (the sweep adds runtime_s, threads, repeat)."""
        raise NotImplementedError

    def start(self, stack: ExitStack, workdirs: dict[str, Path], roots: dict[str, Path],
              on_started: Callable[[str, dict], None]) -> None:
        """Before the first point, on each filesystem: what the workload needs running
        (stopped by ``stack``). ``on_started(fs, facts)`` as each is up: facts for that
        filesystem's ``host.filesystems`` entry. ``facts()`` then holds what started."""

    def run_point(self, fs: str, threads: int, workdir: Path, scratch: Path,
                  ctx: PointContext, recorder_args: list[str],
                  before_timed: Callable[[], None]) -> tuple[PointResult, dict[str, Any]]:
        """One point; returns its result and the keys its run adds to ``runs[]``."""
        raise NotImplementedError


class EngineWorkload(SweepWorkload):
    def __init__(self, scenario: Scenario) -> None:
        self.scenario = scenario

    def validate(self, threads: list[int], runtime_s: float) -> None:
        """The job as the points will run it, parsed by lockscope-load --parse-only."""
        argv = engine_argv(self.scenario.job, max(threads), runtime_s,
                           Path("/nonexistent/lockscope-check"), "check", Path(os.devnull))
        res = subprocess.run(argv + ["--parse-only"], capture_output=True, text=True,
                             timeout=60)
        if res.returncode != 0:
            lines = res.stderr.strip().splitlines()
            msg = lines[-1] if lines else f"lockscope-load exited {res.returncode}"
            raise UsageError(f"{self.scenario.description}: "
                             f"{msg.removeprefix('lockscope-load: ')}")

    def space_needed(self, threads: list[int]) -> int:
        size = parse_size(self.scenario.job.get("size", "1g"))
        # lockscope-load: per-thread files, and appends (each thread may add `size`).
        per_thread = (self.scenario.file_per_thread
                      or self.scenario.job.get("layout") == "append")
        files = max(threads) if per_thread else 1
        return int(size * files * 1.1) + (64 << 20)

    def facts(self) -> dict:
        return {"scenario": self.scenario.name, "description": self.scenario.description,
                "job": self.scenario.job}

    def run_point(self, fs, threads, workdir, scratch, ctx, recorder_args, before_timed):
        res = run_point(self.scenario.job, threads, ctx.runtime_s, workdir,
                        self.scenario.name, scratch, trace=ctx.trace,
                        on_status=ctx.on_status, recorder_args=recorder_args,
                        before_timed=before_timed, health=ctx.health)
        extra = {}
        if res.engine_argv:
            extra["engine_argv"] = [Path(res.engine_argv[0]).name] + res.engine_argv[1:]
        return res, extra


class CommandWorkload(SweepWorkload):
    def __init__(self, spec: CommandSpec) -> None:
        self.spec = spec

    def prepare_host(self) -> None:
        cleanup_stale_cgroups()

    def space_needed(self, threads: list[int]) -> int:
        return command_space_needed(self.spec)

    def facts(self) -> dict:
        return command_workload(self.spec)

    def spec_for(self, fs: str) -> CommandSpec:
        return self.spec

    def run_point(self, fs, threads, workdir, scratch, ctx, recorder_args, before_timed):
        res = run_command_point(self.spec_for(fs), threads, ctx.runtime_s, workdir, scratch,
                                trace=ctx.trace, recorder_args=recorder_args,
                                before_timed=before_timed, on_phase=ctx.on_phase,
                                limit_s=ctx.limit_s)
        if ctx.health:
            ctx.health.check()  # the command may not see a write that failed later
        return res, {}


class PresetWorkload(CommandWorkload):
    def __init__(self, preset: Preset, scale: int) -> None:
        self.preset, self.scale = preset, scale
        self.servers: dict[str, PresetServer] = {}

    def space_needed(self, threads: list[int]) -> int:
        return space_needed(self.preset, self.scale)

    def facts(self) -> dict:
        facts = workload_facts(self.preset, self.scale)
        facts["preset"]["commands"] = {fs: s.spec.command for fs, s in self.servers.items()}
        return facts

    def start(self, stack, workdirs, roots, on_started):
        def started(fs: str, server: PresetServer) -> None:
            self.servers[fs] = server
            on_started(fs, {"server": server.server.facts()})

        start_servers(stack, self.preset, self.scale, workdirs, roots, started)

    def spec_for(self, fs: str) -> CommandSpec:
        return self.servers[fs].spec

    def run_point(self, fs, threads, workdir, scratch, ctx, recorder_args, before_timed):
        server = self.servers[fs].server
        try:
            res, _ = super().run_point(fs, threads, workdir, scratch, ctx, recorder_args,
                                       before_timed)
        except PointFailed as exc:
            if pid_running(server.pid):
                raise
            # the client's error follows from this one: the server is named first
            raise PointFailed(f"the {server.kind} server (pid {server.pid}) is gone; "
                              f"{exc}", exc.exit_status, exc.stderr_line) from None
        res.workload["ops_unit"] = "TPS"
        # what each run records of its server (the analysis keys on it)
        return res, {"server": self.servers[fs].server.facts()}


def workload_of(args) -> SweepWorkload:
    """The sweep's workload from its options; a bad one is refused (one line) here."""
    preset = preset_of(args)  # a preset sets its own client, parser and traced processes
    spec = command_spec(args)  # a bad template is refused before anything
    if preset:
        return PresetWorkload(preset, args.db_scale)
    if spec:
        return CommandWorkload(spec)
    return EngineWorkload(scenario_from_job_file(args.job) if args.job
                          else get_scenario(args.scenario or DEFAULT_SCENARIO))
