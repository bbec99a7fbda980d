"""A real database configuration with inode-lock contention, named by attach.

InnoDB page compression (PAGE_COMPRESSED=1) writes each page compressed and
punches a hole over the rest of it (fallocate PUNCH_HOLE); the next write of the
page lands in that hole. On ext4 a direct-I/O write into a hole is not a pure
overwrite, so it takes i_rwsem exclusive (fs/ext4/file.c, ext4_dio_write_checks),
and the page writers of the table's file queue behind it. MariaDB's synchronous
write threads (innodb_use_native_aio=0) write pages of one table concurrently.
"""

from __future__ import annotations

import pytest

import dbservers
from db_attach import _attach_during, require_mariadb

# real servers on loop filesystems under the recorder
pytestmark = pytest.mark.kernel

OPTIONS = ["--innodb-use-native-aio=0", "--innodb-write-io-threads=8",
           "--innodb-buffer-pool-size=32M", "--innodb-io-capacity=20000",
           "--innodb-io-capacity-max=40000", "--innodb-max-dirty-pages-pct=1"]
ROWS = 30000


@pytest.fixture(scope="module")
def compressed_run(tmp_path_factory):
    require_mariadb()
    out = tmp_path_factory.mktemp("attach-compressed") / "out"
    with dbservers.mariadb("ext4", options=OPTIONS) as server:
        dbservers.sysbench_prepare(server, tables=1, table_size=ROWS)
        dbservers.mysql_query(server.socket, "ALTER TABLE sbtest.sbtest1 PAGE_COMPRESSED=1",
                              check=True)
        doc, _ = _attach_during(
            server, ["--pid", str(server.pid)], ["--mysql", server.dsn], out,
            lambda: dbservers.sysbench_start(server, threads=4, seconds=5, tables=1,
                                             table_size=ROWS))
        yield server, doc


def test_attach_names_the_table_file_and_the_rule(compressed_run):
    server, doc = compressed_run
    path = str(server.datadir / "sbtest" / "sbtest1.ibd")
    trace = doc["window"]["trace"]
    # the recorder's own view: waits on this file's i_rwsem, and DIO writes into holes
    lock = next(lk for lk in trace["locks"] if lk.get("path") == path)
    assert lock["kind"] == "i_rwsem" and lock["count"] > 0
    dio = next(e for e in trace["dio"] if e.get("path") == path)
    assert dio["hole"]["count"] > 0
    f = next(f for f in doc["analysis"]["attach"]["files"] if f["path"] == path)
    assert (f["role"], f["object"]) == ("table", "sbtest.sbtest1")
    assert f["inode_lock_waits"] == lock["count"] and "i_rwsem" in f["inode_lock_kinds"]
    holes = next(c for c in f["causes"] if c["reason"] == "holes")
    assert "ext4_dio_write_checks" in holes["kernel_source"]
    inode = next(c for c in doc["analysis"]["attach"]["classes"] if c["class"] == "inode_lock")
    assert inode["ns"] > 0 and inode["how"][0]["detail"] == "i_rwsem"
