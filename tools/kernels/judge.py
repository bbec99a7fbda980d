"""Judge one matrix guest's outputs (written by guest-run) against independent looks and
against expectations.py. Pure reading: run-matrix boots, this says what held."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

from expectations import CORE_GROUPS, EXPECTED
from guest_tests import TESTS

FATAL = "Oops|BUG:|Kernel panic|general protection fault"
OOPS = re.compile(rf"^.*\b(?:{FATAL}).*$", re.M)
# what a host with kernel.panic_on_warn=1 would die of, besides the above
WARNING = re.compile(rf"^.*\b(?:WARNING:|{FATAL}).*$", re.M)


def _json(path: Path):
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def steps(out: Path) -> dict[str, tuple[int, float]]:
    got = {}
    try:
        lines = (out / "steps").read_text().splitlines()
    except OSError:
        return {}
    for line in lines:
        parts = line.split()
        if len(parts) == 3:
            got[parts[0]] = (int(parts[1]), float(parts[2]))
        elif parts == ["done"]:
            got["done"] = (0, 0.0)
    return got


# guest-run's steps in order: the first missing one is where a guest stopped
STEPS = ("modprobe", "install", "doctor", "pytest", "sweep", "uninstall")


def _last_line(path: Path, pattern: str = "") -> str:
    try:
        lines = [ln.strip() for ln in path.read_text(errors="replace").splitlines()
                 if ln.strip() and re.search(pattern, ln)]
    except OSError:
        return ""
    return lines[-1][:300] if lines else ""


def guest_oops(out: Path) -> list[str]:
    """The fatal lines of the guest's dmesg, or of its console (vng --verbose) when it
    died before writing one."""
    for log in ("dmesg", "console"):
        if (out / log).exists():
            found = OOPS.findall((out / log).read_text(errors="replace"))
            if found:
                return found
    return []


def stopped_midway(out: Path) -> str | None:
    """Where a guest that stopped before its last step, with no Oops logged, stopped
    (what run-matrix boots once more); None for any other guest."""
    st = steps(out)
    if "done" in st or guest_oops(out):
        return None
    return unfinished(out, st)


def unfinished(out: Path, st: dict[str, tuple[int, float]]) -> str:
    """Where a guest that did not finish stopped: the step (and for pytest the test, which
    pytest -v names as it starts), the seconds its steps took, and the console's last
    kernel line (a hang, a panic or the emulator's end)."""
    step = next((s for s in STEPS if s not in st), "the end")
    where = f"the guest did not finish: it stopped in step {step}"
    if step == "pytest":
        test = _last_line(out / "pytest.out", r"::")
        where += f" (at {test.split()[0]})" if test else ""
    where += f", {sum(sec for _, sec in st.values()):.0f} s of steps done"
    console = _last_line(out / "console", r"^\[\s*\d+\.\d+\]")
    return where + (f"; console's last kernel line: {console}" if console else
                    "; no console")


LARGE_SHARE = 0.15   # of thread time: a lock the verdict is about (tests use the same)


def sweep_findings(results: Path) -> dict[str, dict] | None:
    """Per filesystem, what a sweep's verdict rests on and what does not depend on the
    CPUs: the inode lock that took a large share of thread time at the top thread count
    (or None) and the causes the DIO write classes give. The verdict's kind is kept for
    the record: whether throughput scales from 1 to 2 threads is a property of the CPUs
    (an emulated single vCPU does not scale what two real CPUs do), so it is not compared."""
    doc = _json(results)
    if not isinstance(doc, dict):
        return None
    got = {}
    for fs, a in (doc.get("analysis") or {}).items():
        if not isinstance(a, dict) or "verdict" not in a:
            continue
        top = str(max((p["threads"] for p in a.get("points") or []), default=0))
        big = [lk for lk in a.get("locks") or [] if lk.get("inode")
               and (lk.get("share_by_threads") or {}).get(top, 0) >= LARGE_SHARE]
        got[fs] = {"inode_lock": max(big, key=lambda lk: lk["share_by_threads"][top])["kind"]
                   if big else None,
                   "causes": sorted({c["reason"] for c in a.get("causes") or []}),
                   "verdict": (a["verdict"] or {}).get("kind")}
    return got


def same_findings(guest: dict | None, host: dict) -> bool:
    keys = ("inode_lock", "causes")
    return guest is not None and set(guest) == set(host) and all(
        guest[fs][k] == host[fs][k] for fs in host for k in keys)


def _usable(g: dict) -> bool:
    """On, or not needed: another filesystem's group, or one another group stands in
    for (its row's reason says which and what is lost)."""
    return bool(g.get("enabled") or g.get("not_needed"))


def _doctor_checks(listing: list[dict], doctor: dict, rc: int, events: set[str]) -> dict:
    """Doctor's JSON against the recorder's own listing and against tracefs."""
    lines = {c["name"]: c for c in doctor.get("checks", [])}
    wrong = []
    for g in listing:
        line = lines.get(g["name"])
        if line is None or line["available"] is not _usable(g):
            wrong.append(f"{g['name']}: listing enabled={g['enabled']}, doctor says "
                         f"{line and line['available']}")
        elif not _usable(g) and g["name"] in CORE_GROUPS and not (
                line["required"] and line["detail"] and line["consequence"]):
            wrong.append(f"{g['name']}: missing core group not named as required with a reason")
    core_on = all(_usable(g) for g in listing if g["name"] in CORE_GROUPS)
    if doctor.get("ok") and not core_on:
        wrong.append("doctor ok although a core group is missing")
    if rc != (0 if doctor.get("ok") else 1):
        wrong.append(f"doctor exit status {rc} with ok={doctor.get('ok')}")
    for c in doctor.get("checks", []):
        if c["category"] == "tracepoint" and c["name"] in events and not c["available"]:
            wrong.append(f"{c['name']} is in tracefs but doctor says missing")
    return {"ok": not wrong, "detail": "; ".join(wrong) or
            f"{len(listing)} groups agree with --list-features; ok={doctor.get('ok')}"}


def _no_listing(out: Path, doctor) -> str:
    """Why doctor's JSON holds no listing: its own line on it, else its stderr."""
    if isinstance(doctor, dict):
        for c in doctor.get("checks", []):
            if c.get("name") in ("probe groups", "BTF") and not c.get("available"):
                return str(c.get("detail"))
    err = out / "doctor.err"
    return err.read_text(errors="replace")[-300:] if err.exists() else "no doctor output"


def _pairs(path: Path, sep: str) -> dict[str, str]:
    """"name<sep>value" lines of a file the guest wrote ({} when it did not)."""
    try:
        lines = path.read_text().splitlines()
    except OSError:
        return {}
    return dict(line.split(sep, 1) for line in lines if sep in line)


def guest_findings(out: Path) -> dict[str, str]:
    """What the tests found of the kernel (LOCKSCOPE_FINDINGS: "name<TAB>value" lines)."""
    return _pairs(out / "findings", "\t")


def io_wq_hashed(check: dict, found: str | None, expected: bool | None) -> dict:
    """The test passed, and the kernel hashed the O_DIRECT writes or not as expected."""
    if expected is None or not check["ok"]:
        return check
    want = "yes" if expected else "no"
    return {"ok": found == want,
            "detail": f"hashed: {found or 'not found'} (expected {want})"}


def judge(out: Path, host_findings: dict[str, dict], planned: set[str] | None = None) -> dict:
    """The kernel's result document: measured groups, every check, and the verdict.
    `planned`: the test checks this guest was given (guest_tests.planned; None: all)."""
    release = (out / "release").read_text().strip() if (out / "release").exists() else "?"
    expect = EXPECTED.get(release)
    st = steps(out)
    checks: dict[str, dict] = {}
    oops = guest_oops(out)
    checks["guest_ran"] = {"ok": "done" in st and not oops,
                           "detail": "; ".join(oops[:3]) or
                           ("all steps ran" if "done" in st else unfinished(out, st))}

    # the recorder's own listing, as doctor got it and drew its lines from (loading every
    # group is the slowest thing a guest does: it runs once)
    doctor = _json(out / "doctor.out")
    listing = doctor.get("groups") if isinstance(doctor, dict) else None
    groups = {g["name"]: g for g in listing or []}
    missing = {g: (groups[g].get("reason") or "off") if g in groups else "not listed"
               for g in CORE_GROUPS if not _usable(groups.get(g, {}))}
    want = expect.missing if expect else {}
    checks["core_groups"] = {
        "ok": listing is not None and set(missing) == set(want),
        "detail": (f"missing {sorted(missing)}, expected missing {sorted(want)}"
                   if listing is not None else "no listing: " + _no_listing(out, doctor))}

    events = set((out / "tracefs-events").read_text().split()) if (
        out / "tracefs-events").exists() else set()
    if isinstance(doctor, dict) and listing is not None:
        checks["doctor_matches_listing"] = _doctor_checks(
            listing, doctor, st.get("doctor", (-1, 0))[0], events)
    else:
        checks["doctor_matches_listing"] = {"ok": False, "detail": "no doctor JSON or listing"}

    outcomes = junit(out / "junit.xml")
    for test, name in TESTS.items():
        if planned is None or name in planned:
            got = outcomes.get(test)
            checks[name] = {"ok": got == "passed", "detail": got or "did not run"}
    findings = guest_findings(out)
    # where the kernel hashes io_uring's writes per file, the io-wq test and the io_uring
    # sweep measured hashed waits; else not (each as the guest was given it), with the
    # figures compared: for a failed check's detail, and the sweep's kept either way
    for name, finding, figures_of, always in (
            ("io_wq_hashed_ext4_sparse", "io_wq_hashed", "io_wq_hashed_figures", False),
            ("sweep_io_wq_hashed", "sweep_io_wq_hashed", "sweep_io_wq_figures", True)):
        if name not in checks:
            continue
        checks[name] = io_wq_hashed(checks[name], findings.get(finding),
                                    expect.io_wq_hashed if expect else None)
        figures = findings.get(figures_of, "")
        if figures and (always or not checks[name]["ok"]):
            checks[name]["detail"] += f": {figures[:600]}"

    for name, step in (("installed", "install"), ("uninstalled", "uninstall")):
        rc = st.get(step, (None, 0))[0]
        err = out / f"{step}.err"
        checks[name] = {"ok": rc == 0, "detail": f"exit {rc}" + (
            f": {err.read_text(errors='replace').strip()[-300:]}" if rc and err.exists() else "")}
    checks["host_unharmed"] = host_unharmed(out)

    findings = sweep_findings(out / "sweep" / "results.json")
    checks["sweep_findings"] = {
        "ok": same_findings(findings, host_findings),
        "detail": f"{findings} (this host: {host_findings})"}

    gaps = expect.gaps if expect else {}
    failed = [n for n, c in checks.items() if not c["ok"] and n not in gaps]
    closed = [n for n in gaps if checks.get(n, {}).get("ok")]
    for n, c in checks.items():
        c["known_gap"] = gaps.get(n)
    return {
        "release": release,
        "expected": expect is not None,
        "cpus": int((out / "cpus").read_text()) if (out / "cpus").exists() else None,
        "steps": {k: {"rc": v[0], "seconds": v[1]} for k, v in st.items() if k != "done"},
        "groups": {n: {"enabled": g.get("enabled"), "attach": g.get("attach"),
                       "not_needed": g.get("not_needed"), "extra": g.get("extra"),
                       "reason": g.get("reason")}
                   for n, g in groups.items()},
        "core_missing": missing,
        "doctor_ok": doctor.get("ok") if isinstance(doctor, dict) else None,
        "userland": userland(out),
        "sweep_findings": findings,
        "checks": checks,
        "failed": failed if expect else ["no expectations for this kernel"],
        "gaps_closed": closed,
        "pass": bool(expect) and not failed,
    }


def host_unharmed(out: Path) -> dict:
    """The kernel's taint is what it was before lockscope ran, and its log gained no
    warning (a host with kernel.panic_on_warn=1 panics on one)."""
    try:
        before, after = (int((out / f).read_text()) for f in ("tainted-before", "tainted-after"))
    except (OSError, ValueError):
        return {"ok": False, "detail": "the taint was not read before and after"}
    old = set(WARNING.findall((out / "dmesg-before").read_text(errors="replace"))) if (
        out / "dmesg-before").exists() else set()
    new = [w for w in WARNING.findall((out / "dmesg").read_text(errors="replace"))
           if w not in old] if (out / "dmesg").exists() else ["no dmesg"]
    wrong = ([f"tainted {before} -> {after}"] if after != before else []) + new[:3]
    return {"ok": not wrong, "detail": "; ".join(wrong) or f"tainted {after} throughout, "
            "no kernel warning"}


def userland(out: Path) -> dict[str, str]:
    """The guest's release, libc, own Python and database versions (guest-run wrote them)."""
    return _pairs(out / "userland", " ")


def junit(path: Path) -> dict[str, str]:
    """test name -> passed / failed / error / skipped, from pytest's --junitxml."""
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError):
        return {}
    got = {}
    for case in root.iter("testcase"):
        outcome = "passed"
        for child in case:
            if child.tag in ("failure", "error", "skipped"):
                outcome = {"failure": "failed"}.get(child.tag, child.tag)
                msg = (child.get("message") or "").splitlines()
                if msg:
                    outcome += ": " + msg[0][:200]
        got[case.get("name", "?")] = outcome
    return got
