"""Sweep documents of an io_uring engine writing one file, constructed: the submitters
wait for completions while their requests queue behind the file's hash (io-wq), for the
sweep's analysis and report tests."""

from __future__ import annotations

from lockscope.analysis import analyze

S = 1_000_000_000
DUR = 5 * S
DEPTH = 16
DATA = "/mnt/x/shared-iouring-holes.dat"
ENTRY = ["do_syscall_64+0x71", "entry_SYSCALL_64_after_hwframe+0x76"]
# the submitters wait for their completions in io_uring_enter
CQ_WAIT = ["__schedule+0x618", "schedule+0x23", "io_cqring_wait+0x2f1",
           "__do_sys_io_uring_enter+0x4d5", "__x64_sys_io_uring_enter+0x1f"] + ENTRY


def run(threads: int, iops: float, behind_share: float | None, kernel: str,
        unhashed: bool = False, measured: bool | None = True) -> dict:
    """One point: `threads` submitters keeping DEPTH requests in flight at `iops`, so each
    request takes threads x DEPTH / iops (Little's law); `behind_share` of that time
    queued behind the file's hash (None: none hashed)."""
    ios = int(iops * DUR / S)
    lat = threads * DEPTH / iops * S
    behind = 0 if behind_share is None else int(behind_share * ios * lat)
    queued = 0 if behind_share is None else ios
    dio = {"dev": "7:0", "ino": 12, "path": DATA, "fs_block_size": 4096,
           "writes": {"count": ios, "bytes": ios * 4096}, "hole": {"count": ios, "bytes": 0}}
    if measured:
        dio["io_wq_hashed"] = {
            "queued": queued, "unhashed": ios if unhashed else 0,
            "waited": {"count": queued, "total_ns": behind, "max_ns": S},
            "behind": {"count": int(0.95 * queued), "total_ns": behind, "max_ns": S}}
    trace = {"kernel": kernel,
             "interval": {"start_mono_ns": 0, "end_mono_ns": DUR, "duration_ns": DUR},
             "threads": [{"tid": 100 + i, "oncpu_ns": int(0.05 * DUR), "runqueue_ns": 0,
                          "offcpu_ns": int(0.95 * DUR)} for i in range(threads)],
             "locks": [], "dio": [dio],
             "offcpu": [{"tid": 100 + i, "reason": "blocked", "kstack": CQ_WAIT,
                         "count": 100, "total_ns": int(0.95 * DUR)} for i in range(threads)]}
    if measured is not None:
        trace["io_wq_hashed"] = {"measured": measured,
                                 "reason": None if measured else "the io_uring group is off"}
    job = {"jobname": "w", "job_runtime": DUR / 1e6,
           "write": {"iops": iops, "bw_bytes": iops * 4096, "total_ios": ios,
                     "lat_ns": {"mean": lat},
                     "clat_ns": {"mean": lat, "percentile": {"50.000000": lat,
                                                             "99.000000": 2 * lat,
                                                             "99.900000": 3 * lat}}}}
    return {"fs": "ext4", "threads": threads, "repeat": 0, "trace": trace,
            "workload": {"jobs": [job], "lockscope": {"threads": [
                {"tid": 100 + i} for i in range(threads)]}}}


def doc(runs: list[dict], kernel: str, ioengine: str = "io_uring") -> dict:
    return {"schema": "lockscope/1", "kind": "sweep",
            "host": {"cpus": 8, "kernel": kernel, "filesystems": {"ext4": {"fstype": "ext4"}}},
            "workload": {"scenario": "shared-iouring-holes",
                         "job": {"ioengine": ioengine, "iodepth": str(DEPTH)},
                         "threads": sorted({r["threads"] for r in runs}), "runtime_s": 5},
            "runs": runs}


def flat(kernel: str, shares: tuple[float | None, ...], **kw) -> dict:
    """Throughput flat from 1 to 4 threads: the hash of the one file runs one at a time."""
    return analyze(doc([run(n, 2000, s, kernel, **kw) for n, s in zip((1, 2, 4), shares)],
                       kernel))["ext4"]
