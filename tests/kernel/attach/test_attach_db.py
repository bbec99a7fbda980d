"""lockscope attach on real MariaDB and PostgreSQL servers under their own benchmarks.

Each server runs on a fresh loop ext4 image with a private socket (tests/support/dbservers.py),
is loaded for a few seconds by sysbench oltp_write_only or pgbench inside the attach
window, and is torn down on every exit path.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from lockscope.analysis.waitclass import LOSS_CLASSES
from lockscope.run.dbserver.postgres import psql

import dbservers
from conftest import LOCKSCOPE, require_kernel, require_tool
from db_attach import (
    LOAD_S,
    _attach_during,
    reports_wanted,
    require_mariadb,
    require_module,
)
from phase_clock import PhaseClock

# real servers on loop filesystems under the recorder
pytestmark = pytest.mark.kernel


ROOT = Path(__file__).resolve().parents[3]
CARGO_BIN = str(Path.home() / ".cargo" / "bin")


@pytest.fixture(scope="module")
def mariadb_run(request, tmp_path_factory):
    require_mariadb()
    out = tmp_path_factory.mktemp("attach-mariadb") / "out"
    clock = PhaseClock("mariadb")
    with dbservers.mariadb("ext4") as server:
        clock("server up")
        dbservers.sysbench_prepare(server)
        clock("sysbench prepare")
        doc, load = _attach_during(
            server, ["--pid", str(server.pid)], ["--mysql", server.dsn], out,
            lambda: dbservers.sysbench_start(server, threads=4, seconds=LOAD_S),
            report=reports_wanted(request))
        clock("attach")
        yield server, doc, dbservers.sysbench_tps(load), load, out


@pytest.fixture(scope="module")
def postgres_run(request, tmp_path_factory):
    require_kernel()
    require_tool("pgbench")
    require_module("psycopg")
    out = tmp_path_factory.mktemp("attach-pg") / "out"
    # no autovacuum: its transactions (an analyze of the tables pgbench -i filled) count in
    # pg_stat_database as commits, a share the client's count never sees when it is slow
    clock = PhaseClock("postgres")
    with dbservers.postgres("ext4", options=["autovacuum=off"]) as server:
        clock("server up")
        dbservers.pgbench_init(server)
        clock("pgbench init")
        fixed = dbservers.pgbench_fixed_commits(server, clients=4)
        clock("fixed commits")
        doc, load = _attach_during(
            server, ["--cgroup", server.cgroup], ["--postgres", server.dsn], out,
            lambda: dbservers.pgbench_start(server, clients=4, seconds=LOAD_S),
            report=reports_wanted(request),
            # the load's dirty pages written to the relations' files inside the window
            # at any speed: a slow guest's few transactions leave the checkpointer and
            # the background writer nothing to write before the window closes
            after_load=lambda: psql(server, "CHECKPOINT"))
        clock("attach")
        bench = dbservers.pgbench_tps(load) | {"fixed_commits": fixed}
        yield server, doc, bench, load, out


def _files(doc: dict) -> list[dict]:
    return doc["analysis"]["attach"]["files"]


def _class(doc: dict, name: str) -> dict:
    return next(c for c in doc["analysis"]["attach"]["classes"] if c["class"] == name)


def test_mariadb_redo_log_and_binlog_by_path_and_role(mariadb_run):
    server, doc, *_ = mariadb_run
    by_path = {f["path"]: f for f in _files(doc)}
    redo = by_path.get(str(server.datadir / "ib_logfile0"))
    assert redo is not None, sorted(by_path)
    assert redo["role"] == "redo_log"
    # The redo log is written with O_DIRECT from MariaDB 10.8 on (innodb_log_file_buffering
    # OFF); before (10.5 in Debian 11) buffered. The server's own variable says which.
    buffering = dbservers.mysql_query(server.socket, "SELECT @@innodb_log_file_buffering")
    if buffering is not None and buffering.strip() == "0":
        assert redo["dio_writes"] > 0, redo
    else:
        assert redo["buffered_writes"] > 0, redo
    assert any(f["role"] == "binlog" and f["path"].startswith(str(server.datadir))
               for f in _files(doc))


def test_postgres_wal_and_relations_by_path_and_role(postgres_run):
    server, doc, *_ = postgres_run
    wal = [f for f in _files(doc) if f["role"] == "wal"]
    assert wal and all(f["path"].startswith(str(server.datadir / "pg_wal") + "/") for f in wal)
    assert sum(f["buffered_writes"] for f in wal) > 0
    # every commit flushes the WAL: its fsyncs are counted on the WAL file itself
    assert doc["analysis"]["attach"]["fsyncs_per_file"]
    assert sum(f["fsyncs"] for f in wal) > 0
    # relations named through pg_class, as pgbench's tables
    names = {f["object"] for f in _files(doc) if f["role"] == "relation"}
    assert any(n.startswith("public.pgbench_") for n in names), names


@pytest.mark.parametrize("run, call", [("mariadb_run", "poll"),
                                       ("postgres_run", "epoll_wait")])
def test_client_waits_land_in_idle_not_in_loss(request, run, call):
    _, doc, *_ = request.getfixturevalue(run)
    trace = doc["window"]["trace"]
    # Independently: the time the server's threads blocked inside the call that waits
    # for a client, summed from the raw records.
    entry = {f"__x64_sys_{call}", f"__arm64_sys_{call}"}
    blocked = [r for r in trace["offcpu"] if r["reason"] != "runqueue"]
    stacked = [r for r in blocked if any(f.split("+")[0] in entry for f in r["kstack"])]
    waited = sum(r["total_ns"] for r in stacked)
    assert waited > 0
    # Records kept without a stack (none of their waits sampled) are of the call when
    # they carry its number, learnt from the records whose stack shows the call.
    numbers = {r["syscall"] for r in stacked}
    waited += sum(r["total_ns"] for r in blocked if not r["kstack"] and r["syscall"] in numbers)
    idle = _class(doc, "idle")
    by_call = sum(h["ns"] for h in idle["how"] if h["detail"] == call)
    # Every wait in the call is idle (none missing), and little else is classed as it
    assert waited * (1 - 1e-9) <= by_call <= waited * 1.01
    a = doc["analysis"]["attach"]
    assert a["lost_ns"] + a["idle_ns"] == pytest.approx(
        sum(c["ns"] for c in a["classes"]), rel=1e-9)
    assert a["verdict"]["kind"] != "idle"  # it was under load: some time was lost


def test_commit_rate_agrees_with_sysbench(mariadb_run):
    _, doc, bench, load, _ = mariadb_run
    import re

    total = int(re.search(r"transactions:\s+(\d+)", load).group(1))
    db = doc["analysis"]["attach"]["db"]
    # sampled each second of the window, which held at least the load
    assert db["samples"] >= LOAD_S - 1
    assert re.search(r"mariadbd: \d+/\d+ s .*commits/s", doc["_stderr"]), doc["_stderr"]
    # The window holds the whole sysbench run: commits counted = its transactions.
    assert db["commits"] == pytest.approx(total, rel=0.10), (db, bench)


def test_commit_rate_agrees_with_pgbench(postgres_run):
    server, doc, bench, load, _ = postgres_run
    import re

    total = int(re.search(r"number of transactions actually processed: (\d+)", load).group(1))
    db = doc["analysis"]["attach"]["db"]
    # The server also counts lockscope's own queries before its first sample (the
    # database list, the version, one per database it reads relation names from),
    # reported up to a second late (a backend's counts are flushed at most once a
    # second from PostgreSQL 15): they may land in the window. And pgbench's own
    # commits beside its transactions (each connection's start-up, its queries before
    # the run), measured on this server before the window. A few against thousands
    # of pgbench's transactions here; not on a slow guest's sixty. And
    # the run's CHECKPOINT after the load is one psql session more (its commits).
    own = 2 + int(psql(server, "SELECT count(*) FROM pg_database WHERE datallowconn"))
    own += dbservers.READING_COMMITS
    fixed = bench["fixed_commits"]
    assert total * 0.9 <= db["commits"] <= total * 1.1 + own + fixed, (db, bench, own)
    # pg_stat_activity wait events were sampled each second of the window
    samples = doc["db"]["samples"]
    assert len(samples) >= LOAD_S - 1 and all("waits" in s for s in samples)


@pytest.mark.parametrize("run", ["mariadb_run", "postgres_run"])
def test_per_second_series_cover_the_window(request, run):
    _, doc, *_ = request.getfixturevalue(run)
    trace = doc["window"]["trace"]
    window = trace["interval"]
    rows = doc["analysis"]["attach"]["series"]
    assert rows[0]["start_mono_ns"] == pytest.approx(window["start_mono_ns"], abs=0.2e9)
    assert rows[-1]["end_mono_ns"] == pytest.approx(window["end_mono_ns"], abs=0.2e9)
    for a, b in zip(rows, rows[1:]):
        assert b["start_mono_ns"] == pytest.approx(a["end_mono_ns"], abs=1e6)
    # the recorder's own intervals (--interval-ms), one per second of the window
    assert trace.get("series"), "attach did not ask the recorder for intervals"
    interval_s = doc["attach"]["interval_s"]
    assert len(rows) == pytest.approx(window["duration_ns"] / 1e9 / interval_s, abs=1)
    # and the live line showed what they say: their write rate, and their top wait
    # class where the interval a tick read had a loss; sure of that only when every
    # interval had one (a stalled load can leave a tick's interval without)
    assert re.search(r"\d writes/s", doc["_stderr"]), doc["_stderr"]
    if all(any(v > 0 for k, v in r["classes_ns"].items() if k in LOSS_CLASSES) for r in rows):
        assert "top wait: " in doc["_stderr"], doc["_stderr"]
    # every row has the database's rate lined up with it
    assert all(r["db"] for r in rows)


@pytest.mark.parametrize("run", ["mariadb_run", "postgres_run"])
def test_report_renders_in_headless_chromium(request, run):
    chromium = require_tool("chromium")
    from browser import check_page

    _, doc, _, _, out = request.getfixturevalue(run)
    page = out / "report.html"
    assert page.exists()
    report = check_page(page, chromium=chromium)
    assert report.errors == []
    facts = report.facts
    assert facts["sections"][:4] == ["verdict", "time", "series", "files"]
    # PostgreSQL's own wait events get a plot beside the kernel's view, over time
    over_time = len(doc["analysis"]["attach"]["series"]) > 1
    expected = ["plot-throughput", "plot-classes"] + (
        ["plot-db-waits"] if run == "postgres_run" and over_time else [])
    assert [p["id"] for p in facts["plots"]] == expected
    assert all(p["svg"] and p["width"] > 600 for p in facts["plots"])
    assert facts["flames"] >= 1 and facts["all_flames_unpacked"]
    assert (out / "flame").is_dir()


def test_report_and_flame_commands_read_an_attach(postgres_run, tmp_path):
    _, doc, _, _, out = postgres_run
    env = LOCKSCOPE.env(PATH=f"{CARGO_BIN}:{os.environ.get('PATH', '')}")

    def lockscope(*args):
        return LOCKSCOPE.run(*args, env=env, timeout=120)

    res = lockscope("report", str(out / "results.json"), "-o", str(tmp_path / "r.md"))
    assert res.returncode == 0, res.stderr
    md = (tmp_path / "r.md").read_text()
    assert "Where the threads' time went" in md and "| WAL |" in md.replace("WAL 0", "WAL |")
    assert (tmp_path / "r-throughput.png").exists() and (tmp_path / "r-classes.png").exists()
    res = lockscope("report", str(out), "--format", "json")
    assert res.returncode == 0 and json.loads(res.stdout)["kind"] == "attach"
    svg = tmp_path / "off.svg"
    res = lockscope("flame", str(out / "results.json"), "--kind", "offcpu", "-o", str(svg))
    assert res.returncode == 0, res.stderr
    assert svg.read_text().lstrip().startswith("<?xml") and svg.with_suffix(".folded").exists()


def test_the_server_version_and_the_counters_it_lacks_are_named(mariadb_run):
    """The version is the server's own, and a counter this version does not have is named
    as not measured, never read as zero: both checked through the mariadb client."""
    server, doc, *_ = mariadb_run
    assert doc["db"]["version"] == dbservers.mysql_query(server.socket,
                                                         "SELECT VERSION()").strip()
    status = dbservers.mysql_query(server.socket, "SHOW GLOBAL STATUS")
    have = {line.split("\t")[0] for line in status.splitlines()}
    assert doc["db"]["lacks"] == [c for c in doc["db"]["counters"] if c not in have]
    summary = doc["analysis"]["attach"]["db"]
    assert summary["lacks"] == doc["db"]["lacks"]
    if summary["lacks"]:
        assert any("not measured" in e for e in doc["analysis"]["attach"]["verdict"]["evidence"])
