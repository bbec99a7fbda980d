"""Ready-made MariaDB and PostgreSQL datadirs in a release's root filesystem, made on the
build machine at native speed (in a chroot of that root, by the release's own initdb and
mariadb-install-db) for its guests to copy: made in an emulated guest, they took half a
minute to minutes of each guest's time. The guests find them through
$LOCKSCOPE_DATADIR_TEMPLATES (guest-run), named as the package names them
(lockscope.run.dbserver.templates), so that a template a guest cannot use is never used."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from lockscope.run.dbserver import mariadb, postgres
from lockscope.run.dbserver.templates import keep, template_name

# where a guest finds them (its /var is the root's, under a writable overlay)
GUEST_DIR = "/var/lib/lockscope/datadir-templates"
MARIADBD = "/usr/sbin/mariadbd"
# the environment the guests' servers are made in (guest-run sets the same locale): a
# template's name says its locale, and a guest uses only one made in its own
GUEST_ENV = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL": "C.UTF-8"}


def in_root(root: Path, argv: list[str]) -> None:
    """argv chrooted into root with /proc, /dev and a /tmp of its own, in a mount
    namespace of its own: the mounts end with it, whatever happens."""
    script = ('mount -t proc proc "$1/proc" && mount --rbind /dev "$1/dev" && '
              'mount -t tmpfs tmpfs "$1/tmp" && r=$1 && shift && exec chroot "$r" "$@"')
    res = subprocess.run(["unshare", "--mount", "--propagation", "private", "--",
                          "sh", "-c", script, "sh", str(root), *argv],
                         capture_output=True, text=True,
                         env=GUEST_ENV)
    if res.returncode:
        raise RuntimeError(f"{argv[0]} in {root} exited {res.returncode}: "
                           f"{(res.stderr or res.stdout).strip()[-500:]}")


def _user_ids(root: Path, user: str) -> tuple[int, int]:
    for line in (root / "etc" / "passwd").read_text().splitlines():
        f = line.split(":")
        if f[0] == user:
            return int(f[2]), int(f[3])
    raise RuntimeError(f"{root} has no user {user}")


def _made(root: Path, name: str, make) -> bool:
    """make(a new directory inside the root), kept as the package keeps a template."""
    where = root / GUEST_DIR.lstrip("/")
    if (where / name).is_file():
        return False
    where.mkdir(parents=True, exist_ok=True)
    partial = Path(tempfile.mkdtemp(prefix=f".{name}.", dir=where))
    try:
        make(partial)
        keep(partial, where / name)
    finally:
        shutil.rmtree(partial, ignore_errors=True)
    return True


def make_templates(root: Path) -> list[str]:
    """The templates of root's servers (those it has), made when missing; their names."""
    made = []
    pg = postgres.pg_bin(root)
    if pg is not None:
        name = template_name("postgres", str(pg / "postgres"), postgres.INITDB_ARGS, root,
                             GUEST_ENV)

        def initdb(partial: Path) -> None:
            os.chown(partial, *_user_ids(root, postgres.USER))
            in_root(root, ["runuser", "-u", postgres.USER, "--", str(pg / "initdb"), "-D",
                           "/" + str(partial.relative_to(root)), *postgres.INITDB_ARGS])
        if _made(root, name, initdb):
            made.append(name)
    if (root / MARIADBD.lstrip("/")).exists():
        name = template_name("mariadb", MARIADBD, mariadb.INSTALL_DB_ARGS, root, GUEST_ENV)

        def install_db(partial: Path) -> None:
            partial.rmdir()     # mariadb-install-db makes it, for its user
            in_root(root, ["mariadb-install-db", *mariadb.INSTALL_DB_ARGS,
                           f"--datadir=/{partial.relative_to(root)}"])
        if _made(root, name, install_db):
            made.append(name)
    return made
