"""The kernel-support summary the matrix measured (docs/kernel-matrix.json) and the tables
rendered from it: README's short one and docs/kernels.md's per-group one;
tests/unit/project/test_kernel_support.py checks both documents against the JSON."""

from __future__ import annotations

from expectations import CORE_GROUPS

README_HEAD = ("| host | kernel | glibc | Python | MariaDB / PostgreSQL | stands for "
               "| release installs | core groups loaded | what is lost |\n"
               "|---|---|---|---|---|---|---|---|---|")
GROUPS_HEAD_START = "| probe group |"


def _lost(groups: dict[str, dict]) -> list[str]:
    """Groups that neither loaded nor are replaced or not needed (not extras)."""
    return [n for n, g in groups.items()
            if not g["enabled"] and not g["not_needed"] and not g.get("extra")]


def support_doc(summary: dict) -> dict:
    """What a user needs from a matrix run: per kernel, which core groups loaded, which
    stand-ins and what is lost (with the kernel's reasons), which checks held, and how
    long each step took."""
    rows = []
    for d in summary["kernels"]:
        groups = d["groups"]
        rows.append({
            "release": d["release"], "upstream": d["upstream"], "package": d["package"],
            "package_version": d["package_version"], "stands_for": d["stands_for"],
            "core_loaded": [g for g in CORE_GROUPS if g not in d["core_missing"]],
            # a core group another group stands in for (e.g. lock from the slow paths)
            "core_replaced": {g: groups[g]["reason"] for g in CORE_GROUPS
                              if g in groups and not groups[g]["enabled"]
                              and groups[g]["not_needed"]},
            "core_missing": d["core_missing"],
            "groups": {n: {"attach": g["attach"], "enabled": g["enabled"],
                           "not_needed": g["not_needed"], "extra": g.get("extra"),
                           "reason": g["reason"]} for n, g in groups.items()},
            "lost": _lost(groups),
            "doctor_ok": d["doctor_ok"],
            "host": d.get("host"), "userland": d.get("userland") or {},
            "checks_passed": sorted(n for n, c in d["checks"].items() if c["ok"]),
            "checks_failed": sorted(n for n, c in d["checks"].items() if not c["ok"]),
            # boots that stopped midway and were booted again (run-matrix), with why
            "stopped_boots": d.get("stopped_boots", []),
            "seconds": {"wall": d["wall_seconds"],
                        **{s: round(v["seconds"]) for s, v in d["steps"].items()}},
            # how much slower than the reference this guest ran (guest_speed.py): its
            # wall seconds over this factor are its expected length at reference speed
            "speed": d.get("speed"),
            "one_guest_tests": d.get("one_guest_tests") or [],
        })
    return {"host_release": summary["host_release"], "sweep": summary["sweep"],
            "cpus": summary["cpus"], "jobs": summary["jobs"],
            "cpu_share": summary.get("cpu_share"), "speed_factor": summary.get("speed_factor"),
            "seconds": summary["seconds"], "kernels": rows}


def readme_table(doc: dict) -> str:
    lines = [README_HEAD]
    for k in doc["kernels"]:
        loaded = ", ".join(g + (" (stand-in)" if g in k["core_replaced"] else "")
                           for g in k["core_loaded"]) or "none"
        # the kernel's reasons are in docs/kernels.md and docs/kernel-matrix.json
        lost = [f"{g} (core)" for g in k["core_missing"]] + k["lost"]
        if "lock" in k["core_replaced"]:   # lock_slowpath: rwsem and mutex slow paths
            lost.insert(0, "lock waits other than rwsem and mutex")
        failed = [c for c in k["checks_failed"] if c not in ("core_groups", "installed")]
        if failed:
            lost.append("checks failing: " + ", ".join(failed))
        u = k["userland"]
        dbs = f"{u.get('mariadb') or '-'} / {u.get('postgres') or '-'}"
        installs = "no" if "installed" in k["checks_failed"] else "yes"
        lines.append(f"| {k.get('host') or '?'} | {k['upstream']} | {u.get('glibc', '?')} | "
                     f"{u.get('python', '?')} | {dbs} | {k['stands_for']} | {installs} | "
                     f"{loaded} | {', '.join(lost) or 'nothing'} |")
    return "\n".join(lines)


def _cell(g: dict | None) -> str:
    if g is None:
        return "not listed"
    if g["enabled"]:
        return g["attach"]
    return "not needed" if g["not_needed"] else "off"


def groups_table(doc: dict) -> str:
    """Per probe group, the attach kind each kernel took, or off / not needed."""
    kernels = doc["kernels"]
    names = list(dict.fromkeys(n for k in kernels for n in k["groups"]))
    lines = [GROUPS_HEAD_START + " " + " | ".join(k["upstream"] for k in kernels) + " |",
             "|---" * (len(kernels) + 1) + "|"]
    for n in names:
        lines.append(f"| {n} | " + " | ".join(_cell(k["groups"].get(n)) for k in kernels)
                     + " |")
    lines.append("| matrix time (s) | " + " | ".join(
        f"{k['seconds']['wall']:.0f}" for k in kernels) + " |")
    return "\n".join(lines)


def _replace(text: str, starts: str, table: str, where: str) -> str:
    """text with the table whose first line starts with `starts` replaced by `table`."""
    lines = text.splitlines(keepends=True)
    start = next((i for i, line in enumerate(lines) if line.startswith(starts)), None)
    if start is None:
        raise SystemExit(f"matrix: {where} has no table starting {starts!r} to replace")
    end = start
    while end < len(lines) and lines[end].startswith("|"):
        end += 1
    return "".join(lines[:start]) + table + "\n" + "".join(lines[end:])


def with_readme_table(readme: str, doc: dict) -> str:
    return _replace(readme, README_HEAD.splitlines()[0], readme_table(doc), "README.md")


def with_groups_table(kernels_md: str, doc: dict) -> str:
    return _replace(kernels_md, GROUPS_HEAD_START, groups_table(doc), "docs/kernels.md")
