"""Bounded file labels: the top N files keep their own label, a newcomer that
outweighs the weakest takes its place, and the evicted file's counters continue
under `other`, so every counter stays monotonic and the sum over files is kept. An
inode first counted without its path moves to its path once the recorder names it."""

from __future__ import annotations

from lockscope.export import ExportState
from lockscope.export.file_ranking import OTHER, FileRanking


def interval(n: int, waits: dict[str | None, int]) -> dict:
    """A recorder series object with one exclusive i_rwsem wait total per file (inode
    numbers in the order given; a None path: not resolved yet)."""
    start = n * 1_000_000_000
    return {
        "interval": {"start_mono_ns": start, "end_mono_ns": start + 1_000_000_000,
                     "duration_ns": 1_000_000_000, "observed_ns": 1_000_000_000},
        "threads": [], "offcpu": [], "dio": [], "syscalls": [], "block": [],
        "locks": [{"addr": f"0x{i + 1:x}", "kind": "i_rwsem", "name": None, "dev": "7:0",
                   "ino": i + 1, "path": path, "count": 1, "total_ns": ns,
                   "waits": [{"flags": 4, "flag_names": ["WRITE"], "kstack": ["f+0x1"],
                              "ustack": [], "pid": 1, "comm": "db", "count": 1,
                              "total_ns": ns, "hist_log2_ns": [1]}]}
                  for i, (path, ns) in enumerate(waits.items())],
        "overhead": {"bpf_ns": 0, "user_cpu_ns": 0},
    }


def by_file(state: ExportState) -> dict[str, int]:
    out: dict[str, int] = {}
    for (file, _lock, _mode), (_c, ns) in state.snapshot().lock_waits.items():
        out[file] = out.get(file, 0) + ns
    return out


def test_newcomer_takes_the_weakest_place_and_other_keeps_its_time():
    state = ExportState(top_files=2)
    state.add_interval(interval(0, {"/a": 100, "/b": 50}))
    state.add_interval(interval(1, {"/c": 10}))          # weaker than both: other
    assert by_file(state) == {"/a": 100, "/b": 50, OTHER: 10}
    state.add_interval(interval(2, {"/d": 1000}))        # outweighs /b: /b goes to other
    assert by_file(state) == {"/a": 100, "/d": 1000, OTHER: 60}
    assert state.snapshot().files == ("/a", "/d")
    totals = [sum(by_file(state).values())]
    for n in range(3, 8):
        state.add_interval(interval(n, {"/b": 5, "/e": 7}))
        totals.append(sum(by_file(state).values()))
        assert len(by_file(state)) <= 3
    assert totals == sorted(totals) and totals[-1] == totals[0] + 5 * 12


def test_scores_decay():
    r = FileRanking(top=1, half_life_s=10)
    assert r.update({"/a": 100.0}, 1) == []
    # 30 s later /a counts 12.5: a file with 20 in its last interval takes its place
    assert r.update({"/b": 20.0}, 30) == ["/a"]
    assert r.label("/b") == "/b" and r.label("/a") == OTHER and r.label("") == ""


def test_an_inode_keeps_one_label_once_its_path_is_known():
    state = ExportState(top_files=5)
    state.add_interval(interval(0, {None: 30}))        # the recorder has no path yet
    assert by_file(state) == {"7:0:1": 30}
    state.add_interval(interval(1, {"/db/redo": 20}))  # same inode, path resolved
    state.add_interval(interval(2, {None: 5}))         # an entry without it again
    assert by_file(state) == {"/db/redo": 55}
    assert state.snapshot().files == ("/db/redo",)
