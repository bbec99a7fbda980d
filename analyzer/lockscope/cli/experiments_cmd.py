"""``lockscope experiments``: rerun the published ext4-vs-XFS experiments through the sweep
and rewrite docs/experiments.md. Its options; what reruns them (cli.experiments_run) is
imported only when it runs, as every start of lockscope builds this parser."""

from __future__ import annotations

# Shown at the end of --help (command, what it does), as libbpf-tools do.
EXAMPLES = [
    ("lockscope experiments", "all five, ~15 min: docs/experiments.md"),
    ("lockscope experiments --only 1,4", "the others keep their last figures"),
    ("lockscope experiments --scale quick --doc /tmp/x.md", "seconds: does everything run?"),
]

DEFAULT_DOC = "docs/experiments.md"


def add_parser(sub) -> None:
    p = sub.add_parser(
        "experiments", help="rerun the published ext4-vs-XFS experiments and write the tables",
        description="Rerun the five reference experiments (fio, sysbench fileio, "
        "lockscope-load, dd) through lockscope sweep on fresh loop images, and write "
        "docs/experiments.md: published figures beside this kernel's, as ratios, with "
        "lockscope's verdict and whether each published claim holds here.")
    p.add_argument("--only", type=_numbers, default=None, metavar="N,...",
                   help="rerun only these experiments (1-5); the others keep their last "
                   "figures from the data file beside the document")
    p.add_argument("--out", default=None, metavar="DIR",
                   help="where the sweeps' results go (default: ./lockscope-experiments-"
                   "YYYYmmdd-HHMMSS)")
    p.add_argument("--doc", default=DEFAULT_DOC, metavar="FILE",
                   help=f"the document to (re)write (default: {DEFAULT_DOC}); a file there "
                   "that this command did not write is never overwritten")
    p.add_argument("--scale", choices=("full", "quick"), default="full",
                   help="full: the documented sizes (minutes); quick: tiny sizes (seconds), "
                   "for a check that everything runs")
    p.set_defaults(func=run)


def _numbers(text: str) -> list[int]:
    import argparse

    from ..experiments.catalog import EXPERIMENTS

    out = []
    for part in text.split(","):
        part = part.strip()
        if not part.isdigit() or int(part) not in EXPERIMENTS:
            raise argparse.ArgumentTypeError(
                f"'{part}' is not an experiment (use {', '.join(map(str, EXPERIMENTS))})")
        out.append(int(part))
    return sorted(set(out))


def run(args) -> int:
    from .experiments_run import run_experiments

    return run_experiments(args)
