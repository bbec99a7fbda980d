"""The kernel-support summary the matrix measured (docs/kernel-matrix.json) and README's
table rendered from it; tests/test_kernel_matrix.py checks README against it."""

from __future__ import annotations

from expectations import CORE_GROUPS

TABLE_HEAD = ("| kernel | stands for | core groups loaded | what is missing |\n"
              "|---|---|---|---|")


def support_doc(summary: dict) -> dict:
    """What a user needs from a matrix run: per kernel, which core groups loaded and what
    is missing (with the kernel's reason), and which checks held."""
    rows = []
    for d in summary["kernels"]:
        rows.append({
            "release": d["release"], "upstream": d["upstream"], "package": d["package"],
            "package_version": d["package_version"], "stands_for": d["stands_for"],
            "core_loaded": [g for g in CORE_GROUPS if g not in d["core_missing"]],
            # a core group another group stands in for (e.g. lock from the slow paths)
            "core_replaced": {g: d["groups"][g]["reason"] for g in CORE_GROUPS
                              if g in d["groups"] and not d["groups"][g]["enabled"]
                              and d["groups"][g]["not_needed"]},
            "core_missing": d["core_missing"],
            "doctor_ok": d["doctor_ok"],
            "checks_passed": sorted(n for n, c in d["checks"].items() if c["ok"]),
            "checks_failed": sorted(n for n, c in d["checks"].items() if not c["ok"]),
        })
    return {"host_release": summary["host_release"], "sweep": summary["sweep"],
            "kernels": rows}


def readme_table(doc: dict) -> str:
    lines = [TABLE_HEAD]
    for k in doc["kernels"]:
        loaded = ", ".join(g + (" (stand-in)" if g in k["core_replaced"] else "")
                           for g in k["core_loaded"]) or "none"
        # the kernel's reasons are in docs/kernel-matrix.json and docs/kernels.md
        missing = ", ".join(k["core_missing"])
        failed = [c for c in k["checks_failed"] if c != "core_groups"]
        if failed:
            missing += ("; " if missing else "") + "checks failing: " + ", ".join(failed)
        lines.append(f"| {k['upstream']} (`{k['package']}`) | {k['stands_for']} | {loaded} | "
                     f"{missing or 'nothing'} |")
    return "\n".join(lines)


def with_table(readme: str, doc: dict) -> str:
    """README with its kernel table replaced by the one rendered from doc."""
    head = TABLE_HEAD.splitlines()[0]
    lines = readme.splitlines(keepends=True)
    start = next((i for i, line in enumerate(lines) if line.rstrip("\n") == head), None)
    if start is None:
        raise SystemExit(f"matrix: README has no kernel table (a line {head!r}) to replace")
    end = start
    while end < len(lines) and lines[end].startswith("|"):
        end += 1
    return "".join(lines[:start]) + readme_table(doc) + "\n" + "".join(lines[end:])
