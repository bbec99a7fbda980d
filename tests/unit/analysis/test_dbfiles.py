"""Database file roles from paths as MariaDB and PostgreSQL lay them out."""

from lockscope.analysis.dbfiles import file_role


def test_mariadb_files():
    base = "/var/lib/mysql/"
    assert file_role(base + "ib_logfile0").role == "redo_log"
    assert file_role(base + "ibdata1").role == "system_tablespace"
    assert file_role(base + "ib_doublewrite").role == "doublewrite"
    assert file_role(base + "undo001").role == "undo"
    assert file_role(base + "ibtmp1").role == "temp_tablespace"
    assert file_role(base + "binlog.000001").role == "binlog"
    assert file_role(base + "mysql-bin.index").role == "binlog"
    assert file_role(base + "mysqld-relay-bin.000002").role == "relay_log"
    r = file_role(base + "sbtest/sbtest1.ibd")
    assert (r.engine, r.role, r.object) == ("mariadb", "table", "sbtest.sbtest1")
    assert file_role(base + "shop/orders#P#p1.ibd").object == "shop.orders"
    assert file_role(base + "aria_log.00000001").role == "aria_log"


def test_postgres_files():
    d = "/srv/pg/data/"
    r = file_role(d + "pg_wal/000000010000000000000002")
    assert (r.engine, r.role) == ("postgres", "wal")
    assert file_role(d + "pg_xact/0000").role == "commit_status"
    r = file_role(d + "base/5/16406", {(5, 16406): "public.pgbench_history"})
    assert (r.role, r.object) == ("relation", "public.pgbench_history")
    assert r.detail == {"dboid": 5, "relfilenode": 16406, "fork": "main", "segment": 0}
    r = file_role(d + "base/5/16397.2")
    assert r.object == "relfilenode 16397 segment 2" and r.detail["segment"] == 2
    assert file_role(d + "base/5/16397_fsm").detail["fork"] == "fsm"
    assert file_role(d + "global/1262").role == "shared_catalog"


def test_other_files():
    assert file_role("/tmp/#9977933 (deleted)").role == "other"
    assert file_role(None).role == "other"
    assert file_role("/home/u/notes.txt").engine is None
