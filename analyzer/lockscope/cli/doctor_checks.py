"""``lockscope doctor``: what this kernel and machine allow, and what follows for the user
(its options: cli.doctor_cmd).

Attach types are probed by really loading and attaching a tiny program
(``lockscope-features``), never by reading kernel config files.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import asdict, dataclass

from ..binaries import find_binary
from ..capabilities import CAPABILITIES, memlock_charged
from ..capabilities import missing as missing_capabilities
from ..errors import LockscopeError
from ..run.probe_groups import CORE_GROUPS, ListingFailed, fallback_note, list_groups
from ..run.tracefs import TRACEFS, ensure_tracefs

ATTACH_KINDS = [
    ("tp_btf", "BTF-typed tracepoints: preferred attach for every probe group",
     "probe groups fall back to raw_tp"),
    ("raw_tp", "raw tracepoints: fallback when tp_btf is refused",
     "only plain tracepoints remain"),
    ("tracepoint", "classic tracepoints (need tracefs)", "last fallback is gone"),
    ("perf_event", "perf events (sampling)", "no CPU sampling"),
    ("kprobe", "kprobes: optional extras (e.g. time in ext4_dio_write_iter before iomap)",
     "optional extras off; tracepoints carry every feature"),
    ("fentry", "fentry/fexit: optional extras, cheaper than kprobes",
     "optional extras off; tracepoints carry every feature"),
]

TOOLS = [
    ("losetup", True, "loop devices for the default sweep's scratch filesystems"),
    ("mkfs.ext4", True, "ext4 scratch images for the default sweep"),
    ("mkfs.xfs", True, "XFS scratch images for the default sweep"),
    ("fio", False, "bench/engine_vs_fio cannot compare the workload engine with fio"),
    ("inferno-flamegraph", False, "flame graphs are skipped (cargo install inferno --locked)"),
    ("perf", False, "bench/accuracy and bench/overhead have no perf lock anchor"),
]


@dataclass
class Check:
    """One line of the doctor table."""

    name: str
    category: str
    available: bool
    required: bool
    detail: str
    consequence: str

    @property
    def status(self) -> str:
        return "available" if self.available else "missing"


def _features(tracepoints: list[str], timeout: float) -> dict:
    """Run lockscope-features; an empty dict when it cannot run at all (each of its
    checks then reads "not probed")."""
    try:
        exe = find_binary("lockscope-features")
        res = subprocess.run([exe, *tracepoints], capture_output=True, text=True,
                             timeout=timeout)
        return json.loads(res.stdout)
    except (LockscopeError, OSError, ValueError, subprocess.TimeoutExpired):
        return {}


def needed_tracepoints(groups: list[dict]) -> list[tuple[str, str]]:
    """The tracepoints the recorder's probe groups need (their ``needs``, from
    ``lockscope-record --list-features``; the functions of fentry/kprobe groups are
    left out): (system:event, what is lost without it), in group order. None is
    required by itself: a group may load through an alternative, and its own line
    carries the verdict."""
    out: dict[str, list[str]] = {}
    for g in groups:
        for tp in g.get("needs") or []:
            if not isinstance(tp, str) or ":" not in tp:
                continue
            lost = out.setdefault(tp, [])
            if g.get("lost") and g["lost"] not in lost:
                lost.append(str(g["lost"]))
    return [(tp, "; ".join(lost) or "its probe group is off") for tp, lost in out.items()]


VMLINUX_BTF = "/sys/kernel/btf/vmlinux"


def _group_check(g: dict) -> Check:
    """One probe group as a doctor line, as the recorder's own load and attach found it.
    The core groups are required: without any of them a sweep or attach verdict is wrong."""
    on = bool(g.get("enabled"))
    tps = ", ".join(g.get("tracepoints") or [])
    core = g.get("name") in CORE_GROUPS
    if on:
        detail = f"{g.get('attach')}: {tps}"
        note = fallback_note(g)
        if note:
            detail += f" ({note})"
    elif g.get("not_needed"):
        # another filesystem's group (--fs), or one another group stands in for
        # (lock_slowpath for lock): nothing is missing
        return Check(str(g["name"]), "probe group", True, core,
                     f"not needed: {g.get('reason') or 'another filesystem'}", "")
    else:
        detail = g.get("reason") or "off"
    consequence = "" if on else (g.get("lost") or "its measurements are lost")
    if not on and g.get("extra"):
        consequence += " (an optional extra)"
    if not on and core:
        consequence = "core group missing, the main job cannot run: " + consequence
    return Check(str(g["name"]), "probe group", on, core, detail, consequence)


def _groups_or_failure(timeout: float) -> tuple[list[dict] | None, list[Check]]:
    """The recorder's groups, or None and one failed required check saying why there are
    none."""
    if not os.path.exists(VMLINUX_BTF):
        return None, []  # the BTF line says it all: no group can load
    try:
        return list_groups(timeout), []
    except ListingFailed as e:
        return None, [Check("probe groups", "probe group", False, True, str(e),
                          "no probe group is known to work: the main job may not run")]


def _err(entry: dict) -> str:
    if not entry:
        return "not probed (lockscope-features is not built)"
    if entry.get("ok"):
        return "test program loaded and attached"
    return (f"{entry.get('stage', '?')} failed: {entry.get('error', '?')} "
            f"(errno {entry.get('errno', '?')})")


def run_checks(timeout: float) -> list[Check]:
    """Collect every check; never raises for a missing piece. timeout bounds the
    recorder's listing and the features probe, each."""
    return collect(timeout)[0]


def collect(timeout: float) -> tuple[list[Check], list[dict] | None]:
    """Every check, and the recorder's listing they were drawn from (None when it could
    not be had: no BTF, or the listing failed, which a check then says)."""
    checks: list[Check] = []
    root = os.geteuid() == 0
    who = "root" if root else f"uid {os.geteuid()}"
    lacking = {c.name for c in missing_capabilities()}
    for cap in CAPABILITIES:
        held = cap.name not in lacking
        detail = f"held ({who})" if held else f"missing ({who})"
        if not held and cap.name == "CAP_SYS_RESOURCE" and not memlock_charged():
            held, detail = True, f"missing ({who}), not needed: BPF memory is charged " \
                "to memory cgroups on this kernel, not to RLIMIT_MEMLOCK"
        checks.append(Check(cap.name, "privilege", held, cap.required, detail,
                            "" if held else cap.costs))
    root = root or not lacking     # what root could read, these capabilities can

    tracefs_ok, tracefs_detail = ensure_tracefs() if root else (
        os.path.isdir(f"{TRACEFS}/events"), f"{TRACEFS} (not mounted by doctor: not root)")
    listing, listing_failed = _groups_or_failure(timeout)
    groups = listing or []
    tracepoints = needed_tracepoints(groups)
    feats = _features([name for name, _ in tracepoints], timeout)

    bpf = feats.get("bpf_syscall", {})
    checks.append(Check("bpf() syscall", "kernel", bool(bpf.get("ok")), True,
                        "created a test map" if bpf.get("ok") else _err(bpf),
                        "" if bpf.get("ok") else "no recording: lock waits cannot be measured"))
    btf_ok = os.path.exists(VMLINUX_BTF)
    checks.append(Check("BTF", "kernel", btf_ok, True,
                        VMLINUX_BTF if btf_ok else
                        f"this kernel has no vmlinux BTF (no {VMLINUX_BTF}: built without "
                        "CONFIG_DEBUG_INFO_BTF)",
                        "" if btf_ok else "lockscope cannot record here: its CO-RE probes "
                        "need the kernel's BTF"))
    checks.append(Check("tracefs", "kernel", tracefs_ok, False, tracefs_detail,
                        "" if tracefs_ok else "classic tracepoints and format files unavailable; "
                        "tp_btf and raw_tp still work"))

    attach = feats.get("attach", {})
    for kind, what, lost in ATTACH_KINDS:
        entry = attach.get(kind, {})
        ok = bool(entry.get("ok"))
        checks.append(Check(kind, "attach", ok, False, _err(entry), what if ok else lost))
    if attach and not (attach.get("tp_btf", {}).get("ok") or attach.get("raw_tp", {}).get("ok")):
        checks[-len(ATTACH_KINDS)].required = True  # neither tp_btf nor raw_tp: nothing attaches

    tps = feats.get("tracepoints", {})
    for name, lost in tracepoints:
        entry = tps.get(name)
        sysname, event = name.split(":")
        on_tracefs = os.path.exists(f"{TRACEFS}/events/{sysname}/{event}")
        ok = bool(entry and (entry.get("btf") or entry.get("tracefs"))) or on_tracefs
        where = [w for w in ("btf", "tracefs") if entry and entry.get(w)] or (
            ["tracefs"] if on_tracefs else [])
        checks.append(Check(name, "tracepoint", ok, False,
                            "found in " + " and ".join(where) if ok else "not in BTF or tracefs",
                            "" if ok else lost))

    checks.extend(_group_check(g) for g in groups)
    checks.extend(listing_failed)

    loop_ok = os.path.exists("/dev/loop-control") and shutil.which("losetup") is not None
    for tool, required, why in TOOLS:
        ok = loop_ok if tool == "losetup" else shutil.which(tool) is not None
        detail = (shutil.which(tool) or "") if ok else "not found"
        if tool == "losetup":
            detail = "/dev/loop-control and losetup" if ok else "no /dev/loop-control or losetup"
        checks.append(Check(tool, "tool", ok, required, detail, "" if ok else why))

    for binary, why in (("lockscope-record", "no recording (run make)"),
                        ("lockscope-load", "no built-in workload (run make)")):
        try:
            path, ok = find_binary(binary), True
        except LockscopeError:
            path, ok = "not built", False
        checks.append(Check(binary, "lockscope", ok, False, path, "" if ok else why))
    return checks, listing


def to_json(checks: list[Check], listing: list[dict] | None = None) -> dict:
    """The stable machine-readable form of ``lockscope doctor --json``. ``groups``: the
    recorder's own ``--list-features`` groups the probe-group lines were drawn from, as
    it gave them (null when there was no listing), so that loading every group, minutes
    on a slow machine, need not be repeated to see the details."""
    return {
        "ok": all(c.available for c in checks if c.required),
        "checks": [dict(asdict(c), status=c.status) for c in checks],
        "groups": listing,
    }


def render(checks: list[Check], console) -> None:
    from rich.table import Table

    table = Table(title="lockscope doctor", show_lines=False)
    for col in ("check", "kind", "status", "detail", "what follows"):
        table.add_column(col, overflow="fold")
    for c in checks:
        status = "[green]available[/]" if c.available else (
            "[red]missing (required)[/]" if c.required else "[yellow]missing[/]")
        table.add_row(c.name, c.category, status, c.detail, c.consequence or "-")
    console.print(table)
    missing = [c.name for c in checks if c.required and not c.available]
    if missing:
        console.print(f"[red]required pieces missing:[/] {', '.join(missing)}")
    else:
        console.print("[green]all required pieces are present: lockscope can record here[/]")


def run_doctor(args) -> int:
    if any(c.required for c in missing_capabilities()):
        print("lockscope doctor: without CAP_BPF and CAP_PERFMON the BPF checks fail; "
              "reporting what can be seen", file=sys.stderr)
    checks, listing = collect(args.list_timeout)
    if args.json:
        print(json.dumps(to_json(checks, listing), indent=2))
    else:
        from ..console import stdout_console

        render(checks, stdout_console())
    return 0 if to_json(checks)["ok"] else 1
