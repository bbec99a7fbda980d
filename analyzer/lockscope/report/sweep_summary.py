"""The terminal summary at the end of a sweep: a table per filesystem and the verdict."""

from __future__ import annotations

from pathlib import Path

from ..analysis.recorder_cost import cost_sentence, shed_notes
from ..schema import ResultsDoc, Verdict, comparison_of, fs_analyses
from .iowq_line import sweep_hashed_text


def print_summary(doc: ResultsDoc, out: Path, report: Path | None) -> None:
    from rich.table import Table

    from ..console import stdout_console

    con = stdout_console()
    analysis = doc.get("analysis")
    for fs, a in fs_analyses(analysis).items():
        if a.get("server"):
            from .server_summary import server_table

            con.print(server_table(fs, a, doc["workload"]["scenario"]))
            _print_verdict(con, a["verdict"])
            continue
        table = Table(title=f"{fs}: {doc['workload']['scenario']}", title_justify="left")
        for col in ("threads", "MiB/s", "IOPS", "p99 ms", "efficiency", "inode-lock wait"):
            table.add_column(col, justify="right")
        for p in a["points"]:
            share = (p.get("time_share") or {}).get("inode_lock")
            table.add_row(str(p["threads"]), f"{p['mib_s']:.1f}", f"{p['iops']['mean']:,.0f}",
                          f"{p['clat_ns']['p99'] / 1e6:.2f}", f"{p['efficiency']:.0%}",
                          "n/a" if share is None else f"{share:.0%}")
        con.print(table)
        _print_verdict(con, a["verdict"])
        hashed = dict(a.get("io_uring_hashed") or {})
        if hashed.get("named") or ((doc.get("workload") or {}).get("job") or {}).get(
                "ioengine") == "io_uring":
            con.print(sweep_hashed_text(hashed), highlight=False)
    cmp = comparison_of(analysis)
    if cmp:
        con.print(f"[bold]comparison[/]: {cmp['summary']}", highlight=False)
    runs = doc.get("runs") or []
    cost = cost_sentence(runs)
    if cost:
        con.print(f"[bold]cost[/]: {cost}", highlight=False)
    for note in shed_notes(runs):
        con.print(note, highlight=False)
    con.print(f"results: {out / 'results.json'}" + (f"\nreport:  {report}" if report else ""),
              highlight=False)


def _print_verdict(con, v: Verdict) -> None:
    con.print(f"[bold]{v['kind']}[/] ({v['confidence']} confidence): {v['summary']}",
              highlight=False)
