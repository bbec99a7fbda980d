"""What every benchmark script starts with: the checkout's root, its analyzer on the
import path, and the checkout's virtualenv (numpy, matplotlib, jinja2...) as the
interpreter, so that `bench/NAME` works whichever python3 is first on PATH."""

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VENV = ROOT / ".venv"

if (VENV / "bin" / "python").exists() and Path(sys.prefix).resolve() != VENV.resolve():
    os.execv(str(VENV / "bin" / "python"), [str(VENV / "bin" / "python"), *sys.argv])
sys.path.insert(0, str(ROOT / "analyzer"))
