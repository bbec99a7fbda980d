"""A continuous attach on a real MariaDB (sysbench) and PostgreSQL (pgbench), scraped once
through /metrics and parsed by prometheus_client's own parser: the redo log or the WAL is
a labelled series with its role, and the commit counter comes from the database's own
counters. The host matrix runs this against the release installed in each Debian
release's guest, on that release's own servers."""

from __future__ import annotations

import signal
import urllib.request

import pytest
from prometheus_client.parser import text_string_to_metric_families

import dbservers
from conftest import require_kernel, require_tool
from continuous_attach import free_port, start_continuous
from db_attach import require_mariadb, require_module
from patience import patience
from prometheus_server import wait_for

pytestmark = pytest.mark.kernel
LOAD_S = 30     # at most: the load ends once a scrape has seen what is checked


def scrape(port: int) -> dict[str, list]:
    """family name -> its samples, as Prometheus' own parser reads the exposition."""
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=patience(20)).read()
    return {f.name: f.samples for f in text_string_to_metric_families(text.decode())}


def _database(kind: str):
    if kind == "mariadb":
        require_mariadb()
        return dbservers.mariadb("ext4")
    require_kernel()
    require_tool("pgbench")
    require_module("psycopg")
    return dbservers.postgres("ext4")


@pytest.mark.parametrize("kind, role", [("mariadb", "redo_log"), ("postgres", "wal")])
def test_continuous_attach_serves_the_log_file_and_commits(kind, role, tmp_path):
    with _database(kind) as server:
        if kind == "mariadb":
            dbservers.sysbench_prepare(server)
            who = ["--pid", str(server.pid), "--mysql", server.dsn]
            start = lambda: dbservers.sysbench_start(server, threads=2, seconds=LOAD_S)  # noqa: E731
        else:
            dbservers.pgbench_init(server)
            who = ["--cgroup", server.cgroup, "--postgres", server.dsn]
            start = lambda: dbservers.pgbench_start(server, clients=2, seconds=LOAD_S)  # noqa: E731
        port = free_port()
        proc, err = start_continuous([*who, "--max-overhead", "50", "--no-report",
                                        "--out", str(tmp_path / "out")], port)
        try:
            with dbservers.running(start()) as load:
                def seen():
                    families = scrape(port)
                    files = [s for name, samples in families.items()
                             if name.startswith("lockscope_") for s in samples
                             if s.labels.get("role") == role and s.value > 0]
                    commits = [s.value for s in families.get("lockscope_db_commits", [])]
                    return (files, commits) if files and commits and max(commits) > 0 \
                        else None

                files, commits = wait_for(f"a {role} series and commits in /metrics", seen,
                                          timeout=LOAD_S)
                load.send_signal(signal.SIGTERM)
            # the log file is named by its path inside the server's data directory
            assert all(str(server.datadir) in s.labels["file"] for s in files), files
            proc.send_signal(signal.SIGTERM)
            _, rest = proc.communicate(timeout=patience(120))
            assert proc.returncode == 0, "".join(err) + rest
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
