"""``lockscope follow``'s bpftrace script against the recorder, over the same real run.

lockscope-load's buffered writers on one file of a loop-mounted ext4 queue on its
i_rwsem (fs/ext4/file.c, ext4_buffered_write_iter takes it exclusive). A first run under
``lockscope attach`` gives the finding; ``lockscope follow`` writes the script from it.
A second run on the same file is then watched by that script (given the file's dev and
ino as its parameters, as on another host) and by lockscope-record at once: both must
count the same waits on that lock, in number and in total time.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest

from lockscope.run.tracefs import TRACEFS, ensure_tracefs

from conftest import _loopfs, require_tool
from lockscope_cli import LOCKSCOPE, attach_with_open_window
from patience import patience
from record_common import file_locks, recorder, start_engine

pytestmark = pytest.mark.kernel

ROOT = Path(__file__).resolve().parents[3]
LOAD = ROOT / "build" / "bin" / "lockscope-load"
WRITERS = 4
LOAD_S = 1.5
# Both sides time the same contention_begin/end pairs; what may differ is when each
# reads the clock in its program (a few µs per wait) and waits neither sees whole.
TOLERANCE = 0.05
# Fewer waits than this would make a 5% agreement say little.
MIN_WAITS = 20


def _probes() -> str:
    """The variant this kernel runs: lock:contention_* where it has them (5.19 on),
    else the rwsem slow paths' kprobes (as the recorder's lock_slowpath)."""
    mounted, why = ensure_tracefs()
    assert mounted, why
    return ("tracepoint" if (Path(TRACEFS) / "events" / "lock" / "contention_begin").is_dir()
            else "kprobe")


def _engine(path: Path, out: Path):
    argv = [str(LOAD), "--name=w", f"--filename={path}", "--direct=0", "--bs=4k",
            "--size=32m", f"--numjobs={WRITERS}", "--thread", f"--runtime={LOAD_S}",
            "--time_based", "--rw=randwrite", "--output-format=json", f"--output={out}",
            "--start_on_stdin=1"]
    return start_engine(argv)


def _go(engine) -> None:
    engine.stdin.write("go\n")
    engine.stdin.flush()


def _close(engine) -> None:
    if engine.poll() is None:
        engine.kill()
    engine.wait()
    for s in (engine.stdin, engine.stdout, engine.stderr):
        s.close()


def _attach_finding(path: Path, out: Path) -> None:
    """A first run of the writers under lockscope attach: results.json in `out`."""
    engine = _engine(path, out.with_suffix(".load.json"))
    try:
        # No shedding (a whole machine's budget): on a loaded host a probe group shed
        # early (the write calls that teach i_rwsem addresses) would leave no finding.
        with attach_with_open_window("--pid", engine.pid, "--duration", LOAD_S + 2.5,
                                     "--max-overhead", "100", "--no-report",
                                     "--out", out) as (proc, err):
            _go(engine)
            assert engine.wait(patience(60)) == 0, engine.stderr.read()[-2000:]
            proc.wait(patience(120))
        assert proc.returncode == 0, "".join(err)
    finally:
        _close(engine)


def _write_script(results: Path, path: Path, script: Path) -> None:
    """lockscope follow for the finding of `path` (listed first when there are several)."""
    listed = LOCKSCOPE.run("follow", results)
    doc = json.loads((results / "results.json").read_text())
    seen = [(lk["kind"], lk["path"], lk["count"]) for lk in doc["window"]["trace"]["locks"]]
    assert listed.returncode in (0, 2) and "no i_rwsem finding" not in listed.stderr, \
        f"{listed.stderr} attach recorded: {seen[:20]}"
    args = []
    if listed.returncode == 2:
        rows = [ln for ln in listed.stdout.splitlines() if f" {path} " in f" {ln} "]
        assert rows, listed.stdout + listed.stderr
        args = ["--lock", rows[0].split()[0]]
    else:
        assert listed.returncode == 0, listed.stderr
    made = LOCKSCOPE.run("follow", results, *args, "--probes", _probes(), "--holders",
                         "-o", script)
    assert made.returncode == 0, made.stderr
    assert str(path) in script.read_text().split("\n// Measures")[0]


def _bpftrace(bpftrace: str, script: Path, path: Path) -> subprocess.Popen:
    """The script on the file's own dev and ino, attached (its BEGIN line read)."""
    st = os.stat(path)
    proc = subprocess.Popen([bpftrace, str(script), str(os.major(st.st_dev)),
                             str(os.minor(st.st_dev)), str(st.st_ino)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    while line and not line.startswith("following i_rwsem"):
        line = proc.stdout.readline()
    if not line:
        proc.wait(patience(10))
        raise AssertionError(f"bpftrace did not attach: {proc.stderr.read()[-2000:]}")
    assert f"ino {st.st_ino} " in line, line
    return proc


def _watch_both(bpftrace: str, script: Path, path: Path, work: Path) -> tuple[dict, str]:
    """The writers run once more, watched by the script (attached first) and by the
    recorder; (the recorder's document, the script's output after SIGINT)."""
    work.mkdir()
    engine = _engine(path, work / "load.json")
    tracer = None
    try:
        tracer = _bpftrace(bpftrace, script, path)
        with recorder(["--pid", str(engine.pid)], work / "r.json") as (_, start, finish):
            start()
            _go(engine)
            assert engine.wait(patience(60)) == 0, engine.stderr.read()[-2000:]
            doc = finish()
        time.sleep(0.2)  # the last contention_end reached both
        out, err = _interrupt(tracer)
    finally:
        _close(engine)
        if tracer is not None and tracer.poll() is None:
            tracer.kill()
            tracer.wait()
    assert tracer.returncode == 0, err[-2000:]
    assert "NOT MEASURED" not in out, out
    return doc, out


def _interrupt(tracer: subprocess.Popen) -> tuple[str, str]:
    """SIGINT, then its output once it exits. bpftrace detaches its probes one by one,
    each after a grace period, which a host busy with other tests can stretch far; and
    once (a 6.1 guest, where it exits in seconds) it had not exited 597 s after the
    signal: the signal is sent again each minute until the limit."""
    deadline = time.monotonic() + patience(300)
    while True:
        tracer.send_signal(signal.SIGINT)
        try:
            return tracer.communicate(timeout=min(patience(60),
                                                  max(1.0, deadline - time.monotonic())))
        except subprocess.TimeoutExpired:
            if time.monotonic() >= deadline:
                raise


def _figure(text: str, name: str) -> int:
    found = re.search(rf"^@{name}: (\d+)$", text, re.M)
    assert found, text[-3000:]
    return int(found.group(1))


@pytest.fixture(scope="module")
def finding(tmp_path_factory):
    """The writers' file on a fresh ext4, and the results of their first run under
    lockscope attach: (the file, the results directory)."""
    assert LOAD.is_file(), f"{LOAD} is missing: run 'make bins'"
    for fs in _loopfs("ext4"):
        path = fs.path / "shared"
        results = tmp_path_factory.mktemp("follow") / "attach"
        _attach_finding(path, results)
        yield path, results


def test_the_attach_report_lists_its_script(finding):
    """The attach report leaves its own copy of the script beside itself and lists it
    (what the kernel does not change: the guests run the test below alone)."""
    path, results = finding
    made = LOCKSCOPE.run("report", results, "--format", "md", "--no-flame")
    assert made.returncode == 0, made.stderr
    assert "## Follow the lock elsewhere" in (results / "report.md").read_text()
    assert any(str(path) in p.read_text().split("\n// Measures")[0]
               for p in results.glob("follow-*.bt"))


def test_the_script_counts_the_waits_the_recorder_counts(finding, tmp_path):
    bpftrace = require_tool("bpftrace")
    path, results = finding
    script = tmp_path / "follow-1.bt"
    _write_script(results, path, script)
    doc, out = _watch_both(bpftrace, script, path, tmp_path / "watched")
    locks = file_locks(doc, path, "i_rwsem")
    assert locks, [(lk["kind"], lk["path"]) for lk in doc["locks"]][:20]
    rec_count = sum(lk["count"] for lk in locks)
    rec_ns = sum(lk["total_ns"] for lk in locks)
    bt_count, bt_ns = _figure(out, "waits"), _figure(out, "wait_ns")
    bt_max = _figure(out, "max_wait_ns")
    # A wait the recorder could not store (its map refused the record: drops, one wait
    # each, on any lock) is missing from its figures, which are then lower bounds, at
    # most that many waits (each no longer than the longest) short.
    lost = doc["drops"]["map_full_by_map"]["locks"]
    print(f"waits: recorder {rec_count} bpftrace {bt_count}; "
          f"total ns: recorder {rec_ns} bpftrace {bt_ns}; recorder lost {lost}")
    assert rec_count >= MIN_WAITS, f"only {rec_count} waits: too little contention to compare"
    assert (1 - TOLERANCE) * rec_count <= bt_count <= (1 + TOLERANCE) * (rec_count + lost), \
        (bt_count, rec_count, lost)
    assert (1 - TOLERANCE) * rec_ns <= bt_ns <= (1 + TOLERANCE) * (rec_ns + lost * bt_max), \
        (bt_ns, rec_ns, lost)
    assert bt_max <= bt_ns
    # --holders: the releasing holders' stacks, through the rwsem's release (up_write or
    # up_read → rwsem_wake, kernel/locking/rwsem.c; on 6.1's Debian build the stack goes
    # from ext4_buffered_write_iter straight to rwsem_wake: up_write leaves no frame)
    holders = out.split("@holder_stacks[", 1)
    assert len(holders) == 2 and re.search(r"\b(up_write|up_read|rwsem_wake)[.\w]*\+",
                                           holders[1]), out[-3000:]


@pytest.mark.parametrize("probes", ["tracepoint", "kprobe"])
def test_each_variant_compiles_with_this_bpftrace(probes, tmp_path):
    """Each variant compiles against this kernel's BTF (--emit-elf: nothing attached),
    also the one this kernel would not attach (kprobes refused, say). The tracepoint
    variant needs the tracepoints' formats to compile at all."""
    bpftrace = require_tool("bpftrace")
    if probes == "tracepoint" and _probes() != "tracepoint":
        pytest.skip("this kernel has no lock:contention_* tracepoints (before 5.19)")
    script = tmp_path / "f.bt"
    made = LOCKSCOPE.run("follow", ROOT / "reports" / "examples" /
                         "default-sweep-results.json", "--probes", probes, "--holders",
                         "-o", script)
    assert made.returncode == 0, made.stderr
    elf = tmp_path / "f.o"
    res = subprocess.run([bpftrace, "--emit-elf", str(elf), str(script)], capture_output=True,
                         text=True, timeout=patience(120))
    assert elf.is_file() and elf.stat().st_size > 0, res.stderr[-2000:]
