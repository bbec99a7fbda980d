#!/usr/bin/env python3
"""Render the example report shown in the README: a results.json and a screenshot.

    python tools/render_example.py                     # synthetic recording
    python tools/render_example.py results.json --name ext4-vs-xfs

Writes ``reports/examples/<name>-results.json`` and
``reports/examples/<name>-report.png`` (the top of the HTML report, 1280 px
wide, as headless Chromium draws it). Without a results.json the recording is
synthetic (tools/synthetic_results.py) and the name is ``synthetic``, so that
it is never mistaken for a measurement; replace it with a real sweep's
results.json when one exists.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
EXAMPLES = ROOT / "reports" / "examples"
sys.path.insert(0, str(ROOT / "analyzer"))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results", nargs="?", help="a real results.json (default: synthetic)")
    ap.add_argument("--name", help="file name prefix (default: synthetic, or 'sweep')")
    ap.add_argument("--height", type=int, default=2100, help="screenshot height in px")
    args = ap.parse_args()

    from lockscope.report import render_report
    from browser import check_page
    from lockscope.results import load_results

    if args.results:
        doc = load_results(args.results)
        name = args.name or "sweep"
    else:
        from synthetic_results import make_results

        doc = make_results(stacks=40, repeats=2, seed=1)
        name = args.name or "synthetic"
    EXAMPLES.mkdir(parents=True, exist_ok=True)
    results = EXAMPLES / f"{name}-results.json"
    results.write_text(json.dumps(doc, indent=1) + "\n")
    with tempfile.TemporaryDirectory(prefix="lockscope-example-") as tmp:
        render_report(doc, tmp, formats=("html",), source=os.path.relpath(results, ROOT))
        seen = check_page(Path(tmp) / "report.html", screenshot=Path(tmp) / "shot.png",
                          height=args.height)
        if seen.errors:
            print("\n".join(seen.errors), file=sys.stderr)
            return 1
        shutil.copyfile(Path(tmp) / "shot.png", EXAMPLES / f"{name}-report.png")
    print(f"wrote {results.relative_to(ROOT)} and "
          f"{(EXAMPLES / f'{name}-report.png').relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
