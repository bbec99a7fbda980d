"""The terminal summary at the end of an attach: wait classes, files, verdict."""

from __future__ import annotations

from pathlib import Path
from typing import cast

from ..analysis.recorder_cost import shed_phrase
from ..analysis.stack_shares import stacks_phrase
from ..schema import AttachAnalysis, ResultsDoc, attach_analysis
from .iowq_line import hashed_text

TOP_FILES = 8


def print_attach_summary(doc: ResultsDoc, out: Path, report) -> None:
    from rich.table import Table

    from ..console import stdout_console

    con = stdout_console()
    # an attach without analysis still prints its target (every figure then 0)
    a = attach_analysis(doc.get("analysis")) or cast(AttachAnalysis, {})
    t = doc.get("target") or {}
    wall = a.get("window_s") or 0.0
    window = a.get("observed_s") or wall  # thread averages: over the observed time
    con.print(f"[bold]{', '.join(t.get('comms') or []) or t.get('value')}[/] "
              f"({t.get('how')} {t.get('value')}): {a.get('threads', 0)} threads, "
              f"{wall:.1f} s" + (f", {a['sampling']}" if a.get("sampling") else "")
              + f", ended by {doc['attach'].get('ended')}", highlight=False)
    o = a.get("overhead")
    if o and o.get("bpf_cpu_share") is not None:
        shed = shed_phrase(o["shed"])
        con.print(f"recorder cost: {o['bpf_cpu_share']:.1%} of the CPUs in BPF, "
                  f"{o.get('user_cpu_share') or 0:.1%} in its own process"
                  + (f"; shed {shed}" if shed else ""), highlight=False)
    stacks = stacks_phrase(a.get("stacks") or {})
    if stacks:
        con.print(stacks, highlight=False)
    tp = a.get("throughput") or {}
    if tp.get("values"):
        vals = tp["values"]
        con.print(f"throughput: {tp['mean']:,.1f} {tp['signal']} (min {min(vals):,.1f}, "
                  f"max {max(vals):,.1f} over {len(vals)} interval(s))", highlight=False)
    table = Table(title="where the threads' time went", title_justify="left")
    for col in ("class", "threads", "of lost time", "classed by"):
        table.add_column(col, justify="left" if col in ("class", "classed by") else "right")
    table.add_row("on CPU", f"{a.get('oncpu_ns', 0) / 1e9 / window if window else 0:.2f}",
                  "", "")
    for c in a.get("classes") or []:
        if c["ns"] <= 0:
            continue
        how = c["how"][0] if c["how"] else None
        table.add_row(c["name"], f"{c['threads']:.2f}",
                      "not lost" if c["class"] == "idle" else f"{c['loss_share']:.0%}",
                      f"{how['method']}: {how['detail']}" if how else "")
    con.print(table)
    if hashed_text(a):
        con.print(hashed_text(a), highlight=False)
    files = [f for f in a.get("files") or [] if f["engine"] or f["inode_lock_ns"]][:TOP_FILES]
    if files:
        ft = Table(title="files", title_justify="left")
        for col in ("file", "role", "writes", "fsyncs", "O_DSYNC writes", "sync_file_range",
                    "inode-lock wait"):
            ft.add_column(col, justify="left" if col in ("file", "role") else "right")
        for f in files:
            ft.add_row(f["path"] or "?", f["label"],
                       f"{f['dio_writes'] + f['buffered_writes']:,}",
                       *((f"{f[k]:,}" if k in f else "n/a")
                         if a.get("fsyncs_per_file") else "n/a"
                         for k in ("fsyncs", "dsync_writes", "sync_file_ranges")),
                       f"{f['inode_lock_ns'] / 1e9:.3f} s" if f["inode_lock_ns"] else "")
        con.print(ft)
    v = a.get("verdict") or {}
    con.print(f"[bold]{v.get('kind')}[/] ({v.get('confidence')} confidence): "
              f"{v.get('summary')}", highlight=False)
    for e in v.get("evidence") or []:
        con.print(f"  - {e}", highlight=False)
    con.print(f"results: {out / 'results.json'}" + (f"\nreport:  {report}" if report else ""),
              highlight=False)
