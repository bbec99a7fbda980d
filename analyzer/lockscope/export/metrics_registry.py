"""Prometheus metrics over an ExportState snapshot: a custom prometheus_client
Collector, one snapshot per scrape, so a scrape is consistent and never waits for the
recorder. Names follow Prometheus conventions (``lockscope_`` prefix, base units,
``_total`` counters); docs/fleet.md lists them. Metrics appear once their source has
reported: nothing unmeasured is exported as 0.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector, CollectorRegistry

from ..analysis.lockkinds import INODE_LOCK_KINDS
from ..analysis.wait_classes import ONCPU, RECORD_CLASSES, REQUEST_CLASSES, kind_of
from .device_metrics import device_metrics
from .export_state import ExportSnapshot
from .exporter_metrics import exporter_metrics
from .log2_buckets import log2_buckets
from .stack_coverage import REASONS, stack_coverage

FILE_LABELS = ["file", "role", "object"]


class SnapshotCollector(Collector):
    """Yields the lockscope metrics of ``snapshot()`` at each scrape."""

    def __init__(self, snapshot: Callable[[], ExportSnapshot]) -> None:
        self._snapshot = snapshot

    def describe(self) -> list[Metric]:
        return []  # families vary with what the recorder measured

    def collect(self) -> Iterator[Metric]:
        s = self._snapshot()
        yield from _thread_metrics(s)
        yield from _lock_metrics(s)
        yield from _stack_metrics(s)
        yield from _file_metrics(s)
        yield from device_metrics(s.devices, ((d.devices, d.block_span_ns) for d in s.recent))
        yield from _recorder_metrics(s)
        yield from _context_metrics(s)
        yield from exporter_metrics(s)


def _file_labels(s: ExportSnapshot, file: str) -> list[str]:
    return [file, s.file_role(file), s.file_object(file)]


def _thread_metrics(s: ExportSnapshot) -> Iterator[Metric]:
    if not s.intervals:
        return
    t = CounterMetricFamily(
        "lockscope_thread_seconds", "Time of the traced threads by wait class: oncpu, "
        "idle (waiting for work) and the loss classes (counted while observed)",
        labels=["class", "kind"], unit="seconds")
    # request-time classes (io-wq's hashed queue) only where measured: never a 0 for
    # what was not
    measured = tuple(c for c in REQUEST_CLASSES if c in s.thread_ns)
    for cls in (ONCPU, *RECORD_CLASSES, *measured):
        t.add_metric([cls, kind_of(cls)], s.thread_ns.get(cls, 0.0) / 1e9)
    yield t


def _stack_metrics(s: ExportSnapshot) -> Iterator[Metric]:
    if not s.intervals:
        return
    g = GaugeMetricFamily("lockscope_profile_delay_without_stack_ratio", "Share of the "
                          "block and mutex profiles' delay (since the exporter started) "
                          "without a stack, by reason: not_sampled (short waits between "
                          "stack samples or with stacks shed by the budget), stack_lost "
                          "(long waits whose stack could not be taken)",
                          labels=["profile", "reason"])
    carried = GaugeMetricFamily("lockscope_profile_delay_carried_stack_ratio", "Share of "
                                "the block and mutex profiles' delay (since the exporter "
                                "started) whose stack was carried from samples of the same "
                                "wait in an earlier interval (stack=\"carried\")",
                                labels=["profile"])
    for profile, samples in (("block", s.block_total), ("mutex", s.mutex_total)):
        cov = stack_coverage(samples)
        for reason in REASONS:
            share = cov.share(reason)
            if share is not None:  # no delay: nothing measured, no figure
                g.add_metric([profile, reason], share)
        if cov.carried_share is not None:
            carried.add_metric([profile], cov.carried_share)
    yield g
    yield carried


def _lock_metrics(s: ExportSnapshot) -> Iterator[Metric]:
    if not s.intervals:
        return
    labels = ["lock", "mode", "wait_class", *FILE_LABELS]
    secs = CounterMetricFamily("lockscope_lock_wait_seconds", "Kernel lock wait time of "
                               "the traced threads by lock, mode and file",
                               labels=labels, unit="seconds")
    waits = CounterMetricFamily("lockscope_lock_waits", "Kernel lock waits of the traced "
                                "threads by lock, mode and file", labels=labels)
    for (file, lock, mode), (count, ns) in sorted(s.lock_waits.items()):
        wc = "inode_lock" if lock in INODE_LOCK_KINDS else "kernel_lock"
        lv = [lock, mode, wc, *_file_labels(s, file)]
        secs.add_metric(lv, ns / 1e9)
        waits.add_metric(lv, count)
    yield secs
    yield waits
    hist = HistogramMetricFamily("lockscope_lock_wait_duration_seconds",
                                 "Kernel lock wait durations by lock and mode",
                                 labels=["lock", "mode"], unit="seconds")
    for (lock, mode), slots in sorted(s.lock_hist.items()):
        hist.add_metric([lock, mode], log2_buckets(slots),
                        s.lock_hist_sum.get((lock, mode), 0) / 1e9)
    yield hist


def _file_metrics(s: ExportSnapshot) -> Iterator[Metric]:
    if not s.intervals:
        return
    families = {
        "writes": CounterMetricFamily("lockscope_dio_writes", "Direct-I/O writes by file",
                                      labels=FILE_LABELS),
        "write_bytes": CounterMetricFamily("lockscope_dio_written_bytes",
                                           "Bytes written by direct I/O, by file",
                                           labels=FILE_LABELS, unit="bytes"),
        "buffered_writes": CounterMetricFamily("lockscope_buffered_writes",
                                               "Write calls through the page cache, by file",
                                               labels=FILE_LABELS),
        "buffered_bytes": CounterMetricFamily("lockscope_buffered_written_bytes",
                                              "Bytes written through the page cache, by "
                                              "file", labels=FILE_LABELS, unit="bytes"),
    }
    classes = CounterMetricFamily("lockscope_dio_write_class_writes", "Direct-I/O writes "
                                  "by write class and file (classes overlap: "
                                  "docs/fleet.md)", labels=[*FILE_LABELS, "class"])
    for (file, key), v in sorted(s.dio.items()):
        lv = _file_labels(s, file)
        if key in families:
            families[key].add_metric(lv, v)
        else:
            classes.add_metric([*lv, key], v)
    yield from families.values()
    yield classes
    sync_s = CounterMetricFamily("lockscope_file_sync_seconds", "Time in fsync/fdatasync "
                                 "(call=fsync), sync_file_range (writeback, no durability) "
                                 "and writes on O_DSYNC/O_SYNC files (call=dsync_write) by "
                                 "file", labels=[*FILE_LABELS, "call"], unit="seconds")
    syncs = CounterMetricFamily("lockscope_file_syncs", "fsync/fdatasync, sync_file_range "
                                "and O_DSYNC/O_SYNC write calls by file",
                                labels=[*FILE_LABELS, "call"])
    for (file, call), (count, ns) in sorted(s.syncs.items()):
        lv = [*_file_labels(s, file), call]
        sync_s.add_metric(lv, ns / 1e9)
        syncs.add_metric(lv, count)
    yield sync_s
    yield syncs
    calls_s = CounterMetricFamily("lockscope_syscall_seconds", "Time in the timed system "
                                  "calls (writes, syncs) of the traced threads",
                                  labels=["syscall"], unit="seconds")
    calls = CounterMetricFamily("lockscope_syscalls", "Timed system calls of the traced "
                                "threads", labels=["syscall"])
    for name, (count, ns) in sorted(s.syscalls.items()):
        calls_s.add_metric([name], ns / 1e9)
        calls.add_metric([name], count)
    yield calls_s
    yield calls
    yield GaugeMetricFamily("lockscope_export_files", "Files with their own label (at most "
                            "the top files; the rest are file=\"other\")", value=len(s.files))


def _recorder_metrics(s: ExportSnapshot) -> Iterator[Metric]:
    if not s.intervals:
        return
    yield CounterMetricFamily("lockscope_recorder_intervals", "Recorder intervals exported",
                              value=s.intervals)
    yield CounterMetricFamily("lockscope_recorder_window_seconds", "Recorded time",
                              value=s.duration_ns / 1e9, unit="seconds")
    yield CounterMetricFamily("lockscope_recorder_observed_seconds", "Recorded time with "
                              "the probes attached (below the window under --duty)",
                              value=s.observed_ns / 1e9, unit="seconds")
    yield CounterMetricFamily("lockscope_recorder_bpf_cpu_seconds", "CPU time of the "
                              "recorder's BPF programs", value=s.bpf_ns / 1e9, unit="seconds")
    yield CounterMetricFamily("lockscope_recorder_user_cpu_seconds", "CPU time of the "
                              "recorder process", value=s.user_cpu_ns / 1e9, unit="seconds")
    if s.last_cpu_share is not None:
        yield GaugeMetricFamily("lockscope_recorder_cpu_share", "Share of all CPUs the "
                                "recorder's BPF programs used in the last interval",
                                value=s.last_cpu_share)
    if s.last_observed_share is not None:
        yield GaugeMetricFamily("lockscope_recorder_observed_share", "Share of the last "
                                "interval with the probes attached",
                                value=s.last_observed_share)
    yield GaugeMetricFamily("lockscope_recorder_last_interval_timestamp_seconds",
                            "When the last interval was exported (Unix time)",
                            value=s.last_wall_ns / 1e9, unit="seconds")


def _context_metrics(s: ExportSnapshot) -> Iterator[Metric]:
    c = s.context
    yield GaugeMetricFamily("lockscope_online_cpus", "CPUs the shares are of",
                            value=c.online_cpus)
    if c.target_up is not None:
        up = GaugeMetricFamily("lockscope_target_up", "1 while the traced target runs",
                               labels=["target"])
        up.add_metric([c.target or ""], 1.0 if c.target_up else 0.0)
        yield up
    if c.recorder_restarts is not None:
        r = CounterMetricFamily("lockscope_recorder_restarts", "Times the recorder was "
                                "started again, by reason: ended (it exited or was "
                                "killed), rotated (--rotate), target_restarted (its cgroup "
                                "was made again)", labels=["reason"])
        for k, v in sorted(c.recorder_restarts.items()):
            r.add_metric([k], v)
        yield r
    if c.max_overhead_pct is not None:
        yield GaugeMetricFamily("lockscope_recorder_budget_share", "The recorder's CPU "
                                "budget (--max-overhead) as a share of all CPUs",
                                value=c.max_overhead_pct / 100)
    if c.duty_pct is not None:
        yield GaugeMetricFamily("lockscope_recorder_duty_ratio", "Share of each duty period "
                                "the probes are attached (--duty, as lowered by the budget)",
                                value=c.duty_pct / 100)
    if s.pauses:
        yield CounterMetricFamily("lockscope_recorder_pauses", "Times every probe was "
                                  "detached for a while: over the budget with only the core "
                                  "probes left", value=s.pauses.get("pauses", 0))
        yield CounterMetricFamily("lockscope_recorder_paused_seconds", "Time every probe "
                                  "was detached over the budget (not observed)",
                                  value=s.pauses.get("paused_ns", 0) / 1e9, unit="seconds")
    if s.drops:
        d = CounterMetricFamily("lockscope_recorder_drops", "Data the recorder lost, by "
                                "kind (totals are lower bounds when any rise)",
                                labels=["kind"])
        for k, v in sorted(s.drops.items()):
            d.add_metric([k], v)
        yield d
    if c.map_occupancy:
        used = GaugeMetricFamily("lockscope_recorder_map_entries", "Entries in use in the "
                                 "recorder's maps", labels=["map"])
        cap = GaugeMetricFamily("lockscope_recorder_map_capacity", "Capacity of the "
                                "recorder's maps", labels=["map"])
        for m, (u, total) in sorted(c.map_occupancy.items()):
            used.add_metric([m], u)
            cap.add_metric([m], total)
        yield used
        yield cap
    if s.db_commits is not None:
        dbc = CounterMetricFamily("lockscope_db_commits", "Commits the database counted "
                                  "(its own counters)", labels=["engine"])
        dbc.add_metric([c.db_engine or ""], s.db_commits)
        yield dbc


def make_registry(snapshot: Callable[[], ExportSnapshot]) -> CollectorRegistry:
    """A registry holding only the lockscope collector."""
    reg = CollectorRegistry(auto_describe=False)
    reg.register(SnapshotCollector(snapshot))
    return reg
