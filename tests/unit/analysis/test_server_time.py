"""Where a server's time went per client count, and the verdict from its growth per
transaction (pure logic on recorder-shaped traces; no root)."""

from __future__ import annotations

import pytest

from lockscope.analysis.server_time import explained_growth, server_points, server_verdict

S = 1_000_000_000
FSYNC = ["jbd2_log_wait_commit", "ext4_sync_file", "vfs_fsync_range", "__x64_sys_fdatasync"]
RECV = ["unix_stream_data_wait", "unix_stream_read_generic", "__x64_sys_recvfrom"]


def trace(threads: list[tuple[float, float, float, float]]) -> dict:
    """One second; per thread (on CPU, runqueue, fsync wait, waiting for a client) in s."""
    th, off = [], []
    for tid, (cpu, rq, fsync, idle) in enumerate(threads, start=100):
        th.append({"tid": tid, "oncpu_ns": cpu * S, "runqueue_ns": rq * S,
                   "offcpu_ns": (fsync + idle) * S})
        off += [{"tid": tid, "reason": "blocked", "total_ns": fsync * S, "kstack": FSYNC},
                {"tid": tid, "reason": "blocked", "total_ns": idle * S, "kstack": RECV}]
    return {"interval": {"duration_ns": S}, "threads": th, "offcpu": off, "locks": []}


def run(n: int, tps: float, threads) -> dict:
    job = {"jobname": "db", "write": {"iops": tps, "bw_bytes": 0}, "read": {}}
    return {"fs": "ext4", "threads": n, "repeat": 0, "workload": {"jobs": [job]},
            "trace": trace(threads), "server": {"kind": "mariadb"}}


def test_durability_growth_decides():
    runs = [run(1, 1000, [(0.30, 0.0, 0.20, 0.50)]),
            run(4, 1100, [(0.08, 0.02, 0.80, 0.10)] * 4)]
    points = server_points(runs)
    assert [p["threads"] for p in points] == [1, 4]
    lo, hi = points
    # per transaction: fsync wait 0.2 s / 1000 tx = 200 µs, then 3.2 s / 1100 tx
    assert lo["per_txn_us"]["durability"] == pytest.approx(200)
    assert hi["per_txn_us"]["durability"] == pytest.approx(3.2e6 / 1100)
    # waiting for a client is apart from loss
    assert hi["lost_ns"] == pytest.approx((0.8 + 0.02) * 4 * S)
    assert hi["loss_share"]["durability"] == pytest.approx(0.8 / 0.82)
    parts = explained_growth(points)
    # on CPU 300 + fsync 200 µs per transaction, then (0.32 + 0.08 + 3.2) s / 1100
    growth = 3.6e6 / 1100 - 500
    assert parts["durability"] == pytest.approx((3.2e6 / 1100 - 200) / growth)
    assert parts["runqueue"] == pytest.approx(0.08e6 / 1100 / growth)
    assert parts["oncpu"] == 0  # it shrank: no part of the growth
    assert max(parts, key=parts.get) == "durability"
    v = server_verdict(points)
    assert v["kind"] == "durability_bound" and v["wait_class"] == "durability"
    assert v["explained_loss"] == pytest.approx(parts["durability"])
    assert hi["efficiency"] == pytest.approx(1100 / 4 / 1000)


def test_scaling_server_scales():
    runs = [run(1, 1000, [(0.3, 0, 0.2, 0.5)]), run(4, 3900, [(0.3, 0, 0.2, 0.5)] * 4)]
    assert server_verdict(server_points(runs))["kind"] == "scales"


def test_flat_time_per_transaction_is_not_blamed_on_the_server():
    # throughput flat, but the server spends the same time per transaction: the extra
    # clients only made it wait longer for work
    runs = [run(1, 1000, [(0.3, 0, 0.2, 0.5)]),
            run(4, 1000, [(0.075, 0, 0.05, 0.875)] * 4)]
    points = server_points(runs)
    assert explained_growth(points) is None
    assert server_verdict(points)["kind"] == "inconclusive"


def test_repeats_average_and_untraced_points_stay_untraced():
    a, b = run(2, 900, [(0.2, 0, 0.1, 0.7)] * 2), run(2, 1100, [(0.2, 0, 0.1, 0.7)] * 2)
    untraced = dict(run(1, 500, []), trace=None)
    points = server_points([untraced, a, b])
    assert points[0]["traced"] is False and points[0]["tps"]["mean"] == 500
    assert points[1]["tps"]["mean"] == pytest.approx(1000)
    # 2 runs × 2 threads × 0.1 s of fsync over 2000 transactions
    assert points[1]["per_txn_us"]["durability"] == pytest.approx(0.4e6 / 2000)
    assert server_verdict(points[:1])["kind"] == "inconclusive"


def test_report_rows_follow_the_points():
    from lockscope.report.server_rows import server_rows

    runs = [run(1, 1000, [(0.30, 0.0, 0.20, 0.50)]),
            run(4, 1100, [(0.08, 0.02, 0.80, 0.10)] * 4), dict(run(8, 900, []), trace=None)]
    rows = server_rows({"points": server_points(runs)})
    assert [r["clients"] for r in rows] == ["1", "4", "8"]
    assert rows[1]["threads"] == "4" and rows[1]["idle"] == "0.40"
    assert rows[1]["lost"] == "3.28"  # (0.8 fsync + 0.02 runqueue) × 4 threads
    assert rows[1]["classes"].startswith("fsync / durability 98%")
    assert rows[2]["classes"] == "not traced"
