"""lockscope-record's command line: bad input, privileges, --list-features, the
--start-on-stdin protocol, and that SIGKILL leaves nothing attached."""

from __future__ import annotations

import json
import os
import shutil
import signal
import stat
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import pytest

from lockscope.report.notes import missing_notes

from conftest import require_tool
from patience import patience
from record_common import FINISH_TIMEOUT_S, record_binary, recorder


def run(*args: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([record_binary(), *args], capture_output=True, text=True,
                          timeout=patience(60), **kw)


def one_line_error(res: subprocess.CompletedProcess, code: int, *words: str) -> None:
    assert res.returncode == code, res
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1, res.stderr
    for w in words:
        assert w in lines[0], lines[0]


def _free_pid() -> int:
    pid = 4_000_000
    while os.path.exists(f"/proc/{pid}"):
        pid += 1
    return pid


@pytest.mark.parametrize("args,words", [
    (["--pid", str(_free_pid())], ["no such process"]),
    (["--pid", "abc"], ["--pid"]),
    (["--cgroup", "/nonexistent/cgroup"], ["--cgroup"]),
    (["--cgroup", "/tmp"], ["not a cgroup v2 directory"]),
    (["--duration", "0"], ["--duration"]),
    (["--duration", "-3"], ["--duration"]),
    (["--duration", "soon"], ["--duration"]),
    (["--max-locks", "0"], ["--max-locks"]),
    (["--holder-period-ms", "0"], ["--holder-period-ms"]),
    (["--disable", "no_such_group"], ["no_such_group"]),
    (["--attach-kinds", "uprobe"], ["uprobe"]),
    (["--fs", "nosuchfs"], ["--fs", "nosuchfs"]),
    (["--fs", "xfs,,ext4"], ["--fs", "empty"]),
    (["--fs", "xfs,all"], ["--fs", "all"]),
    (["--fs", ""], ["--fs"]),
    (["--no-such-option"], ["--no-such-option"]),
    (["extra-argument"], ["extra-argument"]),
])
def test_bad_input_exits_2_with_one_line(args, words):
    one_line_error(run(*args), 2, *words)


def test_help_lists_the_map_size_options():
    res = run("--help")
    assert res.returncode == 0
    for opt in ("--duration", "--pid", "--comm", "--cgroup", "--start-on-stdin", "--max-locks",
                "--max-stacks", "--max-inodes", "--max-threads", "--max-offcpu", "--min-block-us",
                "--list-features"):
        assert opt in res.stdout, opt


def test_help_defaults_lie_within_the_bounds_the_parser_enforces():
    """One table gives each option its default, bounds and help: the default --help
    prints is accepted, and the bounds a rejected value names admit the default."""
    import re

    res = run("--help")
    numeric = re.findall(r"^  --([a-z-]+) (?:N|PCT)\s.*\(default ([0-9.]+)", res.stdout, re.M)
    assert len(numeric) >= 10, res.stdout
    for name, default in numeric:
        # parsing goes on past the option: an extra argument is the first complaint
        one_line_error(run(f"--{name}", default, "extra-argument"), 2, "extra-argument")
        bad = run(f"--{name}", "-1")
        one_line_error(bad, 2, f"--{name}")
        lo, hi = re.search(r"in [\[(]([0-9.e+]+), ([0-9.e+]+)\]", bad.stderr).groups()
        assert float(lo) <= float(default) <= float(hi), (name, bad.stderr)
        one_line_error(run(f"--{name}", repr(float(hi) * 2 + 1)), 2, f"--{name}")


def test_recorder_trims_the_analyzers_machinery_frames():
    """One list of tracing-machinery frames: the recorder is built from the analyzer's
    and says which it trims."""
    from lockscope.analysis.frames import MACHINERY_PREFIXES

    res = run("--list-features")
    assert json.loads(res.stdout)["machinery_frames"] == list(MACHINERY_PREFIXES)


@pytest.mark.kernel
def test_not_root_says_what_is_missing():
    probe = subprocess.run(["true"], preexec_fn=lambda: os.setuid(65534))
    if probe.returncode != 0:
        pytest.skip("cannot run as user nobody here")
    # a copy where nobody can reach it: the checkout may sit in a directory only root enters
    with tempfile.TemporaryDirectory(prefix="lockscope-nonroot-") as home:
        os.chmod(home, 0o755)
        exe = shutil.copy(record_binary(), home)
        res = subprocess.run([exe, "--duration", "1"], capture_output=True, text=True,
                             preexec_fn=lambda: os.setuid(65534), timeout=patience(30))
    assert res.returncode not in (0, 2)
    one_line_error(res, res.returncode, "not root", "lockscope doctor")


def attach_works() -> dict[str, bool]:
    """Which attach kinds a direct load+attach of a test program accepts here
    (lockscope-features): the independent route every expectation below rests on."""
    res = subprocess.run([str(Path(record_binary()).with_name("lockscope-features"))],
                         capture_output=True, text=True, timeout=patience(60))
    return {k: bool(v.get("ok")) for k, v in json.loads(res.stdout)["attach"].items()}


def list_features(*args: str) -> dict[str, dict]:
    res = run("--list-features", *args)
    assert res.returncode == 0, res.stderr
    return {g["name"]: g for g in json.loads(res.stdout)["groups"]}


def _events_exist(g: dict) -> bool:
    return all(os.path.exists("/sys/kernel/tracing/events/" + tp.replace(":", "/"))
               for tp in g["tracepoints"])


@pytest.mark.kernel
def test_list_features_agrees_with_a_direct_attach():
    works = attach_works()
    groups = list_features()
    for g in groups.values():
        assert set(g) >= {"name", "enabled", "attach", "tracepoints", "reason", "lost", "kinds"}
        assert g["enabled"] or (g["attach"] is None and g["reason"] and g["lost"])
        if g["enabled"]:
            assert works[g["attach"]], g     # never a kind the kernel refuses
        if g["extra"]:
            # kprobes and fentry are optional: off exactly when no offered kind works
            # (or the function is missing), and then each kind says why
            if not any(works[k] for k in g["kinds"]):
                assert not g["enabled"]
            if not g["enabled"]:
                assert all(k in g["reason"] for k in g["kinds"]), g
        elif _events_exist(g) and any(works[k] for k in g["kinds"]):
            assert g["enabled"], g
    assert groups["lock"]["enabled"]


@pytest.mark.kernel
def test_attach_kinds_fall_back_group_by_group():
    """Forbidding tp_btf moves each group to its next offered kind that works; forbidding
    raw_tp too leaves classic tracepoints, and groups without one are off saying why."""
    works = attach_works()
    base = list_features()
    order = ("tp_btf", "raw_tp", "tracepoint", "fentry", "kprobe")
    for allowed in (("raw_tp", "tracepoint", "fentry", "kprobe"), ("tracepoint",)):
        groups = list_features("--attach-kinds", ",".join(allowed))
        for name, g in groups.items():
            if not base[name]["enabled"] or base[name]["extra"]:
                continue
            usable = [k for k in order if k in g["kinds"] and k in allowed and works[k]]
            if base[name]["attach"] in allowed:
                assert g["attach"] == base[name]["attach"], g
            elif usable:
                assert g["attach"] == usable[0], g
            else:
                assert not g["enabled"] and "not in --attach-kinds" in g["reason"], g


@pytest.mark.kernel
def test_an_extra_that_is_off_drops_only_itself(tmp_path):
    """With or without the kprobe/fentry extra, every tracepoint group still records;
    an extra that failed (at load or attach) is off with its sentence of what is lost."""
    out = tmp_path / "r.json"
    res = run("--duration", "0.2", "--out", str(out))
    assert res.returncode == 0, res.stderr
    trace = json.loads(out.read_text())
    feats = {f["name"]: f for f in trace["features"]}
    base = list_features("--attach-kinds", "tp_btf,raw_tp,tracepoint")
    notes = missing_notes({"runs": [{"fs": "ext4", "threads": 1, "trace": trace}],
                           "analysis": {"ext4": {}}})
    for name, f in feats.items():
        if f["extra"]:
            assert f["enabled"] or (f["reason"] and f["lost"]), f
            said = [n for n in notes if f"extra '{name}' was off" in n]
            assert bool(said) is (not f["enabled"]), notes
            assert all(f["lost"] in n for n in said)
        else:
            assert f["enabled"] == base[name]["enabled"], (f, base[name])


@pytest.mark.kernel
def test_disabled_group_is_reported_off(tmp_path):
    out = tmp_path / "r.json"
    res = run("--duration", "0.2", "--disable", "block,jbd2", "--out", str(out))
    assert res.returncode == 0, res.stderr
    doc = json.loads(out.read_text())
    feats = {f["name"]: f for f in doc["features"]}
    assert feats["block"]["enabled"] is False and "--disable" in feats["block"]["reason"]
    assert feats["lock"]["enabled"] is True
    assert doc["block"] == []


@pytest.mark.kernel
def test_start_on_stdin_counts_only_between_the_lines(tmp_path):
    out = tmp_path / "r.json"
    with recorder(["--comm", "lockscope-none"], out) as (proc, start, finish):
        time.sleep(0.5)             # not counted
        t0 = time.monotonic()
        start()
        time.sleep(0.6)
        doc = finish()
        elapsed = time.monotonic() - t0
    window = doc["interval"]["duration_ns"] / 1e9
    assert 0.5 < window <= elapsed + 0.1
    assert doc["filter"]["comm"] == "lockscope-none" and doc["threads"] == []


@pytest.mark.kernel
def test_start_on_stdin_stops_at_eof_and_at_duration(tmp_path):
    out = tmp_path / "r.json"
    proc = subprocess.Popen([record_binary(), "--start-on-stdin", "--duration", "0.4", "--out",
                             str(out)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline() == "ready\n"
    proc.stdin.write("go\n")
    proc.stdin.flush()
    assert proc.wait(patience(FINISH_TIMEOUT_S)) == 0        # --duration ended it, stdin still open
    assert 0.35e9 < json.loads(out.read_text())["interval"]["duration_ns"] < 5e9
    proc.stdin.close()

    proc = subprocess.Popen([record_binary(), "--start-on-stdin", "--out", str(out)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline() == "ready\n"
    proc.stdin.write("go\n")
    proc.stdin.flush()
    time.sleep(0.3)
    proc.stdin.close()               # EOF ends it
    assert proc.wait(patience(FINISH_TIMEOUT_S)) == 0
    assert json.loads(out.read_text())["interval"]["duration_ns"] > 0.2e9


@pytest.mark.kernel
def test_sigterm_still_writes_the_document(tmp_path):
    out = tmp_path / "r.json"
    proc = subprocess.Popen([record_binary(), "--out", str(out)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    time.sleep(1.0)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(patience(FINISH_TIMEOUT_S)) == 0
    assert json.loads(out.read_text())["schema"] == "lockscope-record/1"


def _bpf_fds(pid: int) -> tuple[set[int], set[int]]:
    """Link ids and program ids held by pid's file descriptors (from fdinfo)."""
    links, progs = set(), set()
    for fd in os.listdir(f"/proc/{pid}/fdinfo"):
        try:
            text = Path(f"/proc/{pid}/fdinfo/{fd}").read_text()
        except OSError:
            continue
        fields = dict(line.split(":", 1) for line in text.splitlines() if ":" in line)
        if "link_id" in fields:
            links.add(int(fields["link_id"]))
        if "prog_id" in fields:
            progs.add(int(fields["prog_id"]))
    return links, progs


def _bpftool_ids(what: str) -> set[int]:
    res = subprocess.run(["bpftool", "-j", what, "list"], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    return {int(e["id"]) for e in json.loads(res.stdout or "[]")}


@pytest.mark.kernel
def test_sigkill_leaves_no_program_or_link(tmp_path):
    require_tool("bpftool")
    with recorder([], tmp_path / "r.json") as (proc, start, _):
        start()
        time.sleep(0.3)
        links, progs = _bpf_fds(proc.pid)
        assert len(links) >= 10 and progs
        assert links <= _bpftool_ids("link")
        proc.send_signal(signal.SIGKILL)
        proc.wait(patience(10))
    deadline = time.time() + patience(10)      # links and programs are freed asynchronously (RCU)
    while time.time() < deadline:
        if not (links & _bpftool_ids("link")) and not (progs & _bpftool_ids("prog")):
            break
        time.sleep(0.2)
    assert not links & _bpftool_ids("link")
    assert not progs & _bpftool_ids("prog")
    bpffs = Path("/sys/fs/bpf")
    assert not list(bpffs.rglob("*lockscope*")) if bpffs.is_dir() else True


@pytest.mark.kernel
def test_out_to_a_fifo_is_written_in_place_and_no_file_is_clobbered(tmp_path):
    # a FIFO (as /dev/null or any device) is written to, never renamed over
    fifo = tmp_path / "doc.fifo"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    res = run("--duration", "0.2", "--out", str(fifo))
    reader.join(patience(60))
    assert res.returncode == 0, res.stderr
    assert stat.S_ISFIFO(fifo.lstat().st_mode)
    assert json.loads(got[0])["schema"] == "lockscope-record/1"
    # a regular file is replaced whole; a file beside it named like a temporary stays
    out, beside = tmp_path / "r.json", tmp_path / "r.json.tmp"
    beside.write_text("mine")
    res = run("--duration", "0.2", "--out", str(out))
    assert res.returncode == 0, res.stderr
    assert json.loads(out.read_text())["schema"] == "lockscope-record/1"
    assert beside.read_text() == "mine"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["doc.fifo", "r.json", "r.json.tmp"]


@pytest.mark.kernel
@pytest.mark.parametrize("raw", [False, True])
def test_raw_syscalls_count_the_same_calls(tmp_path, raw):
    # 300 direct writes by dd, followed by command name: the same count either way. A
    # copy named for this test: another test's dd may run meanwhile
    out = tmp_path / "r.json"
    dd = tmp_path / f"dd-cli-{int(raw)}-{os.getpid() % 1000}"
    shutil.copy(shutil.which("dd"), dd)
    with recorder(["--comm", dd.name] + (["--raw-syscalls"] if raw else []), out) as (
            _, start, finish):
        start()
        subprocess.run([str(dd), "if=/dev/zero", f"of={tmp_path / 'x'}", "bs=4k", "count=300",
                        "oflag=direct", "status=none"], check=True, timeout=patience(60))
        doc = finish()
    feats = {f["name"]: f for f in doc["features"]}
    per_call = Path("/sys/kernel/tracing/events/syscalls/sys_exit_write").exists()
    assert feats["syscalls"]["enabled"]
    assert (feats["syscalls"]["attach"] == "tracepoint") is (per_call and not raw)
    counts = {s["name"]: s["count"] for s in doc["syscalls"]}
    assert counts.get("write") == 300, counts
