"""``lockscope scenarios``: list the built-in scenarios."""

from __future__ import annotations

from ..sweep_choices import DEFAULT_SCENARIO

# Shown at the end of --help (command, what it does), as libbpf-tools do.
EXAMPLES = [
    ("lockscope scenarios", "the built-in scenarios"),
    ("lockscope scenarios --json", "the same, as JSON"),
]


def add_parser(sub) -> None:
    p = sub.add_parser("scenarios", help="list the built-in scenarios",
                       description="List the built-in scenarios, with the fio options each "
                       "runs and what each is expected to show.")
    p.add_argument("--json", action="store_true", help="print machine-readable JSON")
    p.set_defaults(func=run)


def run(args) -> int:
    # imported here: every start of lockscope imports this module for its parser
    import json

    from ..run.scenarios import SCENARIOS

    if args.json:
        print(json.dumps([{"name": s.name, "description": s.description, "job": s.job,
                           "expect": s.expect, "reference": s.reference,
                           "default": s.name == DEFAULT_SCENARIO} for s in SCENARIOS], indent=2))
        return 0
    from rich.table import Table

    from ..console import stdout_console

    table = Table(title="lockscope scenarios")
    for col in ("name", "what runs", "expected", "fio options"):
        table.add_column(col, overflow="fold")
    for s in SCENARIOS:
        opts = " ".join(f"--{k}={v}" for k, v in s.job.items())
        table.add_row(s.name + (" (default)" if s.name == DEFAULT_SCENARIO else ""),
                      s.description, s.expect, opts)
    stdout_console().print(table)
    return 0
