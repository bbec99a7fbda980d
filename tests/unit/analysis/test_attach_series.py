"""Per-second series: database counters lined up with the recorder's intervals, and the
wait class that rose when throughput fell."""

from __future__ import annotations

import math

import pytest

from lockscope.analysis.series import build_series, db_rates, falls, throughput_signal

S = 1_000_000_000
FSYNC = ["__schedule+0x618", "schedule+0x23", "jbd2_log_wait_commit+0xc2",
         "ext4_sync_file+0x1f2", "do_fsync+0x3b", "__x64_sys_fdatasync+0x12"]
POLL = ["__schedule+0x618", "do_sys_poll+0x400", "__x64_sys_poll+0xd1"]


def interval(i: int, fsync_threads: float, idle_threads: float = 4.0) -> dict:
    """One recorder interval of 1 s with the given average threads in fsync and poll
    (spread over threads that each fit in the interval)."""
    n = max(1, math.ceil(fsync_threads / 0.8))
    threads, offcpu = [], []
    for k in range(n):
        threads.append({"tid": 1 + k, "oncpu_ns": 0.1 * S, "runqueue_ns": 0,
                        "offcpu_ns": fsync_threads / n * S})
        offcpu.append({"tid": 1 + k, "reason": "journal", "kstack": FSYNC,
                       "total_ns": fsync_threads / n * S})
    m = math.ceil(idle_threads)
    for k in range(m):
        threads.append({"tid": 50 + k, "oncpu_ns": 0, "runqueue_ns": 0,
                        "offcpu_ns": idle_threads / m * S})
        offcpu.append({"tid": 50 + k, "reason": "other", "kstack": POLL,
                       "total_ns": idle_threads / m * S})
    return {"interval": {"start_mono_ns": 100 * S + i * S, "end_mono_ns": 101 * S + i * S,
                         "duration_ns": S},
            "threads": threads, "offcpu": offcpu,
            "syscalls": [{"name": "pwrite64", "count": 100 + i}]}


def test_db_counters_interpolate_onto_intervals():
    # A counter growing 500/s, sampled at uneven times around the intervals.
    times = [99.7, 100.9, 101.6, 103.1, 104.2]
    db = {"engine": "mariadb", "counters": ["Com_commit"],
          "samples": [{"mono_ns": int(t * S), "Com_commit": int(500 * t)} for t in times]}
    for a, b in ((100, 101), (101, 102), (102, 104)):
        assert db_rates(db, a * S, b * S)["Com_commit"] == pytest.approx(500, rel=0.01)
    assert db_rates(db, 200 * S, 201 * S) == {}  # outside the samples: no guess
    assert db_rates({"samples": []}, 0, S) == {}


def test_postgres_rate_excludes_the_samplers_own_transactions():
    db = {"engine": "postgres", "counters": ["xact_commit"], "own_xacts_per_sample": 1,
          "samples": [{"mono_ns": t * S, "xact_commit": 301 * t} for t in range(100, 106)]}
    assert db_rates(db, 101 * S, 104 * S)["xact_commit"] == pytest.approx(300)


def test_series_cover_every_interval_and_line_up():
    trace = {"series": [interval(i, 1.0) for i in range(6)]}
    db = {"engine": "mariadb", "counters": ["Com_commit"],
          "samples": [{"mono_ns": 99 * S + i * S, "Com_commit": 1000 * i} for i in range(9)]}
    rows = build_series(trace, db)
    assert [r["t_s"] for r in rows] == [0, 1, 2, 3, 4, 5]
    assert all(r["db"]["Com_commit"] == pytest.approx(1000) for r in rows)
    assert rows[2]["trace"]["write_calls_s"] == pytest.approx(102)
    c = rows[0]["classes_ns"]
    assert c["durability"] == pytest.approx(S) and c["idle"] == pytest.approx(4 * S)
    signal, values = throughput_signal(rows, "mariadb")
    assert signal.startswith("commits/s") and len(values) == 6


def test_no_series_is_one_interval():
    whole = interval(0, 1.0)
    rows = build_series(whole, None)
    assert len(rows) == 1 and rows[0]["duration_s"] == pytest.approx(1.0)
    assert throughput_signal(rows, None)[0] == "write calls/s (trace)"


def test_the_class_that_rose_when_throughput_fell_is_named():
    fsync = [0.2, 0.3, 0.2, 2.5, 2.8, 0.3, 0.2, 0.25, 2.6, 0.3, 0.2, 0.3]
    rows = build_series({"series": [interval(i, f) for i, f in enumerate(fsync)]}, None)
    tput = [1000 - 300 * f for f in fsync]  # throughput falls when fsync waits rise
    out = falls(rows, tput)
    assert out["intervals"] == 12
    assert out["fallen"] == [3.0, 4.0, 8.0]
    top = out["top"]
    assert top["class"] == "durability" and top["lag_s"] == 0 and top["r"] < -0.99
    assert top["slope_per_thread"] == pytest.approx(-300, rel=0.01)
    assert top["threads_in_falls"] > top["threads_otherwise"]


def test_an_interval_the_probes_never_watched_is_left_out():
    """--duty can detach the probes for a whole interval: its row has no observed time
    (duration_s 0) and no waits, and the falls are found among the others."""
    fsync = [0.2, 0.3, 0.2, 2.5, 2.8, 0.3, 0.2, 0.25, 2.6, 0.3, 0.2, 0.3]
    rows = build_series({"series": [interval(i, f) for i, f in enumerate(fsync)]}, None)
    tput = [1000 - 300 * f for f in fsync]
    blind = {**rows[5], "duration_s": 0.0, "classes_ns": dict.fromkeys(rows[5]["classes_ns"], 0.0)}
    out = falls([*rows[:5], blind, *rows[5:]], [*tput[:5], 0.0, *tput[5:]])
    assert out["intervals"] == 12 and out["fallen"] == [3.0, 4.0, 8.0]
    assert out["top"]["class"] == "durability"
    from lockscope.report.attach_plots import classes_figure

    assert classes_figure({"series": [*rows[:5], blind, *rows[5:]]}) is not None


def test_no_class_is_named_without_a_relation():
    rows = build_series({"series": [interval(i, 1.0) for i in range(8)]}, None)
    out = falls(rows, [1000, 400, 1000, 1000, 400, 1000, 1000, 1000])
    assert out["top"] is None and len(out["fallen"]) == 2
    assert falls(rows[:2], [1, 2])["note"].startswith("2 interval")


def test_a_thread_blocked_across_intervals_is_spread_back_over_them():
    # Thread 9 blocks in poll for the whole 4 s: the recorder counts it where the
    # period ends, in the last (short) interval.
    series = [interval(i, 0.5, idle_threads=0.0) for i in range(4)]
    series[-1]["interval"]["end_mono_ns"] = series[-1]["interval"]["start_mono_ns"] + 0.6 * S
    series[-1]["interval"]["duration_ns"] = 0.6 * S
    series[-1]["threads"].append({"tid": 9, "oncpu_ns": 0, "offcpu_ns": 3.6 * S,
                                  "runqueue_ns": 0})
    series[-1]["offcpu"].append({"tid": 9, "reason": "other", "kstack": POLL,
                                 "total_ns": 3.6 * S})
    rows = build_series({"series": series}, None)
    idle = [r["classes_ns"]["idle"] / 1e9 / r["duration_s"] for r in rows]
    assert idle == pytest.approx([1.0, 1.0, 1.0, 1.0])
    assert sum(r["classes_ns"]["idle"] for r in rows) == pytest.approx(3.6 * S)


def test_a_sliver_at_the_end_is_folded_into_the_interval_before():
    series = [interval(i, 0.5) for i in range(4)]
    last = series[-1]["interval"]
    last["end_mono_ns"] = last["start_mono_ns"] + S // 20
    last["duration_ns"] = S // 20
    rows = build_series({"series": series}, None)
    assert len(rows) == 3 and rows[-1]["duration_s"] == pytest.approx(1.05)
    assert rows[-1]["end_mono_ns"] == last["end_mono_ns"]
    # nothing lost: 4 intervals of 0.5 fsync threads
    assert sum(r["classes_ns"]["durability"] for r in rows) == pytest.approx(4 * 0.5 * S)


def test_mysql_logins_from_a_socket_or_a_url(tmp_path):
    from lockscope.run.dbstats import DbUnavailable, mysql_params

    assert mysql_params("/run/mysqld/mysqld.sock")["unix_socket"] == "/run/mysqld/mysqld.sock"
    p = mysql_params("mysql://ro:s%40cret@db.example:3307/")
    assert (p["user"], p["password"], p["host"], p["port"]) == ("ro", "s@cret",
                                                                "db.example", 3307)
    assert mysql_params("mysql://ro@/?unix_socket=/tmp/s.sock")["unix_socket"] == "/tmp/s.sock"
    with pytest.raises(DbUnavailable):
        mysql_params("not a dsn")


def test_interval_records_take_the_windows_class_of_the_same_wait():
    # The final document has the futex wait's user stack resolved; the interval has not.
    futex = ["__schedule+0x618", "futex_wait+0x67", "__x64_sys_futex+0x112"]
    rec = {"tid": 5, "reason": "other", "kstack": futex, "total_ns": 0.5 * S}
    part = interval(0, 0.0, idle_threads=0.0)
    part["threads"].append({"tid": 5, "oncpu_ns": 0.4 * S, "offcpu_ns": 0.5 * S,
                            "runqueue_ns": 0})
    part["offcpu"].append({**rec, "ustack": ["[libc.so.6+0x85f16]"]})
    trace = {"series": [part],
             "offcpu": [{**rec, "ustack": ["pthread_cond_wait+0x1e7", "worker+0x10"]}]}

    def user(frames, kframes):
        return ("idle", "pthread_cond_wait") if "pthread_cond_wait+0x1e7" in frames else None

    rows = build_series(trace, None, user_classifier=user)
    assert rows[0]["classes_ns"]["idle"] == pytest.approx(0.5 * S)
    assert rows[0]["classes_ns"]["unclassified"] == 0


def test_no_class_is_named_when_throughput_never_fell():
    fsync = [0.2, 0.3, 0.2, 0.5, 0.6, 0.3]
    rows = build_series({"series": [interval(i, f) for i, f in enumerate(fsync)]}, None)
    out = falls(rows, [1000 - 100 * f for f in fsync])
    assert out["fallen"] == [] and out["top"] is None
    assert out["classes"][0]["class"] == "durability"  # the relation is still reported
