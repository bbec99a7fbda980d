"""Files named as the database knows them: a path → (engine, role, object) table.

MariaDB/MySQL (InnoDB): ``ib_logfile*`` redo log, ``ibdata*`` system tablespace,
``ib_doublewrite`` doublewrite buffer, ``undo*`` undo tablespaces,
``<db>/<table>.ibd`` a table, ``ibtmp*`` temporary tablespace, binary logs
(``*-bin.NNNNNN`` or ``--log-bin`` base names, with their ``.index``), relay logs,
``aria_log*``.
PostgreSQL: ``pg_wal/<segment>`` WAL, ``base/<dboid>/<relfilenode>[.N]`` (and
``_fsm``/``_vm`` forks) relation segments, ``global/<relfilenode>`` shared
catalogs, ``pg_xact/*`` commit status, ``pg_multixact``, ``pg_subtrans``,
``pg_stat_tmp``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# PostgreSQL's (dboid, relfilenode) -> relation name, from the server's catalog
PgNames = dict[tuple[int, int], str]

ROLES = {
    "redo_log": "redo log",
    "system_tablespace": "system tablespace",
    "doublewrite": "doublewrite buffer",
    "undo": "undo tablespace",
    "table": "table",
    "temp_tablespace": "temporary tablespace",
    "binlog": "binary log",
    "relay_log": "relay log",
    "aria_log": "Aria log",
    "wal": "WAL",
    "relation": "relation segment",
    "shared_catalog": "shared catalog",
    "commit_status": "commit status (pg_xact)",
    "multixact": "multixact",
    "subtrans": "subtransactions",
    "stats": "statistics",
    "other": "other file",
}
# Roles whose writes a commit waits for: their fsyncs are the commit path.
LOG_ROLES = ("redo_log", "binlog", "wal", "commit_status")
DATA_ROLES = ("system_tablespace", "doublewrite", "undo", "table", "relation",
              "shared_catalog", "temp_tablespace")

_MARIADB = [
    (re.compile(r"(^|/)ib_logfile\d+$"), "redo_log"),
    (re.compile(r"(^|/)ibdata\d+$"), "system_tablespace"),
    (re.compile(r"(^|/)ib_doublewrite$"), "doublewrite"),
    (re.compile(r"(^|/)undo\d+$"), "undo"),
    (re.compile(r"(^|/)ibtmp\d+$"), "temp_tablespace"),
    (re.compile(r"(^|/)aria_log(\.\d+|_control)$"), "aria_log"),
    (re.compile(r"(^|/)[^/]*relay[^/]*\.(\d{6}|index)$"), "relay_log"),
    (re.compile(r"(^|/)[^/]*bin[^/]*\.(\d{6}|index)$"), "binlog"),
]
_PG = [
    (re.compile(r"(^|/)pg_wal/[0-9A-F]{24}(\.partial)?$"), "wal"),
    (re.compile(r"(^|/)pg_xact/[0-9A-F]+$"), "commit_status"),
    (re.compile(r"(^|/)pg_multixact/"), "multixact"),
    (re.compile(r"(^|/)pg_subtrans/"), "subtrans"),
    (re.compile(r"(^|/)pg_stat(_tmp)?/"), "stats"),
]
_PG_RELATION = re.compile(r"(^|/)base/(\d+)/(\d+)(_fsm|_vm|_init)?(\.(\d+))?$")
_PG_GLOBAL = re.compile(r"(^|/)global/(\d+)(_fsm|_vm)?(\.\d+)?$")
_IBD = re.compile(r"(^|/)([^/]+)/([^/]+?)(#[pP]#[^/]*)?\.ibd$")


@dataclass(frozen=True)
class FileRole:
    """What a path is to its database."""

    engine: str | None      # "mariadb", "postgres" or None
    role: str               # a key of ROLES
    object: str | None      # table / relation name, or WAL segment, when known
    detail: dict[str, int | str]

    @property
    def label(self) -> str:
        what = ROLES[self.role]
        return f"{what} {self.object}" if self.object else what


def file_role(path: str | None, pg_names: PgNames | None = None) -> FileRole:
    """The role of ``path``; ``pg_names`` maps (dboid, relfilenode) → relation name."""
    if not path:
        return FileRole(None, "other", None, {})
    for rx, role in _MARIADB:
        if rx.search(path):
            return FileRole("mariadb", role, path.rsplit("/", 1)[-1], {})
    m = _IBD.search(path)
    if m:
        return FileRole("mariadb", "table", f"{m.group(2)}.{m.group(3)}",
                        {"database": m.group(2), "table": m.group(3)})
    for rx, role in _PG:
        if rx.search(path):
            return FileRole("postgres", role, path.rsplit("/", 1)[-1], {})
    m = _PG_RELATION.search(path)
    if m:
        dboid, node = int(m.group(2)), int(m.group(3))
        fork = (m.group(4) or "").lstrip("_") or "main"
        segment = int(m.group(6) or 0)
        name = (pg_names or {}).get((dboid, node))
        detail = {"dboid": dboid, "relfilenode": node, "fork": fork, "segment": segment}
        obj = name or f"relfilenode {node}"
        if fork != "main":
            obj += f" ({fork})"
        if segment:
            obj += f" segment {segment}"
        return FileRole("postgres", "relation", obj, detail)
    m = _PG_GLOBAL.search(path)
    if m:
        return FileRole("postgres", "shared_catalog", f"relfilenode {m.group(2)}",
                        {"relfilenode": int(m.group(2))})
    return FileRole(None, "other", None, {})
