"""``lockscope report``: re-render the report of a recording (no root needed). Its options;
what renders (cli.report_run) is imported only when it runs, as every start of lockscope
builds this parser."""

from __future__ import annotations

import argparse

# Shown at the end of --help (command, what it does), as libbpf-tools do.
EXAMPLES = [
    ("lockscope report results.json", "report.html beside it, self-contained"),
    ("lockscope report lockscope-20250101-120000/", "the directory holding results.json"),
    ("lockscope report results.json -o issue.md", "Markdown and PNG plots"),
    ("lockscope report results.json --format json", "the analysis as JSON"),
]


def add_parser(sub) -> None:
    """Register the ``report`` subcommand."""
    p = sub.add_parser(
        "report", help="render the report of a recording (HTML, Markdown or JSON)",
        description="Render results.json (or a sweep's output directory) as one self-contained "
        "HTML page, as Markdown with PNG plots, or as the analysis in JSON. Flame graphs "
        "(inferno) are written to flame/ beside the report.")
    p.add_argument("results", help="results.json, or the directory holding it")
    p.add_argument("-o", "--output", help="report file (default: report.<format> beside "
                   "results.json; for json, standard output)")
    p.add_argument("--format", choices=("html", "md", "json"),
                   help="output format (default: from the -o suffix, else html)")
    p.add_argument("--force", action="store_true",
                   help="overwrite files even if lockscope did not write them")
    p.add_argument("--no-flame", action="store_true", help="skip flame graphs")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from .report_run import run_report

    return run_report(args)
