"""A real Prometheus scrapes a running exporter fed by a live recorder's intervals (4 fio
writers contending on one sparse file's i_rwsem on ext4): the file's lock-wait series
grows in Prometheus's own query API, the alert rules load and evaluate, and every
dashboard query runs."""

from __future__ import annotations

import json
import socket
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from lockscope.export import ExportServer, ExportState
from lockscope.run.loopfs import make_loopfs

from conftest import require_tool
from export_recording import SeriesFollower, contention
from patience import patience
from prometheus_server import api, start_prometheus, stop_prometheus, wait_for

pytestmark = pytest.mark.kernel

ROOT = Path(__file__).resolve().parents[3]
SCRAPE_S = 1


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_prometheus_scrapes_the_exporter(tmp_path):
    require_tool("fio")
    state = ExportState()
    server = ExportServer.bind("127.0.0.1:0", state)
    server.start()
    port = free_port()
    prom = start_prometheus(tmp_path, f"127.0.0.1:{server.listen.port}", port)
    fs = make_loopfs("ext4", size_bytes=1 << 30)
    try:
        wait_for("prometheus ready", lambda: urllib.request.urlopen(
            f"http://127.0.0.1:{port}/-/ready", timeout=patience(5)).status == 200)
        with contention(fs.path, tmp_path) as (path, series, start, finish), \
                SeriesFollower(series, state.add_interval) as follower:
            start()
            query = f'sum(lockscope_lock_wait_seconds_total{{file="{path}",lock="i_rwsem"}})'

            def grown():
                res = api(port, "/api/v1/query_range", query=query,
                          start=str(time.time() - 60), end=str(time.time()), step="1")
                values = [float(v) for _, v in res["result"][0]["values"]] \
                    if res["result"] else []
                # a counter: never down, and up across at least three scrapes
                return values if len(set(values)) >= 3 and values == sorted(values) \
                    else None

            values = wait_for("the file's lock-wait series growing in Prometheus", grown,
                              timeout=90)
            assert follower.error is None and follower.fed >= 3
            up = api(port, "/api/v1/query", query='up{job="lockscope"}')["result"]
            assert [r["value"][1] for r in up] == ["1"]
            # the dashboard's every query runs against the scraped series
            dash = json.loads((ROOT / "deploy" / "grafana" /
                               "lockscope-dashboard.json").read_text())
            exprs = [t["expr"] for p in dash["panels"] for t in p["targets"]]
            with_data = 0
            for e in exprs:
                q = e.replace("$__rate_interval", "5s").replace("$instance", ".*")
                with_data += bool(api(port, "/api/v1/query", query=q)["result"])
            # the lock, thread, DIO and recorder panels have data from this recording
            assert with_data >= 6, with_data
            finish()
        rules = wait_for("alert rules evaluated", lambda: [
            r for g in api(port, "/api/v1/rules")["groups"] for r in g["rules"]
            if r.get("lastEvaluation", "").startswith("2")] or None)
        assert {r["name"] for r in rules} == {"LockscopeInodeLockWaitHigh",
                                             "LockscopeRecorderOverBudget",
                                             "LockscopeTargetDown"}
        assert all(r["health"] == "ok" for r in rules), rules
        assert values[-1] > values[0]
    finally:
        stop_prometheus(prom)
        server.stop()
        fs.destroy()
    assert prom.returncode is not None
