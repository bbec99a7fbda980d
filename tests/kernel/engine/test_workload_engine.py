"""lockscope-load on real ext4 and XFS: fio-compatible JSON, layouts seen through
FIEMAP, data integrity, file protection, the driver hook, signals and space.

Runtimes and sizes are small; no test asserts an absolute time or speed.
"""

from __future__ import annotations

import fcntl
import json
import os
import signal
import struct
import subprocess
import time
from pathlib import Path

import pytest

from lockscope.binaries import find_binary

from conftest import require_tool, shared_dir
from patience import patience

pytestmark = pytest.mark.kernel

MIB = 1 << 20
FS_IOC_FIEMAP = 0xC020660B
FIEMAP_FLAG_SYNC = 0x1
FIEMAP_EXTENT_LAST = 0x1
FIEMAP_EXTENT_UNWRITTEN = 0x800
OWNER_XATTR = "user.lockscope-load"


# Each test writes files of its own: one ext4 and one XFS for the module (making
# filesystems is the slow part), a fresh directory on them per test.
@pytest.fixture
def xfs_fs(filesystems, request):
    yield from shared_dir(filesystems, "xfs", request.node.name)


@pytest.fixture
def ext4_fs(filesystems, request):
    yield from shared_dir(filesystems, "ext4", request.node.name)


@pytest.fixture(params=["ext4", "xfs"])
def any_fs(filesystems, request):
    yield from shared_dir(filesystems, request.param, request.node.name)


@pytest.fixture(scope="module")
def load() -> str:
    return find_binary("lockscope-load")


def run_load(load: str, *args: str, out: Path | None = None, timeout: float = 60):
    """Runs lockscope-load; returns (exit status, parsed JSON report or None, stderr)."""
    argv = [load, *args]
    if out is not None:
        argv += ["--output-format=json", f"--output={out}"]
    res = subprocess.run(argv, capture_output=True, text=True, timeout=patience(timeout))
    doc = json.loads(out.read_text()) if out is not None and out.exists() and \
        out.stat().st_size else None
    return res.returncode, doc, res.stderr


def ok_run(load: str, tmp_path: Path, *args: str) -> dict:
    rc, doc, err = run_load(load, *args, out=tmp_path / "out.json")
    assert rc == 0, err
    return doc


def fiemap(path: Path) -> list[tuple[int, int, int]]:
    """(logical, length, flags) of every extent, after syncing the file."""
    extents: list[tuple[int, int, int]] = []
    start, count = 0, 128
    with open(path, "rb") as f:
        while True:
            req = bytearray(struct.pack("=QQIIII", start, (1 << 64) - 1 - start,
                                        FIEMAP_FLAG_SYNC, 0, count, 0) + bytes(56 * count))
            fcntl.ioctl(f.fileno(), FS_IOC_FIEMAP, req)
            mapped = struct.unpack_from("=I", req, 20)[0]
            for i in range(mapped):
                lo, _phys, length, _r0, _r1, flags = struct.unpack_from("=QQQQQI", req,
                                                                       32 + 56 * i)
                extents.append((lo, length, flags))
            if not mapped or extents[-1][2] & FIEMAP_EXTENT_LAST:
                return extents
            start = extents[-1][0] + extents[-1][1]


def coverage(extents, size: int, unwritten: bool) -> int:
    """Bytes of [0, size) covered by extents that are (un)written as asked."""
    total = 0
    for lo, length, flags in extents:
        if bool(flags & FIEMAP_EXTENT_UNWRITTEN) != unwritten:
            continue
        total += max(0, min(lo + length, size) - lo)
    return total


# --- fio compatibility ------------------------------------------------------------

FIO_JOB = ["--rw=randwrite", "--bs=4k", "--size=4m", "--numjobs=2", "--direct=1",
           "--ioengine=psync", "--output-format=json"]


def fio_json(args: list[str]) -> dict:
    res = subprocess.run(["fio", *args], capture_output=True, text=True, timeout=patience(120))
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout[res.stdout.index("{"):])


def test_json_matches_fio(load, xfs_fs, tmp_path):
    require_tool("fio")
    for group in (["--group_reporting"], []):
        fio = fio_json(["--name=cmp", f"--filename={xfs_fs.path}/fio.dat", *FIO_JOB, *group])
        ours = ok_run(load, tmp_path, "--name=cmp", f"--filename={xfs_fs.path}/load.dat",
                      *FIO_JOB[:-1], *group)
        assert len(ours["jobs"]) == len(fio["jobs"]) == (1 if group else 2)
        for fj, oj in zip(fio["jobs"], ours["jobs"]):
            assert oj["jobname"] == fj["jobname"] == "cmp"
            for key in ("job_runtime", "usr_cpu", "sys_cpu", "read", "write", "sync", "error"):
                assert key in oj, key
            for ddir in ("read", "write"):
                assert set(oj[ddir]) == set(fj[ddir]), ddir
                assert set(oj[ddir]["clat_ns"]) == set(fj[ddir]["clat_ns"]) or \
                    not fj[ddir]["clat_ns"]["N"]
            fw, ow = fj["write"], oj["write"]
            # a fixed-size job: the same I/O count and bytes, exactly
            assert ow["total_ios"] == fw["total_ios"] == (2048 if group else 1024)
            assert ow["io_bytes"] == fw["io_bytes"]
            assert oj["read"]["total_ios"] == fj["read"]["total_ios"] == 0
            assert set(ow["clat_ns"]["percentile"]) == set(fw["clat_ns"]["percentile"])
            assert "99.000000" in ow["clat_ns"]["percentile"]
            # units: bw is KiB/s of bw_bytes, runtime in ms, iops per second
            assert ow["bw"] == ow["bw_bytes"] // 1024
            assert ow["iops"] == pytest.approx(ow["total_ios"] * 1000 / ow["runtime"], rel=0.02)
            # the machine is noisy: only a wide band
            assert fw["bw_bytes"] / 20 < ow["bw_bytes"] < fw["bw_bytes"] * 20
            assert fw["clat_ns"]["mean"] / 20 < ow["clat_ns"]["mean"] < fw["clat_ns"]["mean"] * 20
            lat = ow["clat_ns"]
            assert lat["min"] <= lat["percentile"]["50.000000"] <= lat["max"]
            assert 0 <= oj["usr_cpu"] <= 100 and 0 < oj["usr_cpu"] + oj["sys_cpu"] <= 100


def test_mixed_job_splits_like_fio(load, xfs_fs, tmp_path):
    """randrw: reads and writes add up to size/bs per thread, near rwmixread."""
    doc = ok_run(load, tmp_path, "--name=mix", f"--filename={xfs_fs.path}/m",
                 "--rw=randrw", "--rwmixread=70", "--bs=4k", "--size=4m", "--direct=1")
    job = doc["jobs"][0]
    reads, writes = job["read"]["total_ios"], job["write"]["total_ios"]
    assert reads + writes == 1024
    assert 0.6 < reads / 1024 < 0.8
    # a job that reads lays a new file out written, as fio does
    assert doc["lockscope"]["files"][0]["layout"] == "written"


def test_same_job_file_as_fio(load, xfs_fs, tmp_path):
    """One fio job file, two jobs running together, through both tools."""
    require_tool("fio")
    text = ("[global]\nbs=4k\nsize=2m\ndirect=1\nioengine=psync\n\n"
            "[writer]\nrw=randwrite\nfilename={d}/{t}.w\nnumjobs=2\n\n"
            "[reader]\nrw=read\nfilename={d}/{t}.r\nbs=64k\n")
    for tool in ("fio", "load"):
        (tmp_path / f"{tool}.fio").write_text(text.format(d=xfs_fs.path, t=tool))
    fio = fio_json([str(tmp_path / "fio.fio"), "--output-format=json"])
    ours = ok_run(load, tmp_path, str(tmp_path / "load.fio"))
    assert [j["jobname"] for j in ours["jobs"]] == [j["jobname"] for j in fio["jobs"]] == \
        ["writer", "writer", "reader"]
    for fj, oj in zip(fio["jobs"], ours["jobs"]):
        for ddir in ("read", "write"):
            assert oj[ddir]["total_ios"] == fj[ddir]["total_ios"]
            assert oj[ddir]["io_bytes"] == fj[ddir]["io_bytes"]
        def opts(job):
            return {k: v for k, v in job["job options"].items() if k != "filename"}
        assert opts(oj) == opts(fj)
    assert ours["global options"] == fio["global options"]


def test_text_output_and_status_lines(load, xfs_fs):
    res = subprocess.run([load, "--name=txt", f"--filename={xfs_fs.path}/t.dat",
                          "--rw=randwrite", "--bs=4k", "--size=2m", "--direct=1",
                          "--time_based", "--runtime=1.2", "--status-interval=0.5"],
                         capture_output=True, text=True, timeout=patience(60))
    assert res.returncode == 0, res.stderr
    status = [line for line in res.stdout.splitlines() if line.startswith("[")]
    assert len(status) >= 2 and all("IOPS" in line for line in status)
    assert "txt: (groupid=0, jobs=1)" in res.stdout
    assert "write: IOPS=" in res.stdout and "clat percentiles (nsec)" in res.stdout
    assert "99.00th=[" in res.stdout and "cpu          : usr=" in res.stdout


# --- layouts ----------------------------------------------------------------------

def layout_at_ready(load: str, tmp_path: Path, path: Path, *args: str) -> tuple:
    """Starts a run with --start_on_stdin, FIEMAPs the file while the threads wait,
    then lets the run go. Returns (extents, st_size at ready, report)."""
    out = tmp_path / "layout.json"
    proc = subprocess.Popen([load, "--name=l", f"--filename={path}", "--bs=4k",
                             "--direct=1", "--start_on_stdin=1", "--output-format=json",
                             f"--output={out}", *args],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline() == "ready\n", proc.stderr.read()
        extents, size = fiemap(path), path.stat().st_size
        proc.stdin.close()  # EOF starts the timed phase too
        assert proc.wait(patience(60)) == 0, proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return extents, size, json.loads(out.read_text())


@pytest.mark.parametrize("layout,extra", [
    ("written", []), ("fallocated", []), ("sparse", []),
    ("fallocated", ["--fallocate=keep"]), ("append", []),
])
def test_layouts_seen_by_fiemap(load, any_fs, tmp_path, layout, extra):
    path = any_fs.path / "f.dat"
    size = 4 * MIB
    rw = "write" if layout == "append" else "randwrite"
    extents, st_size, doc = layout_at_ready(load, tmp_path, path, f"--size={size}",
                                            f"--rw={rw}", f"--layout={layout}", *extra)
    assert doc["lockscope"]["files"][0]["layout"] == layout
    if layout == "written":
        assert st_size == size
        assert coverage(extents, size, unwritten=False) == size
        assert coverage(extents, size, unwritten=True) == 0
    elif layout == "fallocated":
        keep = "--fallocate=keep" in extra
        assert st_size == (0 if keep else size)
        assert coverage(extents, size, unwritten=True) == size
        assert doc["lockscope"]["files"][0]["fallocate"] == ("keep" if keep else "native")
    elif layout == "sparse":
        assert st_size == size
        assert coverage(extents, size, False) + coverage(extents, size, True) == 0
    else:  # append: empty, then every write extended it
        assert st_size == 0 and not extents
        assert path.stat().st_size == size
        assert doc["jobs"][0]["write"]["total_ios"] == size // 4096
    assert os.getxattr(path, OWNER_XATTR) == b"1"


@pytest.mark.parametrize("rw,expect", [("randwrite", "fallocated"), ("randread", "written")])
def test_auto_layout_follows_fio(load, xfs_fs, tmp_path, rw, expect):
    path = xfs_fs.path / "auto.dat"
    extents, st_size, doc = layout_at_ready(load, tmp_path, path, "--size=1m", f"--rw={rw}")
    assert doc["lockscope"]["files"][0]["layout"] == expect
    assert coverage(extents, MIB, unwritten=(expect == "fallocated")) == MIB
    # a second run finds the file big enough and leaves it as it is
    doc = ok_run(load, tmp_path, "--name=again", f"--filename={path}", "--size=1m",
                 "--rw=read")
    assert doc["lockscope"]["files"][0]["layout"] == "existing"


def test_append_threads_share_the_end_of_file(load, xfs_fs, tmp_path):
    path = xfs_fs.path / "app.dat"
    doc = ok_run(load, tmp_path, "--name=app", f"--filename={path}", "--rw=write",
                 "--layout=append", "--bs=64k", "--size=1m", "--numjobs=2", "--direct=1",
                 "--verify=pattern", "--group_reporting")
    assert path.stat().st_size == 2 * MIB  # numjobs * size, no block twice
    assert doc["jobs"][0]["write"]["total_ios"] == 32
    assert doc["lockscope"]["verify"]["mismatches"] == 0
    assert doc["lockscope"]["verify"]["ok"] == 32


def test_unaligned_shifts_every_offset(load, any_fs, tmp_path):
    path = any_fs.path / "u.dat"
    doc = ok_run(load, tmp_path, "--name=u", f"--filename={path}", "--rw=write",
                 "--bs=4k", "--size=64k", "--direct=1", "--unaligned=512",
                 "--layout=sparse", "--verify=pattern")
    assert doc["jobs"][0]["write"]["total_ios"] == 16
    v = doc["lockscope"]["verify"]
    assert v["ok"] == 16 and v["mismatches"] == 0
    data = path.read_bytes()
    # block k's header sits at 512 + k * 4096 and names that offset
    for k in (0, 7, 15):
        off = 512 + k * 4096
        magic, hdr_off = struct.unpack_from("=QQ", data, off)
        assert hdr_off == off
    assert data[:512] == bytes(512)


def test_file_per_thread(load, xfs_fs, tmp_path):
    doc = ok_run(load, tmp_path, "--name=per", f"--directory={xfs_fs.path}",
                 "--rw=randwrite", "--bs=4k", "--size=1m", "--nrfiles=2", "--numjobs=2",
                 "--direct=1", "--layout=sparse")
    names = sorted(p.name for p in xfs_fs.path.iterdir())
    assert names == ["per.0.0", "per.0.1", "per.1.0", "per.1.1"]
    for p in xfs_fs.path.iterdir():
        assert p.stat().st_size == MIB // 2
    assert [j["write"]["total_ios"] for j in doc["jobs"]] == [256, 256]
    assert len({t["tid"] for t in doc["lockscope"]["threads"]}) == 2


def written_blocks(path: Path, bs: int = 4096) -> set[int]:
    data = path.read_bytes()
    return {i for i in range(len(data) // bs) if any(data[i * bs:(i + 1) * bs])}


def test_randrepeat_randseed_and_offset(load, xfs_fs, tmp_path):
    """The same seed writes the same blocks; offset moves the region."""
    def quarter(name: str, *seed: str) -> set[int]:
        path = xfs_fs.path / name
        ok_run(load, tmp_path, "--name=q", f"--filename={path}", "--rw=randwrite",
               "--bs=4k", "--size=1m", "--offset=64k", "--io_size=256k", "--layout=sparse",
               "--direct=1", *seed)
        assert path.stat().st_size == MIB + 64 * 1024
        return written_blocks(path)

    a, b = quarter("a"), quarter("b")
    assert a == b and len(a) == 64              # randrepeat=1: repeatable, no block twice
    assert min(a) >= 16                          # nothing below offset=64k
    assert quarter("c", "--randseed=7") != a
    assert quarter("d", "--randseed=7") == quarter("e", "--randseed=7")
    assert quarter("f", "--randrepeat=0") != quarter("g", "--randrepeat=0")


# --- engines and sync -----------------------------------------------------------

@pytest.mark.parametrize("engine", ["psync", "sync", "io_uring", "libaio"])
def test_engines(load, xfs_fs, tmp_path, engine):
    doc = ok_run(load, tmp_path, "--name=e", f"--filename={xfs_fs.path}/e.dat",
                 "--rw=randwrite", "--bs=4k", "--size=2m", "--direct=1",
                 f"--ioengine={engine}", "--iodepth=8", "--verify=pattern")
    job = doc["jobs"][0]
    assert job["write"]["total_ios"] == 512 and job["error"] == 0
    assert doc["lockscope"]["verify"]["ok"] == 512
    if engine in ("io_uring", "libaio"):
        assert job["write"]["slat_ns"]["N"] == 512
    assert doc["lockscope"]["ioengine"] == engine


def test_fsync_every_n_writes(load, xfs_fs, tmp_path):
    doc = ok_run(load, tmp_path, "--name=s", f"--filename={xfs_fs.path}/s.dat",
                 "--rw=randwrite", "--bs=4k", "--size=256k", "--fsync=4")
    assert doc["jobs"][0]["sync"]["total_ios"] == 64 // 4
    doc = ok_run(load, tmp_path, "--name=s", f"--filename={xfs_fs.path}/s.dat",
                 "--rw=randwrite", "--bs=4k", "--size=256k", "--fdatasync=16",
                 "--ioengine=io_uring", "--iodepth=4", "--direct=1", "--sync=dsync")
    assert doc["jobs"][0]["sync"]["total_ios"] == 64 // 16


def test_time_based_and_ramp(load, xfs_fs, tmp_path):
    doc = ok_run(load, tmp_path, "--name=t", f"--filename={xfs_fs.path}/t.dat",
                 "--rw=randread", "--bs=4k", "--size=64k", "--direct=1", "--time_based",
                 "--runtime=1", "--ramp_time=0.5", "--numjobs=2", "--group_reporting")
    tp = doc["lockscope"]["timed_phase"]
    ramp = tp["start_monotonic_ns"] - tp["threads_released_monotonic_ns"]
    assert ramp == 500_000_000
    # the timed phase is the runtime (give or take one I/O), not ramp + runtime
    assert 0.9e9 < tp["duration_ns"] < 1.5e9
    assert 0.9e3 < doc["jobs"][0]["read"]["runtime"] < 1.5e3
    assert doc["jobs"][0]["read"]["total_ios"] > 16  # looped over the 64 KiB region
    series = doc["lockscope"]["series"]["points"]
    assert series and series[0]["t_s"] == pytest.approx(1.0, abs=0.1)
    assert sum(p["read_ios"] for p in series) == doc["jobs"][0]["read"]["total_ios"]
    threads = doc["lockscope"]["threads"]
    assert sum(t["read"]["ios"] for t in threads) == doc["jobs"][0]["read"]["total_ios"]
    assert all(t["tid"] > 0 for t in threads)


# --- data integrity ---------------------------------------------------------------

def test_verify_roundtrip_and_corruption(load, any_fs, tmp_path):
    path = any_fs.path / "v.dat"
    common = [f"--filename={path}", "--bs=4k", "--size=1m", "--direct=1", "--verify=pattern"]
    doc = ok_run(load, tmp_path, "--name=w", "--rw=randwrite", "--layout=written", *common)
    assert doc["lockscope"]["verify"] == {"blocks": 256, "ok": 256, "mismatches": 0,
                                          "unwritten": 0}
    doc = ok_run(load, tmp_path, "--name=v", "--verify_only=1", *common)
    assert doc["lockscope"]["verify"]["ok"] == 256

    # corrupt 4 bytes inside block 37
    with open(path, "r+b") as f:
        f.seek(37 * 4096 + 1000)
        f.write(b"\xde\xad\xbe\xef")
        f.flush()
        os.fsync(f.fileno())
    rc, doc, err = run_load(load, "--name=v", "--verify_only=1", *common,
                            out=tmp_path / "bad.json")
    assert rc == 1
    v = doc["lockscope"]["verify"]
    assert v["mismatches"] == 1 and v["ok"] == 255
    assert v["first_mismatch_offset"] == 37 * 4096
    assert "byte 1000" in v["first_mismatch_reason"]
    assert "37" not in err or str(37 * 4096) in err

    # a read workload with verify sees it too
    rc, doc, _ = run_load(load, "--name=r", "--rw=randread", "--continue_on_error=verify",
                          *common, out=tmp_path / "read.json")
    assert rc == 1
    assert doc["lockscope"]["verify"]["mismatches"] == 1


def test_verify_tells_holes_from_lost_data(load, xfs_fs, tmp_path):
    path = xfs_fs.path / "h.dat"
    common = [f"--filename={path}", "--bs=4k", "--size=1m", "--direct=1", "--verify=pattern"]
    ok_run(load, tmp_path, "--name=w", "--rw=write", "--layout=sparse", "--io_size=512k",
           "--do_verify=0", *common)
    doc = ok_run(load, tmp_path, "--name=v", "--verify_only=1", *common)
    v = doc["lockscope"]["verify"]
    assert v["ok"] == 128 and v["unwritten"] == 128 and v["mismatches"] == 0
    # zeros written over a written block are lost data, not a hole
    with open(path, "r+b") as f:
        f.seek(5 * 4096)
        f.write(bytes(4096))
        os.fsync(f.fileno())
    rc, doc, _ = run_load(load, "--name=v", "--verify_only=1", *common, out=tmp_path / "z.json")
    assert rc == 1 and doc["lockscope"]["verify"]["first_mismatch_offset"] == 5 * 4096


# --- files that are not ours ----------------------------------------------------

def test_foreign_file_is_never_modified(load, xfs_fs, tmp_path):
    path = xfs_fs.path / "theirs.dat"
    content = os.urandom(256 * 1024)
    path.write_bytes(content)
    before = path.stat()

    def unchanged():
        st = path.stat()
        assert path.read_bytes() == content
        assert (st.st_size, st.st_mtime_ns, st.st_ino) == \
            (before.st_size, before.st_mtime_ns, before.st_ino)

    for args in (["--rw=write"], ["--rw=randwrite", "--direct=1"], ["--rw=randrw"],
                 ["--rw=read", "--layout=written"], ["--rw=read", "--size=1m"],
                 ["--rw=write", "--unlink=1"]):
        size = [] if any(a.startswith("--size") for a in args) else ["--size=256k"]
        rc, _, err = run_load(load, "--name=f", f"--filename={path}", *size, *args)
        assert rc == 2, (args, err)
        assert "refusing" in err and str(path) in err and "--overwrite=1" in err
        assert len(err.strip().splitlines()) == 1
        unchanged()
    # reading it as it is is fine
    doc = ok_run(load, tmp_path, "--name=r", f"--filename={path}", "--rw=randread",
                 "--bs=4k")
    assert doc["jobs"][0]["read"]["total_ios"] == 64
    assert doc["lockscope"]["files"][0]["layout"] == "existing"
    unchanged()
    with pytest.raises(OSError):
        os.getxattr(path, OWNER_XATTR)
    # --overwrite=1 lets a write job in, and still does not mark the file as ours
    ok_run(load, tmp_path, "--name=o", f"--filename={path}", "--rw=randwrite",
           "--size=256k", "--overwrite=1", "--unlink=1")
    assert path.exists() and path.read_bytes() != content
    with pytest.raises(OSError):
        os.getxattr(path, OWNER_XATTR)


def test_own_files_are_reused_and_unlinked(load, xfs_fs, tmp_path):
    path = xfs_fs.path / "ours.dat"
    ok_run(load, tmp_path, "--name=a", f"--filename={path}", "--rw=write", "--size=256k")
    assert os.getxattr(path, OWNER_XATTR) == b"1"
    doc = ok_run(load, tmp_path, "--name=b", f"--filename={path}", "--rw=randwrite",
                 "--size=256k", "--layout=sparse", "--unlink=1")
    assert doc["lockscope"]["files"][0]["layout"] == "sparse"
    assert not path.exists()


def test_too_little_space_is_refused_first(load, loopfs_factory, tmp_path):
    fs = loopfs_factory("xfs", 300 * MIB)
    rc, doc, err = run_load(load, "--name=big", f"--filename={fs.path}/big.dat",
                            "--rw=randwrite", "--size=1g", "--layout=written",
                            out=tmp_path / "o.json")
    assert rc == 2 and doc is None
    assert "not enough space" in err and len(err.strip().splitlines()) == 1
    assert not (fs.path / "big.dat").exists()
    # sparse files fill up as the writes land: refused as well
    rc, _, err = run_load(load, "--name=big", f"--directory={fs.path}", "--rw=randwrite",
                          "--size=200m", "--numjobs=2", "--layout=sparse", "--nrfiles=1")
    assert rc == 2 and "not enough space" in err
    assert not list(fs.path.iterdir())


# --- the driver hook and signals --------------------------------------------------

def test_start_on_stdin(load, xfs_fs, tmp_path):
    out = tmp_path / "stdin.json"
    proc = subprocess.Popen([load, "--name=s", f"--filename={xfs_fs.path}/s.dat",
                             "--rw=randwrite", "--bs=4k", "--size=4m", "--direct=1",
                             "--layout=written", "--numjobs=2", "--time_based",
                             "--runtime=1.5", "--group_reporting", "--start_on_stdin=1",
                             "--output-format=json", f"--output={out}",
                             "--status-interval=0.5"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, bufsize=1)
    try:
        assert proc.stdout.readline() == "ready\n"
        time.sleep(1.0)  # nothing runs while it waits
        assert proc.poll() is None
        assert not out.exists() or out.stat().st_size == 0
        go_wall = time.time_ns()
        proc.stdin.write("go\n")
        proc.stdin.flush()
        assert proc.wait(patience(30)) == 0
        rest_of_stdout = proc.stdout.read()
        status = [json.loads(line) for line in proc.stderr.read().splitlines()]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert rest_of_stdout == ""  # only the ready line: the report went to --output
    doc = json.loads(out.read_text())
    tp = doc["lockscope"]["timed_phase"]
    # the timed phase began after the go line, not at ready
    assert tp["start_realtime_ns"] >= go_wall - 50_000_000
    assert doc["lockscope"]["pid"] == proc.pid
    assert len(doc["jobs"]) == 1 and doc["jobs"][0]["write"]["total_ios"] > 0
    assert status and all(set(s["status"]) == {"elapsed_s", "iops", "bw_bytes", "total_ios"}
                          for s in status)
    totals = [s["status"]["total_ios"] for s in status]
    assert totals == sorted(totals) and totals[-1] <= doc["jobs"][0]["write"]["total_ios"]


def test_sigint_stops_and_reports(load, xfs_fs, tmp_path):
    out = tmp_path / "int.json"
    proc = subprocess.Popen([load, "--name=i", f"--filename={xfs_fs.path}/i.dat",
                             "--rw=randwrite", "--bs=4k", "--size=8m", "--direct=1",
                             "--numjobs=2", "--time_based", "--runtime=60",
                             "--start_on_stdin=1", "--output-format=json", f"--output={out}"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline() == "ready\n"
        proc.stdin.write("go\n")
        proc.stdin.flush()
        time.sleep(1.2)
        proc.send_signal(signal.SIGINT)
        rc = proc.wait(patience(20))
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert rc == 130
    doc = json.loads(out.read_text())
    assert doc["lockscope"]["interrupted"] is True
    assert doc["lockscope"]["timed_phase"]["duration_ns"] < 30e9
    assert sum(j["write"]["total_ios"] for j in doc["jobs"]) > 0
    assert len(doc["lockscope"]["threads"]) == 2


def test_sigint_while_waiting_for_go(load, xfs_fs, tmp_path):
    out = tmp_path / "early.json"
    proc = subprocess.Popen([load, "--name=e", f"--filename={xfs_fs.path}/e.dat",
                             "--rw=randwrite", "--size=1m", "--start_on_stdin=1",
                             "--output-format=json", f"--output={out}"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline() == "ready\n"
        proc.send_signal(signal.SIGINT)
        assert proc.wait(patience(20)) == 130
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    doc = json.loads(out.read_text())
    assert doc["lockscope"]["interrupted"] and not doc["lockscope"]["started"]
    assert doc["jobs"][0]["write"]["total_ios"] == 0


# --- the ownership mark does not change how ext4 locks ----------------------------

TRACEFS = Path("/sys/kernel/tracing")


def write_contentions(load: str, tmp_path: Path, args: list[str]) -> tuple[int, int]:
    """Runs lockscope-load and counts its lock:contention_begin events with the
    WRITE flag (a writer waiting on, or holding out, an rwsem), in a private
    tracefs instance; returns them with the writes the run did."""
    inst = TRACEFS / "instances" / f"lockscope-load-test-{os.getpid()}"
    inst.mkdir()
    try:
        ev = inst / "events" / "lock" / "contention_begin"
        (ev / "filter").write_text("flags & 4")
        (ev / "enable").write_text("1")
        doc = ok_run(load, tmp_path, *args)
        (ev / "enable").write_text("0")
        waits = sum(1 for line in (inst / "trace").read_text().splitlines()
                    if "contention_begin" in line and "lockscope-load" in line)
        return waits, sum(job["write"]["total_ios"] for job in doc["jobs"])
    finally:
        inst.rmdir()


def test_mark_keeps_ext4_overwrites_shared(load, ext4_fs, tmp_path):
    """A user.* xattr must not make ext4 take i_rwsem exclusive (IS_NOSEC)."""
    if not (TRACEFS / "events" / "lock" / "contention_begin").exists():
        pytest.skip("tracefs with lock:contention_begin is not available")
    marked, plain = ext4_fs.path / "marked.dat", ext4_fs.path / "plain.dat"
    ok_run(load, tmp_path, "--name=lay", f"--filename={marked}", "--size=32m",
           "--layout=written", "--rw=write", "--bs=1m")
    with open(plain, "wb") as f:
        for _ in range(32):
            f.write(os.urandom(MIB))
        os.fsync(f.fileno())
    job = ["--name=n", "--rw=randwrite", "--bs=4k", "--direct=1", "--size=32m",
           "--numjobs=2", "--time_based", "--group_reporting"]
    # writes into holes serialize; on a busy host the two writers meet less often,
    # so the sparse run is given longer until it shows the contention
    for runtime in (1, 3, 6):
        sparse, sparse_writes = write_contentions(
            load, tmp_path, job + [f"--runtime={runtime}", f"--filename={ext4_fs.path}/sp.dat",
                                   "--layout=sparse"])
        if sparse >= 50:
            break
    with_mark, mark_writes = write_contentions(load, tmp_path,
                                               job + ["--runtime=1", f"--filename={marked}"])
    without, _ = write_contentions(load, tmp_path, job + ["--runtime=1", f"--filename={plain}",
                                                          "--overwrite=1"])
    assert os.getxattr(marked, OWNER_XATTR) == b"1"
    assert sparse >= 50, (sparse, sparse_writes)
    # aligned overwrites stay shared, mark or no mark: per write, a tenth of the
    # sparse run's waits at most
    assert with_mark <= max(10, without * 2), (with_mark, without)
    assert with_mark / mark_writes < sparse / sparse_writes / 10, \
        (with_mark, mark_writes, sparse, sparse_writes)
