"""Ready-made datadirs ($LOCKSCOPE_DATADIR_TEMPLATES): the first server's new datadir is
kept before it starts; the next one's is a copy of it, and serves. Real MariaDB and
PostgreSQL on a loop ext4. And a datadir made in the C locale (as a template made
elsewhere may be): its relations are named as any other's.

Which datadir a server got is read from what its maker drew at random and the server
keeps: PostgreSQL's system identifier (pg_controldata), MariaDB's Aria control file
UUID (bytes 4-20 of aria_log_control, written by mariadb-install-db)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from lockscope.run import dbserver
from lockscope.run.dbserver.postgres import pg_bin, psql
from lockscope.run.dbserver.templates import ENV, unpack
from lockscope.run.dbstats import PostgresSampler
from lockscope.run.loopfs import make_loopfs

from db_attach import require_module, require_server
from patience import patience

pytestmark = pytest.mark.kernel


def _identity(kind: str, datadir: Path) -> str:
    if kind == "postgres":
        out = subprocess.run([str(pg_bin() / "pg_controldata"), "-D", str(datadir)],
                             capture_output=True, text=True, check=True).stdout
        return re.search(r"Database system identifier:\s*(\d+)", out).group(1)
    return (datadir / "aria_log_control").read_bytes()[4:20].hex()


def _serves(kind: str, db) -> bool:
    if kind == "postgres":
        return psql(db.server(), "SELECT 1").strip() == "1"
    return db.sql("SELECT 1").strip() == "1"


@pytest.mark.parametrize("kind", ["mariadb", "postgres"])
def test_the_next_datadir_is_the_kept_one(kind, tmp_path, monkeypatch):
    require_server(kind)
    templates = tmp_path / "templates"
    monkeypatch.setenv(ENV, str(templates))
    fs = make_loopfs("ext4", 1 << 30)
    try:
        server = dbserver.SERVERS[kind]
        with server(fs.path / "first", made_above=fs.path.parent, slowness=patience(1)) as db:
            assert db.template is None
            kept = list(templates.iterdir())
            assert [p.name.startswith(f"{kind}-") for p in kept] == [True], kept
            first = _identity(kind, db.datadir)
            unpack(kept[0], tmp_path / "unpacked")
            assert _identity(kind, tmp_path / "unpacked") == first
            assert _serves(kind, db)
        with server(fs.path / "second", made_above=fs.path.parent, slowness=patience(1)) as db:
            assert db.template == kept[0]
            assert _identity(kind, db.datadir) == first
            assert _serves(kind, db)
        assert list(templates.iterdir()) == kept
    finally:
        fs.destroy()


def test_without_the_variable_each_datadir_is_new(tmp_path, monkeypatch):
    require_server("postgres")
    monkeypatch.delenv(ENV, raising=False)
    fs = make_loopfs("ext4", 1 << 30)
    try:
        seen = []
        for name in ("a", "b"):
            with dbserver.Postgres(fs.path / name, made_above=fs.path.parent,
                                   slowness=patience(1)) as db:
                assert db.template is None
                seen.append(_identity("postgres", db.datadir))
        assert seen[0] != seen[1]
    finally:
        fs.destroy()


def test_relations_are_named_in_a_sql_ascii_database(tmp_path, monkeypatch):
    """initdb in the C locale makes SQL_ASCII databases, whose text psycopg returns as
    bytes: attach's sampler names their relations all the same (it named none)."""
    require_server("postgres")
    require_module("psycopg")
    monkeypatch.delenv(ENV, raising=False)
    monkeypatch.setenv("LC_ALL", "C")
    fs = make_loopfs("ext4", 1 << 30)
    try:
        with dbserver.Postgres(fs.path / "pg", made_above=fs.path.parent,
                               slowness=patience(1)) as db:
            server = db.server()
            assert psql(server, "SHOW server_encoding").strip() == "SQL_ASCII"
            psql(server, "CREATE TABLE ascii_named (id int)")
            sampler = PostgresSampler(server.dsn)
            sampler.open()
            try:
                names = {r["name"] for r in sampler.result()["relations"]}
            finally:
                sampler.stop()
            assert "public.ascii_named" in names, sorted(names)[:20]
            assert all(isinstance(n, str) for n in names)
    finally:
        fs.destroy()


def test_a_template_of_another_locale_is_not_used(tmp_path, monkeypatch):
    """PostgreSQL's encoding follows the locale initdb ran in: a template made in one
    is never handed to a server made in another."""
    require_server("postgres")
    templates = tmp_path / "templates"
    monkeypatch.setenv(ENV, str(templates))
    fs = make_loopfs("ext4", 1 << 30)
    try:
        for i, lc in enumerate(("C.UTF-8", "C")):
            monkeypatch.setenv("LC_ALL", lc)
            with dbserver.Postgres(fs.path / lc, made_above=fs.path.parent,
                                   slowness=patience(1)) as db:
                assert db.template is None
                encoding = psql(db.server(), "SHOW server_encoding").strip()
                assert encoding == ("UTF8" if lc == "C.UTF-8" else "SQL_ASCII")
            assert len(list(templates.iterdir())) == i + 1
    finally:
        fs.destroy()
