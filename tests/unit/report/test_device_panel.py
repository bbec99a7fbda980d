"""The report's device panel (report/device_panel.py) from the analysis' figures."""

from __future__ import annotations

from lockscope.report.device_panel import device_panel


def figures(**kw):
    fig = {"dev": "7:0", "name": "loop0", "chosen_as": "the traced files' disk",
           "requests": 1200, "observed_s": 4.0, "requests_per_s": 300.0, "busy_share": 0.06,
           "busy_unmeasured": None, "inflight_mean": 0.07, "queue_limit": 128,
           "queue_limit_from": "nr_requests", "service_mean_ns": 210_000.0,
           "service_p50_ns": 262_144.0, "service_p99_ns": 1_048_576.0,
           "thread_wait_mean_ns": 13_000_000.0,
           "facts": {"scheduler": "none", "limits_read": None, "io_limits": [
               {"dev": "7:0", "cgroup": "/app", "file": "/sys/fs/cgroup/blkio/app/x",
                "key": "blkio.throttle.write_iops_device", "what": "write IOPS",
                "value": 300, "pids": [1]}]}}
    fig.update(kw)
    return fig


def test_the_panel_sets_the_device_beside_the_threads_wait():
    rows = dict(device_panel(figures()))
    assert rows["busy (at least one request in flight)"] == "6% of the 4.0 s observed"
    assert rows["requests in flight, mean (Little's law)"] == \
        "0.07 (its queue admits 128: nr_requests)"
    assert rows["the threads' mean block wait"] == "13 ms"
    assert "p99 at most 1.05 ms" in rows["service time, issue to completion"]
    assert rows["cgroup I/O limits"] == \
        "write IOPS 300/s (/app, blkio.throttle.write_iops_device)"


def test_what_was_not_measured_is_said_never_zero():
    rows = dict(device_panel(figures(busy_share=None, busy_unmeasured="no atomics",
                                     facts=None, thread_wait_mean_ns=None)))
    assert rows["busy (at least one request in flight)"] == "not measured (no atomics)"
    assert rows["the threads' mean block wait"] == "not measured"
    assert rows["cgroup I/O limits"] == "not read"
    assert device_panel(None) == []
