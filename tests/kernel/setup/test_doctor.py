"""lockscope doctor checked against independent looks at this machine, and the CLI's
bad-input paths."""

import json
import os
import subprocess
from pathlib import Path

import pytest

from lockscope.run.probe_groups import CORE_GROUPS

from conftest import LOCKSCOPE
from patience import patience

ROOT = str(Path(__file__).resolve().parents[3])
ENV = LOCKSCOPE.env()
CORE = set(CORE_GROUPS)   # what the main job needs


def _run(*args, **kw):
    return LOCKSCOPE.run(*args, **kw)


def _by_name(doc):
    return {c["name"]: c for c in doc["checks"]}


@pytest.mark.kernel
def test_doctor_json_matches_this_kernel():
    """Each line agrees with an independent look at this machine: attach kinds with a
    direct load+attach (lockscope-features), tracepoints with tracefs, probe groups
    with the recorder's --list-features. Nothing here assumes what the kernel allows."""
    res = _run("doctor", "--json")
    doc = json.loads(res.stdout)
    checks = _by_name(doc)
    bins = os.path.join(ROOT, "build", "bin")
    names = ("lock:contention_begin", "iomap:iomap_dio_rw_begin", "sched:sched_switch")
    feats = json.loads(subprocess.run([os.path.join(bins, "lockscope-features"), *names],
                                      capture_output=True, text=True).stdout)
    groups = json.loads(subprocess.run([os.path.join(bins, "lockscope-record"),
                                        "--list-features"], capture_output=True,
                                       text=True).stdout)["groups"]
    assert res.returncode == (0 if doc["ok"] else 1)
    for cap in ("CAP_BPF", "CAP_PERFMON"):                # kernel tests run as root
        assert checks[cap]["available"] is True
    for kind, entry in feats["attach"].items():
        assert checks[kind]["available"] is bool(entry["ok"]), kind
        assert checks[kind]["available"] or checks[kind]["consequence"]
    for name in names:
        on_tracefs = os.path.exists("/sys/kernel/tracing/events/" + name.replace(":", "/"))
        assert checks[name]["available"] is (on_tracefs or feats["tracepoints"][name]["btf"])
    for g in groups:
        line = checks[g["name"]]
        # not needed: another filesystem's group, or one another group stands in for
        assert line["available"] is (g["enabled"] or g["not_needed"]), g
        assert line["category"] == "probe group"
        # the core groups are required; a group that passed over a kind says it
        assert line["required"] is (g["name"] in CORE), g
        if g["enabled"] and g["reason"]:
            assert "fallback" in line["detail"] and g["attach"] in line["detail"], line
    # ok: the main job can run, so no core group is missing from the recorder's listing
    if doc["ok"]:
        assert all(g["enabled"] or g["not_needed"] for g in groups if g["name"] in CORE), groups
    assert "probe groups" not in checks   # the listing itself worked
    # the listing doctor's lines came from is in its JSON, group for group as listed here
    assert [(g["name"], g["enabled"], g["attach"]) for g in doc["groups"]] == [
        (g["name"], g["enabled"], g["attach"]) for g in groups]
    for c in doc["checks"]:
        assert set(c) >= {"name", "category", "available", "required", "status", "detail",
                          "consequence"}
        assert c["status"] in ("available", "missing")
        assert c["available"] or c["consequence"], c


def test_needed_tracepoints_come_from_the_groups():
    from lockscope.cli.doctor_checks import needed_tracepoints

    groups = [
        {"name": "lock", "needs": ["lock:contention_begin", "lock:contention_end"],
         "lost": "no lock waits"},
        {"name": "holders", "needs": ["lock:contention_begin"], "lost": "no holders"},
        {"name": "extra", "needs": ["ext4_file_write_iter"], "lost": "no entry time"},
        {"name": "sched", "needs": ["sched:sched_switch"]},
    ]
    got = dict(needed_tracepoints(groups))
    assert got == {
        "lock:contention_begin": "no lock waits; no holders",
        "lock:contention_end": "no lock waits",
        "sched:sched_switch": "its probe group is off",
    }


@pytest.mark.kernel
def test_a_listing_that_times_out_is_a_failed_check_with_its_reason():
    """A recorder that cannot finish loading in time leaves no empty list behind: one
    required line says what happened, and doctor is not ok."""
    res = _run("doctor", "--json", "--list-timeout", "0.01")
    doc = json.loads(res.stdout)
    line = _by_name(doc)["probe groups"]
    assert line["available"] is False and line["required"] is True
    assert "did not finish in 0.01 s" in line["detail"] and "--list-timeout" in line["detail"]
    assert not [c for c in doc["checks"] if c["category"] == "probe group" and c["available"]]
    assert doc["groups"] is None   # no listing, not an empty one
    assert doc["ok"] is False and res.returncode == 1
    assert "Traceback" not in res.stderr


@pytest.mark.kernel
def test_a_slow_listing_shows_progress(monkeypatch):
    import io

    from lockscope.run import probe_groups

    monkeypatch.setattr(probe_groups, "QUIET_S", 0.0)
    monkeypatch.setattr(probe_groups, "PROGRESS_S", 0.2)
    said = io.StringIO()
    groups = probe_groups.list_groups(patience(120), progress=said)
    assert {g["name"] for g in groups} >= CORE
    assert said.getvalue().startswith("lockscope doctor: loading every probe group")


def test_a_kernel_without_btf_gets_one_clear_line(monkeypatch):
    """No vmlinux BTF: one line says so; no probe group is tried (each would fail for that
    one reason), and doctor is not ok."""
    from lockscope.cli import doctor_checks as doctor

    monkeypatch.setattr(doctor, "VMLINUX_BTF", "/nonexistent/btf/vmlinux")
    checks = doctor.run_checks(60)
    btf = [c for c in checks if "BTF" in c.detail and not c.available]
    assert [c.name for c in btf] == ["BTF"] and "no vmlinux BTF" in btf[0].detail
    assert btf[0].required and "cannot record" in btf[0].consequence
    assert not [c for c in checks if c.category == "probe group"]
    assert doctor.to_json(checks)["ok"] is False


def test_fallbacks_are_named():
    from lockscope.run.probe_groups import fallback_note

    assert fallback_note({"name": "lock", "attach": "tp_btf", "reason": None,
                          "needs": ["a:b"], "tracepoints": ["a:b"]}) == ""
    note = fallback_note({"name": "xfs_ilock", "attach": "raw_tp",
                          "reason": "tp_btf: load failed: Permission denied",
                          "needs": ["xfs:xfs_ilock"], "tracepoints": ["xfs:xfs_ilock"]})
    assert note == ("through the fallback raw_tp (passed over: tp_btf: load failed: "
                    "Permission denied)")


def _btf_tracepoints() -> set[str]:
    """Events with a btf_trace_ typedef in vmlinux or a module, by bpftool's own reading
    of /sys/kernel/btf (the route neither lockscope binary takes)."""
    names = set()
    for f in sorted(os.listdir("/sys/kernel/btf")):
        cmd = ["bpftool", "btf", "dump", "file", f"/sys/kernel/btf/{f}"]
        if f != "vmlinux":
            cmd[3:3] = ["-B", "/sys/kernel/btf/vmlinux"]
        out = subprocess.run(cmd, capture_output=True, text=True).stdout
        for line in out.splitlines():
            if "TYPEDEF 'btf_trace_" in line:
                names.add(line.split("'")[1][len("btf_trace_"):])
    return names


@pytest.mark.kernel
def test_doctor_tracepoints_are_the_recorders_and_btf_has_one_answer():
    """Doctor lists exactly the tracepoints the recorder's groups need; lockscope-features
    and the recorder's loader agree with bpftool on which have BTF (modules included)."""
    bins = os.path.join(ROOT, "build", "bin")
    groups = json.loads(subprocess.run([os.path.join(bins, "lockscope-record"),
                                        "--list-features"], capture_output=True,
                                       text=True).stdout)["groups"]
    needed = {tp for g in groups for tp in g["needs"] if ":" in tp}
    doc = json.loads(_run("doctor", "--json").stdout)
    listed = {c["name"] for c in doc["checks"] if c["category"] == "tracepoint"}
    assert listed == needed
    feats = json.loads(subprocess.run([os.path.join(bins, "lockscope-features"), *needed],
                                      capture_output=True, text=True).stdout)["tracepoints"]
    in_btf = _btf_tracepoints()
    for tp in needed:
        assert feats[tp]["btf"] is (tp.split(":")[1] in in_btf), tp
    for g in groups:
        missing = [tp for tp in g["needs"] if ":" in tp and not feats[tp]["btf"]]
        if g["attach"] == "tp_btf":
            assert not missing, g
        if "tp_btf" in g["kinds"] and missing and feats["lock:contention_begin"]["btf"]:
            assert g["attach"] != "tp_btf" and "not in kernel BTF" in (g["reason"] or ""), g


@pytest.mark.kernel
def test_doctor_table_says_available_or_missing():
    doc = json.loads(_run("doctor", "--json").stdout)
    res = _run("doctor")
    assert res.returncode == (0 if doc["ok"] else 1)
    assert "available" in res.stdout
    assert ("missing" in res.stdout) == any(not c["available"] for c in doc["checks"])


@pytest.mark.kernel
def test_doctor_as_non_root_says_so_and_reports():
    # A copy of the package and the features binary where user nobody can read them,
    # run by a Python that nobody can execute.
    import shutil
    import tempfile

    python = "/usr/bin/python3"
    home = tempfile.mkdtemp(prefix="lockscope-nonroot-")
    try:
        os.chmod(home, 0o755)
        shutil.copytree(os.path.join(ROOT, "analyzer", "lockscope"),
                        os.path.join(home, "lockscope"),
                        ignore=shutil.ignore_patterns("__pycache__"))
        # the binaries too: the checkout may sit in a directory only root enters
        bin_dir = os.path.join(home, "bin")
        os.mkdir(bin_dir)
        for name in ("lockscope-features", "lockscope-record"):
            shutil.copy(os.path.join(ROOT, "build", "bin", name), bin_dir)
        env = dict(ENV, PYTHONPATH=home, LOCKSCOPE_BIN_DIR=bin_dir)
        probe = subprocess.run([python, "-c", "pass"], preexec_fn=lambda: os.setuid(65534),
                               capture_output=True)
        if probe.returncode != 0:
            pytest.skip(f"{python} cannot run as user nobody here")
        res = subprocess.run([python, "-m", "lockscope", "doctor", "--json"], cwd=home,
                             capture_output=True, text=True, env=env,
                             preexec_fn=lambda: os.setuid(65534))
    finally:
        shutil.rmtree(home)
    assert "without CAP_BPF and CAP_PERFMON" in res.stderr.strip().splitlines()[0]
    doc = json.loads(res.stdout)
    for cap in ("CAP_BPF", "CAP_PERFMON"):
        assert _by_name(doc)[cap]["available"] is False
        assert "nothing can be recorded" in _by_name(doc)[cap]["consequence"]
    assert res.returncode == 1  # the capabilities are required for recording


def test_unknown_subcommand_exits_2():
    res = _run("no-such-command")
    assert res.returncode == 2 and "usage:" in res.stderr


def test_unknown_option_exits_2():
    res = _run("doctor", "--no-such-option")
    assert res.returncode == 2 and "usage:" in res.stderr
