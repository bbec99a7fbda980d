"""What ``lockscope attach`` does the same way bounded and --continuous: the --fs check,
the database login, the traced files' and devices' facts and the finish (analysis,
results.json, report, summary)."""

from __future__ import annotations

import os

from ..errors import UsageError
from ..run.device_facts import device_facts
from ..run.host import filesystem_facts, mount_of
from ..run.point import security_facts
from ..run.session import Session


def check_fs(value: str) -> None:
    """--fs before anything is made (the recorder checks it again, and has the last word):
    all, auto, or filesystem types the recorder has groups for or the kernel knows."""
    if value in ("all", "auto"):
        return
    types = value.split(",")
    if any(t in ("", "all", "auto") for t in types):
        raise UsageError(f"--fs: a comma list of filesystem types, or all, or auto: '{value}'")
    try:
        with open("/proc/filesystems") as f:
            known = {line.split()[-1] for line in f if line.strip()}
    except OSError:
        return
    for t in types:
        if t not in known | {"xfs", "ext4", "ext3", "ext2"}:
            raise UsageError(f"--fs: unknown filesystem type '{t}' (see /proc/filesystems)")



def open_db(args):
    """The database sampler, or (None, warning)."""
    if not (args.mysql or args.postgres):
        return None, None
    from ..run.dbstats import DbUnavailable, MysqlSampler, PostgresSampler

    sampler = MysqlSampler(args.mysql) if args.mysql else PostgresSampler(args.postgres)
    try:
        sampler.open()
    except DbUnavailable as exc:
        return None, str(exc)
    return sampler, None


def _paths(trace: dict | None) -> set[str]:
    paths = set()
    for e in (trace or {}).get("dio") or []:
        if e.get("path"):
            paths.add(e["path"])
    for lk in (trace or {}).get("locks") or []:
        if lk.get("path"):
            paths.add(lk["path"])
    return paths


def file_facts(trace: dict | None) -> list[dict]:
    """Filesystem, mode bits and security xattrs of the traced files (read-only: stat,
    listxattr); they decide which locking rule applies."""
    facts = []
    for path in sorted(_paths(trace)):
        try:
            st = os.stat(path)
            security = security_facts(path, st.st_mode)
        except OSError:
            continue
        facts.append({"path": path, "fstype": mount_of(path).get("fstype"),
                      "size_bytes": st.st_size, **security})
    return facts


def filesystems(trace: dict | None) -> dict:
    out = {}
    for path in sorted(_paths(trace)):
        m = mount_of(path)
        if m and m["mountpoint"] not in out:
            try:
                out[m["mountpoint"]] = filesystem_facts(path)
            except OSError:
                continue
    return out


def fill_window(doc: dict, args, label: str, trace: dict | None, trace_error: str | None,
                ended: str, sampler, db_warning: str | None) -> None:
    """What one recorder window gives the document, for a bounded and a continuous attach:
    the database's figures (or why there are none), the window and the filesystems."""
    if sampler is not None:
        doc["db"] = sampler.result()
    elif db_warning:
        doc["db"] = {"engine": "mariadb" if args.mysql else "postgres", "samples": [],
                     "counters": [], "errors": [db_warning], "warning": db_warning}
    doc["target"]["exited"] = ended == "target exited"
    doc["window"] = {"label": label, "threads": len((trace or {}).get("threads") or []),
                     "trace": trace, "trace_error": trace_error, "files": file_facts(trace),
                     "devices": device_facts(trace)}
    doc["host"]["filesystems"] = filesystems(trace)


def finish(session: Session, args, ended: str) -> int:
    from ..analysis.attach import analyze_attach
    from ..report.attach_summary import print_attach_summary

    session.finish(lambda doc: {"attach": analyze_attach(doc)}, print_attach_summary,
                   render=not args.no_report, partial=ended == "interrupted")
    if ended == "interrupted":
        session.note(f"interrupted; the window so far is in {session.results} (marked partial)")
        return 130
    if ended == "target exited":
        session.note("the target exited; results cover the window until then")
    return 0
