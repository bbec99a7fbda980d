"""The terminal table of a database preset sweep: per client count, the server's
transactions per second and where its threads' time went (analysis.<fs>.server)."""

from __future__ import annotations

from ..analysis.waitclass import CLASSES, LOSS_CLASSES
from ..schema import FsAnalysis


def server_table(fs: str, a: FsAnalysis, title: str):
    from rich.table import Table

    table = Table(title=f"{fs}: {title}", title_justify="left")
    for col in ("clients", "TPS", "efficiency", "on CPU", "waiting for work", "lost",
                "largest loss"):
        table.add_column(col, justify="right")
    table.caption = "server threads on average in each state over the timed phase"
    for p in a["server"]["points"]:
        cells = [str(p["threads"]), f"{p['tps']['mean']:,.0f}", f"{p['efficiency']:.0%}"]
        if p.get("traced"):
            t = p["threads_by_class"]
            top = max(LOSS_CLASSES, key=lambda c: t[c])
            cells += [f"{t['oncpu']:.2f}", f"{t['idle']:.2f}",
                      f"{p['lost_ns'] / p['window_s'] / 1e9:.2f}",
                      f"{CLASSES[top]} {p['loss_share'][top]:.0%}"]
        else:
            cells += ["n/a"] * 4
        table.add_row(*cells)
    return table
