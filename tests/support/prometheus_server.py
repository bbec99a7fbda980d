"""A real Prometheus for the tests: started on a private port and queried through its API."""

from __future__ import annotations

import json
import signal
import subprocess
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from conftest import require_tool
from patience import patience

ROOT = Path(__file__).resolve().parents[2]
SCRAPE_S = 1


def api(port: int, path: str, **params: str) -> dict:
    url = f"http://127.0.0.1:{port}{path}"
    if params:
        url += "?" + urllib.parse.urlencode(params)
    with urllib.request.urlopen(url, timeout=patience(10)) as r:
        doc = json.loads(r.read())
    assert doc["status"] == "success", doc
    return doc["data"]


def wait_for(what: str, check, timeout: float = 60.0):
    timeout = patience(timeout)
    deadline = time.monotonic() + timeout
    last: object = None
    while time.monotonic() < deadline:
        try:
            got = check()
            if got:
                return got
            last = got
        except (OSError, ValueError, KeyError, IndexError) as e:
            last = e
        time.sleep(0.5)
    pytest.fail(f"{what}: not within {timeout:.0f} s (last: {last!r})")


def start_prometheus(tmp: Path, target: str, port: int,
                     scrape_configs: list[dict] | None = None) -> subprocess.Popen:
    """Prometheus scraping ``target`` as job lockscope with the alert rules, or the jobs
    ``scrape_configs`` names."""
    rules = ROOT / "deploy" / "prometheus" / "lockscope-alerts.yml"
    cfg = tmp / "prometheus.yml"
    cfg.write_text(json.dumps({
        "global": {"scrape_interval": f"{SCRAPE_S}s", "evaluation_interval": "1s"},
        "rule_files": [str(rules)],
        "scrape_configs": scrape_configs or [
            {"job_name": "lockscope", "scrape_timeout": "1s",
             "static_configs": [{"targets": [target]}]}],
    }))
    return subprocess.Popen(
        [require_tool("prometheus"), f"--config.file={cfg}",
         f"--storage.tsdb.path={tmp / 'data'}", f"--web.listen-address=127.0.0.1:{port}",
         "--log.level=warn"],
        stdout=subprocess.DEVNULL, stderr=open(tmp / "prometheus.log", "w"))


def stop_prometheus(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(patience(30))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
