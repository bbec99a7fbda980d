"""The recorder's cost as the sweep, summary and report show it (pure logic, no root)."""

from __future__ import annotations

from lockscope.analysis.recorder_cost import cost_sentence, recorder_cost, shed_notes


def trace(share: float, user: float, shed=(), detached=False, budget=2.0) -> dict:
    return {"overhead": {"cpu_share": share, "bpf_ns": int(share * 16e9),
                         "user": {"cpu_share": user}, "max_overhead_pct": budget,
                         "shed": [{"what": w, "after_ns": int(t * 1e9)} for w, t in shed],
                         "detached": detached}}


def run(fs: str, threads: int, tr: dict | None) -> dict:
    return {"fs": fs, "threads": threads, "trace": tr, "recorder_cost": recorder_cost(tr)}


def test_recorder_cost_of_a_trace():
    cost = recorder_cost(trace(0.006, 0.002, [("user_stacks", 3.04)]))
    assert cost == {"bpf_cpu_share": 0.006, "bpf_ns": 96000000, "stats_measured": None,
                    "user_cpu_share": 0.002,
                    "max_overhead_pct": 2.0, "shed": [{"what": "user_stacks", "after_s": 3.0}],
                    "detached": False}
    assert recorder_cost(None) is None
    assert recorder_cost({"locks": []}) is None  # a recorder without self-measurement


def test_sentence_gives_the_mean_and_the_worst_point():
    runs = [run("ext4", 1, trace(0.004, 0.001)), run("xfs", 8, trace(0.010, 0.003)),
            run("ext4", 8, None)]
    text = cost_sentence(runs)
    assert text.startswith("the recorder used 0.7% of the CPUs")
    assert "mean of 2 points" in text and "at most 1.0%, xfs 8 threads" in text
    assert text.endswith("its own process 0.2%")
    assert cost_sentence([run("ext4", 1, trace(0.006, 0.002))]) == \
        "the recorder used 0.6% of the CPUs, and its own process 0.2%"
    assert cost_sentence([run("ext4", 1, None)]) is None
    # a small share keeps a digit instead of reading 0.0%
    assert cost_sentence([run("ext4", 1, trace(0.006, 0.0002))]).endswith("process 0.02%")


def test_sampled_statistics_are_said_to_be_partly_estimated():
    sampled = trace(0.006, 0.002)
    sampled["overhead"].update(window_ns=8_000_000_000, measured_ns=2_000_000_000)
    whole = trace(0.004, 0.002)
    whole["overhead"].update(window_ns=8_000_000_000, measured_ns=8_000_000_000)
    assert recorder_cost(sampled)["stats_measured"] == 0.25
    assert recorder_cost(whole)["stats_measured"] == 1.0
    text = cost_sentence([run("ext4", 1, sampled), run("xfs", 1, whole)])
    assert text.endswith("(BPF time measured over 62% of the time, the rest estimated)")
    # measured throughout: nothing to say
    assert "estimated" not in cost_sentence([run("xfs", 1, whole)])


def test_unavailable_statistics_give_no_sentence():
    tr = trace(0.0, 0.0)
    tr["overhead"]["cpu_share"] = None
    assert cost_sentence([run("ext4", 1, tr)]) is None


def test_shed_notes_say_what_and_when():
    runs = [run("ext4", 4, trace(0.03, 0.001, [("user_stacks", 1), ("stacks", 2),
                                               ("syscalls", 3), ("all", 4), ("all", 6.5),
                                               ("all", 9)], detached=True)),
            run("xfs", 4, trace(0.01, 0.001))]
    notes = shed_notes(runs)
    assert len(notes) == 1
    assert notes[0].startswith("ext4 4 threads: the recorder went over its --max-overhead "
                               "budget of 2.0%")
    # the pauses, one step each in the trace, fold into one part
    for part in ("user stacks after 1.0 s", "all stacks after 2.0 s",
                 "the syscalls probes after 3.0 s", "every probe paused 3 times from 4.0 s",
                 "paused when the window ended"):
        assert part in notes[0]
    assert notes[0].count("paused") == 2


def test_what_came_back_is_said_back():
    tr = trace(0.01, 0.001, [("user_stacks", 1), ("syscalls", 2), ("syscalls", 40),
                             ("user_stacks", 70)])
    for step in tr["overhead"]["shed"][2:]:
        step["kind"] = "restore"
    cost = recorder_cost(tr)
    assert cost and cost["shed"][2] == {"what": "syscalls", "after_s": 40.0, "kind": "restore"}
    assert "kind" not in cost["shed"][0]
    notes = shed_notes([run("ext4", 4, tr)])
    assert "the syscalls probes after 2.0 s, the syscalls probes back after 40.0 s, " \
           "user stacks back after 70.0 s" in notes[0], notes


def test_report_shows_the_cost_and_what_was_shed():
    from lockscope.report.model import build_model

    from synthetic_results import make_results

    doc = make_results(stacks=5, repeats=1)
    for i, r in enumerate(doc["runs"]):
        r["trace"]["overhead"] = trace(0.005 + 0.001 * i, 0.001)["overhead"]
    doc["runs"][0]["trace"]["overhead"]["shed"] = [{"what": "user_stacks", "after_ns": 2e9}]
    m = build_model(doc)
    # the figures computed here from the shares set above, not by the sentence's maker
    shares = [0.005 + 0.001 * i for i in range(len(doc["runs"]))]
    worst = doc["runs"][len(shares) - 1]
    expected = f"the recorder used {sum(shares) / len(shares):.1%} of the CPUs"
    if len(shares) > 1:
        expected += (f" (mean of {len(shares)} points; at most {max(shares):.1%}, "
                     f"{worst['fs']} {worst['threads']} threads)")
    assert m.recorder_cost == expected + ", and its own process 0.1%"
    assert any("shed user stacks after 2.0 s" in n for n in m.notes)
