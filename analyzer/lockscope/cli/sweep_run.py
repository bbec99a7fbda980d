"""``lockscope sweep`` once its options are parsed (cli.sweep_cmd): every option checked,
then the workload at several thread counts on one or more filesystems, traced, analyzed,
and summarized.

Points are interleaved across filesystems (repeat → threads → fs), so that drift on a
noisy machine hits every filesystem alike.
"""

from __future__ import annotations

import datetime
import importlib
import os
import shlex
import shutil
import threading
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from ..analysis.recorder_cost import recorder_cost
from ..binaries import find_binary, recorder_facts
from ..errors import LockscopeError, UsageError
from ..run.device_facts import device_facts
from ..run.fs_health import FsHealth
from ..run.host import filesystem_facts
from ..run.loopfs import image_dir, make_loopfs
from ..run.outdir import check_dir, default_out_dir
from ..run.point import clean_workdir
from ..run.point_errors import PointFailed, os_error_text
from ..run.point_faults import PointFaults, os_errors_fail_the_point
from ..run.progress import SweepProgress
from ..run.session import Session
from ..run.verify_options import check_verify
from ..run.workload.sweep_workload import PointContext, SweepWorkload, workload_of
from ..sizes import parse_size
from ..sweep_choices import SUPPORTED_FS

# ``lockscope sweep ARGV`` run in this process: a --verify rerun
SweepAgain = Callable[[list[str]], int]


def _time_limit(args) -> float | None:
    """--time-limit in seconds, None for no limit."""
    if args.time_limit is None:
        return 10 * args.runtime + 60
    return args.time_limit or None


def _targets(args) -> dict[str, str]:
    """--target directories by fs label; each must be a directory on ext4 or XFS."""
    from ..run.host import mount_of

    targets: dict[str, str] = {}
    for t in args.target or []:
        if not os.path.isdir(t):
            raise UsageError(f"--target: {t} is not a directory")
        fstype = mount_of(t).get("fstype")
        if fstype not in SUPPORTED_FS:
            raise UsageError(f"--target: {t} is on {fstype or 'an unknown filesystem'}, "
                             f"not one of {', '.join(SUPPORTED_FS)}")
        label = fstype if fstype not in targets else f"{fstype}-{len(targets)}"
        targets[label] = t
    return targets


def _check_space(path: str, need: int, what: str) -> None:
    free = shutil.disk_usage(path).free
    if free < need:
        raise UsageError(f"not enough space for {what}: {need >> 20} MiB needed, "
                         f"{free >> 20} MiB free in {path}")


def run_sweep(args, again: SweepAgain) -> int:
    """The sweep ``args`` ask for; ``again`` runs another in this process (--verify)."""
    # every argument is checked before the root check and before anything is made
    workload = workload_of(args)
    if args.time_limit is not None and args.time_limit < 0:
        raise UsageError("--time-limit must be >= 0")
    if args.runtime <= 0:
        raise UsageError("--runtime must be > 0")
    if args.repeat < 1:
        raise UsageError("--repeat must be >= 1")
    if not 0 <= args.max_overhead <= 100:
        raise UsageError("--max-overhead must be between 0 and 100")
    check_verify(args)
    workload.validate(args.threads, args.runtime)
    targets = _targets(args)
    fss = list(targets) if targets else args.fs
    image_bytes = parse_size(args.image_size) if not targets else None
    need = workload.space_needed(args.threads)
    if image_bytes is not None and image_bytes < need:
        raise UsageError(f"--image-size {args.image_size} is too small for the workload "
                         f"({need >> 20} MiB needed)")
    check_dir(args.out or default_out_dir("lockscope"), "--out", fresh=True)
    images = image_dir(args.image_dir)
    if not targets:
        check_dir(images, "--image-dir" if args.image_dir else "LOCKSCOPE_IMAGE_DIR"
                  if os.environ.get("LOCKSCOPE_IMAGE_DIR") else "the image directory")
    if os.geteuid() != 0:
        raise LockscopeError("not root: a sweep mounts loop images and loads BPF "
                             "(lockscope doctor has the detail)")
    workload.prepare_host()
    if not args.no_trace:
        find_binary("lockscope-record")
    if targets:
        for t in targets.values():
            _check_space(t, need, f"the workload on {t}")
    else:
        Path(images).mkdir(parents=True, exist_ok=True)
        _check_space(images, need * len(fss), f"{len(fss)} loop image(s)")
    session = Session("sweep", args.out, "lockscope")
    doc: Any = session.doc  # the workload's and the points' facts are untyped JSON
    doc.update({"workload": _workload_facts(workload, args), "runs": [], "analysis": {}})
    interrupted = False
    failed: PointFailed | None = None
    stack = ExitStack()
    try:
        try:
            with session.interruptible():
                # the first module is imported while the images are made
                first = Background(_warm, WARM_MODULES[0])
                try:
                    roots: dict[str, Path] = {}
                    workdirs = _prepare(stack, fss, targets, image_bytes, args, doc, roots)
                    try:
                        workload.start(stack, workdirs, roots, lambda fs, facts: doc[
                            "host"]["filesystems"][fs].update(facts))
                    finally:
                        doc["workload"] = _workload_facts(workload, args)
                except BaseException:
                    first.wait()
                    raise
                _run_points(session, workload, fss, workdirs, args, first.wait)
        except KeyboardInterrupt:
            interrupted = True
        except PointFailed as exc:
            failed = exc  # the completed points are analyzed; the sweep ends non-zero
        except LockscopeError:
            _noting(session, stack.close)
            # Keep the completed points before reporting the failure.
            doc["analysis"] = {}
            _noting(session, session.checkpoint)
            raise
        # The images are unmounted, detached and deleted while the analysis and the
        # report run: deleting a fragmented image takes seconds of kernel time.
        cleanup = Background(stack.close)
        try:
            status = _finish(session, interrupted, args, again, failed)
        except BaseException:
            _noting(session, cleanup.wait)  # the sweep's own line comes last
            raise
        cleanup.wait()
        return status
    finally:
        _noting(session, stack.close)  # what is left after a failure (a no-op after cleanup)


def _noting(session: Session, fn) -> None:
    """fn(); its failure (a teardown or a save on a failed filesystem) as a note, so
    that the sweep's own line, which follows, is the one it ends with."""
    try:
        fn()
    except LockscopeError as exc:
        session.note(str(exc))
    except OSError as exc:
        session.note(os_error_text(exc))


class Background:
    """A call in a thread; wait() joins it and raises what it raised. Not a daemon:
    the interpreter still finishes it if the main thread is interrupted."""

    def __init__(self, fn, *args) -> None:
        self._error: BaseException | None = None

        def call() -> None:
            try:
                fn(*args)
            except BaseException as exc:  # handed to wait()
                self._error = exc

        self._thread = threading.Thread(target=call, name=getattr(fn, "__name__", "work"))
        self._thread.start()

    def wait(self) -> None:
        self._thread.join()
        if self._error is not None:
            raise self._error


def _prepare(stack: ExitStack, fss, targets, image_bytes, args, doc,
             roots: dict[str, Path]) -> dict[str, Path]:
    """Make (or enter) one working directory per filesystem; undone by the ExitStack
    (loop filesystems are torn down in parallel: each teardown waits on the kernel).
    ``roots`` gets the highest directory lockscope made above each working directory."""
    workdirs = {}
    made: list[Any] = []
    stack.callback(lambda: _destroy_all(made))
    for label in fss:
        if targets:
            base = targets[label]
            wd = Path(base) / datetime.datetime.now().strftime("lockscope-%Y%m%d-%H%M%S-%f")
            try:
                wd.mkdir()
            except OSError as exc:  # the target's filesystem or its device failing
                raise LockscopeError(f"--target {base}: its working directory could not "
                                     f"be made: {os_error_text(exc)}") from exc
            stack.callback(_remove_tree_we_made, wd)
            roots[label] = wd
            doc["host"]["filesystems"][label] = filesystem_facts(str(wd))
        else:
            fs = make_loopfs(label, size_bytes=image_bytes, workdir=args.image_dir)
            made.append(fs)
            wd = fs.path / "lockscope"
            wd.mkdir()
            roots[label] = fs.path.parent  # the private directory of image and mount
            doc["host"]["filesystems"][label] = {
                **filesystem_facts(str(wd), fs.image, image_bytes),
                "device": fs.device, "fstype": fs.fstype}
        workdirs[label] = wd
    return workdirs


def _destroy_all(made: list) -> None:
    jobs = [Background(fs.destroy, True) for fs in made]
    made.clear()
    errors = []
    for job in jobs:
        try:
            job.wait()
        except LockscopeError as exc:
            errors.append(str(exc))
    if errors:
        raise LockscopeError("; ".join(errors))


def _remove_tree_we_made(wd: Path) -> None:
    if wd.is_dir():
        clean_workdir(wd)
        wd.rmdir()


# Imported while the images are made (the first, the analysis's) and while points lay out
# and attach (never during a timed phase), so that the analysis and the report at the end
# start without paying for them.
WARM_MODULES = ("numpy", "matplotlib.figure", "lockscope.report.render")


def _workload_facts(workload: SweepWorkload, args) -> dict:
    """results.json ``workload``: the workload's own facts and the sweep's plan."""
    return {**workload.facts(), "runtime_s": args.runtime, "threads": args.threads,
            "repeat": args.repeat}


def _run_points(session: Session, workload: SweepWorkload, fss, workdirs, args,
                warming) -> None:
    doc: Any = session.doc  # filled from the points' untyped JSON
    out = session.out
    order = [(rep, n, fs) for rep in range(args.repeat) for n in args.threads for fs in fss]
    # waits for background work and a detaching recorder: all done before timing
    pending: list = [warming]
    warm = list(WARM_MODULES[1:] if not args.no_report else [])
    probing = KindsSeen()
    ctx = PointContext(args.runtime, not args.no_trace, _time_limit(args))
    faults = PointFaults(doc, args.keep_going, len(order))
    health = {fs: FsHealth(wd) for fs, wd in workdirs.items()}

    def settle() -> None:
        while pending:
            pending.pop(0)()

    try:
        with SweepProgress(len(order), args.runtime) as progress:
            for i, (rep, n, fs) in enumerate(order):
                label = f"{fs} threads={n}" + (f" repeat {rep + 1}/{args.repeat}"
                                               if args.repeat > 1 else "")
                progress.start_point(i, label)
                wd = workdirs[fs]
                scratch = out / "points" / f"{fs}-{n}-{rep}"
                if warm:
                    pending.append(Background(_warm, warm.pop(0)).wait)
                # the previous point is saved, and its recorder detaches, while this one
                # lays out and attaches; all of it ends before the timed phase
                # --raw-syscalls: two syscall links, not ~25 per-call events that the
                # kernel unregisters one at a time (~0.85 s of detach the next point waits
                # for); each costs a run per system call of the machine instead
                recorder_args = (["--max-overhead", f"{args.max_overhead:g}", "--raw-syscalls"]
                                 + probing.args() + point_fs_args(doc, fs))
                ctx.on_status, ctx.on_phase = progress.status, progress.phase
                ctx.health = health[fs]
                try:
                    with os_errors_fail_the_point("the point's files or outputs"):
                        health[fs].check()  # the filesystem failed since the last point
                        res, run_keys = workload.run_point(fs, n, wd, scratch, ctx,
                                                           recorder_args, settle)
                except PointFailed as exc:
                    faults.failed(fs, n, rep, label, exc, len(order) - i - 1)
                    _clean_after_failure(wd)
                    continue
                pending.append(res.wait_detached)
                probing.learn(res.trace)
                doc["runs"].append({"fs": fs, "threads": n, "repeat": rep,
                                    "workload": res.workload, "trace": res.trace,
                                    "trace_error": res.trace_error, "files": res.files,
                                    # the engine ran in this process's cgroup
                                    "devices": device_facts(res.trace, [os.getpid()]),
                                    "phases_s": res.phases_s,
                                    "recorder_cost": recorder_cost(res.trace), **run_keys})
                with os_errors_fail_the_point(f"point {label}: removing its files"):
                    clean_workdir(wd)
                progress.end_point(i, label, res.workload, res.trace_error)
                # Keep what is done on disk: a crash later still leaves a readable
                # recording. Everything the point's scratch held is now in the results.
                pending.append(Background(_save_point, session, scratch).wait)
    finally:
        with os_errors_fail_the_point("saving the last point"):
            settle()
    if (out / "points").is_dir():
        shutil.rmtree(out / "points", ignore_errors=True)
    faults.finish()


def _clean_after_failure(wd: Path) -> None:
    """The failed point's files, where the filesystem still lets them go."""
    try:
        clean_workdir(wd)
    except OSError:
        pass  # its image goes at the end; a read-only one keeps them


def point_fs_args(doc, label: str) -> list[str]:
    """The recorder's --fs for a point: its filesystem's type, so the other filesystem's
    probe groups (which would fire for every process on the machine, a loop device's
    worker included) stay off. Named here, not detected: the recorder attaches before
    the point's processes open their files."""
    fstype = ((doc.get("host") or {}).get("filesystems") or {}).get(label, {}).get("fstype")
    return ["--fs", str(fstype)] if fstype else []


class KindsSeen:
    """Attach kinds the first traced point found usable: later points offer the recorder
    only those (and the tracepoint kinds), so it does not try again, at every point, the
    kinds this kernel refused (a failed fentry or kprobe attempt costs a load). A group
    another filesystem's point did not need (--fs) is learned at the first point that
    needs it; until then all its kinds are offered."""

    ALWAYS = ("tp_btf", "raw_tp", "tracepoint")

    def __init__(self) -> None:
        self.first: dict[str, dict] | None = None
        self.pending: dict[str, list[str]] = {}   # not needed so far: the kinds offered

    def learn(self, trace: dict | None) -> None:
        feats = trace.get("features") if isinstance(trace, dict) else None
        if not isinstance(feats, list):
            return
        known = self.first if self.first is not None else {}
        for i, f in enumerate(feats):
            if not isinstance(f, dict) or not f.get("name"):
                continue
            name = str(f["name"])
            old = known.get(name)
            if old is None:
                if f.get("not_needed"):
                    self.pending[name] = [str(k) for k in f.get("kinds") or []]
                else:
                    known[name] = f
                    self.pending.pop(name, None)
            # a group off only because of --attach-kinds reads as it did where learned
            elif not f.get("enabled") and not old.get("enabled") and \
                    "not in --attach-kinds" in str(f.get("reason")):
                feats[i] = old
        self.first = known

    def args(self) -> list[str]:
        if self.first is None:
            return []
        used = {f.get("attach") for f in self.first.values()}
        used |= {k for kinds in self.pending.values() for k in kinds}
        return ["--attach-kinds", ",".join(k for k in recorder_facts()["attach_kinds"]
                                           if k in used or k in self.ALWAYS)]


def _warm(module: str) -> None:
    try:
        importlib.import_module(module)
    except ImportError:
        pass  # the step that needs it says so


def _save_point(session: Session, scratch: Path) -> None:
    shutil.rmtree(scratch)
    session.checkpoint()


def _finish(session: Session, interrupted: bool, args, again: SweepAgain,
            failed: PointFailed | None = None) -> int:
    from ..analysis import analyze
    from ..report.sweep_summary import print_summary

    doc = session.doc
    if doc["runs"]:
        doc["reproduce"] += sorted({shlex.join(r["engine_argv"]) for r in doc["runs"]
                                    if r.get("engine_argv")})
    verifying = args.verify and not interrupted and failed is None and bool(doc["runs"])
    try:
        session.finish(analyze if doc["runs"] else None, print_summary,
                       render=bool(doc["runs"]) and not args.no_report and not verifying,
                       partial=interrupted or failed is not None)
    except OSError as exc:
        raise LockscopeError(f"{session.results} not updated ({os_error_text(exc)}): "
                             "it holds the points saved before"
                             + (f"; {failed}" if failed else "")) from None
    if verifying:
        from ..run.remedy_rerun import run_verify

        return run_verify(session, args, again)
    if interrupted:
        session.note(f"interrupted; {len(doc['runs'])} completed point(s) kept in "
                     f"{session.results} (marked partial)")
        return 130
    if failed is not None:
        raise failed  # its one line ends the sweep, after the completed points' summary
    return 0
