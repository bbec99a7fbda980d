"""Record tests/data/usl-scipy-fits.json: the USL fit that analysis/usl.py made with
scipy.optimize.curve_fit, on every sweep the repository holds and on synthetic curves.

This recorded the reference once, with the scipy fit (its solver kept below as
`scipy_least_squares`, as usl.py had it, under usl.py's own checks, R² and peak),
before usl.py fitted with numpy alone; tests/unit/analysis/test_usl_numpy_fit.py
checks the numpy fit against it. scipy is no longer a
dependency: to record again, run it in a throwaway venv with scipy 1.17.1 added::

    PYTHONPATH=analyzer python tools/record_usl_fits.py tests/data/usl-scipy-fits.json
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from collections import defaultdict
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "analyzer"))

from lockscope.analysis.runs import workload_figures  # noqa: E402
from lockscope.analysis.stats import spread  # noqa: E402
from lockscope.analysis.usl import fit_usl, usl  # noqa: E402
from lockscope.results import load_results  # noqa: E402

# recorded sweeps: the analysis fits each filesystem's mean IOPS per thread count
SWEEPS = ["tests/data/sweep-ext4-xfs.json", "tests/data/experiments/exp3-write-results.json",
          "reports/examples/default-sweep-results.json"]
# docs/experiments.json: the experiments' measured MiB/s per thread count (one block
# size or case each, so proportional to the IOPS the analysis fitted)
FIGURES = "docs/experiments.json"
N6 = [1, 2, 4, 8, 16, 32]


def scipy_least_squares(n: np.ndarray, x: np.ndarray) -> tuple[float, float, float]:
    """analysis/usl.py's solver as it was: scipy's curve_fit, bounded, from λ at the
    fewest threads."""
    from scipy.optimize import OptimizeWarning, curve_fit

    lam0 = float(x[np.argmin(n)] / n.min())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OptimizeWarning)
        (lam, sigma, kappa), _ = curve_fit(
            usl, n, x, p0=[lam0, 0.1, 0.001],
            bounds=([0.0, 0.0, 0.0], [np.inf, 1.0, 1.0]), maxfev=20000)
    return float(lam), float(sigma), float(kappa)


def recorded() -> list[tuple[str, list[float], list[float]]]:
    out = []
    for rel in SWEEPS:
        # as analysis.scaling.build_points makes the points (without the traces)
        by_fs: dict[str, dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
        for run in load_results(ROOT / rel).get("runs") or []:
            by_fs[run["fs"]][int(run["threads"])].append(workload_figures(run)["iops"])
        for fs, by_n in by_fs.items():
            out.append((f"{rel}:{fs}", [float(n) for n in sorted(by_n)],
                        [spread(by_n[n])["mean"] for n in sorted(by_n)]))
    figures: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for num, exp in json.loads((ROOT / FIGURES).read_text())["experiments"].items():
        for case, fs, n, mib_s in exp["figures"]:
            figures[f"{FIGURES}:{num}:{case}:{fs}"].append((float(n), float(mib_s)))
    for name, pts in figures.items():
        pts.sort()
        out.append((name, [p[0] for p in pts], [p[1] for p in pts]))
    return out


def synthetic() -> list[tuple[str, list[float], list[float]]]:
    def exact(lam: float, sigma: float, kappa: float, n: list[int] = N6) -> list[float]:
        return [float(v) for v in usl(n, lam, sigma, kappa)]

    rng = np.random.default_rng(1)
    cases = [(f"usl lambda=1000 sigma={s} kappa={k}", N6, exact(1000.0, s, k))
             for s, k in [(0.05, 0.0), (0.3, 0.01), (0.02, 0.002), (0.0, 0.0), (0.5, 0.05),
                          (0.9, 0.2), (0.01, 0.0001)]]
    cases += [
        ("usl at 1..64, large lambda", [1, 2, 4, 8, 16, 32, 64], exact(2.5e5, 0.08, 0.0005,
                                                                         [1, 2, 4, 8, 16, 32, 64])),
        ("usl from 2 threads", [2, 4, 8, 16], exact(300.0, 0.1, 0.003, [2, 4, 8, 16])),
        ("usl, 3 points", [1, 2, 4], exact(50.0, 0.2, 0.01, [1, 2, 4])),
        ("flat", N6, [500.0] * 6),
        ("flat with noise", N6, [500.0, 505.0, 497.0, 502.0, 499.0, 503.0]),
        ("linear", N6, [120.0 * n for n in N6]),
        ("superlinear", N6, [100.0 * n ** 1.2 for n in N6]),
        ("retrograde", [1, 2, 4, 8, 16], [100.0, 180.0, 220.0, 200.0, 150.0]),
        ("falling from one thread", [1, 2, 4, 8], [1000.0, 800.0, 500.0, 300.0]),
        ("steep collapse", [1, 2, 4, 8, 16], [1000.0, 1100.0, 300.0, 50.0, 5.0]),
        ("repeats per thread count", [1, 1, 2, 2, 4, 4, 8, 8],
         [98.0, 102.0, 185.0, 190.0, 300.0, 310.0, 350.0, 340.0]),
        ("small throughput", [1, 2, 4, 8], [0.002, 0.0035, 0.005, 0.0055]),
    ]
    for seed_case in range(3):
        n = [1, 2, 4, 8, 16]
        x = usl(n, 500.0, 0.1, 0.005) * rng.normal(1, 0.01 * (1 + seed_case), len(n))
        cases.append((f"usl with {1 + seed_case}% noise", n, [float(v) for v in x]))
    cases += [
        ("two thread counts", [1, 4], [10.0, 20.0]),
        ("three runs, two thread counts", [1, 1, 4], [10.0, 11.0, 20.0]),
        ("zero throughput", [1, 2, 4], [10.0, 0.0, 30.0]),
        ("negative throughput", [1, 2, 4], [10.0, 20.0, -1.0]),
    ]
    return [(name, [float(v) for v in n], x) for name, n, x in cases]


def main() -> None:
    import scipy

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    out = ap.parse_args().out
    cases = [{"name": name, "threads": n, "throughput": x,
              "fit": fit_usl(n, x, solve=scipy_least_squares)}
             for name, n, x in recorded() + synthetic()]
    doc = {"about": "analysis/usl.py's fit_usl with scipy.optimize.curve_fit "
                    "(tools/record_usl_fits.py)",
           "scipy": scipy.__version__, "numpy": np.__version__, "cases": cases}
    out.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
