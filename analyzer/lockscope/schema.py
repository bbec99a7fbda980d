"""The shape of results.json as types: docs/results-schema.md and docs/recorder-json.md.

Every key the analyzer reads or writes is named here once. Types only: nothing is
checked at run time (``results.load_results`` checks the schema string), so a
document from disk is trusted to this shape as far as the code that reads it
indexes keys; readers of optional keys use ``.get``. Recorder (input) types are
``total=False``: a recorder without a probe group leaves its keys out. Analyzer
(output) types list the keys the analyzer always writes; keys written only in
some cases sit in a ``total=False`` subclass.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Literal, NotRequired, TypedDict, cast

SCHEMA = "lockscope/2"
# lockscope/1 stored an attach's window as a sweep run (``runs[0]``); results.load_results
# reads it into ``window``. Sweeps are the same in both.
READABLE_SCHEMAS = ("lockscope/1", SCHEMA)


class VerdictKind(StrEnum):
    """``verdict.kind``. A str subclass: it compares equal to, and serializes as, its
    value (also in str(), f-strings and templates), so results.json stays plain
    strings."""

    # sweep and attach
    INODE_LOCK_CONTENTION = "inode_lock_contention"
    OTHER_LOCK_CONTENTION = "other_lock_contention"
    DEVICE_BOUND = "device_bound"
    CPU_BOUND = "cpu_bound"
    INCONCLUSIVE = "inconclusive"
    # sweep only
    SCALES = "scales"
    # attach only
    IDLE = "idle"
    USER_LOCK_CONTENTION = "user_lock_contention"
    DURABILITY_BOUND = "durability_bound"
    JOURNAL_BOUND = "journal_bound"
    MEMORY_PRESSURE = "memory_pressure"
    IO_URING_SERIALIZED = "io_uring_serialized"
    # sweep and attach: block waits while the device was not shown busy
    IO_HELD_BEFORE_DEVICE = "io_held_before_device"


LOCK_VERDICTS = (VerdictKind.INODE_LOCK_CONTENTION, VerdictKind.OTHER_LOCK_CONTENTION)


# ---------------------------------------------------------------- lockscope-record JSON


class Interval(TypedDict, total=False):
    start_mono_ns: int
    end_mono_ns: int
    duration_ns: int
    observed_ns: int            # probes attached (--duty); rates divide by it
    start_wall_ns: int
    end_wall_ns: int


class TraceThread(TypedDict, total=False):
    tid: int
    pid: int
    comm: str
    oncpu_ns: int
    offcpu_ns: int
    runqueue_ns: int


class Held(TypedDict, total=False):
    count: int
    total_ns: int


class LockWait(TypedDict, total=False):
    flags: int
    flag_names: list[str]
    kstack: list[str]
    ustack: list[str]
    pid: int
    comm: str
    count: int
    total_ns: int
    max_ns: int
    interrupted: int
    repeats: int
    exclusive_held: Held
    readers_held: Held
    hist_log2_ns: list[int]
    long: bool              # a wait >= --long-wait-us, recorded in every phase


class TraceLock(TypedDict, total=False):
    addr: str
    kind: str
    name: str | None
    dev: str | None
    ino: int | None
    path: str | None
    count: int
    total_ns: int
    max_ns: int
    interrupted: int
    exclusive_held: Held
    readers_held: Held
    waits: list[LockWait]


class Counted(TypedDict, total=False):
    count: int
    bytes: int
    # DIO write classes, when dio_lock_mode says they were read: of `count`, the writes
    # that ran with i_rwsem held exclusive / shared by the writer, and those issued
    # with IOMAP_DIO_FORCE_WAIT / IOMAP_DIO_OVERWRITE_ONLY
    exclusive: int
    shared: int
    force_wait: int
    overwrite_only: int


class DioLockMode(TypedDict, total=False):
    """``dio_lock_mode``: what the classes' exclusive/shared and flag counts stand for."""

    measured: bool
    dio_flags: bool
    reason: str | None


class Latency(TypedDict, total=False):
    count: int
    total_ns: int
    max_ns: int
    hist_log2_ns: list[int]


class IowqHashedEntry(TypedDict, total=False):
    """``dio[].io_wq_hashed``: the file's io_uring requests io-wq serialized by its hash
    (present only where ``io_wq_hashed.measured``)."""

    queued: int             # hashed O_DIRECT reads and writes queued to io-wq
    unhashed: int           # O_DIRECT reads and writes queued to io-wq unhashed
    waited: Latency         # queueing to the start of its direct I/O, every hashed one
    behind: Latency         # of those, queued while another of the file's was queued


class IowqMeasured(TypedDict, total=False):
    """``io_wq_hashed``: whether the recorder measured io-wq's hashed requests."""

    measured: bool
    reason: str | None


class DioEntry(TypedDict, total=False):
    """``dio[]``: one inode. Class values are ``{count, bytes}``."""

    dev: str | None
    ino: int | None
    path: str | None
    fs_block_size: int | None
    writes: Counted
    reads: Counted
    aligned: Counted
    unaligned: Counted
    extending: Counted
    hole: Counted
    unwritten: Counted
    mapped: Counted
    dsync: Counted
    buffered_writes: Counted
    allocating: Counted
    aio: Counted
    unwritten_converted: Counted
    latency: Latency
    read_latency: Latency
    pre_iomap: Latency
    fsync: Latency              # fsync, fdatasync
    sync_file_range: Latency    # writeback hints: no durability
    dsync_writes: Latency       # write-family calls on an O_DSYNC/O_SYNC file
    io_wq_hashed: IowqHashedEntry


class OffcpuRecord(TypedDict, total=False):
    tid: int
    pid: int
    comm: str
    reason: str             # lock | runqueue | blocked (older recorders: io | journal | other)
    lock_addr: str | None
    kstack: list[str]
    ustack: list[str]
    syscall: int | str | None
    dsync: bool             # in a write on an O_DSYNC/O_SYNC file (absent: no)
    count: int
    total_ns: int
    sampled_count: int
    sampled_ns: int
    long: bool              # waits >= --long-wait-us, recorded in every phase with stacks


class SyscallEntry(TypedDict, total=False):
    name: str
    kind: str   # write, sync, sync_range, received, sent (documents before it: name only)
    count: int
    timed: int  # calls timed (a sample for the write family); total_ns is theirs
    total_ns: int
    max_ns: int
    hist_log2_ns: list[int]


class NetEntry(TypedDict, total=False):
    pid: int
    comm: str
    rx_calls: int
    rx_bytes: int
    tx_calls: int
    tx_bytes: int
    tx_write_calls: int     # of tx_calls, made with a followed write call (write, pwrite64, ...)


class HolderSample(TypedDict, total=False):
    addr: str
    lock_type: str
    state: str              # on_cpu | runqueue | blocked | reader_owned | unknown
    owner_tid: int | None
    owner_pid: int | None
    owner_comm: str | None
    iowait: bool
    reason: str | None
    kstack: list[str]
    count: int
    wait_ns: int


class ReleaserRecord(TypedDict, total=False):
    addr: str
    waker_pid: int
    waker_comm: str
    kstack: list[str]
    count: int
    wait_ns: int


class TraceHolders(TypedDict, total=False):
    enabled: bool
    period_ms: int
    timer_cpus: list[int]
    reason: str | None      # why no CPU has a timer
    offcpu_stacks: bool
    counts: dict[str, int]
    samples: list[HolderSample]
    releasers_enabled: bool
    releasers: list[ReleaserRecord]


class ShedStep(TypedDict, total=False):
    t_ns: int
    after_ns: int
    kind: str
    what: str
    share_before: float


class UserCost(TypedDict, total=False):
    cpu_ns: int
    user_ns: int
    system_ns: int
    cpu_share: float | None


class StatsClock(TypedDict, total=False):
    """The statistics' own clock read per run, and its part of the BPF time."""

    ns_per_run: float | None
    bpf_ns: int | None
    cpu_share: float | None


class TraceOverhead(TypedDict, total=False):
    stats: str
    stats_error: str | None
    online_cpus: int
    window_ns: int
    stats_every: int
    measured_ns: int
    measured_bpf_ns: int
    bpf_ns: int
    cpu_share: float | None
    observed_ns: int
    cpu_share_observed: float | None
    stats_clock: StatsClock
    max_overhead_pct: float
    max_pause_ns: int
    core_groups: list[str]
    per_program: list[dict[str, Any]]
    per_group: list[dict[str, Any]]
    user: UserCost
    shed: list[ShedStep]
    detached: bool


class Sampling(TypedDict, total=False):
    """``sampling``: time-sampled recording (--duty, docs/recorder-json.md)."""

    duty_pct: int
    requested_pct: int
    period_ns: int
    observed_ns: int
    cycles: int
    attach_failures: int
    switch: str             # detach | flag (--duty-flag)
    toggles: int            # switches off and on
    toggle_ns: int          # their wall time
    toggle_cpu_ns: int      # the recorder thread's CPU in them
    pauses: int             # --max-overhead pauses (every probe detached)
    paused_ns: int          # their time up to the window's end


class BlockEntry(TypedDict, total=False):
    """``block[]``: one device's requests (docs/recorder-json.md, `block`)."""

    dev: str                    # the whole disk, "MAJOR:MINOR"
    name: str | None
    count: int
    total_ns: int
    max_ns: int
    hist_log2_ns: list[int]
    service_ns_total: int       # total_ns: the requests' service times summed
    observed_ns: int
    inflight_mean: float | None  # Little's law: service_ns_total / observed_ns
    busy_ns: int | None         # >= 1 request in flight; null: not measured
    busy_share: float | None
    busy_unmeasured: str | None  # why busy_ns is null


class TraceSection(TypedDict, total=False):
    """What a whole trace and each of its ``series`` intervals share: the counted
    window and the per-interval maps."""

    interval: Interval
    threads: list[TraceThread]
    offcpu: list[OffcpuRecord]
    syscalls: list[SyscallEntry]
    dio: list[DioEntry]
    net: list[NetEntry]
    block: list[BlockEntry]
    state: dict[str, Any]   # series intervals only: maps in use, drops, sampling so far


class Trace(TraceSection, total=False):
    """``runs[].trace``: lockscope-record's document."""

    schema: str
    argv: list[str]
    kernel: str
    pid: int
    filter: dict[str, Any]
    features: list[dict[str, Any]]
    decoding: list[dict[str, Any]]
    config: dict[str, Any]
    drops: dict[str, Any]
    counts: dict[str, int]
    locks: list[TraceLock]
    jbd2: dict[str, Any]
    dio_lock_mode: DioLockMode
    io_wq_hashed: IowqMeasured
    holders: TraceHolders
    folded: dict[str, list[str]]        # older recorders only
    overhead: TraceOverhead
    sampling: Sampling
    series: list[TraceSection]
    series_omitted: int


# ---------------------------------------------------------------- lockscope-load JSON


class ClatJson(TypedDict, total=False):
    mean: float
    percentile: dict[str, float]


class LatJson(TypedDict, total=False):
    """``lat_ns`` of one direction: fio's total latency (slat + clat)."""

    mean: float


class DirectionStats(TypedDict, total=False):
    """One direction (``read``/``write``) of an engine job, as fio writes it."""

    iops: float
    bw_bytes: float
    total_ios: int
    clat_ns: ClatJson
    lat_ns: LatJson         # submission to completion


class EngineJob(TypedDict, total=False):
    jobname: str
    job_runtime: float      # ms
    read: DirectionStats
    write: DirectionStats


class EngineThread(TypedDict, total=False):
    tid: int


class EngineExtras(TypedDict, total=False):
    """The engine's own section (``workload.lockscope``): its threads and timed phase."""

    threads: list[EngineThread]
    timed_phase: Interval


class EngineJson(TypedDict, total=False):
    """``runs[].workload``: lockscope-load's fio-compatible JSON."""

    jobs: list[EngineJob]
    lockscope: EngineExtras


# ---------------------------------------------------------------- results.json: what ran


class FsFacts(TypedDict, total=False):
    fstype: str
    device: str
    backing: str
    backing_device: str
    mount_options: str
    mountpoint: str
    block_size: int
    image_bytes: int | None
    made_by_lockscope: bool
    server: dict[str, Any]      # sweep --preset: the server on this filesystem


class Host(TypedDict, total=False):
    kernel: str
    kernel_version: str
    machine: str
    cpus: int | None
    memory_bytes: int
    hostname: str
    filesystems: dict[str, FsFacts]
    features: list[dict[str, Any]]


class Workload(TypedDict, total=False):
    scenario: str
    preset: dict[str, Any]      # sweep --preset: the database preset
    description: str
    job: dict[str, Any]
    runtime_s: float
    threads: list[int]
    repeat: int


class CostShed(TypedDict, total=False):
    what: str | None
    after_s: float
    kind: str | None    # "restore": what was shed before came back (absent: shed)


class RecorderCost(TypedDict):
    """``runs[].recorder_cost`` and ``analysis.attach.overhead``."""

    bpf_cpu_share: float | None
    user_cpu_share: float | None
    max_overhead_pct: float | None
    shed: list[CostShed]
    detached: bool


class RunRecorderCost(RecorderCost, total=False):
    """``runs[].recorder_cost``: the attach form's overhead plus the BPF time."""

    bpf_ns: int | None
    stats_measured: float | None


class SweptFile(TypedDict, total=False):
    """``runs[].files[]``: what the sweep or attach learned of a traced file."""

    path: str
    fstype: str
    size_bytes: int
    setuid: bool
    setgid: bool
    security_xattrs: list[str]


class Run(TypedDict, total=False):
    fs: str
    threads: int
    repeat: int
    workload: EngineJson
    trace: Trace | None
    trace_error: str | None
    phases_s: dict[str, float]
    recorder_cost: RunRecorderCost | None
    files: list[SweptFile]
    devices: list[DeviceFacts]
    engine_argv: list[str]
    server: dict[str, Any]      # sweep --preset: the server's facts at this point


class PgRelation(TypedDict):
    dboid: int
    relfilenode: int
    name: str


class DbDoc(TypedDict, total=False):
    """``db`` of an attach: the database's sampled counters."""

    engine: str
    version: str | None     # the server's own (VERSION(), server_version)
    counters: list[str]
    lacks: list[str]        # counters this server version does not have: not measured
    samples: list[dict[str, Any]]
    relations: list[PgRelation]
    own_xacts_per_sample: int
    errors: list[str]
    warning: str | None


class VerifyCurve(TypedDict):
    """Per thread count (ascending), one list each: ``verify...before`` / ``after``."""

    threads: list[int]
    iops: list[float]
    efficiency: list[float]
    lock_share: list[float | None]   # the blamed lock's share of thread time (None: untraced)


class VerifyRemedy(TypedDict, total=False):
    """``verify.filesystems.<fs>.remedies[]``: one remedy of the verdict (docs/sweep.md)."""

    remedy: str              # the verdict's prose remedy (several joined by "; ")
    fix: str | None          # analysis/remedies.py FIXES name, "remedy_command", or None
    outcome: str             # verified | partly | not_verified | not_measured | failed |
    #                          not_run | not_applicable | not_needed
    line: str                # the one-line outcome
    # only for a remedy that was rerun
    title: str
    changes: dict[str, list[Any]]   # job option -> [before, after] (None: absent)
    threads: list[int]
    out: str                 # the rerun's directory, relative to the sweep's --out
    command: str             # the rerun's own command line
    before: VerifyCurve
    after: VerifyCurve
    share_before: float | None
    share_after: float | None
    efficiency_before: float | None
    efficiency_after: float | None
    limit: str | None        # partly: what limits the rerun now (its verdict's summary)
    after_verdict: dict[str, Any]
    flame_diff: dict[str, str | None]   # folded, svg (relative to --out), error


class VerifyFs(TypedDict, total=False):
    verdict: str
    confidence: str          # the verdict's confidence before --verify
    confidence_after: str    # after: one step lower when no rerun remedy moved the wait
    lock: dict[str, Any] | None   # name, inode, path of the blamed lock (None: no lock)
    threads: list[int]       # the thread counts the reruns ran at
    note: str
    remedies: list[VerifyRemedy]


class Verify(TypedDict, total=False):
    """``verify`` of a sweep run with --verify."""

    thresholds: dict[str, float]     # gone_share, fell_ratio, scales_efficiency
    estimate_s: float                # announced before the reruns
    elapsed_s: float
    partial: bool                    # interrupted: some remedies not run
    filesystems: dict[str, VerifyFs]


class FailedPoint(TypedDict, total=False):
    fs: str
    threads: int
    repeat: int
    error: str
    exit_status: int | None
    stderr: str | None
    went_on: bool               # the sweep ran the later points (--keep-going)


class AttachTarget(TypedDict, total=False):
    """``target`` of an attach: what was traced (run/target.py ``Target.facts``)."""

    how: str                    # pid, comm, cgroup, unit
    value: str
    pids: list[int]
    comms: list[str]
    comm: str | None
    cgroup: str | None
    exited: bool                # the target exited before --duration


class AttachSettings(TypedDict, total=False):
    """``attach`` of an attach: its options and how the window ended."""

    duration_s: float
    interval_s: float
    max_overhead_pct: float
    duty_pct: int | None
    ended: str                  # duration, interrupted, target exited;
                                # --continuous: stopped, target exited
    recorder_argv: list[str]
    privileges_lost: list[str]  # "without CAP_X: what is lost", one per capability missing
    continuous: bool            # --continuous: the keys below too
    listen: str
    top_files: int
    recorder_starts: int        # recorders started (again after a restart of the target)
    rotate_s: float             # --rotate: a new recorder every S seconds (0: never)
    rotations: int


class IoLimit(TypedDict):
    """One I/O limit a cgroup of the traced processes sets on a device (run/io_limits.py)."""

    dev: str                    # "MAJOR:MINOR" of the whole disk
    cgroup: str                 # the cgroup's path in its hierarchy ("/app")
    file: str                   # the file it is read from, full path
    key: str                    # blkio.throttle.write_iops_device | io.max wiops | ...
    what: str                   # read IOPS | write IOPS | read bytes/s | write bytes/s
    value: int                  # per second
    pids: list[int]             # the traced processes under that cgroup


class DeviceFacts(TypedDict):
    """``window.devices[]``, ``runs[].devices[]``: a disk the window's requests went to,
    as the host showed it when the window closed (run/device_facts.py); null: unreadable."""

    dev: str                    # "MAJOR:MINOR" of the whole disk
    name: str | None
    file_devs: list[str]        # the traced files' st_dev on it (partitions included)
    scheduler: str | None       # /sys/block/DEV/queue/scheduler, the one in brackets
    nr_requests: int | None     # /sys/block/DEV/queue/nr_requests
    hw_tags: int | None         # the largest /sys/block/DEV/mq/*/nr_tags
    queue_depth: int | None     # /sys/block/DEV/device/queue_depth (SCSI)
    wbt_lat_usec: int | None    # /sys/block/DEV/queue/wbt_lat_usec (0: off)
    io_limits: list[IoLimit]
    limits_read: str | None     # None: the cgroups were read; else why not


class AttachWindow(TypedDict, total=False):
    """``window`` of an attach: the recorder's one window over the target."""

    label: str                  # the target's label; the flame graphs are named by it
    threads: int                # threads the recorder saw
    trace: Trace | None
    trace_error: str | None
    files: list[SweptFile]
    devices: list[DeviceFacts]


class ResultsDoc(TypedDict, total=False):
    schema: str
    kind: str               # "attach" for lockscope attach; absent for a sweep
    partial: bool
    created_wall: str
    command: list[str]
    reproduce: list[str]
    host: Host
    # a sweep
    workload: Workload
    runs: list[Run]
    # an attach
    target: AttachTarget
    attach: AttachSettings
    window: AttachWindow
    db: DbDoc | None
    analysis: Analysis
    failed_point: FailedPoint   # the first point that failed (run/workload/points.py)
    failed_points: list[FailedPoint]  # every one that failed (more with --keep-going)
    verify: Verify              # sweep --verify: the remedied reruns (run/remedy_rerun.py)


# ---------------------------------------------------------------- analysis.<fs> (sweep)


class Spread(TypedDict):
    mean: float
    min: float
    max: float
    stddev: float


class Clat(TypedDict):
    p50: float
    p99: float
    p999: float
    mean: float


class PointLock(TypedDict):
    """``points[].inode_locks[]`` / ``other_locks[]``."""

    key: str
    kind: str
    path: str | None
    name: str | None
    share: float
    total_ns: int
    count: int


class _PointRequired(TypedDict):
    threads: int
    repeats: int
    iops: Spread
    bw_bytes: Spread
    mib_s: float
    efficiency: float
    clat_ns: Clat
    traced: bool


class Point(_PointRequired, total=False):
    # only when a run at this thread count was traced
    thread_time_ns: float
    time_share: dict[str, float]    # SHARE_KEYS -> share of thread time
    inode_locks: list[PointLock]
    other_locks: list[PointLock]
    # io-wq's hashed queue in request time (analysis/iowq_sweep.py)
    io_uring_hashed: PointIoWq


# ``analysis.<fs>.usl``: ok and note always; the fit only when ok ("lambda" is a keyword).
UslFit = TypedDict("UslFit", {"ok": bool, "note": str, "lambda": float, "sigma": float,
                              "kappa": float, "peak_threads": "float | None", "r2": float},
                   total=False)


class WhatIf(TypedDict):
    threads: int
    iops: float
    speedup: float | None


class LockIdentity(TypedDict):
    """Which lock: the fields every per-lock record of the analysis starts with."""

    key: str
    kind: str
    name: str
    path: str | None
    dev: str | None
    ino: int | None
    addr: str | None
    inode: bool


class Lock(LockIdentity):
    """``analysis.<fs>.locks[]``."""

    mode: str               # exclusive | shared | mixed | unknown
    count: int
    total_ns: int
    max_ns: int
    p99_ns: float
    share_by_threads: dict[str, float]
    explained_loss: float
    what_if: WhatIf | None
    functions: list[str]
    stack: list[str]


# The DIO write classes of recorder-json.md, counted per file.
ClassKey = Literal["aligned", "unaligned", "extending", "hole", "unwritten", "mapped", "dsync"]
CLASS_KEYS: tuple[ClassKey, ...] = ("aligned", "unaligned", "extending", "hole", "unwritten",
                                    "mapped", "dsync")


class ClassCounts(TypedDict):
    """Direct-I/O writes per class (the CLASS_KEYS above)."""

    aligned: int
    unaligned: int
    extending: int
    hole: int
    unwritten: int
    mapped: int
    dsync: int


def no_classes() -> ClassCounts:
    """Every DIO write class at 0."""
    return cast(ClassCounts, dict.fromkeys(CLASS_KEYS, 0))


def class_counts_of(counts: ClassCounts) -> ClassCounts:
    """The DIO write classes of a row that carries more (a file, a sweep's class row)."""
    return cast(ClassCounts, {k: counts[k] for k in CLASS_KEYS})


class ClassMode(TypedDict):
    """How one class's DIO writes held the inode lock, as the recorder measured it."""

    exclusive: int
    shared: int
    force_wait: int | None      # None: the dio_flags were not read


class WriteClasses(ClassCounts):
    """A file's writes by class: what the locking rules (analysis.rules) read."""

    writes: int             # direct I/O writes
    buffered_writes: int
    block_size: int | None
    modes: dict[str, ClassMode]     # per class ("writes" too) with a mode or flags measured


class DioClass(WriteClasses):
    """``analysis.<fs>.dio_classes[]``: one file's DIO write classes over its runs."""

    path: str | None
    dev: str | None
    ino: int | None
    write_bytes: int
    reads: int
    latency_mean_ns: float


# ``mode.class`` is not a Python name, so the functional form names it.
ModeShare = TypedDict("ModeShare", {"class": str, "writes": int, "measured": int,
                                    "exclusive": int, "exclusive_share": float | None,
                                    "force_wait_share": float | None})


class Cause(TypedDict):
    reason: str
    rule: str
    kernel_source: str
    kernel_range: str       # the kernels the rule holds for: ">= 6.5", "< 6.3", ...
    commit: str             # the commit that made those kernels behave so ("" if none)
    evidence: str
    fraction: float
    remedy: str
    mode: ModeShare | None  # the measured lock mode of the class the rule is about


class KernelRules(TypedDict):
    """``analysis.<fs>.kernel_rules``: whose locking rules the causes are."""

    release: str | None     # the document's kernel release, None when it has none
    version: str | None     # its major.minor
    note: str | None        # e.g. "no kernel release: the newest rules"
    disagreements: list[str]    # the measured mode against the version's rules


class HolderShare(TypedDict):
    activity: str
    share: float
    frames: list[str]


class ReleaserShare(TypedDict):
    frames: list[str]
    share: float


class HoldersSampled(TypedDict):
    sampled_ns: float
    snapshots: int
    reader_owned_share: float
    unattributed_share: float
    not_seen_share: float       # owner named, its stack not taken: no activity
    not_seen_snapshots: int


class HolderSplit(HoldersSampled):
    """holders.split(): the list plus what was not attributed."""

    holders: list[HolderShare]


class _VerdictRequired(TypedDict):
    kind: VerdictKind
    lock: str | None
    path: str | None
    mode: str | None
    reasons: list[str]
    explained_loss: float
    evidence: list[str]
    confidence: str         # high | medium | low
    remedies: list[str]
    kernel_function: str | None
    summary: str


class Verdict(_VerdictRequired, total=False):
    # sweep: lock verdicts carry these ([] otherwise)
    holders: list[HolderShare]
    releasers: list[ReleaserShare]
    holders_sampled: HoldersSampled
    # inode-lock verdicts: the measured mode of the class the first cause blames
    # (all DIO writes without a cause), None when no DIO write was classed
    lock_mode: ModeShare | None
    # attach
    explained: float
    wait_class: str | None


class _FsAnalysisRequired(TypedDict):

    fs: str
    fstype: str
    points: list[Point]
    usl: UslFit
    locks: list[Lock]
    dio_classes: list[DioClass]
    causes: list[Cause]
    kernel_rules: KernelRules
    verdict: Verdict


class FsAnalysis(_FsAnalysisRequired, total=False):
    """``analysis.<fs>``."""

    # sweep --preset: the server's time per client count (analysis/server_time.py)
    server: dict[str, Any]
    # io-wq's hashed queue at the top thread count and its rule (analysis/iowq_sweep.py)
    io_uring_hashed: SweepIoWq
    # the device the top thread count's block waits were on (analysis/device_busy.py)
    device: DeviceFigures | None


class ComparisonRow(TypedDict):
    speedup: float
    efficiency: float
    iops: float
    mib_s: float
    verdict: VerdictKind


class Comparison(TypedDict):
    """``analysis.comparison``."""

    threads: int
    base_threads: int
    filesystems: dict[str, ComparisonRow]
    best: str
    ratio: float | None
    difference_lock: str | None
    summary: str


# ---------------------------------------------------------------- analysis.attach


class HowRow(TypedDict):
    method: str
    detail: str
    ns: float


# ``analysis.attach.classes[]``; "class" is a keyword, so the functional form names it.
WaitClassEntry = TypedDict("WaitClassEntry", {"class": str, "name": str, "ns": float,
                                              "threads": float, "share": float,
                                              "loss_share": float, "how": list[HowRow]})


class AttachFile(ClassCounts, total=False):
    """``analysis.attach.files[]``."""

    path: str | None
    dev: str | None
    ino: int | None
    engine: str | None
    role: str
    role_label: str
    object: str | None
    label: str
    detail: dict[str, Any]
    dio_writes: int
    dio_write_bytes: int
    buffered_writes: int
    buffered_write_bytes: int
    reads: int
    block_size: int | None
    fsyncs: int               # fsync, fdatasync
    fsync_ns: int
    sync_file_ranges: int     # writeback hints: no durability
    sync_file_range_ns: int
    dsync_writes: int         # write-family calls on the file opened O_DSYNC/O_SYNC
    dsync_write_ns: int
    inode_lock_waits: int
    inode_lock_ns: int
    inode_lock_kinds: list[str]
    io_wq_queued: int         # io_uring requests io-wq serialized by the file's hash
    io_wq_behind_ns: int      # their time queued behind another of the file's
    modes: dict[str, ClassMode]
    causes: list[Cause]
    rule_disagreements: list[str]


class IoUringHashedFile(TypedDict):
    """``analysis.attach.io_uring_hashed.files[]``."""

    path: str | None
    dev: str | None
    ino: int | None
    queued: int
    unhashed: int
    waited_ns: int
    behind: int
    behind_ns: int


class IoUringHashed(TypedDict):
    """``analysis.attach.io_uring_hashed``: io_uring requests io-wq ran one at a time per
    file; the figures are 0 where not measured, and ``measured`` says which."""

    measured: bool
    reason: str | None
    queued: int
    unhashed: int
    waited_ns: int
    behind: int
    behind_ns: int
    files: list[IoUringHashedFile]


class PointIoWq(IoUringHashed):
    """``analysis.<fs>.points[].io_uring_hashed``: io-wq's hashed queue over the point's
    traced runs, in request time. ``request_ns``: the requests' own time (each direction's
    total_ios x mean lat_ns, from the engine), None where the workload reports none;
    ``share``: behind_ns / request_ns, None where either is not measured (never 0)."""

    request_ns: float | None
    share: float | None


class SweepIoWq(TypedDict):
    """``analysis.<fs>.io_uring_hashed``: io-wq's hashed queue at the top traced thread
    count, whether the verdict names it, and io_uring's rule for this kernel when it does
    (``cause``, rules_iouring.py)."""

    measured: bool
    reason: str | None          # why not measured (None when measured)
    threads: int | None         # the top traced thread count
    queued: int
    unhashed: int
    behind: int
    behind_ns: int
    share: float | None         # of request time at ``threads``; None: not measured
    share_by_threads: dict[str, float]  # the measured points only
    explained_loss: float | None        # None: the lowest or top point not measured
    named: bool
    cause: Cause | None         # io_uring's rule for the top file's hashed waits
    path: str | None            # the file that waited most behind its hash
    # the hashed writes measured against the running kernel's range, where it says
    # they are not hashed (the cause then cites the range that hashes them)
    disagreement: str | None


class TraceRates(TypedDict):
    """``series[].trace``: the trace's throughput in one interval, per second."""

    write_calls_s: float
    fsync_calls_s: float            # fsync, fdatasync
    sync_file_range_calls_s: float  # writeback hints, apart: no durability
    dsync_writes_s: float           # writes on O_DSYNC/O_SYNC files
    log_bytes_s: float
    data_bytes_s: float
    requests_s: float
    responses_s: float
    has_net: bool


class SeriesRow(TypedDict):
    t_s: float
    duration_s: float
    start_mono_ns: int
    end_mono_ns: int
    trace: TraceRates
    db: dict[str, float]
    db_waits: dict[str, float]
    classes_ns: dict[str, float]


class Throughput(TypedDict):
    signal: str
    values: list[float]
    mean: float


FallClass = TypedDict("FallClass", {"class": str, "lag_s": int, "r": float,
                                    "slope_per_thread": float, "n": int,
                                    "threads_in_falls": float, "threads_otherwise": float},
                      total=False)


class Falls(TypedDict, total=False):
    intervals: int
    fallen: list[float]
    median: float | None
    classes: list[FallClass]
    top: FallClass | None
    note: str


class DbSummary(TypedDict, total=False):
    engine: str | None
    version: str | None
    lacks: list[str]
    samples: int
    errors: list[str] | None
    warning: str | None
    commits: float
    commits_per_s: float | None


class StackShares(TypedDict):
    """Wait delay of a profile and the part of it without a stack, by reason
    (analysis.stack_shares, docs/long-waits.md)."""

    delay_ns: float
    without_ns: dict[str, float]   # not_sampled, stack_lost
    four_frames_ns: float          # with at least 4 frames, kernel and user together


class DeviceFigures(TypedDict):
    """``analysis.attach.device``, ``analysis.<fs>.device``: the device the threads'
    block waits were on, over the window (analysis/device_busy.py)."""

    dev: str
    name: str | None
    chosen_as: str              # why this device: the traced files' one, or the busiest
    requests: int
    observed_s: float
    requests_per_s: float | None
    busy_share: float | None    # null: not measured (busy_unmeasured says why)
    busy_unmeasured: str | None
    inflight_mean: float | None  # requests in flight on average (Little's law)
    queue_limit: int | None     # the smallest of nr_requests, hw_tags, queue_depth
    queue_limit_from: str | None
    service_mean_ns: float | None
    service_p50_ns: float | None  # upper end of the histogram bucket holding it
    service_p99_ns: float | None
    thread_wait_mean_ns: float | None  # the traced threads' mean block-I/O wait
    facts: DeviceFacts | None   # the host's queue facts and cgroup limits, when read


class AttachFigures(TypedDict):
    """``analysis.attach`` but its verdict: what the verdict is decided from."""

    window_s: float
    observed_s: float           # of window_s, the probes were attached (--duty): the rates' base
    sampling: str | None        # "observed 30% of the time (--duty)", None when always
    threads: int
    idle_threads: int
    engine: str | None
    oncpu_ns: float
    thread_time_ns: float
    lost_ns: float
    idle_ns: float
    classes: list[WaitClassEntry]
    user_stacks_classifier: bool
    files: list[AttachFile]
    fsyncs_per_file: bool
    series: list[SeriesRow]
    throughput: Throughput
    falls: Falls
    db: DbSummary | None
    series_omitted: int
    overhead: RecorderCost | None
    io_uring_hashed: NotRequired[IoUringHashed]
    stacks: NotRequired[dict[str, StackShares]]  # block, mutex
    device: NotRequired[DeviceFigures | None]


class AttachAnalysis(AttachFigures):
    """``analysis.attach``."""

    kernel_rules: KernelRules
    verdict: Verdict


# analysis: one FsAnalysis per fs label plus "comparison", or {"attach": AttachAnalysis}.
Analysis = dict[str, FsAnalysis | Comparison | AttachAnalysis | None]


def fs_analyses(analysis: Analysis | None) -> dict[str, FsAnalysis]:
    """The per-filesystem entries of a sweep's analysis (not the comparison)."""
    return {fs: cast(FsAnalysis, a) for fs, a in (analysis or {}).items()
            if fs not in ("comparison", "attach") and isinstance(a, dict)}


def comparison_of(analysis: Analysis | None) -> Comparison | None:
    return cast("Comparison | None", (analysis or {}).get("comparison"))


def attach_analysis(analysis: Analysis | None) -> AttachAnalysis | None:
    return cast("AttachAnalysis | None", (analysis or {}).get("attach"))


def window_of_run(run: Run) -> AttachWindow:
    """A traced run as an attach window (lockscope/1 attach documents, and a preset
    sweep's point analyzed the way an attach is)."""
    return {"label": run.get("fs", ""), "threads": run.get("threads", 0),
            "trace": run.get("trace"), "trace_error": run.get("trace_error"),
            "files": run.get("files") or [], "devices": run.get("devices") or []}


def traced_points(doc: ResultsDoc) -> list[Run]:
    """The document's traced points, as the flame graphs read them: a sweep's runs, or
    an attach's window as one point (its target's label as the filesystem)."""
    window = doc.get("window")
    if window is None:
        return list(doc.get("runs") or [])
    return [{"fs": window.get("label", ""), "threads": window.get("threads", 0),
             "repeat": 0, "trace": window.get("trace"),
             "trace_error": window.get("trace_error"), "files": window.get("files") or []}]
