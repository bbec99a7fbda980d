"""Realistic synthetic results.json documents (docs/results-schema.md) for tests and benches.

The default document tells the project's headline story: ext4 random 4 KiB
O_DIRECT writes into a shared sparse file stay flat because every write takes
``i_rwsem`` exclusive (writes into holes), while XFS issues them under a shared
IOLOCK and scales. Each run carries fio-style workload JSON and a recorder
trace in the shape lockscope's analyzer reads (threads, off-CPU records, locks
with their waits and kernel stacks, DIO classes) plus folded lock-wait and
off-CPU stacks; the ``analysis`` section is filled consistently with the runs.

Usable as a script too (the bench uses it)::

    python tools/synthetic_results.py -o results.json --stacks 100000
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
from collections.abc import Iterable
from typing import Any

from lockscope.schema import SCHEMA

PAGE = 4096
RUNTIME_S = 6
HIST_SLOTS = 40

# The "true" USL curve of each filesystem.
PROFILES: dict[str, dict[str, float]] = {
    "ext4": {"lambda": 19300.0, "sigma": 0.96, "kappa": 0.0},
    "xfs": {"lambda": 18700.0, "sigma": 0.035, "kappa": 0.0012},
}

USER_ROOT = ["lockscope-load", "start_thread", "lsl_worker_main", "lsl_run_job"]
USER_IO = ["lsl_io_submit", "lsl_psync_write", "__libc_pwrite64"]
SYSCALL = ["entry_SYSCALL_64_after_hwframe", "do_syscall_64", "__x64_sys_pwrite64",
           "ksys_pwrite64", "vfs_write"]
_EXT4_DIO = ["ext4_file_write_iter", "ext4_dio_write_iter"]
_EXT4_IOMAP = _EXT4_DIO + ["iomap_dio_rw", "__iomap_dio_rw", "iomap_iter", "ext4_iomap_begin"]
_XFS_DIO = ["xfs_file_write_iter", "xfs_file_dio_write", "xfs_file_dio_write_aligned"]
_SLEEP = ["schedule", "__schedule"]
# Kernel call paths, root first, per (fs, where the thread waited).
KPATHS = {
    "ext4": {
        "i_rwsem": _EXT4_DIO + ["down_write", "rwsem_down_write_slowpath"] + _SLEEP,
        "i_data_sem": _EXT4_IOMAP + ["ext4_map_blocks", "down_write",
                                     "rwsem_down_write_slowpath"] + _SLEEP,
        "j_state_lock": _EXT4_IOMAP + ["__ext4_journal_start_sb", "jbd2__journal_start",
                                       "start_this_handle", "_raw_read_lock",
                                       "queued_read_lock_slowpath"],
        "journal": _EXT4_IOMAP + ["__ext4_journal_start_sb", "jbd2__journal_start",
                                  "start_this_handle", "wait_transaction_locked"] + _SLEEP,
        "block_io": _EXT4_IOMAP[:4] + ["blk_finish_plug", "io_schedule"] + _SLEEP,
        "other": _EXT4_DIO + ["iomap_dio_rw", "__iomap_dio_rw", "__cond_resched"] + _SLEEP,
    },
    "xfs": {
        "xfs_ilock": _XFS_DIO + ["iomap_dio_rw", "__iomap_dio_rw", "iomap_iter",
                                 "xfs_direct_write_iomap_begin", "xfs_ilock", "down_write",
                                 "rwsem_down_write_slowpath"] + _SLEEP,
        "i_rwsem": _XFS_DIO + ["xfs_ilock_iocb_for_write", "xfs_ilock", "down_read",
                               "rwsem_down_read_slowpath"] + _SLEEP,
        "xlog_grant_head": _XFS_DIO + ["iomap_dio_rw", "__iomap_dio_rw", "iomap_iter",
                                       "xfs_direct_write_iomap_begin", "xfs_trans_alloc",
                                       "xfs_log_reserve", "xlog_grant_head_check",
                                       "_raw_spin_lock", "queued_spin_lock_slowpath"],
        "block_io": _XFS_DIO + ["iomap_dio_rw", "__iomap_dio_rw", "blk_finish_plug",
                                "io_schedule"] + _SLEEP,
        "other": _XFS_DIO + ["iomap_dio_rw", "__iomap_dio_rw", "__cond_resched"] + _SLEEP,
    },
}
# Per fs: (kind, name, inode lock?, fraction of its class's wait, flag, mean wait ns).
LOCKS = {
    "ext4": [("i_rwsem", "i_rwsem", True, 0.97, "WRITE", 250_000),
             ("i_data_sem", "i_data_sem", True, 0.03, "WRITE", 40_000),
             ("spinlock", "j_state_lock", False, 1.0, "SPIN", 3_000)],
    "xfs": [("xfs_ilock", "xfs_ilock", True, 0.8, "WRITE", 40_000),
            ("i_rwsem", "i_rwsem", True, 0.2, "READ", 60_000),
            ("spinlock", "xlog_grant_head", False, 1.0, "SPIN", 3_000)],
}
# Random application frames make many distinct stacks, as real call paths do.
APP_FRAMES = [f"lsl_{a}_{b}" for a in ("job", "rand", "buf", "stat", "io", "plan", "loop", "slot")
              for b in ("prep", "next", "fill", "tick", "pick", "step", "wait", "fold")]
DIO_COUNTERS = ("aligned", "unaligned", "extending", "hole", "unwritten", "mapped", "dsync",
                "buffered_writes", "reads")


def _usl(prof: dict[str, float], n: int) -> float:
    return prof["lambda"] * n / (1 + prof["sigma"] * (n - 1) + prof["kappa"] * n * (n - 1))


def _percentiles(mean_ns: float, tail: float) -> dict[str, int]:
    pts = {"1.000000": 0.35, "5.000000": 0.5, "10.000000": 0.6, "20.000000": 0.72,
           "30.000000": 0.8, "40.000000": 0.9, "50.000000": 0.97, "60.000000": 1.05,
           "70.000000": 1.15, "80.000000": 1.3, "90.000000": 1.6, "95.000000": 2.0,
           "99.000000": 3.0 * tail, "99.500000": 3.6 * tail, "99.900000": 5.5 * tail,
           "99.950000": 6.5 * tail, "99.990000": 9.0 * tail}
    return {k: int(mean_ns * v) for k, v in pts.items()}


def _time_share(fs: str, n: int) -> dict[str, float]:
    """Where thread time goes: ext4 serializes on i_rwsem, XFS waits on the device."""
    if fs == "ext4":
        lock = 0.93 * (n - 1) / n
        rest = 1 - lock
        share = {"oncpu": 0.22 * rest, "runqueue": 0.03 * rest * n / 2, "inode_lock": lock,
                 "other_lock": 0.01 * rest, "block_io": 0.6 * rest, "journal": 0.05 * rest}
    else:
        share = {"oncpu": 0.2 - 0.01 * n, "runqueue": 0.01 * n, "inode_lock": 0.004 * n,
                 "other_lock": 0.002, "block_io": 0.7, "journal": 0.0}
    share["other_offcpu"] = max(0.0, 1 - sum(share.values()))
    total = sum(share.values())
    return {k: v / total for k, v in share.items()}


def _wait_ns(fs: str, share: dict[str, float], thread_ns: float) -> dict[str, float]:
    """ns waited per wait site (lock names, block_io, journal, other) in one run."""
    out: dict[str, float] = {}
    for _kind, name, inode, frac, _, _ in LOCKS[fs]:
        out[name] = frac * thread_ns * share["inode_lock" if inode else "other_lock"]
    out["block_io"] = share["block_io"] * thread_ns
    out["journal"] = share["journal"] * thread_ns
    out["other"] = share["other_offcpu"] * thread_ns
    return out


def _off(frame: str) -> str:
    """A frame as the recorder's symbolizer writes it: name+offset (stable per name)."""
    return f"{frame}+0x{(len(frame) * 37 + sum(map(ord, frame))) % 0x3f0 + 0x10:x}"


class _StackPool:
    """Deterministic pool of distinct folded stacks per (fs, wait site).

    Lines look like the recorder's: comm first, then user frames, then kernel
    frames, root first, each frame with its offset (``vfs_write+0x1c4``);
    ``annotate_kernel`` adds perf's ``_[k]`` mark to kernel frames instead.
    """

    def __init__(self, rng: random.Random, annotate_kernel: bool):
        self.rng = rng
        self.annotate = annotate_kernel
        self.cache: dict[tuple[str, str], list[str]] = {}

    def _frame(self, name: str, kernel: bool) -> str:
        return name + "_[k]" if kernel and self.annotate else _off(name)

    def stacks(self, fs: str, site: str, count: int) -> list[str]:
        have = self.cache.setdefault((fs, site), [])
        seen = set(have)
        kernel = ";".join(self._frame(f, True) for f in SYSCALL + KPATHS[fs][site])
        base = ";".join([USER_ROOT[0]] + [self._frame(f, False) for f in USER_ROOT[1:]])
        tail = ";".join(self._frame(f, False) for f in USER_IO)
        tries = 0
        while len(have) < count and tries < count * 20:
            tries += 1
            depth = self.rng.randint(0, 6) if count > 50 else self.rng.randint(0, 2)
            mid = ";".join(self._frame(self.rng.choice(APP_FRAMES), False)
                           for _ in range(depth))
            line = ";".join(p for p in (base, mid, tail, kernel) if p)
            if line not in seen:
                seen.add(line)
                have.append(line)
        return have[:count]


def _weights(rng: random.Random, count: int, total: float) -> list[int]:
    """Heavy-tailed weights summing to ~total: a few stacks dominate, as in real profiles."""
    if count <= 0 or total <= 0:
        return []
    raw = [rng.paretovariate(1.2) for _ in range(count)]
    scale = total / sum(raw)
    return [max(1, int(w * scale)) for w in raw]


def _folded(pool: _StackPool, rng: random.Random, fs: str, parts: dict[str, float],
            count: int) -> list[str]:
    """Folded lines ``frames value`` with about `count` distinct stacks over the wait sites."""
    lines: list[str] = []
    total = sum(parts.values())
    for site, ns in parts.items():
        if ns <= 0:
            continue
        stacks = pool.stacks(fs, site, max(1, int(count * ns / total)))
        lines.extend(f"{stack} {w}" for stack, w in zip(stacks, _weights(rng, len(stacks), ns)))
    return lines


def _hist(count: int, mean_ns: float) -> list[int]:
    """A log2 histogram of `count` waits around `mean_ns`, with a tail."""
    hist = [0] * HIST_SLOTS
    centre = max(1, int(math.log2(max(2.0, mean_ns))))
    for off, frac in ((-2, 0.1), (-1, 0.25), (0, 0.4), (1, 0.17), (2, 0.06), (4, 0.02)):
        hist[min(HIST_SLOTS - 1, max(0, centre + off))] += int(count * frac)
    return hist


def _kstack(fs: str, site: str) -> list[str]:
    """Kernel stack leaf first, with offsets, as the recorder's symbolizer writes it."""
    return [_off(f) for f in reversed(SYSCALL + KPATHS[fs][site])]


def _features(fs: str, off: dict[str, str]) -> list[dict[str, Any]]:
    """The recorder's probe-group table (lockscope-record's "features")."""
    table = [
        ("lock_contention", ["lock:contention_begin", "lock:contention_end"], False,
         "no lock-wait measurement"),
        ("inode_attribution", ["iomap:iomap_dio_rw_begin"], False,
         "i_rwsem waits not attributed to files"),
        ("dio_classes", ["iomap:iomap_iter", "iomap:iomap_iter_dstmap"], False,
         "no DIO write classes"),
        ("offcpu", ["sched:sched_switch"], False, "no off-CPU time"),
        ("block_io", ["block:block_rq_issue", "block:block_rq_complete"], False,
         "no block-device latency"),
        ("journal", ["jbd2:jbd2_handle_start"], False, "no journal handle statistics"),
        ("xfs_ilock", ["xfs:xfs_ilock"], False, "XFS ILOCK waits not attributed to files"),
        ("kprobe_extras", ["kprobe:ext4_dio_write_iter"], True,
         "no time before iomap in ext4_dio_write_iter"),
    ]
    out = []
    for name, tps, extra, lost in table:
        reason = off.get(name)
        if name == "kprobe_extras" and reason is None:
            reason = "kprobe attach failed: Operation not supported (CONFIG_KPROBES unset)"
        entry = {"name": name, "enabled": reason is None, "attach": None if reason else
                 ("kprobe" if extra else "tp_btf"), "tracepoints": tps, "reason": reason,
                 "extra": extra}
        if reason:
            entry["lost"] = lost
        out.append(entry)
    return out


def _workload_json(fs: str, n: int, iops: float, clat_mean: float, tail: float) -> dict[str, Any]:
    ios = int(iops * RUNTIME_S)
    side = {"io_bytes": ios * PAGE, "io_kbytes": ios * PAGE // 1024, "bw_bytes": int(iops * PAGE),
            "bw": int(iops * PAGE / 1024), "iops": iops, "runtime": RUNTIME_S * 1000,
            "total_ios": ios, "short_ios": 0, "drop_ios": 0,
            "clat_ns": {"min": int(clat_mean * 0.3), "max": int(clat_mean * 40),
                        "mean": clat_mean, "stddev": clat_mean * 0.8, "N": ios,
                        "percentile": _percentiles(clat_mean, tail)},
            "lat_ns": {"min": int(clat_mean * 0.31), "max": int(clat_mean * 40),
                       "mean": clat_mean * 1.02, "stddev": clat_mean * 0.8, "N": ios}}
    empty = {"io_bytes": 0, "bw_bytes": 0, "bw": 0, "iops": 0.0, "runtime": 0, "total_ios": 0,
             "clat_ns": {"min": 0, "max": 0, "mean": 0.0, "stddev": 0.0, "N": 0}}
    start = 1_000_000_000_000
    return {"fio version": "lockscope-load-0.1.0", "timestamp": 1795314600,
            "time": "Sun Nov 22 02:30:00 2026",
            "global options": {"directory": f"/mnt/lockscope-{fs}", "rw": "randwrite",
                               "bs": "4k", "direct": "1", "ioengine": "psync"},
            "jobs": [{"jobname": "shared-sparse-randwrite", "groupid": 0, "error": 0,
                      "job options": {"numjobs": str(n), "filename": "shared.dat",
                                      "size": "1g", "runtime": str(RUNTIME_S)},
                      "job_runtime": RUNTIME_S * 1000,
                      "read": empty, "write": side, "trim": dict(empty),
                      "usr_cpu": 1.5, "sys_cpu": 9.0 + n, "ctx": ios * 2,
                      "majf": 0, "minf": 30 * n}],
            "lockscope": {"threads": [{"tid": 4100 + i} for i in range(n)], "timed_phase": {
                "start_mono_ns": start, "end_mono_ns": start + RUNTIME_S * 1_000_000_000}}}


def _path(fs: str) -> str:
    return f"/mnt/lockscope-{fs}/shared.dat"


def _dev(fs: str) -> str:
    return "7:0" if fs == "ext4" else "7:1"


def _trace_locks(fs: str, waits: dict[str, float]) -> list[dict[str, Any]]:
    out = []
    for i, (kind, name, inode, _, flag, mean) in enumerate(LOCKS[fs]):
        total = int(waits[name])
        count = total // mean
        if count <= 0:
            continue
        wait = {"flags": {"WRITE": 4, "READ": 2, "SPIN": 1}[flag], "flag_names": [flag],
                "count": count, "total_ns": total, "max_ns": mean * 30,
                "hist_log2_ns": _hist(count, mean), "kstack": _kstack(fs, name),
                "ustack": list(reversed(USER_ROOT + USER_IO))}
        out.append({"addr": f"0xffff8881{0x2a0000 + i * 0x1c8:08x}", "kind": kind,
                    "name": None if inode else name, "path": _path(fs) if inode else None,
                    "dev": _dev(fs) if inode else None, "ino": 12 if inode else None,
                    "count": count, "total_ns": total, "max_ns": mean * 30, "waits": [wait],
                    "exclusive_held": {"count": count // 3, "total_ns": total // 3}
                    if flag == "READ" else None})
    return out


def _trace_dio(fs: str, n: int, iops: float) -> list[dict[str, Any]]:
    writes = int(iops * RUNTIME_S)
    hole = int(writes * (0.97 if fs == "ext4" else 0.95))
    lat = int(1e9 * n / max(iops, 1))
    counts = {"aligned": writes, "unaligned": 0, "extending": 0, "hole": hole, "unwritten": 0,
              "mapped": writes - hole, "dsync": 0, "buffered_writes": 0, "reads": 0}
    entry: dict[str, Any] = {"path": _path(fs), "dev": _dev(fs), "ino": 12,
                             "fs_block_size": PAGE,
                             "writes": {"count": writes, "bytes": writes * PAGE}}
    entry.update({k: {"count": v} for k, v in counts.items()})
    entry["latency"] = {"count": writes, "total_ns": writes * lat, "max_ns": lat * 40}
    return [entry]


def _trace(pool: _StackPool, rng: random.Random, fs: str, n: int, share: dict[str, float],
           thread_ns: float, iops: float, count: int, off: dict[str, str]) -> dict[str, Any]:
    waits = _wait_ns(fs, share, thread_ns)
    lock_sites = {name: waits[name] for _, name, _, _, _, _ in LOCKS[fs]}
    sleep_sites = {name: waits[name] for _, name, _, _, flag, _ in LOCKS[fs] if flag != "SPIN"}
    off_sites = dict(sleep_sites, block_io=waits["block_io"], journal=waits["journal"],
                     other=waits["other"])
    folded: dict[str, Any] = {}
    if "lock_contention" not in off:
        folded["lockwait"] = _folded(pool, rng, fs, lock_sites, max(1, count // 2))
    if "offcpu" not in off:
        folded["offcpu"] = _folded(pool, rng, fs, off_sites, max(1, count))
    per_thread = thread_ns / n
    threads = [{"tid": 4100 + i, "comm": "lockscope-load",
                "oncpu_ns": int(share["oncpu"] * per_thread),
                "runqueue_ns": int(share["runqueue"] * per_thread),
                "offcpu_ns": int((1 - share["oncpu"] - share["runqueue"]) * per_thread)}
               for i in range(n)]
    offcpu = [{"reason": reason, "count": int(ns / 200_000) + 1, "total_ns": int(ns),
               "kstack": _kstack(fs, site), "ustack": list(reversed(USER_ROOT + USER_IO))}
              for reason, site, ns in (("io", "block_io", waits["block_io"]),
                                       ("journal", "journal", waits["journal"]),
                                       ("other", "other", waits["other"]))
              if ns > 0]
    return {
        "recorder": "lockscope-record 0.1.0",
        "interval": {"duration_ns": RUNTIME_S * 1_000_000_000},
        "features": _features(fs, off),
        "drops": {"map_full": 0, "stack_missing": 0, "kernel_stack_missing": 0,
                  "user_stack_missing": 0, "nested_begin": 0, "end_without_begin": 0,
                  "dio_untracked": 0, "map_full_by_map": {"locks": 0, "offcpu": 0}},
        "threads": threads if "offcpu" not in off else [],
        "offcpu": offcpu if "offcpu" not in off else [],
        "locks": _trace_locks(fs, waits) if "lock_contention" not in off else [],
        "dio": _trace_dio(fs, n, iops) if "dio_classes" not in off else [],
        "folded": folded,
    }


def _stats(values: list[float]) -> dict[str, float]:
    mean = sum(values) / len(values)
    var = sum((v - mean) ** 2 for v in values) / max(1, len(values) - 1)
    return {"mean": mean, "min": min(values), "max": max(values), "stddev": math.sqrt(var)}


def make_results(filesystems: Iterable[str] = ("ext4", "xfs"),
                 threads: Iterable[int] = (1, 2, 4, 8), repeats: int = 2,
                 stacks: int = 300, seed: int = 1, traced: bool = True,
                 trace_error: str = "BPF unavailable: bpf(BPF_MAP_CREATE) failed: "
                 "Operation not permitted (EPERM); run as root",
                 features_off: dict[str, str] | None = None,
                 with_analysis: bool = True, annotate_kernel: bool = False) -> dict[str, Any]:
    """Build a whole results.json document.

    ``filesystems`` are "ext4" and/or "xfs". ``stacks`` is the number of
    distinct off-CPU stacks at the highest thread count of each filesystem
    (lower counts get proportionally fewer; lock-wait profiles half as many).
    ``traced=False`` gives runs with ``trace: null`` and ``trace_error``;
    ``features_off`` maps recorder feature names (lock_contention, offcpu,
    dio_classes, …) to the reason they were off: their data is then absent.
    """
    rng = random.Random(seed)
    filesystems = list(filesystems)
    threads = sorted(threads)
    off = dict(features_off or {})
    pool = _StackPool(rng, annotate_kernel)
    runs: list[dict[str, Any]] = []
    per_point: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for fs in filesystems:
        prof = PROFILES[fs]
        for n in threads:
            share = _time_share(fs, n)
            for r in range(repeats):
                iops = _usl(prof, n) * rng.uniform(0.97, 1.03)
                clat_mean = 1e9 * n / iops
                tail = 1.0 + (0.6 if fs == "ext4" else 0.1) * math.log2(n)
                thread_ns = n * RUNTIME_S * 1e9
                run: dict[str, Any] = {
                    "fs": fs, "threads": n, "repeat": r,
                    "workload": _workload_json(fs, n, iops, clat_mean, tail),
                    "trace": None, "trace_error": None,
                    "files": [{"path": _path(fs), "mode": "0644", "setuid": False,
                               "setgid": False, "security_xattrs": []}],
                    "engine_argv": ["lockscope-load", "--rw=randwrite", "--bs=4k", "--direct=1",
                                    f"--numjobs={n}", f"--runtime={RUNTIME_S}",
                                    f"--directory=/mnt/lockscope-{fs}"]}
                if traced:
                    run["trace"] = _trace(pool, rng, fs, n, share, thread_ns, iops,
                                          max(1, stacks * n // threads[-1]), off)
                else:
                    run["trace_error"] = trace_error
                runs.append(run)
                per_point.setdefault((fs, n), []).append(
                    {"iops": iops, "clat_mean": clat_mean, "tail": tail, "share": share,
                     "thread_ns": thread_ns, "run": run})
    doc: dict[str, Any] = {
        "schema": SCHEMA, "partial": False, "created_wall": "2026-11-22T02:30:00Z",
        "command": ["lockscope", "sweep", "--fs", ",".join(filesystems), "--threads",
                    ",".join(map(str, threads)), "--repeat", str(repeats), "-o",
                    "results/sweep-20261122-023000"],
        "reproduce": [
            "sudo .venv/bin/lockscope sweep --scenario shared-sparse-randwrite "
            f"--fs {','.join(filesystems)} --threads {','.join(map(str, threads))} "
            f"--repeat {repeats} --runtime {RUNTIME_S}"]
        + sorted({" ".join(r["engine_argv"]) for r in runs}),
        "host": _host(filesystems, off),
        "workload": {"scenario": "shared-sparse-randwrite",
                     "description": "random 4 KiB O_DIRECT writes into one shared sparse file "
                                    "(synthetic recording, not a measurement)",
                     "job": {"rw": "randwrite", "bs": "4k", "direct": 1, "ioengine": "psync",
                             "iodepth": 1, "size": "1g", "filename": "shared.dat",
                             "time_based": 1, "runtime": RUNTIME_S},
                     "runtime_s": RUNTIME_S, "threads": threads, "repeat": repeats},
        "runs": runs,
    }
    if with_analysis:
        doc["analysis"] = _analysis(filesystems, threads, per_point, traced, off)
    return doc


def _host(filesystems: list[str], off: dict[str, str]) -> dict[str, Any]:
    fss = {}
    for i, fs in enumerate(filesystems):
        fss[fs] = {"fstype": fs, "device": f"/dev/loop{i}",
                   "backing": f"/var/tmp/lockscope/{fs}.img", "backing_device": "vda",
                   "mount_options": "rw,relatime" + (",attr2,inode64,logbufs=8" if fs == "xfs"
                                                     else ""),
                   "mountpoint": f"/mnt/lockscope-{fs}", "block_size": PAGE,
                   "image_bytes": 4 << 30, "made_by_lockscope": True}
    return {"kernel": "6.18.44", "machine": "x86_64", "cpus": 2, "memory_bytes": 25000000000,
            "hostname": "vm", "filesystems": fss, "features": _features(filesystems[0], off)}


def _point(fs: str, n: int, reps: list[dict[str, Any]], x1: float, traced: bool,
           off: dict[str, str]) -> dict[str, Any]:
    iops = _stats([p["iops"] for p in reps])
    bw = _stats([p["iops"] * PAGE for p in reps])
    clat = sum(p["clat_mean"] for p in reps) / len(reps)
    pct = _percentiles(clat, reps[0]["tail"])
    point: dict[str, Any] = {
        "threads": n, "repeats": len(reps), "iops": iops, "bw_bytes": bw,
        "mib_s": bw["mean"] / 2**20, "efficiency": iops["mean"] / (n * x1),
        "clat_ns": {"p50": pct["50.000000"], "p99": pct["99.000000"],
                    "p999": pct["99.900000"], "mean": clat},
        "traced": traced}
    if traced:
        share, thread_ns = reps[0]["share"], reps[0]["thread_ns"]
        waits = _wait_ns(fs, share, thread_ns)
        point["thread_time_ns"] = thread_ns
        point["time_share"] = share
        point["inode_locks"], point["other_locks"] = [], []
        if "lock_contention" not in off:
            for kind, name, inode, _, _, mean in LOCKS[fs]:
                row = {"key": f"{kind}:{_path(fs)}" if inode else f"{kind}:{name}",
                       "kind": kind, "path": _path(fs) if inode else None,
                       "name": None if inode else name, "share": waits[name] / thread_ns,
                       "total_ns": int(waits[name]) * len(reps),
                       "count": int(waits[name] / mean) * len(reps)}
                (point["inode_locks"] if inode else point["other_locks"]).append(row)
    return point


def _analysis(filesystems: list[str], threads: list[int],
              per_point: dict[tuple[str, int], list[dict[str, Any]]], traced: bool,
              off: dict[str, str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for fs in filesystems:
        x1 = sum(p["iops"] for p in per_point[(fs, threads[0])]) / len(
            per_point[(fs, threads[0])]) / threads[0]
        points = [_point(fs, n, per_point[(fs, n)], x1, traced, off) for n in threads]
        out[fs] = _fs_analysis(fs, points, per_point, threads, traced)
    if len(filesystems) > 1:
        top = threads[-1]
        speed = {fs: out[fs]["points"][-1]["iops"]["mean"] / out[fs]["points"][0]["iops"]["mean"]
                 for fs in filesystems}
        best, worst = max(speed, key=speed.get), min(speed, key=speed.get)
        out["comparison"] = {
            "threads": top, "base_threads": threads[0],
            "filesystems": {fs: {"speedup": speed[fs],
                                 "efficiency": out[fs]["points"][-1]["efficiency"],
                                 "iops": out[fs]["points"][-1]["iops"]["mean"],
                                 "mib_s": out[fs]["points"][-1]["mib_s"],
                                 "verdict": out[fs]["verdict"]["kind"]} for fs in filesystems},
            "best": best, "ratio": speed[best] / speed[worst],
            "difference_lock": "i_rwsem" if traced else None,
            "summary": f"at {top} threads {best} reaches {speed[best]:.2f}x its "
                       f"{threads[0]}-thread throughput and {worst} {speed[worst]:.2f}x"
                       + ("; the wait that differs most is ext4's exclusive i_rwsem."
                          if traced and "ext4" in speed else "."),
        }
    else:
        out["comparison"] = None
    return out


def _fs_locks(fs: str, points: list[dict[str, Any]], runs: list[dict[str, Any]]
              ) -> list[dict[str, Any]]:
    top = points[-1]
    loss = 1 - top["efficiency"]
    locks = []
    for kind, name, inode, _, flag, mean in LOCKS[fs]:
        rows = [lk for r in runs for lk in r["trace"]["locks"] if lk["kind"] == kind
                and (lk["path"] is not None if inode else lk["name"] == name)]
        if not rows:
            continue
        key = f"{kind}:{_path(fs)}" if inode else f"{kind}:{name}"
        by_t = {str(p["threads"]): next((x["share"] for x in p.get("inode_locks", []) +
                                         p.get("other_locks", []) if x["key"] == key), 0.0)
                for p in points}
        s_top = by_t[str(top["threads"])]
        locks.append({
            "key": key, "kind": kind, "name": name, "path": _path(fs) if inode else None,
            "dev": _dev(fs) if inode else None, "ino": 12 if inode else None,
            "addr": rows[0]["addr"],
            "mode": {"WRITE": "exclusive", "READ": "shared", "SPIN": "unknown"}[flag],
            "count": sum(lk["count"] for lk in rows),
            "total_ns": sum(lk["total_ns"] for lk in rows),
            "max_ns": max(lk["max_ns"] for lk in rows), "p99_ns": mean * 12,
            "share_by_threads": by_t,
            "explained_loss": min(1.0, s_top / loss) if loss > 0.05 else 0.0,
            "what_if": {"threads": top["threads"], "iops": top["iops"]["mean"] / (1 - s_top),
                        "speedup": top["iops"]["mean"] / (1 - s_top) / points[0]["iops"]["mean"]},
            "functions": [KPATHS[fs][name][1] if fs == "ext4" else
                          next(f for f in reversed(KPATHS[fs][name]) if f.startswith("xfs_")
                               and not f.startswith("xfs_ilock"))],
            "stack": rows[0]["waits"][0]["kstack"]})
    locks.sort(key=lambda lk: (-lk["explained_loss"], -lk["total_ns"]))
    return locks


def _fs_dio(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    rows: dict[str, dict[str, Any]] = {}
    for run in runs:
        for e in run["trace"]["dio"]:
            row = rows.setdefault(e["path"], {
                "path": e["path"], "dev": e["dev"], "ino": e["ino"],
                "block_size": e["fs_block_size"], "writes": 0, "write_bytes": 0,
                **{k: 0 for k in DIO_COUNTERS}, "latency_mean_ns": 0.0, "_lat": [0, 0]})
            row["writes"] += e["writes"]["count"]
            row["write_bytes"] += e["writes"]["bytes"]
            for k in DIO_COUNTERS:
                row[k] += e[k]["count"]
            row["_lat"][0] += e["latency"]["total_ns"]
            row["_lat"][1] += e["latency"]["count"]
    for row in rows.values():
        total, n = row.pop("_lat")
        row["latency_mean_ns"] = total / n if n else 0.0
    return list(rows.values())


def _fs_analysis(fs: str, points: list[dict[str, Any]], per_point: dict, threads: list[int],
                 traced: bool) -> dict[str, Any]:
    prof = PROFILES[fs]
    top = points[-1]
    path = _path(fs)
    usl = {"ok": len(points) >= 3, "lambda": prof["lambda"], "sigma": prof["sigma"],
           "kappa": prof["kappa"],
           "peak_threads": (math.sqrt((1 - prof["sigma"]) / prof["kappa"])
                            if prof["kappa"] > 0 else None),
           "r2": 0.993, "note": f"fitted on {len(points)} thread counts"}
    if not usl["ok"]:
        usl["note"] = "too few thread counts to fit (need 3)"
    runs = [p["run"] for n in threads for p in per_point[(fs, n)]]
    locks = _fs_locks(fs, points, runs) if traced else []
    dio = _fs_dio(runs) if traced else []
    causes: list[dict[str, Any]] = []
    if fs == "ext4" and dio and dio[0]["writes"]:
        d = dio[0]
        causes.append({"reason": "holes", "rule": "DIO write into holes is not a pure overwrite",
                       "kernel_source": "fs/ext4/file.c: ext4_dio_write_checks()",
                       "evidence": f"{d['hole'] / d['writes']:.0%} of {d['writes']} DIO writes "
                                   f"mapped a hole (not an overwrite)",
                       "fraction": d["hole"] / d["writes"],
                       "remedy": "preallocate and write the file once before the workload, so "
                                 "DIO writes are pure overwrites"})
    speedup = top["iops"]["mean"] / points[0]["iops"]["mean"]
    curve = (f"{speedup:.2f}x throughput from {threads[0]} to {threads[-1]} threads "
             f"(efficiency {top['efficiency']:.0%} at {threads[-1]})")
    if top["efficiency"] >= 0.7:
        verdict = {"kind": "scales", "lock": None, "path": None, "mode": None, "reasons": [],
                   "explained_loss": 0.0, "evidence": [curve], "confidence": "high",
                   "remedies": [], "kernel_function": None,
                   "summary": f"{fs} scales: {curve}."}
    elif not traced or not locks:
        verdict = {"kind": "inconclusive", "lock": None, "path": None, "mode": None,
                   "reasons": [], "explained_loss": 0.0,
                   "evidence": [curve, "no trace for these runs, so the waits are unknown"],
                   "confidence": "low", "remedies": [], "kernel_function": None,
                   "summary": f"{fs} does not scale ({curve}) but there is no trace."}
    else:
        lk = locks[0]
        s_top = lk["share_by_threads"][str(top["threads"])]
        verdict = {
            "kind": "inode_lock_contention", "lock": lk["name"], "path": path,
            "mode": lk["mode"], "reasons": [c["reason"] for c in causes],
            "explained_loss": lk["explained_loss"],
            "evidence": [curve,
                         f"i_rwsem of {path} took {s_top:.0%} of thread time at {threads[-1]} "
                         f"threads ({lk['count']} waits, {lk['total_ns'] / 1e9:.2f} s in all)",
                         f"it explains {lk['explained_loss']:.0%} of the lost efficiency"]
            + [c["evidence"] for c in causes],
            "confidence": "high",
            "remedies": [c["remedy"] for c in causes] + [
                "or use XFS, which issues aligned DIO writes under a shared IOLOCK",
                "or give each writer its own file"],
            "kernel_function": lk["functions"][0],
            "summary": f"{fs} stops scaling on i_rwsem of {path}, taken exclusive in "
                       f"{lk['functions'][0]} because DIO write into holes is not a pure "
                       "overwrite (fs/ext4/file.c: ext4_dio_write_checks())."}
    return {"fs": fs, "fstype": fs, "points": points, "usl": usl, "locks": locks,
            "dio_classes": dio, "causes": causes, "verdict": verdict}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="write a synthetic lockscope results.json")
    ap.add_argument("-o", "--output", default="-")
    ap.add_argument("--stacks", type=int, default=300)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--fs", default="ext4,xfs")
    ap.add_argument("--threads", default="1,2,4,8")
    ap.add_argument("--untraced", action="store_true")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    doc = make_results(args.fs.split(","), [int(t) for t in args.threads.split(",")],
                       repeats=args.repeats, stacks=args.stacks, traced=not args.untraced,
                       seed=args.seed)
    text = json.dumps(doc)
    if args.output == "-":
        sys.stdout.write(text + "\n")
    else:
        with open(args.output, "w") as fh:
            fh.write(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
