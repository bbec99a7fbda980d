"""The analysis of an attach (``analysis.attach`` in results.json): where the server's
threads' time went by wait class, its files by role, the per-second series and the
verdict. Reads only results.json content."""

from __future__ import annotations

from collections import defaultdict
from typing import cast

from ..schema import (
    CLASS_KEYS,
    AttachAnalysis,
    AttachFigures,
    AttachFile,
    DbDoc,
    DbSummary,
    IoUringHashed,
    OffcpuRecord,
    RecorderCost,
    ResultsDoc,
    SeriesRow,
    SweptFile,
    Trace,
    VerdictKind,
    WaitClassEntry,
    WriteClasses,
    class_counts_of,
    no_classes,
)
from .attach_verdict import decide_attach
from .dbfiles import ROLES, PgNames, file_role
from .device_busy import device_figures
from .dio import count_of
from .iowq import hashed_cause, hashed_summary, hashed_wait_class
from .kernel_release import KernelVersion, parse_release, release_of
from .lock_mode import add_modes, entry_modes
from .observed import observed_ns, observed_share, record_observed_ns, sampling_note
from .recorder_cost import cost_shed
from .rules import FileFacts, judge, kernel_rules
from .runs import INODE_LOCK_KINDS
from .series import build_series, falls, fsync_by_file, thread_classes, throughput_signal
from .stack_shares import stack_shares
from .wait_classes import WAIT_CLASSES
from .waitclass import (
    CLASSES,
    LOSS_CLASSES,
    UserClassifier,
    classify,
    idle_threads,
    load_user_classifier,
)

# (method, detail) -> ns, per class: how each class was decided
HowByClass = dict[str, dict[tuple[str, str], float]]
# the wait classes whose time is the device's, if the device was busy (device_verdict.py):
# those whose verdict is device_bound
DEVICE_CLASSES = tuple(c.key for c in WAIT_CLASSES if c.verdict == VerdictKind.DEVICE_BOUND)

TOP_HOW = 6
# In a live server a few exclusive writers make every shared writer of the file queue
# (a waiting writer blocks new readers: kernel/locking/rwsem.c, rwsem_down_read_slowpath),
# so a rule counts from 1% of a file's writes, not the sweep's 5%.
ATTACH_MIN_FRACTION = 0.01


def _pg_names(db: DbDoc | None) -> PgNames:
    return {(r["dboid"], r["relfilenode"]): r["name"]
            for r in (db or {}).get("relations") or []}


def classes_of(trace: Trace, user_classifier: UserClassifier | None = None
               ) -> tuple[dict[str, float], HowByClass, set[int | None]]:
    """Thread time per class over the window, and how each class was decided."""
    window = observed_ns(trace)
    threads = trace.get("threads") or []
    idle = idle_threads(threads, window)
    kinds = _lock_kinds(trace)
    ns = {c: 0.0 for c in CLASSES}
    for r in thread_classes(trace, kinds, idle, user_classifier).values():
        for c in CLASSES:
            ns[c] += r[c]
    how: HowByClass = defaultdict(lambda: defaultdict(float))
    share = observed_share(trace)
    for rec in trace.get("offcpu") or []:
        if rec.get("reason") != "runqueue":
            cl = classify(rec, kinds, idle, user_classifier)
            how[cl.cls][(cl.method, cl.detail)] += record_observed_ns(rec, share)
    for cls, detail in (("idle", "blocked below --min-block-us in a thread idle all window"),
                        ("unclassified", "blocked below --min-block-us, no stack record")):
        rest = ns[cls] - sum(how[cls].values())
        if rest > 0:
            how[cls][("thread" if cls == "idle" else "none", detail)] += rest
    if ns["runqueue"]:
        how["runqueue"][("scheduler", "runnable, waiting for a CPU")] += ns["runqueue"]
    return ns, how, idle


def block_waits(trace: Trace, kinds: dict[str | None, str], idle: set[int | None],
                user_classifier: UserClassifier | None = None) -> list[OffcpuRecord]:
    """The threads' off-CPU records classed as waits for the device (block I/O and
    writeback): what the device's service time is set against (device_busy.py)."""
    return [r for r in trace.get("offcpu") or [] if r.get("reason") != "runqueue"
            and classify(r, kinds, idle, user_classifier).cls in DEVICE_CLASSES]


def _lock_kinds(trace: Trace) -> dict[str | None, str]:
    """Lock address -> the recorder's lock kind."""
    return {lk.get("addr"): lk.get("kind") or "unknown" for lk in trace.get("locks") or []}


def file_rows(trace: Trace, files: list[SweptFile], pg_names: PgNames,
              version: KernelVersion | None = None,
              hashed: IoUringHashed | None = None) -> list[AttachFile]:
    """Per file: role, writes, fsyncs, DIO classes, inode-lock waits and the rules of
    kernel `version` (None: the newest)."""
    rows: dict[str, AttachFile] = {}

    def row(path: str | None, dev: str | None = None, ino: int | None = None) -> AttachFile:
        key = path or f"{dev}:{ino}"
        if key not in rows:
            role = file_role(path, pg_names)
            # cast: mypy wants the optional block_size named beside a ** item
            rows[key] = cast(AttachFile, {"path": path, "dev": dev, "ino": ino,
                         "engine": role.engine,
                         "role": role.role, "role_label": ROLES[role.role],
                         "object": role.object, "label": role.label, "detail": role.detail,
                         "dio_writes": 0, "dio_write_bytes": 0, "buffered_writes": 0,
                         "buffered_write_bytes": 0, "reads": 0, **no_classes(),
                         "fsyncs": 0, "fsync_ns": 0, "sync_file_ranges": 0,
                         "sync_file_range_ns": 0, "dsync_writes": 0, "dsync_write_ns": 0,
                         "inode_lock_waits": 0, "inode_lock_ns": 0, "inode_lock_kinds": [],
                         "modes": {}, "causes": [], "rule_disagreements": []})
        return rows[key]

    for e in trace.get("dio") or []:
        if not e.get("path") and not e.get("ino"):
            continue
        r = row(e.get("path"), e.get("dev"), e.get("ino"))
        w = e.get("writes") or {}
        b = e.get("buffered_writes") or {}
        r["dio_writes"] += w.get("count", 0)
        r["dio_write_bytes"] += w.get("bytes", 0)
        r["buffered_writes"] += b.get("count", 0)
        r["buffered_write_bytes"] += b.get("bytes", 0)
        r["reads"] += (e.get("reads") or {}).get("count", 0)
        r["block_size"] = e.get("fs_block_size")
        for k in CLASS_KEYS:
            r[k] += count_of(e.get(k))
        add_modes(r["modes"], entry_modes(e))
    for f in fsync_by_file(trace):
        r = row(f.get("path"), f.get("dev"), f.get("ino"))
        r["fsyncs"] += f["fsyncs"]
        r["fsync_ns"] += f["fsync_ns"]
        r["sync_file_ranges"] += f["sync_file_ranges"]
        r["sync_file_range_ns"] += f["sync_file_range_ns"]
        r["dsync_writes"] += f["dsync_writes"]
        r["dsync_write_ns"] += f["dsync_write_ns"]
    for lk in trace.get("locks") or []:
        if lk.get("kind") not in INODE_LOCK_KINDS:
            continue
        r = row(lk.get("path"), lk.get("dev"), lk.get("ino"))
        r["inode_lock_waits"] += lk.get("count", 0)
        r["inode_lock_ns"] += lk.get("total_ns", 0)
        kind = lk.get("kind") or "unknown"
        if kind not in r["inode_lock_kinds"]:
            r["inode_lock_kinds"].append(kind)
    # Some dio counts are global (xfs_unwritten_convert runs in any context): a file
    # the traced threads neither wrote, read, synced nor waited on is not theirs.
    rows = {k: r for k, r in rows.items()
            if r["dio_writes"] or r["buffered_writes"] or r["reads"] or r["fsyncs"]
            or r["sync_file_ranges"] or r["inode_lock_waits"]}
    swept = {f.get("path"): f for f in files}
    for r in rows.values():
        if r["inode_lock_ns"]:
            sf: SweptFile = swept.get(r["path"]) or {}
            classes: WriteClasses = {
                "writes": r["dio_writes"], "buffered_writes": r["buffered_writes"],
                "block_size": r.get("block_size"), **class_counts_of(r), "modes": r["modes"]}
            facts: FileFacts = {"setuid": sf.get("setuid", False),
                                "setgid": sf.get("setgid", False),
                                "security_xattrs": sf.get("security_xattrs", [])}
            judged = judge(sf.get("fstype") or "", classes, facts, version,
                           min_fraction=ATTACH_MIN_FRACTION)
            r["causes"], r["rule_disagreements"] = judged.causes, judged.disagreements
    _add_hashed(rows, swept, hashed, version)
    return sorted(rows.values(), key=lambda r: (-r["inode_lock_ns"],
                                                -(r["fsync_ns"] + r["dsync_write_ns"]),
                                                -(r["dio_write_bytes"]
                                                  + r["buffered_write_bytes"])))


def _add_hashed(rows: dict[str, AttachFile], swept: dict[str | None, SweptFile],
                hashed: IoUringHashed | None, version: KernelVersion | None) -> None:
    """Each file's io-wq hashed requests and their cause (analysis/iowq.py)."""
    for f in hashed["files"] if hashed else []:
        r = rows.get(f["path"] or f"{f['dev']}:{f['ino']}")
        if r is None:
            continue
        r["io_wq_queued"], r["io_wq_behind_ns"] = f["queued"], f["behind_ns"]
        fstype = (swept.get(r["path"]) or {}).get("fstype") or ""
        cause = hashed_cause(fstype, f, r["dio_writes"], version)
        if cause:
            r["causes"] = sorted([*r["causes"], cause], key=lambda c: -c["fraction"])


def analyze_attach(doc: ResultsDoc) -> AttachAnalysis:
    """Everything ``analysis.attach`` holds (docs/results-schema.md, attach form)."""
    window = doc.get("window") or {}
    trace = window.get("trace") or {}
    db = doc.get("db")
    pg_names = _pg_names(db)
    user_classifier = load_user_classifier()
    window_ns = float((trace.get("interval") or {}).get("duration_ns") or 0)
    seen_ns = observed_ns(trace)
    ns, how, idle = classes_of(trace, user_classifier)
    threads = trace.get("threads") or []
    oncpu = float(sum(t.get("oncpu_ns", 0) for t in threads))
    total = oncpu + sum(ns.values())
    lost = sum(ns[c] for c in LOSS_CLASSES)
    # request time of io-wq's hashed queue: a loss no thread's own wait names
    hashed = hashed_summary(trace)
    total += hashed["behind_ns"]
    lost += hashed["behind_ns"]
    classes: list[WaitClassEntry] = []
    for c in CLASSES:
        methods = sorted(how.get(c, {}).items(), key=lambda kv: -kv[1])
        classes.append({
            "class": c, "name": CLASSES[c], "ns": ns[c],
            "threads": ns[c] / seen_ns if seen_ns else 0.0,
            "share": ns[c] / total if total else 0.0,
            "loss_share": ns[c] / lost if lost and c != "idle" else 0.0,
            "how": [{"method": m, "detail": d, "ns": v} for (m, d), v in methods[:TOP_HOW]],
        })
    hashed_class = hashed_wait_class(hashed, seen_ns, total, lost)
    if hashed_class:
        classes.append(hashed_class)
    kinds = _lock_kinds(trace)
    rows = build_series(trace, db, kinds, idle, user_classifier, pg_names)
    engine = (db or {}).get("engine") or _engine_from_files(trace)
    signal, values = throughput_signal(rows, engine)
    release = release_of(doc)
    files = file_rows(trace, window.get("files") or [], pg_names, parse_release(release),
                      hashed)
    fall = falls(rows, values)
    device = device_figures(trace, window.get("devices"),
                            block_waits(trace, kinds, idle, user_classifier))
    figures: AttachFigures = {
        "window_s": window_ns / 1e9, "observed_s": seen_ns / 1e9, "sampling": sampling_note(trace),
        "threads": len(threads), "idle_threads": len(idle),
        "engine": engine, "oncpu_ns": oncpu, "thread_time_ns": total, "lost_ns": lost,
        "idle_ns": ns["idle"], "classes": classes,
        "user_stacks_classifier": user_classifier is not None,
        "files": files, "fsyncs_per_file": bool(fsync_by_file(trace)), "series": rows,
        "throughput": {"signal": signal, "values": values,
                       "mean": sum(values) / len(values) if values else 0.0},
        "falls": fall, "db": _db_summary(db, rows),
        # intervals past the recorder's bound on series JSON (the series ends early)
        "series_omitted": trace.get("series_omitted") or 0,
        "overhead": _overhead(trace),
        "io_uring_hashed": hashed,
        "stacks": stack_shares(trace, kinds, idle, user_classifier),
        "device": device,
    }
    return {**figures,
            "kernel_rules": kernel_rules(release, [n for f in files
                                                   for n in f["rule_disagreements"]]),
            "verdict": decide_attach(figures, (doc.get("host") or {}).get("cpus"))}


def _overhead(trace: Trace) -> RecorderCost | None:
    """What recording cost (the recorder's self-measurement), when it reports it."""
    o = trace.get("overhead")
    if not isinstance(o, dict):
        return None
    return {"bpf_cpu_share": o.get("cpu_share"),
            "user_cpu_share": (o.get("user") or {}).get("cpu_share"),
            "max_overhead_pct": o.get("max_overhead_pct"),
            "shed": [cost_shed(x) for x in o.get("shed") or [] if isinstance(x, dict)],
            "detached": bool(o.get("detached"))}


def _engine_from_files(trace: Trace) -> str | None:
    for e in trace.get("dio") or []:
        eng = file_role(e.get("path")).engine
        if eng:
            return eng
    return None


def _db_summary(db: DbDoc | None, rows: list[SeriesRow]) -> DbSummary | None:
    if not db:
        return None
    key = "Com_commit" if db.get("engine") == "mariadb" else "xact_commit"
    samples = db.get("samples") or []
    out: DbSummary = {"engine": db.get("engine"), "samples": len(samples),
                      "errors": db.get("errors"), "warning": db.get("warning"),
                      "version": db.get("version"), "lacks": db.get("lacks") or []}
    if len(samples) >= 2 and key in samples[0] and key in samples[-1]:
        dt = (samples[-1]["mono_ns"] - samples[0]["mono_ns"]) / 1e9
        n = samples[-1][key] - samples[0][key]
        if key == "xact_commit":
            n -= (len(samples) - 1) * db.get("own_xacts_per_sample", 0)
        out["commits"] = n
        out["commits_per_s"] = n / dt if dt > 0 else None
    return out

