"""This kernel's figures from a sweep's results.json: throughput per point, lockscope's
verdict per filesystem, and the facts behind it (DIO write states, journal share)."""

from __future__ import annotations

from .definition import Key


def points(doc: dict, case: str) -> dict[Key, float]:
    """MiB/s per (case, fs, threads), the mean over repeats (the analysis's)."""
    out: dict[Key, float] = {}
    for fs, a in _per_fs(doc):
        for p in a.get("points") or []:
            out[(case, fs, int(p["threads"]))] = float(p["mib_s"])
    return out


# what the document shows of a verdict (the rest stays in the sweep's results.json)
VERDICT_KEYS = ("kind", "confidence", "reasons", "summary", "lock", "mode", "path")


def verdicts(doc: dict, case: str) -> dict[tuple[str, str], dict]:
    return {(case, fs): {k: v for k, v in (a.get("verdict") or {}).items()
                         if k in VERDICT_KEYS}
            for fs, a in _per_fs(doc)}


def facts(doc: dict, case: str) -> dict[tuple[str, str], dict]:
    """Per (case, fs): what the trace says the writes found and what the journal cost."""
    out = {}
    for fs, a in _per_fs(doc):
        f: dict = {}
        dio = _dio_states(a.get("dio_classes") or [])
        if dio:
            f["dio_states"] = dio
        pts = a.get("points") or []
        if pts:
            share = (pts[-1].get("time_share") or {}).get("inode_lock")
            if share is not None:
                f["inode_lock_share"] = share
                f["inode_lock_threads"] = pts[-1]["threads"]
        journal = _journal(doc, fs)
        if journal is not None:
            f["journal"] = journal
        out[(case, fs)] = f
    return out


# the ext family journals (if at all: ext2 does not) through jbd2; XFS logs on its own
JBD2_FS = ("ext2", "ext3", "ext4")


def _per_fs(doc: dict):
    for fs, a in (doc.get("analysis") or {}).items():
        if fs != "comparison" and isinstance(a, dict) and a.get("points") is not None:
            yield fs, a


def _dio_states(classes: list[dict]) -> dict[str, float]:
    """Share of DIO writes that found holes, unwritten or mapped blocks."""
    writes = sum(c.get("writes", 0) for c in classes)
    if not writes:
        return {}
    return {state: sum(c.get(state, 0) for c in classes) / writes
            for state in ("hole", "unwritten", "mapped")}


def _journal(doc: dict, fs: str) -> dict | None:
    """jbd2's blocks logged for this filesystem's device over the data written there, in
    the runs of ``fs``: the journal's share of the bytes the filesystem wrote."""
    facts = ((doc.get("host") or {}).get("filesystems") or {}).get(fs, {})
    if facts.get("fstype", fs) not in JBD2_FS:
        return None
    block = facts.get("block_size")
    logged = data = commits = 0
    seen = False
    journal_time = []
    for run in doc.get("runs") or []:
        if run.get("fs") != fs or not run.get("trace"):
            continue
        devs = {f.get("dev") for f in run.get("files") or []}
        seen = seen or bool(devs)  # a command's runs may not say which files it wrote
        for c in (run["trace"].get("jbd2") or {}).get("commits") or []:
            if c.get("dev") in devs:
                logged += int(c.get("blocks_logged", 0))
                commits += int(c.get("count", 0))
        for job in (run.get("workload") or {}).get("jobs") or []:
            data += int((job.get("write") or {}).get("io_bytes", 0))
    for a in [(doc.get("analysis") or {}).get(fs) or {}]:
        for p in a.get("points") or []:
            journal_time.append((p.get("time_share") or {}).get("journal", 0.0))
    if not block or not data or not seen:
        return None
    jbytes = logged * block
    return {"commits": commits, "logged_bytes": jbytes, "data_bytes": data,
            "share": jbytes / (jbytes + data),
            "wait_share": max(journal_time) if journal_time else 0.0}
