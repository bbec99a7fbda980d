"""Database servers lockscope starts itself (MariaDB, PostgreSQL), for the sweep's
database presets and for tests: own datadir, private socket, unique port, stopped on
every exit path and, after a kill, by the next run (procledger)."""

from __future__ import annotations

from .common import Server
from .mariadb import MariaDB
from .postgres import Postgres

SERVERS = {"mariadb": MariaDB, "postgres": Postgres}

__all__ = ["SERVERS", "MariaDB", "Postgres", "Server"]
