"""The database's own counters, sampled each second over a read-only login.

``--mysql SOCKET|DSN`` reads ``SHOW GLOBAL STATUS`` (PyMySQL), ``--postgres DSN``
reads ``pg_stat_database`` and ``pg_stat_activity`` (psycopg). Both libraries
are an optional extra (``pip install lockscope[db]``). A login that fails is a
warning: the trace goes on without counters.

Samples carry ``CLOCK_MONOTONIC`` times, the recorder's clock, so that they
line up with its intervals.
"""

from __future__ import annotations

import os
import threading
import time
from typing import Any
from urllib.parse import parse_qs, unquote, urlparse

MYSQL_COUNTERS = ("Com_commit", "Com_rollback", "Questions", "Innodb_data_fsyncs",
                  "Innodb_os_log_fsyncs", "Innodb_data_written", "Innodb_os_log_written",
                  "Innodb_rows_inserted", "Innodb_rows_updated", "Innodb_rows_deleted",
                  "Handler_commit", "Threads_running")
# Gauges are levels, not running totals: their per-second value is the sample itself.
GAUGES = ("Threads_running",)
PG_QUERY = """
SELECT (SELECT sum(xact_commit) FROM pg_stat_database),
       (SELECT sum(xact_rollback) FROM pg_stat_database),
       (SELECT sum(tup_inserted + tup_updated + tup_deleted) FROM pg_stat_database),
       (SELECT sum(blks_read) FROM pg_stat_database),
       (SELECT coalesce(json_agg(json_build_object('type', t, 'event', e, 'n', n)), '[]')
          FROM (SELECT coalesce(wait_event_type, 'CPU') AS t, coalesce(wait_event, 'running') AS e,
                       count(*) AS n
                  FROM pg_stat_activity
                 WHERE pid <> pg_backend_pid() AND state = 'active'
                 GROUP BY 1, 2) w)
"""
PG_NAMES = """
SELECT (SELECT oid FROM pg_database WHERE datname = current_database()),
       pg_relation_filenode(c.oid), n.nspname || '.' || c.relname
  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
 WHERE pg_relation_filenode(c.oid) IS NOT NULL
"""
CONNECT_TIMEOUT_S = 3


class DbUnavailable(Exception):
    """The login did not work; the message is the warning shown to the user."""


def mysql_params(target: str) -> dict:
    """PyMySQL connect() arguments from a socket path or a mysql:// URL."""
    if target.startswith("mysql://") or target.startswith("mariadb://"):
        u = urlparse(target)
        q = parse_qs(u.query)
        params = {"user": unquote(u.username or "root"), "password": unquote(u.password or ""),
                  "host": u.hostname or "localhost", "port": u.port or 3306}
        if "unix_socket" in q:
            params["unix_socket"] = q["unix_socket"][0]
        return params
    if target.startswith("/") or os.path.exists(target):
        return {"unix_socket": target, "user": os.environ.get("LOCKSCOPE_MYSQL_USER", "root"),
                "password": os.environ.get("LOCKSCOPE_MYSQL_PASSWORD", "")}
    raise DbUnavailable(f"--mysql {target!r}: expected a socket path or mysql://user:pass@host"
                        ":port/ (add ?unix_socket=PATH for a socket)")


class Sampler:
    """Samples one database each second in a thread; ``samples`` holds the results."""

    engine = ""

    def __init__(self, target: str, period_s: float = 1.0):
        self.target = target
        self.period_s = period_s
        self.samples: list[dict] = []
        self.errors: list[str] = []
        self.names: dict[tuple[int, int], str] = {}
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._conn: Any = None      # the driver's connection, once connected
        self.version: str | None = None

    # -- to implement
    def connect(self):
        raise NotImplementedError

    def read(self) -> dict:
        raise NotImplementedError

    # -- shared
    def open(self) -> None:
        """Connect once now; raises DbUnavailable with a one-line reason."""
        self._conn = self.connect()
        try:
            self.version = self.server_version()
        except Exception:   # the version is for the reader; the counters do not need it
            self.version = None

    def server_version(self) -> str | None:
        return None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name=f"{self.engine}-sampler",
                                        daemon=True)
        self._thread.start()

    def sample_once(self) -> None:
        t = time.monotonic_ns()
        try:
            values = self.read()
        except Exception as exc:  # a dropped connection ends sampling, not the attach
            self.errors.append(f"{type(exc).__name__}: {str(exc).strip().splitlines()[0]}"
                               if str(exc).strip() else type(exc).__name__)
            self._stop.set()
            return
        self.samples.append({"mono_ns": (t + time.monotonic_ns()) // 2, **values})

    def _run(self) -> None:
        next_t = time.monotonic()
        while not self._stop.is_set():
            self.sample_once()
            next_t += self.period_s
            self._stop.wait(max(0.0, next_t - time.monotonic()))

    def stop(self) -> None:
        self._stop.set()
        if self._thread:
            self._thread.join(5)
        self.sample_once_final()
        try:
            if self._conn is not None:
                self._conn.close()
        except Exception:
            pass

    def sample_once_final(self) -> None:
        if self._conn is not None and not self.errors:
            self.sample_once()

    def result(self) -> dict:
        # counters a server version does not have: named, so that none reads as zero
        seen = set().union(*(s.keys() for s in self.samples)) if self.samples else set()
        return {"engine": self.engine, "version": self.version, "samples": self.samples,
                "errors": self.errors, "counters": list(self.counter_names()),
                "lacks": [c for c in self.counter_names() if self.samples and c not in seen]}

    def counter_names(self):
        return ()


class MysqlSampler(Sampler):
    engine = "mariadb"

    def connect(self):
        try:
            import pymysql
        except ImportError:
            raise DbUnavailable("--mysql needs PyMySQL (pip install 'lockscope[db]')") from None
        params = mysql_params(self.target)
        try:
            return pymysql.connect(connect_timeout=CONNECT_TIMEOUT_S, autocommit=True, **params)
        except Exception as exc:
            msg = exc.args[1] if len(exc.args) > 1 else str(exc)
            raise DbUnavailable(f"--mysql {self.target}: cannot log in: {msg}") from None

    def server_version(self) -> str | None:
        with self._conn.cursor() as cur:
            cur.execute("SELECT VERSION()")
            return str(cur.fetchone()[0])

    def read(self) -> dict:
        with self._conn.cursor() as cur:
            placeholders = ",".join(["%s"] * len(MYSQL_COUNTERS))
            cur.execute(f"SHOW GLOBAL STATUS WHERE Variable_name IN ({placeholders})",
                        MYSQL_COUNTERS)
            rows = dict(cur.fetchall())
        return {k: int(rows[k]) for k in MYSQL_COUNTERS if k in rows}

    def counter_names(self):
        return MYSQL_COUNTERS


class PostgresSampler(Sampler):
    engine = "postgres"

    def connect(self):
        try:
            import psycopg
        except ImportError:
            raise DbUnavailable("--postgres needs psycopg (pip install 'lockscope[db]')") \
                from None
        try:
            conn = psycopg.connect(self.target, connect_timeout=CONNECT_TIMEOUT_S,
                                   autocommit=True)
        except Exception as exc:
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            raise DbUnavailable(f"--postgres: cannot log in: {first}") from None
        self._load_names(psycopg, conn)
        return conn

    def _load_names(self, psycopg, conn) -> None:
        """relfilenode → schema.table in every database this login may open."""
        try:
            dbs = [_text(r[0]) for r in conn.execute(
                "SELECT datname FROM pg_database WHERE datallowconn ORDER BY oid LIMIT 32")]
        except Exception:
            return
        from psycopg.conninfo import conninfo_to_dict, make_conninfo

        base = conninfo_to_dict(self.target)
        for db in dbs:
            try:
                with psycopg.connect(make_conninfo("", **{**base, "dbname": db}),
                                     connect_timeout=CONNECT_TIMEOUT_S, autocommit=True) as c:
                    for dboid, node, name in c.execute(PG_NAMES):
                        self.names[(int(dboid), int(node))] = _text(name)
            except Exception:
                continue

    def server_version(self) -> str | None:
        return _text(self._conn.execute("SHOW server_version").fetchone()[0])

    def read(self) -> dict:
        commit, rollback, tuples, blks, waits = self._conn.execute(PG_QUERY).fetchone()
        return {"xact_commit": int(commit or 0), "xact_rollback": int(rollback or 0),
                "tuples_changed": int(tuples or 0), "blks_read": int(blks or 0),
                "waits": waits if isinstance(waits, list) else []}

    def counter_names(self):
        return ("xact_commit", "xact_rollback", "tuples_changed", "blks_read")

    def result(self) -> dict:
        out = super().result()
        out["relations"] = [{"dboid": k[0], "relfilenode": k[1], "name": v}
                            for k, v in sorted(self.names.items())]
        # Each sample is one transaction of this login: it is not the server's load.
        out["own_xacts_per_sample"] = 1
        return out


def _text(value) -> str:
    """A text column as str: from a SQL_ASCII database psycopg returns bytes, the server
    having no encoding to convert from (initdb in the C locale makes one)."""
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
