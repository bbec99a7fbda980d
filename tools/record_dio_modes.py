"""Record tests/data/dio-lock-modes.json: the DIO write classes and measured i_rwsem
modes of the write patterns whose locking changed between kernels, on this kernel.

Each case is two lockscope-load writers on one file of a fresh loop ext4 or XFS for
two seconds, traced by lockscope-record; the document keeps each trace's ``kernel``,
``dio_lock_mode`` and the file's ``dio`` entry (what the locking rules read). Needs
root, BPF and ``make bins``::

    sudo .venv/bin/python tools/record_dio_modes.py tests/data/dio-lock-modes.json
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "analyzer"), str(ROOT / "tests")]

from lockscope.run.loopfs import make_loopfs  # noqa: E402

from dio_cases import DioCase, record_case  # noqa: E402

CASES = [DioCase("ext4", "fallocated", False), DioCase("ext4", "fallocated", True),
         DioCase("ext4", "written", False), DioCase("ext4", "written", True),
         DioCase("ext4", "sparse", False), DioCase("xfs", "written", True),
         DioCase("xfs", "sparse", True), DioCase("xfs", "append", False)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    out = ap.parse_args().out
    cases = {}
    for fstype in ("ext4", "xfs"):
        fs = make_loopfs(fstype, size_bytes=1 << 30)
        try:
            for case in (c for c in CASES if c.fstype == fstype):
                with tempfile.TemporaryDirectory() as tmp:
                    doc, entry = record_case(fs.path, case, Path(tmp) / "trace.json")
                cases[case.name] = {"kernel": doc["kernel"],
                                    "dio_lock_mode": doc["dio_lock_mode"], "dio": [entry]}
                print(case.name, {k: entry[k] for k in ("writes", "unaligned", "unwritten")})
        finally:
            fs.destroy()
    out.write_text(json.dumps({"cases": cases}, indent=1) + "\n")


if __name__ == "__main__":
    main()
