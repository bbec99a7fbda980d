"""Database presets end to end: real MariaDB and PostgreSQL servers started by the
sweep on fresh loop ext4 and XFS, their own clients at each count, the recorder on
the servers; and nothing left behind afterwards, interrupted or not."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from lockscope.run import procledger

from conftest import require_tool
from sweep_runs import assert_nothing_left, interrupt_after_first_point, lockscope

RUNTIME = "2"


def server_processes(doc: dict) -> list[str]:
    """Processes of the sweep's servers still in the process table, zombies included
    (ps and pgrep list those too): any whose cgroup is a server's, and the servers' main
    processes. Read the moment the sweep has returned."""
    cgroups = {Path(fs["server"]["cgroup"]).name for fs in doc["host"]["filesystems"].values()
               if (fs.get("server") or {}).get("cgroup")}
    mains = {str(fs["server"]["pid"]): fs["server"]["comm"]
             for fs in doc["host"]["filesystems"].values() if fs.get("server")}
    left = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cgroup = Path(f"/proc/{pid}/cgroup").read_text()
            comm = Path(f"/proc/{pid}/comm").read_text().strip()
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue  # gone meanwhile
        if any(f"/{name}" in cgroup for name in cgroups) or mains.get(pid) == comm:
            left.append(f"{comm} pid {pid} state {state}")
    return left


def assert_servers_gone(doc: dict) -> None:
    for label, fs in doc["host"]["filesystems"].items():
        server = fs.get("server")
        assert server, f"{label}: no server recorded"
        try:
            comm = Path(f"/proc/{server['pid']}/comm").read_text().strip()
        except OSError:
            comm = None
        assert comm != server["comm"] or procledger.start_time(server["pid"]) is None, \
            f"{label}: {server['comm']} (pid {server['pid']}) still running"
        assert not server["cgroup"] or not Path(server["cgroup"]).exists()
        if server["kind"] == "postgres":
            assert not Path(server["socket"]).exists()  # its private socket directory


def _require(preset: str) -> None:
    for tool in (("mariadb-install-db", "sysbench") if preset == "mariadb-oltp"
                 else ("runuser",)):
        require_tool(tool)


@pytest.mark.kernel
@pytest.mark.parametrize("preset", ["mariadb-oltp", "postgres-pgbench"])
def test_preset_sweep(tmp_path, preset):
    _require(preset)
    out = tmp_path / preset
    res = lockscope("sweep", "--preset", preset, "--threads", "1,2", "--runtime", RUNTIME,
                    "--db-scale", "1", "--image-size", "2g", "--out", str(out),
                    "--no-report")
    doc = json.loads((out / "results.json").read_text())
    # the servers have exited (reaped, not zombies) and their cgroups are gone by the
    # time the sweep returns, and only then are their filesystems unmounted
    assert server_processes(doc) == []
    assert res.returncode == 0, res.stderr[-2000:]
    assert_nothing_left(doc)
    assert_servers_gone(doc)
    assert doc["partial"] is False and doc["workload"]["preset"]["name"] == preset
    assert {(r["fs"], r["threads"]) for r in doc["runs"]} == {
        (fs, n) for fs in ("ext4", "xfs") for n in (1, 2)}
    kind = "mariadb" if preset == "mariadb-oltp" else "postgres"
    for run in doc["runs"]:
        assert run["server"]["kind"] == kind
        tps = sum(j["write"]["iops"] for j in run["workload"]["jobs"])
        assert tps > 0, run["workload"]
        assert run["trace"], run.get("trace_error")
        # the recorder traced the server, not the client: its threads carry its name
        comms = {t.get("comm") for t in run["trace"]["threads"]}
        assert any(c and c.startswith(run["server"]["comm"][:8]) for c in comms), comms
        assert "sysbench" not in comms and "pgbench" not in comms
    for fs in ("ext4", "xfs"):
        a = doc["analysis"][fs]
        points = a["server"]["points"]
        assert [p["threads"] for p in points] == [1, 2]
        for p in points:
            assert p["traced"] and p["tps"]["mean"] > 0
            shares = p["share"]
            assert sum(shares.values()) == pytest.approx(1.0)
            # waiting for work is apart from loss: lost is everything else off CPU
            assert p["lost_ns"] == pytest.approx(
                p["thread_time_ns"] * (1 - shares["idle"] - shares["oncpu"]))
        assert a["verdict"]["kind"] and a["verdict"]["summary"]
    # the terminal summary speaks of clients and transactions
    assert "clients" in res.stdout and "TPS" in res.stdout


@pytest.mark.kernel
def test_ctrl_c_stops_the_servers_and_keeps_the_points(tmp_path):
    _require("postgres-pgbench")
    doc = interrupt_after_first_point(tmp_path / "partial", "--preset", "postgres-pgbench",
                                      "--threads", "1,2,4", "--runtime", "2", "--db-scale",
                                      "1", "--image-size", "2g")
    assert server_processes(doc) == []
    assert doc["partial"] is True and 1 <= len(doc["runs"]) < 6
    assert_nothing_left(doc)
    assert_servers_gone(doc)
    assert doc["analysis"]["ext4"]["server"]["points"]


def test_preset_options_are_checked_before_anything():
    for args, words in ((["--preset", "oracle-tpcc"], "invalid choice"),
                        (["--db-scale", "2"], "--db-scale needs --preset"),
                        (["--preset", "postgres-pgbench", "--db-scale", "0"], ">= 1"),
                        (["--preset", "mariadb-oltp", "--throughput", "pgbench"],
                         "cannot be used with --preset"),
                        (["--preset", "mariadb-oltp", "--scenario", "default"],
                         "not allowed with")):
        res = lockscope("sweep", *args, "--out", "/nonexistent/never-made")
        assert res.returncode == 2, (args, res.stderr)
        assert words in res.stderr and "Traceback" not in res.stderr, res.stderr
