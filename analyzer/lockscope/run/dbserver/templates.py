"""Ready-made datadirs: a server's new datadir copied from one that the same server binary
made earlier with the same arguments, instead of made again. initdb and
mariadb-install-db take a second or two here and half a minute or more on an emulated
machine, whose time a fleet's test runs and the kernel matrix count.

Opt-in: $LOCKSCOPE_DATADIR_TEMPLATES names the directory of templates. Without it every
datadir is made anew, as before. With it, a datadir made anew is kept there (when the
directory can be written) before its server first starts, so that it is pristine.
A template is named after the server binary's path, size and modification time, the
arguments it was made with and the locale settings of the environment (PostgreSQL's
encoding follows the locale): an upgraded server, or another locale, makes a new one.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path

ENV = "LOCKSCOPE_DATADIR_TEMPLATES"


def templates_dir() -> Path | None:
    value = os.environ.get(ENV, "")
    return Path(value) if value else None


# what sets the locale a datadir is made in: initdb takes its locale and so its databases'
# encoding from them (C: SQL_ASCII), and LC_ALL overrides the rest
LOCALE_VARS = ("LC_ALL", "LANG", "LC_COLLATE", "LC_CTYPE", "LC_MESSAGES", "LC_MONETARY",
               "LC_NUMERIC", "LC_TIME")


def locale_key(env: Mapping[str, str]) -> list[str]:
    """The locale settings of `env` that a datadir made there depends on."""
    if env.get("LC_ALL"):
        return ["LC_ALL=" + env["LC_ALL"]]
    return [f"{v}={env[v]}" for v in LOCALE_VARS[1:] if env.get(v)]


def template_name(kind: str, binary: str, args: list[str], root: Path = Path("/"),
                  env: Mapping[str, str] | None = None) -> str:
    """The template's file name for `binary` (a path as the server's host sees it) seen
    under `root`, made with the locale of `env` (this process's by default): a root
    filesystem prepared for another host names its templates as that host will."""
    st = (root / binary.lstrip("/")).stat()
    key = json.dumps([kind, binary, st.st_size, st.st_mtime_ns, args,
                      locale_key(os.environ if env is None else env)])
    return f"{kind}-{hashlib.sha256(key.encode()).hexdigest()[:16]}.tar"


def pack(datadir: Path, tar: Path) -> None:
    """The datadir as one uncompressed tar: one file to read where reading many is slow
    (a guest's 9p root) and no decompression where the CPU is emulated. Owners by number:
    the user names of the machine that packs it may not be the server's."""
    subprocess.run(["tar", "-C", str(datadir), "--numeric-owner", "--sparse", "-cf",
                    str(tar), "."], check=True, capture_output=True)


def unpack(tar: Path, datadir: Path) -> None:
    """Into `datadir` (made when absent), owners and modes as packed, its own included."""
    datadir.mkdir(parents=True, exist_ok=True)
    subprocess.run(["tar", "-C", str(datadir), "--numeric-owner", "--same-permissions",
                    "--same-owner", "-xf", str(tar)], check=True, capture_output=True)


def make_datadir(kind: str, binary: str, args: list[str], datadir: Path,
                 make: Callable[[], object]) -> Path | None:
    """Fill `datadir` (absent or empty): from its template when there is one, returning
    the template's path; else by `make()`, then kept as the template when templates are
    on (returns None). A template that cannot be kept is only a slower next start."""
    where = templates_dir()
    template = where / template_name(kind, binary, args) if where else None
    if template is not None and template.is_file():
        unpack(template, datadir)
        return template
    make()
    if template is not None:
        try:
            keep(datadir, template)
        except (OSError, subprocess.CalledProcessError):
            pass    # only a slower next start
    return None


def keep(datadir: Path, template: Path) -> None:
    """`datadir` packed as `template`: beside it, then renamed, so that a reader never
    sees half a template; nothing is left of a failed one."""
    template.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=f".{template.name}.", dir=template.parent)
    os.close(fd)
    partial = Path(name)
    try:
        pack(datadir, partial)
        partial.rename(template)
    finally:
        partial.unlink(missing_ok=True)
