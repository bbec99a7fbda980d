"""What the holder of a contended lock was doing while others waited.

The recorder's ``holders.samples`` (docs/recorder-json.md) are snapshots of a
lock's owner taken by a timer while traced threads waited, each weighted by
``wait_ns`` = waiters x the time since the lock's previous snapshot: the
waiters' time it stands for. Each
snapshot gets one activity from a fixed vocabulary, decided by the owner's
state and kernel frames (leaf first):

- ``runqueue``: the owner was runnable, waiting for a CPU (whatever its frames);
- ``journal``: jbd2, waiting for a commit or to start a handle
  (fs/jbd2/transaction.c: start_this_handle; fs/jbd2/journal.c: jbd2_log_wait_commit);
- ``dio_drain``: waiting for in-flight direct I/O (fs/inode.c: inode_dio_wait);
- ``allocation``: ext4 mballoc or extent tree, XFS xfs_bmapi/xfs_alloc;
- ``page_cache``: buffered copy into the page cache, or writeback waits;
- ``block_io``: waiting for the device (in io_schedule, or in block/bio code);
- ``on_cpu``: running, in none of the paths above;
- ``other``: blocked elsewhere.

Snapshots of a reader-owned rwsem (its owner field is only a hint) or of a
lock without a nameable owner get no activity: they are counted apart. So are
snapshots of an owner on a CPU or blocked whose stack was not taken (the walk
failed, was shed under --max-overhead, or the raw_tp variant cannot walk an owner
off CPU): what it did was not seen, and counting it as ``other`` or ``on_cpu``
would invent an activity. A runnable owner waits for a CPU whatever its stack.

``holders.releasers`` join each wait to the thread that woke it: on an rwsem
or mutex hand-off the waker is the releaser, and its stack says where the
lock was let go.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence

from ..schema import (
    HolderSample,
    HolderShare,
    HolderSplit,
    ReleaserRecord,
    ReleaserShare,
    Trace,
    TraceLock,
    Verdict,
)
from .frames import MACHINERY_PREFIXES

ACTIVITIES = ("journal", "block_io", "allocation", "dio_drain", "page_cache", "on_cpu",
              "runqueue", "other")
NOT_SEEN = "not_seen"   # an owner without a stack: no activity (see above)

# Checked in this order: the first activity with a frame matching wins. A
# holder waiting for the journal inside an allocation is waiting for the journal.
FRAME_RULES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("journal", ("jbd2_", "__jbd2_", "start_this_handle", "wait_transaction_locked",
                 "add_transaction_credits", "jbd2_log_wait_commit")),
    ("dio_drain", ("inode_dio_wait", "__inode_dio_wait")),
    ("allocation", ("ext4_mb_", "ext4_ext_map_blocks", "ext4_map_blocks", "ext4_alloc_",
                    "ext4_ext_insert_extent", "ext4_split_", "ext4_ext_handle_unwritten",
                    "ext4_convert_unwritten", "ext4_new_meta_blocks", "ext4_read_block_bitmap",
                    "xfs_bmapi", "xfs_alloc_", "xfs_bmap_", "xfs_iomap_write_direct",
                    "xfs_iomap_write_unwritten")),
    ("page_cache", ("generic_perform_write", "iomap_file_buffered_write", "iomap_write_",
                    "filemap_", "__filemap_", "file_write_and_wait", "folio_wait_writeback",
                    "balance_dirty_pages", "do_writepages", "ext4_writepages",
                    "ext4_da_write_", "ext4_write_begin", "copy_page_from_iter",
                    "write_cache_pages", "xfs_vm_writepages")),
)
BLOCK_IO_FRAMES = ("io_schedule", "blk_", "bio_", "submit_bio", "__submit_bio", "bit_wait_io",
                   "__wait_on_buffer", "__iomap_dio_rw", "iomap_dio_")
# Frames of the scheduler and interrupt entry: not what the holder was doing.
SCHED_FRAMES = ("__schedule", "schedule", "io_schedule", "finish_task_switch",
                "preempt_schedule", "__cond_resched", "bit_wait", "asm_sysvec", "sysvec_",
                "irqentry_", "__sysvec", "[unknown]")

PHRASES = {
    "journal": "waited for the journal",
    "block_io": "waited for the block device",
    "allocation": "allocated blocks or updated the extent tree",
    "dio_drain": "drained in-flight direct I/O (inode_dio_wait)",
    "page_cache": "copied into or wrote back the page cache",
    "on_cpu": "was running on a CPU",
    "runqueue": "waited for a CPU",
    "other": "was blocked elsewhere",
}
REMEDIES = {
    "journal": "batch durability (fdatasync every N writes instead of O_DSYNC on each), or "
               "put the journal on a faster device: the lock is held across the commit",
    "allocation": "preallocate the file (write it once, or fallocate) so that writes do not "
                  "allocate while holding the lock",
    "dio_drain": "align writes to the filesystem block size, so that no write drains "
                 "in-flight direct I/O under the lock",
}
# What marks a remedy already given for the same activity.
REMEDY_KEYS = {"journal": "batch durability", "allocation": "preallocate", "dio_drain": "align"}
TOP_FRAMES = 3


def _name(frame: str) -> str:
    return str(frame).split("+", 1)[0].split(" ", 1)[0]


def _matches(names: Sequence[str], prefixes: tuple[str, ...]) -> bool:
    return any(n.startswith(prefixes) for n in names)


def activity(state: str, frames: list[str], iowait: bool = False) -> str | None:
    """The activity of one holder snapshot, NOT_SEEN when its owner has no stack, or None
    when there is no owner to judge."""
    if state == "runqueue":
        return "runqueue"
    if state not in ("on_cpu", "blocked"):
        return None
    names = [_name(f) for f in frames or []]
    if not names:
        return NOT_SEEN
    for name, prefixes in FRAME_RULES:
        if _matches(names, prefixes):
            return name
    if state == "on_cpu":
        return "on_cpu"
    if iowait or _matches(names, BLOCK_IO_FRAMES):
        return "block_io"
    return "other"


def top_frames(frames: list[str], n: int = TOP_FRAMES, act: str | None = None) -> list[str]:
    """The holder's first n kernel frames past the scheduler, without offsets; for an
    activity its frames decided, from the first frame that decided it (the frames
    above it, e.g. a timer interrupt's, say less)."""
    names = [_name(f) for f in frames or []]
    rule = dict(FRAME_RULES).get(act or "")
    if rule:
        first = next((i for i, name in enumerate(names) if name.startswith(rule)), 0)
        names = names[first:]
    while names and names[0].startswith(SCHED_FRAMES):
        names.pop(0)
    return names[:n]


def sample_activity(sample: HolderSample) -> str | None:
    return activity(sample.get("state") or "", sample.get("kstack") or [],
                    bool(sample.get("iowait")))


def _lock_addrs(trace: Trace, key: str, lock_key: Callable[[TraceLock], str]) -> set[str | None]:
    return {lk.get("addr") for lk in trace.get("locks") or [] if lock_key(lk) == key}


def lock_samples(trace: Trace, key: str, lock_key: Callable[[TraceLock], str]
                 ) -> list[HolderSample]:
    """The holder snapshots of the lock(s) that `lock_key` names `key` in one trace."""
    addrs = _lock_addrs(trace, key, lock_key)
    return [s for s in (trace.get("holders") or {}).get("samples") or []
            if s.get("addr") in addrs]


def lock_releasers(trace: Trace, key: str, lock_key: Callable[[TraceLock], str]
                   ) -> list[ReleaserRecord]:
    """The releaser records of the lock(s) that `lock_key` names `key` in one trace."""
    addrs = _lock_addrs(trace, key, lock_key)
    return [r for r in (trace.get("holders") or {}).get("releasers") or []
            if r.get("addr") in addrs]


# The wake-up itself; the first frame past these is the unlock.
WAKE_FRAMES = ("try_to_wake_up", "wake_up_q", "wake_q_", "rwsem_wake", "wake_up_process",
               "__wake_up", "ttwu_") + MACHINERY_PREFIXES


def releasers(records: list[ReleaserRecord], n: int = 3) -> list[ReleaserShare]:
    """Where the waits were released: [{frames, share}] by waited time, largest first."""
    by: dict[tuple[str, ...], float] = defaultdict(float)
    total = 0.0
    for r in records:
        w = float(r.get("wait_ns") or 0)
        names = [_name(f) for f in r.get("kstack") or []]
        while names and names[0].startswith(WAKE_FRAMES):
            names.pop(0)
        if w > 0 and names:
            by[tuple(names[:TOP_FRAMES])] += w
            total += w
    top = sorted(by.items(), key=lambda kv: -kv[1])[:n]
    return [{"frames": list(f), "share": round(w / total, 4)} for f, w in top]


def split(samples: list[HolderSample]) -> HolderSplit:
    """Waiters' time by holder activity: the holders list plus what was not attributed."""
    by_act: dict[str, float] = defaultdict(float)
    stacks: dict[str, dict[tuple[str, ...], float]] = defaultdict(lambda: defaultdict(float))
    total = unattributed = 0.0
    reader = not_seen = 0.0
    snapshots = not_seen_snapshots = 0
    for s in samples:
        w = float(s.get("wait_ns") or 0)
        if w <= 0:
            continue
        total += w
        snapshots += int(s.get("count") or 0)
        act = sample_activity(s)
        if act == NOT_SEEN:
            not_seen += w
            not_seen_snapshots += int(s.get("count") or 0)
            continue
        if act is None:
            unattributed += w
            if s.get("state") == "reader_owned":
                reader += w
            continue
        by_act[act] += w
        stacks[act][tuple(top_frames(s.get("kstack") or [], act=act))] += w
    holders: list[HolderShare] = []
    for act, w in sorted(by_act.items(), key=lambda kv: -kv[1]):
        frames: tuple[str, ...] = (max(stacks[act].items(), key=lambda kv: kv[1])[0]
                                   if stacks[act] else ())
        holders.append({"activity": act, "share": round(w / total, 4), "frames": list(frames)})
    return {"holders": holders, "sampled_ns": total, "snapshots": snapshots,
            "reader_owned_share": round(reader / total, 4) if total else 0.0,
            "unattributed_share": round(unattributed / total, 4) if total else 0.0,
            "not_seen_share": round(not_seen / total, 4) if total else 0.0,
            "not_seen_snapshots": not_seen_snapshots}


def not_seen_text(snapshots: int) -> str:
    return f"not seen ({snapshots} snapshots)"


def clause(holders: list[HolderShare]) -> str | None:
    """'the holder waited for the journal in 81% of the sampled wait time (a ← b ← c)'."""
    if not holders:
        return None
    top = holders[0]
    frames = f" ({' ← '.join(top['frames'])})" if top["frames"] else ""
    return (f"the holder {PHRASES[top['activity']]} in {top['share']:.0%} of the sampled "
            f"wait time{frames}")


def annotate(verdict: Verdict, split_result: HolderSplit, lock_name: str,
             released: list[ReleaserShare] | None = None) -> None:
    """Adds holders to a lock verdict: the list, one clause in summary and evidence,
    remedies, and where the lock was released (`released`, from releasers())."""
    holders = split_result["holders"]
    verdict["holders"] = holders
    verdict["releasers"] = released or []
    verdict["holders_sampled"] = {
        "sampled_ns": split_result["sampled_ns"], "snapshots": split_result["snapshots"],
        "reader_owned_share": split_result["reader_owned_share"],
        "unattributed_share": split_result["unattributed_share"],
        "not_seen_share": split_result["not_seen_share"],
        "not_seen_snapshots": split_result["not_seen_snapshots"]}
    text = clause(holders)
    unseen = split_result["not_seen_snapshots"]
    summary = verdict.get("summary") or ""
    unseen_part = (f"what the holder did was {not_seen_text(unseen)}"
                   + (f" in {split_result['not_seen_share']:.0%} of it" if text else ""))
    if not text:
        if unseen:
            if summary.endswith("."):
                verdict["summary"] = f"{summary[:-1]}, while {unseen_part}."
            verdict.setdefault("evidence", []).append(
                f"while threads waited on {lock_name}, {unseen_part}: no snapshot had its "
                "stack")
        return
    if summary.endswith("."):
        verdict["summary"] = (f"{summary[:-1]}, while {text}"
                              + (f"; {unseen_part}" if unseen else "") + ".")
    parts = ", ".join(f"{h['activity']} {h['share']:.0%}" for h in holders)
    extra = (f"; reader-owned (no holder named) {split_result['reader_owned_share']:.0%}"
             if split_result["reader_owned_share"] else "")
    if unseen:
        extra += f"; {not_seen_text(unseen)} {split_result['not_seen_share']:.0%}"
    if released:
        extra += (f"; released at {' ← '.join(released[0]['frames'])} in "
                  f"{released[0]['share']:.0%} of the waited time")
    verdict.setdefault("evidence", []).append(
        f"while threads waited on {lock_name}, {text}; the holder's activities over "
        f"{split_result['snapshots']} snapshots: {parts}{extra}")
    remedy = REMEDIES.get(holders[0]["activity"])
    if remedy:
        # A cause rule may already give the same advice: move it first instead.
        remedies = verdict.setdefault("remedies", [])
        key = REMEDY_KEYS[holders[0]["activity"]]
        same = next((r for r in remedies if key in r.lower()), None)
        if same is not None:
            remedies.remove(same)
        remedies.insert(0, same or remedy)
