"""lockscope attach --continuous on a real MariaDB under sysbench, scraped by a real
Prometheus and read by `go tool pprof`: the redo log's wait series grows in Prometheus's
query API, `promtool check metrics` passes on the exposition, and the top function of
/debug/pprof/mutex and /debug/pprof/block is the leaf of the top stack of the JSON
recording of the same window (the final results.json)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

from lockscope.analysis.waitclass import LOSS_CLASSES, classify
from lockscope.export.interval_digest import profile_kstack
from lockscope.export.pprof_writer import NO_STACK

import dbservers
from conftest import require_tool
from continuous_attach import free_port, start_continuous
from db_attach import require_mariadb
from patience import patience
from prometheus_server import api, start_prometheus, stop_prometheus, wait_for

pytestmark = pytest.mark.kernel
# the longest the load may have to run before Prometheus shows the series growing; it is
# ended as soon as it has (the pprof and JSON checks compare one window, whatever its length)
LOAD_S = 40


def debian_go() -> str:
    """Debian's golang-go: its pprof is prebuilt (a newer toolchain may build it on first
    use, minutes on a small machine)."""
    debian = Path("/usr/lib/go/bin/go")
    return str(debian) if debian.is_file() else require_tool("go")


def go_pprof(go: str, *args: str, tmp: Path) -> str:
    env = dict(os.environ, PPROF_TMPDIR=str(tmp))
    # the frames carry their names: no symbolization (it would read the binaries)
    res = subprocess.run([go, "tool", "pprof", "-symbolize=none", *args],
                         capture_output=True, text=True,
                         timeout=patience(120), env=env)
    assert res.returncode == 0, res.stdout + res.stderr
    return res.stdout


def top_function(top: str) -> str:
    """The first row of `pprof -top` with a stack: its function (the last column). Delay
    without a stack is left out, as the recording's side leaves out records without one
    (how much has none, and why, is the profile's comment: tests/unit/export)."""
    rows = [line for line in top.splitlines() if re.match(r"\s*[\d.]+\w*\s+[\d.]+%", line)
            and not line.rstrip().endswith(NO_STACK)]
    assert rows, top
    return rows[0].split()[-1]


def leaf(frame: str) -> str:
    return frame.split("+0x", 1)[0].split(" ", 1)[0]


def test_prometheus_and_pprof_read_a_continuous_attach_on_mariadb(tmp_path):
    require_mariadb()
    promtool = require_tool("promtool")
    go = debian_go()
    with dbservers.mariadb("ext4") as server:
        dbservers.sysbench_prepare(server)
        port, prom_port = free_port(), free_port()
        out = tmp_path / "out"
        proc, err = start_continuous(["--pid", str(server.pid), "--mysql", server.dsn,
                                      "--max-overhead", "50", "--out", str(out)], port)
        prom = start_prometheus(tmp_path, f"127.0.0.1:{port}", prom_port)
        load = None
        try:
            wait_for("prometheus ready", lambda: urllib.request.urlopen(
                f"http://127.0.0.1:{prom_port}/-/ready", timeout=patience(5)).status == 200)
            load = dbservers.sysbench_start(server, threads=4, seconds=LOAD_S)
            query = 'sum(lockscope_file_sync_seconds_total{role="redo_log"})'

            def grown():
                res = api(prom_port, "/api/v1/query_range", query=query,
                          start=str(time.time() - 60), end=str(time.time()), step="1")
                values = [float(v) for _, v in res["result"][0]["values"]] \
                    if res["result"] else []
                return values if len(set(values)) >= 3 and values == sorted(values) \
                    else None

            values = wait_for("the redo log's wait series growing in Prometheus", grown,
                              timeout=LOAD_S)
            assert values[-1] > values[0]
            expo = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics",
                                          timeout=patience(10)).read()
            check = subprocess.run([promtool, "check", "metrics"], input=expo,
                                   capture_output=True, timeout=patience(60))
            assert check.returncode == 0, check.stdout + check.stderr
            os.killpg(load.pid, signal.SIGTERM)   # its output is not read: no need to wait
            dbservers.finish(load)
            time.sleep(2)   # the last intervals reach the exporter
            tops = {}
            for kind in ("mutex", "block"):
                path = tmp_path / f"{kind}.pb.gz"
                path.write_bytes(urllib.request.urlopen(
                    f"http://127.0.0.1:{port}/debug/pprof/{kind}", timeout=patience(30)).read())
                tops[kind] = go_pprof(go, "-top", "-sample_index=delay", str(path), tmp=tmp_path)
                raw = go_pprof(go, "-raw", str(path), tmp=tmp_path)
                assert "contentions/count" in raw and "delay/nanoseconds" in raw, raw[:2000]
            proc.send_signal(signal.SIGTERM)
            _, rest = proc.communicate(timeout=patience(120))
            assert proc.returncode == 0, "".join(err) + rest
        finally:
            if load is not None and load.poll() is None:
                load.kill()
            stop_prometheus(prom)
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    doc = json.loads((out / "results.json").read_text())
    assert doc["attach"]["continuous"] and doc["attach"]["ended"] == "stopped"
    trace = doc["window"]["trace"]
    # the JSON recording's top stack by its leaf, as pprof -top ranks (flat)
    locks: dict[str, int] = {}
    for lk in trace["locks"]:
        for w in lk["waits"]:
            if w.get("kstack"):
                locks[leaf(w["kstack"][0])] = locks.get(leaf(w["kstack"][0]), 0) + w["total_ns"]
    assert top_function(tops["mutex"]) == max(locks, key=locks.__getitem__), \
        (tops["mutex"], sorted(locks.items(), key=lambda kv: -kv[1])[:3])
    blocked: dict[str, int] = {}
    for rec in trace["offcpu"]:
        if rec["reason"] != "runqueue" and rec.get("kstack") and \
                classify(rec).cls in LOSS_CLASSES:
            # from the frame that called the scheduler, as the profile has it
            stack = profile_kstack(rec["kstack"])
            if stack:
                f = leaf(stack[0])
                blocked[f] = blocked.get(f, 0) + rec["total_ns"]
    assert top_function(tops["block"]) == max(blocked, key=blocked.__getitem__), \
        (tops["block"], sorted(blocked.items(), key=lambda kv: -kv[1])[:3])
