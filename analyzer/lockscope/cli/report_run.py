"""``lockscope report`` once its options are parsed (cli.report_cmd): load a recording,
render its report, and say what was written."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import UsageError

if TYPE_CHECKING:
    from ..report.forked import Standby

SUFFIX_FORMATS = {".md": "md", ".markdown": "md", ".json": "json", ".html": "html",
                  ".htm": "html"}


def _format(args: argparse.Namespace) -> str:
    if args.format:
        return args.format
    if args.output and args.output != "-":
        return SUFFIX_FORMATS.get(Path(args.output).suffix.lower(), "html")
    return "html"


def run_report(args: argparse.Namespace) -> int:
    """Load, render, and say what was written; notes (e.g. no inferno) go to stderr."""
    from ..report.render import plot_standby

    if _format(args) in ("html", "md") and args.output != "-":
        # the plots' child imports matplotlib while this process loads the results
        with plot_standby() as standby:
            return _run(args, standby)
    return _run(args, None)


def _run(args: argparse.Namespace, standby: Standby | None) -> int:
    from ..report.fmt import size_bytes
    from ..report.forms import form_of
    from ..report.jsonout import dumps
    from ..report.render import DEFAULT_NAMES, print_notes, render_report
    from ..results import load_results
    from ..run.outdir import check_dir

    doc = load_results(args.results)
    src = Path(args.results)
    source = str(src / "results.json" if src.is_dir() else src)
    fmt = _format(args)
    if fmt == "json" and (args.output in (None, "-")):
        form = form_of(doc)
        sys.stdout.write(dumps(form.json(doc, form.model(doc, source), source)))
        return 0
    if args.output == "-":
        raise UsageError(f"--format {fmt} writes files; give -o FILE (only json can go to "
                         "standard output)")
    target = Path(args.output) if args.output else (
        (src if src.is_dir() else src.parent) / DEFAULT_NAMES[fmt])
    check_dir(target.parent, "-o")
    result = render_report(doc, target.parent if str(target.parent) else ".", [fmt],
                           names={fmt: target.name}, flame=not args.no_flame,
                           force=args.force, source=source, standby=standby)
    print_notes(result)
    path = result.outputs[fmt]
    extra = ""
    svgs = [f for f in result.files if f.suffix == ".svg"]
    if result.flame_dir is not None:
        extra = f"; {len(svgs)} flame graph(s) and folded stacks in {result.flame_dir}/"
    pngs = [f for f in result.files if f.suffix == ".png"]
    if pngs:
        extra += f"; {len(pngs)} plot PNG(s) beside it"
    print(f"lockscope report: wrote {path} ({size_bytes(path.stat().st_size)}){extra}")
    return 0
