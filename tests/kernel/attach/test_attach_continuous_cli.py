"""lockscope attach --continuous from the outside: bad input is one line and exit 2 with
nothing attached (a stand-in recorder proves none was started); a --pid target that exits
is reported down while /metrics keeps answering; SIGTERM detaches and writes the final
results.json, a scrape during the detach gets a full answer; SIGKILL leaves no recorder."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

from lockscope.run.host import cgroup2_root

from conftest import LOCKSCOPE
from continuous_attach import (
    _a_list_file,
    attach,
    continuous_on_a_sleeper,
    free_port,
    get,
    metric,
    stand_in_recorder,
    start_continuous,
    wait_metric,
)
from patience import patience
from record_common import remove_cgroup
from soak_harness import recorders_of

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize("args, words", [
    (lambda port: ["--continuous"], "--continuous needs --listen"),
    (lambda port: ["--listen", f"127.0.0.1:{port}"], "add --continuous"),
    (lambda port: ["--continuous", "--listen", f"{port}", "--duration", "5"], "drop --duration"),
    (lambda port: ["--continuous", "--listen", "127.0.0.1:notaport"], "--listen"),
    (lambda port: ["--continuous", "--listen", "192.0.2.1:9"], "not one of this host's"),
    (lambda port: ["--continuous", "--listen", f"{port}", "--top-files", "0"], "--top-files"),
    (lambda port: ["--web-config", "/etc/hostname"], "add --continuous"),
    (lambda port: ["--continuous", "--listen", f"{port}", "--web-config", "/nonexistent.yml"],
     "--web-config /nonexistent.yml: cannot read it"),
    (lambda port: ["--continuous", "--listen", f"{port}", "--web-config", _a_list_file()],
     "top level: expected a mapping"),
    (lambda port: ["--continuous", "--listen", f"{port}", "--redact-paths-outside", "data"],
     "give an absolute directory"),
])
def test_bad_options_are_one_line_and_exit_2(tmp_path, args, words):
    env, mark = stand_in_recorder(tmp_path)
    res = attach(env, "--pid", str(os.getpid()), *args(free_port()))
    assert res.returncode == 2, res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and words in lines[0], res.stderr
    assert "Traceback" not in res.stderr and not mark.exists()


def test_a_port_in_use_is_one_line_and_exit_2_with_nothing_attached(tmp_path):
    env, mark = stand_in_recorder(tmp_path)
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        res = attach(env, "--pid", str(os.getpid()), "--continuous", "--listen",
                     f"127.0.0.1:{port}", "--out", str(tmp_path / "out"))
    assert res.returncode == 2, res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and "the port is in use" in lines[0], res.stderr
    assert not mark.exists()


def test_an_unwritable_out_is_one_line_and_exit_2_and_frees_the_port(tmp_path):
    env, mark = stand_in_recorder(tmp_path)
    port = free_port()
    # /proc/1 is a directory nobody may create files in, root included
    res = attach(env, "--pid", str(os.getpid()), "--continuous", "--listen",
                 f"127.0.0.1:{port}", "--out", "/proc/1/lockscope-out")
    assert res.returncode == 2, res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and "--out" in lines[0] and "/proc/1/lockscope-out" in lines[0], \
        res.stderr
    assert not mark.exists()
    with socket.socket() as s:      # the exporter's socket was closed on the way out
        s.bind(("127.0.0.1", port))


def test_help_gives_examples_and_how_label_cardinality_is_bounded():
    res = attach(LOCKSCOPE.env(), "--help")
    assert res.returncode == 0
    text = " ".join(res.stdout.split())
    assert "lockscope attach --continuous --comm mariadbd --listen 127.0.0.1:9433" in text
    assert "Label cardinality is bounded" in text and "--top-files N (default 50)" in text


@pytest.mark.kernel
def test_a_pid_target_that_exits_is_down_and_sigterm_writes_the_final_results(tmp_path):
    # the target writes until told to stop, once an interval was exported: a target
    # that ends while the recorder still loads (a busy host) has nothing recorded
    stop = tmp_path / "stop"
    target = subprocess.Popen(["sh", "-c", f"while [ ! -e {stop} ]; do "
                               f"echo x >> {tmp_path}/f; sleep 0.1; done"])
    port = free_port()
    out = tmp_path / "out"
    proc, err = start_continuous(["--pid", str(target.pid), "--out", str(out)], port)
    try:
        wait_metric(port, "lockscope_target_up", lambda m: m and m[0][1] == 1.0)
        wait_metric(port, "lockscope_recorder_intervals_total", lambda m: m and m[0][1] >= 1)
        stop.touch()
        target.wait(patience(30))
        wait_metric(port, "lockscope_target_up", lambda m: m and m[0][1] == 0.0)
        # the recorder is gone, the exporter still serves, and keeps serving
        time.sleep(2)
        assert proc.poll() is None
        intervals = metric(get(f"http://127.0.0.1:{port}/metrics")[1].decode(),
                           "lockscope_recorder_intervals_total")
        assert intervals and intervals[0][1] >= 1
        proc.send_signal(signal.SIGTERM)
        stdout, rest = proc.communicate(timeout=patience(120))
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if target.poll() is None:
            target.kill()
    assert proc.returncode == 0, "".join(err) + rest
    doc = json.loads((out / "results.json").read_text())
    assert doc["attach"]["continuous"] and doc["attach"]["ended"] == "target exited"
    assert doc["target"]["exited"] and doc["window"]["trace"]["interval"]["duration_ns"] > 0
    assert "Traceback" not in rest


def _gone(pid: int, timeout: float = 15) -> bool:
    deadline = time.monotonic() + patience(timeout)
    st = Path(f"/proc/{pid}/stat")
    while True:
        # gone, or a zombie of the dead parent waiting for init to reap it
        try:
            if st.read_text().rsplit(")", 1)[1].split()[0] == "Z":
                return True
        except OSError:
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.1)


@pytest.mark.kernel
def test_a_scrape_during_the_detach_is_answered_and_sigkill_leaves_no_recorder(tmp_path):
    target = subprocess.Popen(["sleep", "300"])
    try:
        # SIGTERM: scrapes keep being answered while the recorder detaches
        port = free_port()
        proc, err = start_continuous(["--pid", str(target.pid)], port)
        wait_metric(port, "lockscope_recorder_intervals_total", lambda m: m and m[0][1] >= 2)
        recorders = recorders_of(proc.pid)
        assert len(recorders) == 1
        proc.send_signal(signal.SIGTERM)
        answered = 0
        while proc.poll() is None:
            try:
                status, body = get(f"http://127.0.0.1:{port}/metrics", timeout=5)
            except OSError:
                break   # the exporter stopped: the process is ending
            assert status == 200 and b"lockscope_recorder_intervals_total" in body
            if not _gone(recorders[0], timeout=0):
                answered += 1
            time.sleep(0.02)
        proc.wait(patience(60))
        assert proc.returncode == 0, "".join(err) + (proc.stderr.read() if proc.stderr else "")
        assert answered >= 1, "no scrape fell in the detach"
        assert _gone(recorders[0])

        # SIGKILL: the recorder reads EOF on stdin, detaches and exits
        port = free_port()
        proc, err = start_continuous(["--pid", str(target.pid)], port)
        recorders = recorders_of(proc.pid)
        assert len(recorders) == 1
        proc.kill()
        proc.wait()
        assert _gone(recorders[0])
    finally:
        target.kill()
        target.wait()


def _writes_total(port: int) -> float:
    text = get(f"http://127.0.0.1:{port}/metrics")[1].decode()
    return sum(v for labels, v in metric(text, "lockscope_syscalls_total")
               if 'syscall="write"' in labels or 'name="write"' in labels)


def _writer(exe: Path, out: Path, cgroup: Path | None = None) -> subprocess.Popen:
    """`exe` (a copy of dd, so its command name is its own) writing a block at a time."""
    pre = (lambda: (cgroup / "cgroup.procs").write_text(str(os.getpid()))) if cgroup else None
    return subprocess.Popen([str(exe), "if=/dev/zero", f"of={out}", "bs=4k", "count=100000000",
                             "oflag=dsync", "status=none"], preexec_fn=pre)


def _grows(port: int, timeout: float = 30) -> None:
    before = _writes_total(port)
    deadline = time.monotonic() + patience(timeout)
    while time.monotonic() < deadline:
        if _writes_total(port) > before:
            return
        time.sleep(0.5)
    raise AssertionError("the restarted target's writes are not counted")


@pytest.mark.kernel
@pytest.mark.parametrize("how", ["comm", "cgroup"])
def test_a_restarted_target_is_recorded_again(tmp_path, how):
    """--comm: the same recorder follows the name; --cgroup: a cgroup made again has a
    new id, and the recorder is started again on it."""
    exe = tmp_path / f"lsq{how}w"          # a command name of our own
    exe.write_bytes(Path("/bin/dd").read_bytes())
    exe.chmod(0o755)
    root = cgroup2_root()
    if how == "cgroup" and root is None:
        pytest.skip("no cgroup v2 hierarchy mounted")
    cg = (root or Path("/nonexistent")) / f"lockscope-test-{os.getpid()}-{how}"
    if how == "cgroup":
        cg.mkdir()
    port = free_port()
    first = _writer(exe, tmp_path / "a", cg if how == "cgroup" else None)
    second = proc = None
    try:
        time.sleep(0.3)
        who = ["--comm", exe.name] if how == "comm" else ["--cgroup", str(cg)]
        proc, err = start_continuous([*who, "--max-overhead", "50"], port)
        wait_metric(port, "lockscope_target_up", lambda m: m and m[0][1] == 1.0)
        _grows(port)
        first.kill()
        first.wait()
        if how == "cgroup":
            remove_cgroup(cg, timeout_s=10)
        wait_metric(port, "lockscope_target_up", lambda m: m and m[0][1] == 0.0)
        if how == "cgroup":
            cg.mkdir()
        second = _writer(exe, tmp_path / "b", cg if how == "cgroup" else None)
        wait_metric(port, "lockscope_target_up", lambda m: m and m[0][1] == 1.0)
        _grows(port, timeout=40)
        assert proc.poll() is None
        proc.send_signal(signal.SIGTERM)
        _, rest = proc.communicate(timeout=patience(120))
        assert proc.returncode == 0, "".join(err) + rest
        if how == "cgroup":
            assert "made again" in rest, rest
    finally:
        for p in (first, second, proc):
            if p is not None and p.poll() is None:
                p.kill()
                p.wait()
        remove_cgroup(cg)


@pytest.mark.kernel
def test_rotate_replaces_the_recorder_and_the_series_goes_on(tmp_path):
    port = free_port()
    with continuous_on_a_sleeper(["--rotate", "3", "--out", str(tmp_path / "out")],
                                 port) as (proc, err):
        first = recorders_of(proc.pid)
        seen = wait_metric(port, "lockscope_recorder_intervals_total",
                           lambda m: m and m[0][1] >= 2)
        deadline = time.monotonic() + patience(30)
        while time.monotonic() < deadline and first and not _gone(first[0], timeout=0):
            time.sleep(0.2)
        assert first and _gone(first[0], timeout=0), "the first recorder was not replaced"
        before = metric(seen, "lockscope_recorder_intervals_total")[0][1]
        wait_metric(port, "lockscope_recorder_intervals_total",
                    lambda m: m and m[0][1] >= before + 2)
        proc.send_signal(signal.SIGTERM)
        _, rest = proc.communicate(timeout=patience(120))
        assert proc.returncode == 0, "".join(err) + rest
        doc = json.loads((tmp_path / "out" / "results.json").read_text())
        assert doc["attach"]["rotations"] >= 1 and doc["attach"]["rotate_s"] == 3


@pytest.mark.kernel
def test_a_recorder_that_ends_on_its_own_is_started_again(tmp_path):
    port = free_port()
    with continuous_on_a_sleeper([], port) as (proc, err):
        first = recorders_of(proc.pid)
        assert len(first) == 1
        os.kill(first[0], signal.SIGKILL)
        deadline = time.monotonic() + patience(40)
        again: list[int] = []
        while time.monotonic() < deadline and not again:
            again = [p for p in recorders_of(proc.pid) if p != first[0]]
            time.sleep(0.5)
        assert again, "no recorder started again"
        text = wait_metric(port, "lockscope_recorder_intervals_total",
                           lambda m: m and m[0][1] >= 1)
        assert metric(text, "lockscope_target_up")[0][1] == 1.0
        proc.send_signal(signal.SIGTERM)
        _, rest = proc.communicate(timeout=patience(120))
        assert proc.returncode == 0 and "the recorder ended" in rest, "".join(err) + rest
