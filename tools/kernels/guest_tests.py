"""What each matrix guest runs of the kernel tests, and which check each test stands for.

A test whose outcome depends on the kernel or on the release's userland (probe groups,
locking rules, DIO classes, lock modes, io_uring, the release's own database servers and
bpftrace) runs in every guest. A test of what neither changes runs on the host suite
alone where the host can (the continuous scrape, TLS); in one guest where the host
cannot (device-mapper faults) or where a distribution's kernel and install add to it
(least privilege). docs/kernels.md has the table.
"""

from __future__ import annotations

from dataclasses import dataclass

EVERY = "every"
# the guests that run the one-guest tests when they are in the run (else the run's
# first): each such test on a guest of its own, so that the guests end close together;
# the longest (5.10, with its slow PostgreSQL start) takes none
PRIVILEGES_GUEST = "6.12.117+deb12-amd64"
FAULTS_GUEST = "6.1.0-56-amd64"

RECORDER = "tests/kernel/recorder"
ATTACH = "tests/kernel/attach"


@dataclass(frozen=True)
class GuestTest:
    node: str                   # pytest node id, as guest-run passes it
    checks: dict[str, str]      # junit testcase name -> the check the matrix reports
    on: str = EVERY             # EVERY, or the release of the one guest that runs it


def _rule(case: str) -> tuple[str, str]:
    return (f"test_the_running_kernel_follows_its_rule[{case}]",
            "rules_" + case.replace("-", "_"))


PLAN: tuple[GuestTest, ...] = (
    GuestTest(f"{RECORDER}/test_record_scenarios.py::"
              "test_ext4_sparse_direct_writes_wait_on_i_rwsem",
              {"test_ext4_sparse_direct_writes_wait_on_i_rwsem": "i_rwsem_ext4_sparse"}),
    GuestTest(f"{RECORDER}/test_record_scenarios.py::"
              "test_xfs_sparse_direct_writes_do_not_wait_on_i_rwsem",
              {"test_xfs_sparse_direct_writes_do_not_wait_on_i_rwsem": "i_rwsem_xfs_none"}),
    GuestTest(f"{RECORDER}/test_record_dio_states.py::"
              "test_write_classes_match_fiemap[unaligned-fallocated-ext4]",
              {"test_write_classes_match_fiemap[unaligned-fallocated-ext4]":
               "dio_classes_unaligned_prealloc"}),
    GuestTest(f"{RECORDER}/test_record_switching.py",
              {"test_calls_that_leave_the_cpu_stay_with_their_file[on-0]":
               "syscalls_handed_off_at_switch",
               "test_calls_that_leave_the_cpu_stay_with_their_file[off-0]":
               "syscalls_without_sched"}),
    # the running kernel's own locking rules, and the lock mode the recorder measures
    GuestTest(f"{RECORDER}/test_record_dio_lock_mode.py::"
              "test_the_running_kernel_follows_its_rule",
              dict(_rule(c) for c in ("ext4-fallocated-aligned", "ext4-written-unaligned",
                                      "xfs-written-unaligned", "ext4-sparse-aligned",
                                      "xfs-append-aligned"))),
    GuestTest(f"{RECORDER}/test_record_dio_lock_mode.py::"
              "test_hole_writes_measure_exclusive_as_their_lock_waits_say",
              {"test_hole_writes_measure_exclusive_as_their_lock_waits_say":
               "lock_mode_holes_exclusive"}),
    GuestTest(f"{RECORDER}/test_record_dio_lock_mode.py::"
              "test_aligned_overwrites_measure_shared_and_no_writer_waits",
              {"test_aligned_overwrites_measure_shared_and_no_writer_waits":
               "lock_mode_overwrites_shared"}),
    # io_uring's O_DIRECT writes io-wq serializes per file, against the event's own count
    GuestTest(f"{RECORDER}/test_record_iowq_hashed.py",
              {"test_hashed_direct_writes_wait_as_the_event_says": "io_wq_hashed_ext4_sparse"}),
    # the io_uring sweep measures io-wq's hashed waits where the kernel hashes, and its
    # verdict names io-wq as the measured share says
    GuestTest("tests/kernel/sweep/test_sweep_iouring.py",
              {"test_the_recorded_io_wq_hash_decides_the_verdict": "sweep_io_wq_hashed"}),
    # the release's own database servers under their own benchmark clients
    GuestTest(f"{ATTACH}/test_attach_db.py::test_mariadb_redo_log_and_binlog_by_path_and_role",
              {"test_mariadb_redo_log_and_binlog_by_path_and_role": "attach_mariadb_redo_log"}),
    GuestTest(f"{ATTACH}/test_attach_db.py::test_commit_rate_agrees_with_sysbench",
              {"test_commit_rate_agrees_with_sysbench": "attach_mariadb_commits"}),
    GuestTest(f"{ATTACH}/test_attach_db.py::"
              "test_the_server_version_and_the_counters_it_lacks_are_named",
              {"test_the_server_version_and_the_counters_it_lacks_are_named":
               "attach_mariadb_version"}),
    GuestTest(f"{ATTACH}/test_attach_db.py::test_postgres_wal_and_relations_by_path_and_role",
              {"test_postgres_wal_and_relations_by_path_and_role": "attach_postgres_wal"}),
    GuestTest(f"{ATTACH}/test_attach_db.py::test_commit_rate_agrees_with_pgbench",
              {"test_commit_rate_agrees_with_pgbench": "attach_postgres_commits"}),
    # lockscope follow's bpftrace script on the release's own bpftrace (the kprobe variant
    # before lock:contention_*), against the recorder
    GuestTest("tests/kernel/follow/test_follow_kernel.py::"
              "test_the_script_counts_the_waits_the_recorder_counts",
              {"test_the_script_counts_the_waits_the_recorder_counts":
               "follow_counts_as_recorder"}),
    # --- one guest: what neither the kernel nor the release changes, and this host
    # cannot run or runs on its own kernel only ---
    # least privilege: a non-root user with the documented capabilities, each one's loss
    GuestTest(f"{ATTACH}/test_attach_privileges.py",
              {"test_attach_with_the_documented_capabilities": "privileges_documented_set",
               **{f"test_attach_without_one_capability_names_it[CAP_{c}]":
                  f"privileges_without_{c.lower()}"
                  for c in ("BPF", "PERFMON", "SYSLOG", "SYS_ADMIN")},
               "test_continuous_attach_as_a_service_user": "privileges_exporter_unprivileged"},
              on=PRIVILEGES_GUEST),
    # the device under the filesystem under test fails (device-mapper: not on the build
    # host), a filesystem module refused
    GuestTest("tests/kernel/faults/test_faults_dm.py",
              {**{f"test_dm_error[{w}]": f"fault_dm_error_{w}"
                  for w in ("before", "during", "after")},
               "test_dm_flakey_error_writes_during_a_point": "fault_dm_flakey_error_writes",
               "test_dm_flakey_drop_writes_is_not_seen": "fault_dm_flakey_drop_writes",
               "test_a_filesystem_module_that_cannot_load": "fault_fs_module_refused"},
              on=FAULTS_GUEST),
)

# every junit testcase name the guests run -> its check
TESTS: dict[str, str] = {case: check for t in PLAN for case, check in t.checks.items()}


ONE_GUESTS = tuple(dict.fromkeys(t.on for t in PLAN if t.on != EVERY))


def runs_on(t: GuestTest, releases: list[str]) -> list[str]:
    """The guests of a run of `releases` that run `t`."""
    if t.on == EVERY:
        return list(releases)
    return [t.on if t.on in releases else releases[0]]


def one_guest_checks(release: str, releases: list[str]) -> list[str]:
    """The one-guest checks the guest of `release` takes in a run of `releases`."""
    return [c for t in PLAN if t.on != EVERY and runs_on(t, releases) == [release]
            for c in t.checks.values()]


def planned(release: str, releases: list[str], only: set[str] | None = None) -> list[GuestTest]:
    """The tests the guest of `release` runs, in a run of `releases`; with `only`, just
    those holding one of these checks."""
    return [t for t in PLAN if release in runs_on(t, releases)
            and (only is None or only & set(t.checks.values()))]
