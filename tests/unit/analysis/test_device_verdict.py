"""device_bound only when the device was busy: the attach and sweep verdicts on
constructed documents whose block[] and window.devices say how busy the device was and
which cgroup limit sits on it."""

from __future__ import annotations

import pytest

from lockscope.analysis import analyze
from lockscope.analysis.attach import analyze_attach
from lockscope.analysis.device_busy import device_figures, hist_quantile_ns
from lockscope.analysis.device_verdict import DEVICE_BUSY, judge_device

S = 1_000_000_000
MS = 1_000_000
ENTRY = ["do_syscall_64+0x71", "entry_SYSCALL_64_after_hwframe+0x76"]
DIO_WAIT = ["__schedule+0x618", "schedule+0x23", "io_schedule+0x3f",
            "__iomap_dio_rw+0x5ea", "iomap_dio_rw+0xe", "xfs_file_dio_write_aligned+0xb4",
            "xfs_file_write_iter+0x10b", "vfs_write+0x22f", "__x64_sys_pwrite64+0xa3"] + ENTRY
LOOP = "7:0"
WINDOW_S = 8.0
CGROUP = "/lsdev-throttle"
LIMIT_FILE = f"/sys/fs/cgroup/blkio{CGROUP}/blkio.throttle.write_iops_device"


def block(busy_share: float | None, requests: int = 2400, service_ns: int = 100_000,
          why: str | None = None) -> dict:
    """A block[] entry over WINDOW_S: requests each served in service_ns."""
    observed = int(WINDOW_S * S)
    entry = {"dev": LOOP, "name": "loop0", "count": requests,
             "total_ns": requests * service_ns, "max_ns": service_ns * 4,
             "hist_log2_ns": [0] * 16 + [requests], "service_ns_total": requests * service_ns,
             "observed_ns": observed, "inflight_mean": requests * service_ns / observed,
             "busy_ns": None if busy_share is None else int(busy_share * observed),
             "busy_share": busy_share, "busy_unmeasured": why}
    return entry


def facts(limits: list[dict] | None = None, why: str | None = None) -> dict:
    return {"dev": LOOP, "name": "loop0", "file_devs": [LOOP], "scheduler": "none",
            "nr_requests": 128, "hw_tags": 128, "queue_depth": None, "wbt_lat_usec": 2000,
            "io_limits": limits or [], "limits_read": why}


def throttle(value: int = 300) -> dict:
    return {"dev": LOOP, "cgroup": CGROUP, "file": LIMIT_FILE,
            "key": "blkio.throttle.write_iops_device", "what": "write IOPS", "value": value,
            "pids": [4242]}


def attach_doc(entry: dict | None, devices: list[dict] | None) -> dict:
    """4 fio threads that spent 7 of 8 s each waiting in O_DIRECT writes."""
    records = [{"tid": t, "pid": 4242, "comm": "fio", "reason": "other", "kstack": DIO_WAIT,
                "ustack": [], "count": 500, "total_ns": 7 * S} for t in (1, 2, 3, 4)]
    threads = [{"tid": t, "pid": 4242, "comm": "fio", "oncpu_ns": S // 2, "runqueue_ns": 0,
                "offcpu_ns": 7 * S} for t in (1, 2, 3, 4)]
    trace = {"interval": {"start_mono_ns": 0, "end_mono_ns": int(WINDOW_S * S),
                          "duration_ns": int(WINDOW_S * S), "observed_ns": int(WINDOW_S * S)},
             "threads": threads, "offcpu": records, "locks": [],
             "dio": [{"path": "/mnt/f", "dev": LOOP, "ino": 12,
                      "writes": {"count": 2400, "bytes": 2400 * 4096}}],
             "block": [entry] if entry else []}
    window = {"label": "fio", "threads": 4, "trace": trace, "files": []}
    if devices is not None:
        window["devices"] = devices
    return {"kind": "attach", "host": {"cpus": 2}, "window": window}


def test_a_busy_device_is_device_bound_and_may_be_sure():
    a = analyze_attach(attach_doc(block(0.9, service_ns=3 * MS), [facts()]))
    v = a["verdict"]
    assert v["kind"] == "device_bound" and v["confidence"] == "high"
    assert a["device"]["busy_share"] == 0.9
    assert any("busy 90%" in e for e in v["evidence"])


def test_an_idle_device_under_a_throttle_names_the_limit():
    a = analyze_attach(attach_doc(block(0.03), [facts([throttle(300)])]))
    v = a["verdict"]
    assert v["kind"] == "io_held_before_device"
    assert CGROUP in v["summary"] and "300" in v["summary"] and "idle 97%" in v["summary"]
    assert any(LIMIT_FILE in r and "raise or remove" in r for r in v["remedies"])
    assert v["confidence"] == "high"    # 2400 requests in 8 s: 300/s, the limit's rate
    assert v["wait_class"] == "block_io"


def test_an_idle_device_with_nothing_found_is_low_and_not_device_bound():
    a = analyze_attach(attach_doc(block(0.03), [facts()]))
    v = a["verdict"]
    assert v["kind"] == "io_held_before_device" and v["confidence"] == "low"
    assert "did not find" in v["summary"]
    text = " ".join(v["evidence"])
    assert "candidates" in text and "wbt_lat_usec 2000" in text and "blk_mq_get_tag" in text


def test_a_limit_the_requests_do_not_reach_is_not_blamed():
    a = analyze_attach(attach_doc(block(0.03), [facts([throttle(100_000)])]))
    v = a["verdict"]
    assert v["kind"] == "io_held_before_device" and v["confidence"] == "low"
    assert any("does not bind" in e for e in v["evidence"])


def test_busy_share_not_measured_is_never_high():
    why = "the kernel's BPF has no atomic fetch-and-add (5.12+)"
    # deep enough that the mean depth cannot rule the device's busy time out
    deep = block(None, requests=24000, service_ns=300_000, why=why)
    v = analyze_attach(attach_doc(deep, [facts()]))["verdict"]
    assert v["kind"] == "device_bound" and v["confidence"] != "high"
    assert any(why in e for e in v["evidence"])
    # shallow: the mean depth bounds the busy share under DEVICE_BUSY
    shallow = block(None, why=why)
    assert shallow["inflight_mean"] < DEVICE_BUSY
    v = analyze_attach(attach_doc(shallow, [facts([throttle(300)])]))["verdict"]
    assert v["kind"] == "io_held_before_device" and v["confidence"] != "high"
    assert "at least 97%" in v["summary"]


def test_no_block_figures_is_never_high():
    v = analyze_attach(attach_doc(None, None))["verdict"]
    assert v["kind"] == "device_bound" and v["confidence"] == "medium"
    assert any("not recorded" in e for e in v["evidence"])


def test_the_threads_wait_is_set_against_the_service_time():
    a = analyze_attach(attach_doc(block(0.03), [facts([throttle(300)])]))
    d = a["device"]
    assert d["thread_wait_mean_ns"] == pytest.approx(7 * S / 500)
    assert d["service_p50_ns"] == 2 ** 17 and d["requests_per_s"] == pytest.approx(300)
    assert any("block waits lasted 14.00 ms" in e for e in a["verdict"]["evidence"])


def test_the_files_partition_leads_to_its_disk():
    trace = {"interval": {"duration_ns": S},
             "dio": [{"dev": "259:3", "writes": {"count": 100}},
                     {"dev": "254:1", "writes": {"count": 2}}],
             "block": [{"dev": "259:0", "count": 10, "total_ns": 10 * MS, "hist_log2_ns": [],
                        "busy_share": 0.1, "busy_unmeasured": None},
                       {"dev": "254:0", "count": 9000, "total_ns": 900 * MS,
                        "hist_log2_ns": [], "busy_share": 0.9, "busy_unmeasured": None}]}
    disk = dict(facts(), dev="259:0", name="nvme0n1", file_devs=["259:3"])
    other = dict(facts(), dev="254:0", name="vda", file_devs=["254:1"])
    # the disk of most of the threads' file I/O, not the one with most requests
    fig = device_figures(trace, [disk, other], [])
    assert fig and fig["dev"] == "259:0" and "traced threads' file I/O" in fig["chosen_as"]
    # without the host's map the busiest device is taken, and it says so
    trace["dio"] = [{"dev": "259:3"}]
    fig = device_figures(trace, [], [])
    assert fig and fig["dev"] == "254:0" and "most service time" in fig["chosen_as"]


def test_quantiles_are_the_upper_end_of_their_bucket():
    assert hist_quantile_ns([0, 0, 5, 5], 0.5) == 8
    assert hist_quantile_ns([0, 0, 5, 5], 0.99) == 16
    assert hist_quantile_ns([], 0.5) is None


def test_a_full_queue_is_device_bound_even_when_busy_is_unmeasured():
    fig = device_figures({"interval": {"duration_ns": S},
                          "block": [dict(block(None, why="x"), inflight_mean=120.0)]},
                         [facts()], [])
    call = judge_device(fig)
    assert call.kind == "device_bound" and call.most == "medium"


# ---- the sweep's verdict (analysis/verdict.py) ----


def _sweep_run(threads: int, iops: float, entry: dict | None, devices: list[dict]) -> dict:
    dur = 5 * S
    trace = {"threads": [{"tid": 100 + i, "oncpu_ns": int(0.1 * dur),
                          "offcpu_ns": int(0.9 * dur), "runqueue_ns": 0}
                         for i in range(threads)],
             "locks": [],
             "offcpu": [{"reason": "io", "total_ns": int(0.85 * threads * dur),
                         "count": 1000 * threads}],
             "dio": [{"dev": LOOP, "ino": 12, "path": "/mnt/f",
                      "writes": {"count": 10000, "bytes": 40960000}}],
             "block": [entry] if entry else []}
    workload = {"jobs": [{"jobname": "w", "job_runtime": 5000,
                          "write": {"iops": iops, "bw_bytes": iops * 4096, "total_ios": 1,
                                    "clat_ns": {"mean": 1e5, "percentile": {
                                        "50.000000": 9e4, "99.000000": 3e5,
                                        "99.900000": 1e6}}}}]}
    return {"fs": "xfs", "threads": threads, "repeat": 0, "workload": workload,
            "trace": trace, "files": [], "devices": devices}


def _sweep(entry: dict | None, devices: list[dict]) -> dict:
    runs = [_sweep_run(n, x, entry, devices) for n, x in [(1, 1000), (2, 1100), (4, 1150)]]
    doc = {"schema": "lockscope/1", "host": {"filesystems": {"xfs": {"fstype": "xfs"}}},
           "runs": runs}
    return analyze(doc)["xfs"]


def test_sweep_busy_device_is_device_bound():
    a = _sweep(block(0.95, service_ns=3 * MS), [facts()])
    assert a["verdict"]["kind"] == "device_bound" and a["device"]["busy_share"] == 0.95


def test_sweep_idle_device_under_a_throttle_is_held_before_it():
    a = _sweep(block(0.03, requests=1500), [facts([throttle(150)])])
    v = a["verdict"]
    assert v["kind"] == "io_held_before_device" and CGROUP in v["summary"]
    assert v["confidence"] == "medium"   # the sweep's own ceiling


def test_sweep_idle_device_with_nothing_found_is_low():
    v = _sweep(block(0.03), [facts()])["verdict"]
    assert v["kind"] == "io_held_before_device" and v["confidence"] == "low"
