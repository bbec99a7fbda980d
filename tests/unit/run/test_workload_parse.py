"""lockscope-load's option and job-file parsers, and its answers to bad input.

These run anywhere (no root): they use --parse-only, which prints the jobs as
parsed, or inputs that are refused before anything touches a disk.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from lockscope.binaries import find_binary

GIB = 1 << 30


@pytest.fixture(scope="module")
def load() -> str:
    try:
        return find_binary("lockscope-load")
    except Exception as exc:  # not built: say how
        pytest.fail(f"{exc} (make -C workloads)")


def run(load: str, *args: str, env: dict | None = None, cwd: Path | None = None):
    return subprocess.run([load, *args], capture_output=True, text=True, timeout=30,
                          env=env, cwd=cwd)


def parsed(load: str, *args: str, **kw) -> dict:
    res = run(load, *args, "--parse-only", **kw)
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


def one_job(load: str, *args: str, **kw) -> dict:
    jobs = parsed(load, *args, **kw)["jobs"]
    assert len(jobs) == 1
    return jobs[0]


def test_fio_command_line(load):
    job = one_job(load, "--name=x", "--filename=/tmp/f", "--rw=randwrite", "--bs=4k",
                  "--direct=1", "--numjobs=4", "--runtime=5", "--time_based", "--size=1g",
                  "--group_reporting", "--ioengine=io_uring", "--iodepth=16", "--offset=1m",
                  "--fsync=8", "--fdatasync=2", "--ramp_time=1", "--randseed=42",
                  "--randrepeat=0", "--fallocate=keep", "--sync=dsync")
    assert job["name"] == "x" and job["filename"] == "/tmp/f"
    assert job["rw"] == "randwrite"
    assert job["bs"] == 4096 and job["size"] == GIB and job["offset"] == 1 << 20
    assert job["numjobs"] == 4 and job["iodepth"] == 16 and job["ioengine"] == "io_uring"
    assert job["runtime_us"] == 5_000_000 and job["ramp_time_us"] == 1_000_000
    assert job["time_based"] and job["direct"] and job["group_reporting"]
    assert job["fsync"] == 8 and job["fdatasync"] == 2
    assert job["randseed"] == 42 and not job["randrepeat"]
    assert job["fallocate"] == "keep" and job["sync"] == "dsync"


def test_fio_defaults(load):
    job = one_job(load, "--name=d")
    assert job["rw"] == "read" and job["bs"] == 4096 and job["numjobs"] == 1
    assert job["ioengine"] == "psync" and job["iodepth"] == 1 and job["rwmixread"] == 50
    assert job["fallocate"] == "native" and job["randrepeat"] and job["randseed"] == 0x89
    assert job["layout"] == "auto" and not job["direct"] and not job["time_based"]
    assert job["percentiles"] == [1, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 95, 99,
                                  99.5, 99.9, 99.95, 99.99]


@pytest.mark.parametrize("text,value", [
    ("512", 512), ("4k", 4096), ("4K", 4096), ("4kb", 4096), ("64k", 65536),
    ("1m", 1 << 20), ("1M", 1 << 20), ("1g", GIB), ("2t", 2 << 40), ("0x1000", 4096),
    # fio's default kb_base=1024: the IEC spellings mean powers of 1000
    ("1KiB", 1000), ("1MiB", 1000 ** 2),
])
def test_size_suffixes(load, text, value):
    assert one_job(load, "--name=s", f"--size={text}")["size"] == value


@pytest.mark.parametrize("text,usec", [
    ("5", 5_000_000), ("5s", 5_000_000), ("500ms", 500_000), ("100us", 100),
    ("2m", 120_000_000), ("1h", 3_600_000_000), ("1.5", 1_500_000), ("5.0", 5_000_000),
])
def test_time_values(load, text, usec):
    assert one_job(load, "--name=t", f"--runtime={text}")["runtime_us"] == usec


@pytest.mark.parametrize("args,key,value", [
    (["--readwrite=randrw"], "rw", "randrw"),
    (["--rw=rw"], "rw", "readwrite"),
    (["--blocksize=16k"], "bs", 16384),
    (["--rwmixwrite=30"], "rwmixread", 70),
    (["--direct=1", "--buffered=1"], "direct", False),
    (["--sync=1"], "sync", "sync"),
    (["--sync=0"], "sync", "none"),
    (["--dsync=1"], "sync", "dsync"),
    (["--fallocate=0"], "fallocate", "none"),
    (["--fallocate=1"], "fallocate", "posix"),
    (["--time-based"], "time_based", True),
    (["--direct"], "direct", True),
    (["--bs", "8k"], "bs", 8192),
    (["--layout=written"], "layout", "written"),
    (["--unaligned=512"], "unaligned", 512),
    (["--percentile_list=99:50"], "percentiles", [50, 99]),
])
def test_aliases_and_forms(load, args, key, value):
    assert one_job(load, "--name=a", *args)[key] == value


def test_command_line_globals_and_jobs(load):
    jobs = parsed(load, "--bs=8k", "--size=1m", "--name=a", "--rw=write",
                  "--name=b", "--bs=16k")["jobs"]
    assert [j["name"] for j in jobs] == ["a", "b"]
    assert jobs[0]["bs"] == 8192 and jobs[0]["rw"] == "write"
    assert jobs[1]["bs"] == 16384 and jobs[1]["rw"] == "read"  # a's rw stays a's
    assert jobs[0]["size"] == jobs[1]["size"] == 1 << 20


def test_program_options(load):
    prog = parsed(load, "--name=p", "--output=/tmp/x.json", "--output-format=json",
                  "--status-interval=1", "--start_on_stdin=1")["prog"]
    assert prog == {"output": "/tmp/x.json", "output_format": "json",
                    "status_interval_us": 1_000_000, "start_on_stdin": True}


JOBFILE = """\
; a comment
# another comment
[global]
bs = 8k
size=4m
direct
filename=${LOAD_TEST_DIR}/shared.dat

[first]
rw=randwrite
numjobs=2

[global]
runtime=3
time_based=1

[second]
rw=read
bs=64k
"""


def test_job_file(load, tmp_path):
    jf = tmp_path / "two.fio"
    jf.write_text(JOBFILE)
    env = {"LOAD_TEST_DIR": str(tmp_path), "PATH": "/usr/bin:/bin"}
    jobs = parsed(load, str(jf), env=env)["jobs"]
    first, second = jobs
    assert first["name"] == "first" and second["name"] == "second"
    assert first["filename"] == second["filename"] == f"{tmp_path}/shared.dat"
    assert first["bs"] == 8192 and second["bs"] == 65536
    assert first["size"] == second["size"] == 4 << 20
    assert first["direct"] and second["direct"]
    assert first["numjobs"] == 2 and second["numjobs"] == 1
    # a [global] only affects the sections below it
    assert first["runtime_us"] == 0 and not first["time_based"]
    assert second["runtime_us"] == 3_000_000 and second["time_based"]


def test_job_file_overrides_command_line_defaults(load, tmp_path):
    """As in fio: options before any --name are defaults under the job file."""
    jf = tmp_path / "j.fio"
    jf.write_text("[j]\nsize=1m\n")
    job = one_job(load, "--size=2m", "--bs=16k", str(jf))
    assert job["size"] == 1 << 20  # the file's value wins
    assert job["bs"] == 16384      # the default fills what the file leaves out


def test_job_file_plus_command_line_job(load, tmp_path):
    jf = tmp_path / "j.fio"
    jf.write_text("[fromfile]\nrw=write\n")
    jobs = parsed(load, str(jf), "--name=fromcli", "--rw=randread")["jobs"]
    assert [(j["name"], j["rw"]) for j in jobs] == [("fromfile", "write"),
                                                    ("fromcli", "randread")]


def test_example_job_files_parse(load):
    jobs_dir = Path(__file__).resolve().parents[3] / "workloads" / "jobs"
    env = {"DIR": "/tmp", "THREADS": "4", "PATH": "/usr/bin:/bin"}
    for jf in sorted(jobs_dir.glob("*.fio")):
        assert parsed(load, str(jf), env=env)["jobs"], jf


def refused(load: str, *args: str, cwd: Path | None = None) -> str:
    """Runs, expects exit 2 and exactly one line on stderr; returns that line."""
    res = run(load, *args, cwd=cwd)
    assert res.returncode == 2, (res.returncode, res.stdout, res.stderr)
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1, res.stderr
    assert res.stdout == ""
    return lines[0]


@pytest.mark.parametrize("args,names", [
    (["--name=x", "--bogus=1"], ["bogus"]),
    (["--name=x", "--rw=trim"], ["rw", "trim"]),
    (["--name=x", "--bs=4q"], ["bs", "4q"]),
    (["--name=x", "--bs=0"], ["bs"]),
    (["--name=x", "--size=1.5g"], ["size"]),
    (["--name=x", "--numjobs=0"], ["numjobs"]),
    (["--name=x", "--numjobs=two"], ["numjobs"]),
    (["--name=x", "--ioengine=posixaio"], ["ioengine", "posixaio"]),
    (["--name=x", "--layout=weird"], ["layout", "weird"]),
    (["--name=x", "--fallocate=sometimes"], ["fallocate"]),
    (["--name=x", "--runtime=soon"], ["runtime"]),
    (["--name=x", "--direct=maybe"], ["direct"]),
    (["--name=x", "--rwmixread=101"], ["rwmixread"]),
    (["--name=x", "--verify=md5"], ["verify", "md5"]),
    (["--name=x", "--output-format=terse"], ["output-format", "terse"]),
    (["--name=x", "--filename=a:b"], ["filename"]),
    (["--name=x", "--filename=f", "--nrfiles=2"], ["nrfiles"]),
    (["--name=x", "--layout=append", "--rw=randwrite"], ["rw", "append"]),
    (["--name=x", "--verify_only=1"], ["verify_only"]),
    (["--name=x", "--verify=pattern", "--bs=32"], ["bs"]),
    (["--name=x", "--start_on_stdin=1"], ["start_on_stdin"]),
    (["--name=x", "--percentile_list=0:200"], ["percentile_list"]),
    (["--name=x", "--output"], ["output"]),
    (["--rw=read"], ["--name"]),
])
def test_bad_input_is_one_line_and_exit_2(load, args, names):
    line = refused(load, *args)
    assert line.startswith("lockscope-load: ")
    for n in names:
        assert n in line


@pytest.mark.parametrize("text,names", [
    ("[j]\nbogus=1\n", ["bad.fio:2", "bogus"]),
    ("[j]\nrw=sideways\n", ["bad.fio:2", "rw", "sideways"]),
    ("bs=4k\n[j]\n", ["bad.fio:1", "bs"]),
    ("[j\nbs=4k\n", ["bad.fio:1"]),
    ("[j]\nfilename=${LOAD_TEST_UNSET_VAR}/f\n", ["bad.fio:2", "LOAD_TEST_UNSET_VAR"]),
    ("[j]\noutput=x.json\n", ["bad.fio:2", "output"]),
    ("[j]\ninclude other.fio\n", ["bad.fio:2", "include"]),
])
def test_bad_job_file(load, tmp_path, text, names):
    jf = tmp_path / "bad.fio"
    jf.write_text(text)
    line = refused(load, str(jf))
    for n in names:
        assert n in line


def test_missing_job_file(load, tmp_path):
    assert "nope.fio" in refused(load, str(tmp_path / "nope.fio"))


def test_bs_larger_than_size_is_refused_before_creating(load, tmp_path):
    line = refused(load, "--name=x", f"--filename={tmp_path}/f", "--rw=write",
                   "--bs=64k", "--size=4k")
    assert "bs" in line
    assert not (tmp_path / "f").exists()


def test_unaligned_on_the_block_grid_is_refused(load, tmp_path):
    line = refused(load, "--name=x", f"--filename={tmp_path}/f", "--rw=write",
                   "--size=64k", "--unaligned=4096")
    assert "unaligned" in line
    assert not (tmp_path / "f").exists()


def test_help_documents_options_and_layouts(load):
    res = run(load, "--help")
    assert res.returncode == 0
    for word in ("--rw=", "--bs=", "--numjobs=", "--layout", "--unaligned",
                 "--start_on_stdin", "written", "fallocated", "sparse", "append",
                 "io_uring", "libaio", "psync", "unwritten extents", "holes", "i_size"):
        assert word in res.stdout, word
    ver = run(load, "--version")
    assert ver.returncode == 0 and ver.stdout.startswith("lockscope-load")


def test_defaults_shown_by_help_are_the_defaults_applied(load):
    """Each '(default X)' in --help is what a job gets when the option is absent.

    The option table holds each default once; this checks that both the help
    text and the parser take it from there.
    """

    help_text = run(load, "--help").stdout
    defaults = re.findall(r"^\s+--([\w-]+)=?\S*\s.*\(default ([^)\s]+)\)", help_text, re.M)
    assert len(defaults) >= 10, help_text
    def applied(*args: str) -> list[dict]:
        """The jobs as parsed, without the options as written (`given` differs by design)."""
        jobs = parsed(load, "--name=x", "--filename=/nonexistent/x", *args)["jobs"]
        return [{k: v for k, v in job.items() if k != "given"} for job in jobs]

    base = applied()
    for name, value in defaults:
        assert applied(f"--{name}={value}") == base, (name, value)


def test_every_engine_listed_in_help_is_accepted(load):
    """The engine names users see come from the registry that runs them."""
    help_text = run(load, "--help").stdout
    listed = re.search(r"--ioengine=MODE.*\[([^\]]+)\]", help_text).group(1).split(", ")
    assert listed
    for name in listed:
        assert one_job(load, "--name=x", "--filename=/nonexistent/x",
                       f"--ioengine={name}")["ioengine"] == name
