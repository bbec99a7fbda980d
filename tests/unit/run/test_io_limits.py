"""The cgroup I/O limits over traced processes (run/io_limits.py) and the queue facts of
a disk (run/block_queues.py), read from made-up /proc and /sys trees: v1 throttles of the
process's own cgroup only (flat), v2 io.max of its cgroup and every ancestor."""

from __future__ import annotations

from pathlib import Path

import pytest

from lockscope.run import block_queues, io_limits


@pytest.fixture
def host(tmp_path, monkeypatch):
    """A /proc with process 42 in v1 blkio /app/db and v2 /app/db; both hierarchies."""
    proc, v1, v2 = tmp_path / "proc", tmp_path / "blkio", tmp_path / "unified"
    (proc / "42").mkdir(parents=True)
    (proc / "42" / "cgroup").write_text("7:blkio:/app/db\n3:cpu,cpuacct:/\n0::/app/db\n")
    mountinfo = tmp_path / "mountinfo"
    mountinfo.write_text(
        f"30 25 0:26 / {v1} rw,relatime shared:9 - cgroup cgroup rw,blkio\n"
        f"31 25 0:27 / {tmp_path / 'cpu'} rw - cgroup cgroup rw,cpu,cpuacct\n"
        f"32 25 0:28 / {v2} rw - cgroup2 cgroup2 rw,nsdelegate\n")
    for d in (v1 / "app" / "db", v2 / "app" / "db"):
        d.mkdir(parents=True)
    monkeypatch.setattr(io_limits, "PROC", proc)
    return {"mountinfo": mountinfo, "v1": v1, "v2": v2}


def test_v1_limits_of_the_own_cgroup_only(host):
    (host["v1"] / "app" / "db" / "blkio.throttle.write_iops_device").write_text("7:0 300\n")
    (host["v1"] / "app" / "blkio.throttle.read_bps_device").write_text("7:0 1048576\n")
    limits, why = io_limits.io_limits([42], host["mountinfo"])
    assert why is None
    assert [(x["dev"], x["cgroup"], x["what"], x["value"], x["pids"]) for x in limits] == [
        ("7:0", "/app/db", "write IOPS", 300, [42])]
    assert limits[0]["file"].endswith("/app/db/blkio.throttle.write_iops_device")


def test_v2_limits_of_every_ancestor(host):
    (host["v2"] / "app" / "io.max").write_text("8:0 rbps=max wbps=2097152 riops=max wiops=max\n")
    (host["v2"] / "app" / "db" / "io.max").write_text("8:0 rbps=max wbps=max riops=50 wiops=max\n")
    limits, _ = io_limits.io_limits([42], host["mountinfo"])
    assert sorted((x["cgroup"], x["key"], x["value"]) for x in limits) == [
        ("/app", "io.max wbps", 2097152), ("/app/db", "io.max riops", 50)]


def test_no_process_left_says_so(host):
    limits, why = io_limits.io_limits([999], host["mountinfo"])
    assert limits == [] and "exited" in (why or "")


def test_no_hierarchy_says_so(tmp_path):
    (tmp_path / "mountinfo").write_text("")
    assert io_limits.io_limits([1], tmp_path / "mountinfo")[1]


def _disk(sys_block: Path, name: str, dev: str) -> Path:
    d = sys_block / name
    (d / "queue").mkdir(parents=True)
    (d / "dev").write_text(dev + "\n")
    return d


def test_a_partition_leads_to_its_disk_and_the_queue_is_read(tmp_path):
    sys_block, sys_dev = tmp_path / "block", tmp_path / "dev" / "block"
    sys_dev.mkdir(parents=True)
    disk = _disk(sys_block, "nvme0n1", "259:0")
    part = disk / "nvme0n1p1"
    part.mkdir()
    (part / "dev").write_text("259:1\n")
    (part / "partition").write_text("1\n")
    (sys_dev / "259:0").symlink_to(disk)
    (sys_dev / "259:1").symlink_to(part)
    (disk / "queue" / "scheduler").write_text("[none] mq-deadline kyber\n")
    (disk / "queue" / "nr_requests").write_text("1023\n")
    (disk / "queue" / "wbt_lat_usec").write_text("2000\n")
    for q, tags in (("0", 1023), ("1", 511)):
        (disk / "mq" / q).mkdir(parents=True)
        (disk / "mq" / q / "nr_tags").write_text(f"{tags}\n")
    assert block_queues.disk_of("259:1", sys_dev) == "259:0"
    assert block_queues.disk_of("259:0", sys_dev) == "259:0"
    assert block_queues.disk_of("1:1", sys_dev) == "1:1"
    assert block_queues.queue_facts("259:0", sys_dev) == {
        "name": "nvme0n1", "scheduler": "none", "nr_requests": 1023, "hw_tags": 1023,
        "queue_depth": None, "wbt_lat_usec": 2000}
    assert block_queues.queue_facts("9:9", sys_dev)["nr_requests"] is None
