"""Holder activities (analysis/holders.py): pure rules, no root needed."""

from __future__ import annotations

from lockscope.analysis.holders import (
    ACTIVITIES,
    NOT_SEEN,
    activity,
    annotate,
    clause,
    split,
    top_frames,
)

COMMIT = ["jbd2_log_wait_commit+0x10", "ext4_sync_file+0x2a", "iomap_dio_complete+0x5",
          "ext4_file_write_iter+0x1", "vfs_write+0x1"]
DIO_WAIT = ["__iomap_dio_rw+0x3", "iomap_dio_rw+0x1", "ext4_file_write_iter+0x1"]
MBALLOC = ["__schedule+0x1", "schedule+0x1", "io_schedule+0x1", "__wait_on_buffer+0x1",
           "ext4_read_block_bitmap+0x1", "ext4_mb_new_blocks+0x1", "ext4_ext_map_blocks+0x1"]


# Known answers, one or more per activity: a holder's state and kernel stack as the
# recorder reports them (ext4 and XFS paths of fs/jbd2, fs/ext4, fs/xfs, fs/iomap, mm),
# and the activity they mean. A classifier that answers one word for everything, or
# that lost a rule, fails here.
KNOWN = [
    ("blocked", COMMIT, False, "journal"),
    ("blocked", ["wait_transaction_locked+0x1", "start_this_handle+0x1",
                 "jbd2__journal_start+0x1", "ext4_dirty_inode+0x1"], False, "journal"),
    ("blocked", MBALLOC, True, "allocation"),
    ("blocked", ["xfs_bmapi_write+0x1", "xfs_iomap_write_direct+0x1",
                 "xfs_direct_write_iomap_begin+0x1"], False, "allocation"),
    ("blocked", ["__inode_dio_wait+0x1", "inode_dio_wait+0x1", "ext4_dio_write_checks+0x1"],
     False, "dio_drain"),
    ("blocked", ["folio_wait_writeback+0x1", "__filemap_fdatawait_range+0x1",
                 "file_write_and_wait_range+0x1", "ext4_sync_file+0x1"], False, "page_cache"),
    ("blocked", ["balance_dirty_pages+0x1", "balance_dirty_pages_ratelimited_flags+0x1",
                 "generic_perform_write+0x1"], False, "page_cache"),
    ("blocked", DIO_WAIT, False, "block_io"),
    ("blocked", ["io_schedule+0x1", "blk_mq_get_tag+0x1", "submit_bio_noacct+0x1"], False,
     "block_io"),
    ("blocked", ["some_wait+0x1"], True, "block_io"),
    ("on_cpu", ["memcpy_orig+0x1", "xfs_file_write_iter+0x1"], False, "on_cpu"),
    ("on_cpu", ["copy_page_from_iter+0x1", "generic_perform_write+0x1"], False,
     "page_cache"),
    ("runqueue", COMMIT, False, "runqueue"),
    ("blocked", ["futex_wait_queue+0x1", "futex_wait+0x1", "do_futex+0x1"], False, "other"),
    ("blocked", ["pipe_read+0x1", "vfs_read+0x1"], False, "other"),
]


def test_known_answers_cover_every_activity():
    assert {answer for *_, answer in KNOWN} == set(ACTIVITIES)


def test_known_answers():
    wrong = [(state, frames[0], got, answer) for state, frames, iowait, answer in KNOWN
             if (got := activity(state, frames, iowait)) != answer]
    assert not wrong, wrong


def test_no_one_answer_fits_the_known_cases():
    # what an always-the-same classifier would score: at best the largest class
    answers = [answer for *_, answer in KNOWN]
    assert max(answers.count(a) for a in set(answers)) < len(answers) / 2


def test_frames_decide_blocked_holders_journal_first():
    assert activity("blocked", COMMIT) == "journal"
    # a journal wait inside an allocation is a journal wait
    assert activity("blocked", ["start_this_handle"] + MBALLOC) == "journal"
    assert activity("blocked", MBALLOC, iowait=True) == "allocation"
    assert activity("blocked", ["inode_dio_wait+0x1", "ext4_dio_write_checks"]) == "dio_drain"
    assert activity("blocked", ["folio_wait_writeback", "__filemap_fdatawait_range",
                                "file_write_and_wait_range", "ext4_sync_file"]) == "page_cache"
    assert activity("blocked", DIO_WAIT) == "block_io"
    assert activity("blocked", ["some_wait"], iowait=True) == "block_io"
    assert activity("blocked", ["futex_wait_queue"]) == "other"


def test_state_decides_runnable_and_running_holders():
    assert activity("runqueue", COMMIT) == "runqueue"
    assert activity("on_cpu", ["copy_page_from_iter", "generic_perform_write"]) == "page_cache"
    assert activity("on_cpu", ["memcpy_orig", "something"]) == "on_cpu"
    # an owner whose stack was not taken: what it did was not seen, whatever its state
    assert activity("on_cpu", []) == NOT_SEEN
    assert activity("blocked", [], iowait=True) == NOT_SEEN
    assert activity("runqueue", []) == "runqueue"
    # no owner to judge: a reader-owned rwsem names no holder
    assert activity("reader_owned", COMMIT) is None
    assert activity("unknown", []) is None


def test_every_rule_yields_a_vocabulary_word():
    for state in ("on_cpu", "blocked", "runqueue"):
        for frames in (COMMIT, DIO_WAIT, MBALLOC, ["x"]):
            assert activity(state, frames) in ACTIVITIES
        # no stack: a word only where the state alone says it (a runnable owner)
        assert activity(state, []) == ("runqueue" if state == "runqueue" else NOT_SEEN)


def test_top_frames_skip_the_scheduler_and_offsets():
    assert top_frames(MBALLOC) == ["__wait_on_buffer", "ext4_read_block_bitmap",
                                   "ext4_mb_new_blocks"]
    assert top_frames(COMMIT, 2) == ["jbd2_log_wait_commit", "ext4_sync_file"]
    # frames above the one that decided the activity (an interrupt's) are skipped
    assert top_frames(["sched_clock", "irq_work"] + COMMIT, 1, act="journal") == [
        "jbd2_log_wait_commit"]


def sample(state, kstack, wait_ns, count=1, iowait=False):
    return {"addr": "0x1", "state": state, "kstack": kstack, "wait_ns": wait_ns,
            "count": count, "iowait": iowait}


def test_split_weights_by_wait_and_sorts_largest_first():
    samples = [sample("blocked", COMMIT, 800, 8), sample("blocked", DIO_WAIT, 100, 1, True),
               sample("runqueue", DIO_WAIT, 50), sample("reader_owned", [], 50)]
    out = split(samples)
    acts = [h["activity"] for h in out["holders"]]
    assert acts == ["journal", "block_io", "runqueue"]
    assert out["holders"][0]["share"] == 0.8
    assert out["holders"][0]["frames"] == ["jbd2_log_wait_commit", "ext4_sync_file",
                                           "iomap_dio_complete"]
    assert out["reader_owned_share"] == 0.05 and out["unattributed_share"] == 0.05
    assert out["snapshots"] == 11
    assert abs(sum(h["share"] for h in out["holders"]) + out["unattributed_share"] - 1) < 1e-9


def test_annotate_adds_clause_evidence_and_remedy():
    verdict = {"summary": "ext4 stops scaling on i_rwsem of /f.", "evidence": ["curve"],
               "remedies": ["use a file per thread"]}
    annotate(verdict, split([sample("blocked", COMMIT, 81), sample("blocked", DIO_WAIT, 19)]),
             "i_rwsem of /f")
    assert verdict["holders"][0]["activity"] == "journal"
    assert verdict["summary"] == (
        "ext4 stops scaling on i_rwsem of /f, while the holder waited for the journal in 81% "
        "of the sampled wait time (jbd2_log_wait_commit ← ext4_sync_file ← iomap_dio_complete).")
    assert "journal 81%, block_io 19%" in verdict["evidence"][-1]
    assert verdict["remedies"][0].startswith("batch durability")


def test_snapshots_without_a_stack_are_not_seen_never_an_activity():
    """An owner on CPU or blocked whose stack was not taken (raw_tp cannot walk an owner
    off CPU; a walk fails or is shed) did something nobody saw: it is counted apart, with
    its snapshots, and its wait time is in no activity's share."""
    samples = [sample("blocked", COMMIT, 300, 3), sample("blocked", [], 500, 50),
               sample("on_cpu", [], 100, 10), sample("runqueue", [], 100, 1)]
    out = split(samples)
    assert {h["activity"] for h in out["holders"]} == {"journal", "runqueue"}
    assert not any(h["activity"] in ("other", "on_cpu") for h in out["holders"])
    assert out["not_seen_share"] == 0.6 and out["not_seen_snapshots"] == 60
    assert abs(sum(h["share"] for h in out["holders"]) + out["unattributed_share"]
               + out["not_seen_share"] - 1) < 1e-9
    verdict = {"summary": "ext4 stops scaling on i_rwsem of /f.", "evidence": [],
               "remedies": []}
    annotate(verdict, out, "i_rwsem of /f")
    assert verdict["holders_sampled"]["not_seen_snapshots"] == 60
    assert "not seen (60 snapshots) in 60% of it" in verdict["summary"]
    assert "not seen (60 snapshots) 60%" in verdict["evidence"][-1]


def test_only_unseen_holders_say_so_and_name_no_activity():
    verdict = {"summary": "s.", "evidence": [], "remedies": []}
    annotate(verdict, split([sample("blocked", [], 10, 4)]), "i_rwsem of /f")
    assert verdict["holders"] == []
    assert verdict["summary"] == "s, while what the holder did was not seen (4 snapshots)."
    assert "not seen (4 snapshots)" in verdict["evidence"][-1]


def test_report_says_not_seen_with_the_count(tmp_path):
    from lockscope.report import render_report

    from synthetic_results import make_results

    doc = make_results(stacks=10, repeats=1)
    v = doc["analysis"]["ext4"]["verdict"]
    v["holders"] = [{"activity": "journal", "share": 0.3, "frames": ["jbd2_log_wait_commit"]}]
    v["holders_sampled"] = {"sampled_ns": 1e9, "snapshots": 100, "reader_owned_share": 0.0,
                            "unattributed_share": 0.0, "not_seen_share": 0.7,
                            "not_seen_snapshots": 70}
    render_report(doc, tmp_path, formats=("md",), source="results.json")
    md = (tmp_path / "report.md").read_text()
    assert ("**the holder:** journal 30% (jbd2_log_wait_commit), not seen (70 snapshots) 70% "
            "of the sampled wait") in md


def test_no_samples_no_clause():
    assert clause([]) is None
    verdict = {"summary": "s.", "evidence": [], "remedies": []}
    annotate(verdict, split([]), "lock")
    assert verdict["holders"] == [] and verdict["summary"] == "s."


def test_a_remedy_already_given_moves_first_instead_of_repeating():
    verdict = {"summary": "s.", "evidence": [],
               "remedies": ["use a file per thread",
                            "batch durability (fdatasync every N writes) instead of O_DSYNC"]}
    annotate(verdict, split([sample("blocked", COMMIT, 10)]), "lock")
    assert verdict["remedies"] == [
        "batch durability (fdatasync every N writes) instead of O_DSYNC", "use a file per thread"]


def test_holder_flame_stacks_are_the_top_locks_activity_holder_and_frames():
    from lockscope.report.flame.folded import records_folded

    trace = {
        "locks": [{"addr": "0x1", "kind": "i_rwsem", "path": "/f", "total_ns": 900},
                  {"addr": "0x2", "kind": "i_rwsem", "path": "/g", "total_ns": 100}],
        "holders": {"samples": [
            dict(sample("blocked", COMMIT[:2], 700), owner_comm="w"),
            dict(sample("reader_owned", [], 50), owner_comm=None),
            {**sample("blocked", DIO_WAIT, 80), "addr": "0x2"},   # not the top lock
        ]},
    }
    assert records_folded(trace, "holders") == {
        "i_rwsem:/f;journal;w;ext4_sync_file_[k];jbd2_log_wait_commit_[k]": 700,
        "i_rwsem:/f;reader_owned": 50,
    }
    assert records_folded({"locks": trace["locks"]}, "holders") == {}


def test_report_shows_the_holder_in_the_verdict(tmp_path):
    from lockscope.report import render_report

    from synthetic_results import make_results

    doc = make_results(stacks=10, repeats=1)
    doc["analysis"]["ext4"]["verdict"]["holders"] = [
        {"activity": "journal", "share": 0.81, "frames": ["jbd2_log_wait_commit",
                                                          "ext4_sync_file"]},
        {"activity": "block_io", "share": 0.15, "frames": []}]
    render_report(doc, tmp_path, formats=("md",), source="results.json")
    md = (tmp_path / "report.md").read_text()
    assert ("**the holder:** journal 81% (jbd2_log_wait_commit ← ext4_sync_file), "
            "block_io 15% of the sampled wait") in md


def test_releasers_start_at_the_unlock_and_weigh_waited_time():
    from lockscope.analysis.holders import releasers

    wake = ["try_to_wake_up+0x1", "wake_up_q+0x2", "rwsem_wake.isra.0+0x3"]
    recs = [{"kstack": wake + ["up_write", "ext4_file_write_iter", "vfs_write", "x"],
             "wait_ns": 90},
            {"kstack": wake + ["up_read", "ext4_file_write_iter", "vfs_write"], "wait_ns": 10},
            {"kstack": [], "wait_ns": 5}]
    assert releasers(recs) == [
        {"frames": ["up_write", "ext4_file_write_iter", "vfs_write"], "share": 0.9},
        {"frames": ["up_read", "ext4_file_write_iter", "vfs_write"], "share": 0.1}]
    verdict = {"summary": "s.", "evidence": [], "remedies": []}
    annotate(verdict, split([sample("blocked", COMMIT, 10)]), "lock", releasers(recs))
    assert verdict["releasers"][0]["frames"][0] == "up_write"
    assert "released at up_write ← ext4_file_write_iter ← vfs_write in 90%" in \
        verdict["evidence"][-1]
