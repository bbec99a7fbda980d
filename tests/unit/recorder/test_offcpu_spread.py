"""The recorder's off-CPU post-processing (bpf/recorder/read/offcpu.c), through
lockscope-offcputest.

Off-CPU stacks are sampled in the kernel; the switch-outs between samples are summed without
stacks and, after the window, spread over the sampled stacks of the same (thread, reason, lock,
system call) in proportion to their sampled time. These tests feed random records and check
the documented properties against sums computed here. No root needed.
"""

from __future__ import annotations

import os
import random
import subprocess
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
DRIVER = Path(os.environ.get("LOCKSCOPE_OFFCPUTEST",
                             ROOT / "build" / "bin" / "lockscope-offcputest"))
NO = -1  # no stack / no system call


@pytest.fixture(scope="module")
def driver() -> str:
    assert DRIVER.is_file(), f"{DRIVER} is missing: run 'make bins'"
    return str(DRIVER)


def run(driver: str, records: list[tuple], pending: list[tuple], max_records: int = 1 << 20,
        before: list[tuple] = ()):
    """``before``: the raw records of the read before (offcpu_raise)."""
    lines = [f"max {max_records}"]
    lines += ["R " + " ".join(map(str, r)) for r in records]
    lines += ["T " + " ".join(map(str, t)) for t in pending]
    lines += ["P " + " ".join(map(str, p)) for p in before]
    out = subprocess.run([driver], input="\n".join(lines) + "\n", capture_output=True,
                         text=True, check=True).stdout.splitlines()
    assert out[-1].startswith("drops ")
    rows = [tuple(int(x) for x in line.split()) for line in out[:-1]]
    return rows, int(out[-1].split()[1])


def group(rec: tuple) -> tuple:
    return rec[:4]  # tid, reason, lock, syscall


def unsampled(rec: tuple) -> bool:
    return rec[4] == NO and rec[5] == NO


def random_case(rng: random.Random):
    """Records with unique keys: a few threads, groups with and without samples."""
    records, keys = [], set()
    for tid in range(1, rng.randint(2, 5)):
        for _ in range(rng.randint(1, 4)):
            g = (tid, rng.choice([0, 1, 2]), rng.choice([0, 0x1000]), rng.choice([NO, 7, 202]))
            for _ in range(rng.randint(0, 3)):  # sampled stacks
                k = g + (rng.randint(0, 50), rng.choice([NO, rng.randint(51, 99)]))
                if k not in keys:
                    keys.add(k)
                    records.append(k + (rng.randint(1, 5), rng.randint(1, 10**7)))
            if rng.random() < 0.7:
                k = g + (NO, NO)
                if k not in keys:
                    keys.add(k)
                    records.append(k + (rng.randint(1, 10**4), rng.randint(1, 10**10)))
    return records


@pytest.mark.parametrize("seed", range(20))
def test_spread_keeps_each_threads_time_and_weights_by_sampled_time(driver, seed):
    rng = random.Random(seed)
    records = random_case(rng)
    rows, drops = run(driver, records, [])
    assert drops == 0
    per_thread_in, per_thread_out = defaultdict(lambda: [0, 0]), defaultdict(lambda: [0, 0])
    for r in records:
        per_thread_in[r[0]][0] += r[6]
        per_thread_in[r[0]][1] += r[7]
    for r in rows:
        per_thread_out[r[0]][0] += r[6]
        per_thread_out[r[0]][1] += r[7]
    assert per_thread_out == per_thread_in  # count and time, exactly

    by_group = defaultdict(list)
    for r in records:
        by_group[group(r)].append(r)
    for g, recs in by_group.items():
        sampled = [r for r in recs if not unsampled(r)]
        rest = [r for r in recs if unsampled(r)]
        out = [r for r in rows if group(r) == g]
        if not sampled:  # never sampled: kept as is, nothing measured at a stack
            assert out == [r + (0, 0) for r in rest]
            continue
        assert all(not unsampled(r) for r in out) and len(out) == len(sampled)
        spread_ns = sum(r[7] for r in rest)
        total_sampled = sum(r[7] for r in sampled)
        for r in out:
            src = next(s for s in sampled if s[:6] == r[:6])
            assert (r[8], r[9]) == (src[6], src[7])  # what was measured stays visible
            share = spread_ns * src[7] / total_sampled
            # proportional, up to rounding (whose rest goes to the largest record)
            assert abs((r[7] - src[7]) - share) <= len(sampled) + 1


def test_pending_sums_merge_into_their_record_or_count_a_drop_past_the_map_size(driver):
    k1 = (1, 0, 0, 7, NO, NO)
    k2 = (1, 0, 0, 202, NO, NO)
    k3 = (2, 0, 0, 7, 5, NO)
    rows, drops = run(driver, [k1 + (3, 300)], [k1 + (2, 200), k2 + (1, 50)])
    assert drops == 0
    assert sorted(rows) == sorted([k1 + (5, 500, 0, 0), k2 + (1, 50, 0, 0)])
    # the map held max records already: a pending sum with a new key is a drop
    rows, drops = run(driver, [k1 + (3, 300)], [k1 + (2, 200), k3 + (1, 50)], max_records=1)
    assert drops == 1 and rows == [k1 + (5, 500, 0, 0)]


def test_every_pending_slot_of_a_thread_is_added(driver):
    """A thread sums one record per place it blocks at (several slots in its entry); each
    slot's sum reaches its own record, more slots than one entry holds included."""
    keys = [(3, 0, 0, syscall, NO, NO) for syscall in range(1, 12)]  # more than 8 slots
    pending = [k + (i + 1, 100 * (i + 1)) for i, k in enumerate(keys)]
    rows, drops = run(driver, [keys[0] + (1, 10)], pending)
    assert drops == 0
    want = [keys[0] + (2, 110, 0, 0)] + [k + (i + 1, 100 * (i + 1), 0, 0)
                                         for i, k in enumerate(keys) if i]
    assert sorted(rows) == sorted(want)


@pytest.mark.parametrize("seed", range(10))
def test_a_read_never_counts_less_than_the_read_before(driver, seed):
    """A pending slot flushed into the map between the two parts of a read is in
    neither: the key's sums seem to fall, and an interval (this read less the one
    before) would count them again once they are back. Each key's sums are raised to
    the read before's, and a key the read lacks is carried."""
    rng = random.Random(seed)
    before = random_case(rng)
    now = []
    for r in before:
        roll = rng.random()
        if roll < 0.2:
            continue                                    # missed whole
        if roll < 0.5:
            now.append(r[:6] + (r[6] - 1 if r[6] > 1 else r[6], r[7] // 2))   # fell
        else:
            now.append(r[:6] + (r[6] + rng.randint(0, 3), r[7] + rng.randint(0, 10**6)))
    now += [r for r in random_case(rng) if r[:6] not in {b[:6] for b in before}]
    want = {r[:6]: r[6:8] for r in now}
    for r in before:
        c = want.get(r[:6], (0, 0))
        want[r[:6]] = (max(c[0], r[6]), max(c[1], r[7]))
    rows, drops = run(driver, now, [], before=before)
    assert drops == 0
    # what the spread keeps exactly: each group's count and time
    got_groups, want_groups = defaultdict(lambda: [0, 0]), defaultdict(lambda: [0, 0])
    for r in rows:
        got_groups[group(r)][0] += r[6]
        got_groups[group(r)][1] += r[7]
    for k, (count, ns) in want.items():
        want_groups[group(k)][0] += count
        want_groups[group(k)][1] += ns
    assert got_groups == want_groups
    # and each sampled record's own sums
    for r in rows:
        if not unsampled(r):
            assert (r[8], r[9]) == want[r[:6]]


def test_a_raised_record_is_the_larger_of_the_two_reads(driver):
    k1, k2, k3 = (1, 0, 0, 7, 4, NO), (1, 0, 0, 7, 5, NO), (2, 1, 0, NO, 6, NO)
    rows, drops = run(driver, [k1 + (5, 500), k2 + (1, 10)], [],
                      before=[k1 + (3, 900), k3 + (2, 20)])
    assert drops == 0
    assert sorted(rows) == sorted([k1 + (5, 900, 5, 900), k2 + (1, 10, 1, 10),
                                   k3 + (2, 20, 2, 20)])
