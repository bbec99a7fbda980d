"""The numpy USL fit (analysis/usl.py) against the answers scipy's curve_fit gave on the
repository's sweeps and on synthetic curves (tests/data/usl-scipy-fits.json, recorded by
tools/record_usl_fits.py).

Both minimise the same sum of squared residuals, so the fits agree when they reach the same
minimum; scipy stopped when a step changed the sum by less than 1e-8 of it, a little short
of the minimum, and where the data hardly fix a parameter (κ of a curve without a peak, σ of
a flat one) a step that leaves the sum as it is moves that parameter far: raw κ can differ
by orders of magnitude with the same curve. So what is compared is what the fit is for:

- the sum of squared residuals: no worse than scipy's by more than 1e-6 of it, and R² to
  1e-6;
- the fitted curve at the measured thread counts, and σ, κ and λ only as far as the data fix
  them: at a (bounded) least-squares minimum a fit whose sum is higher by `gap` lies within
  ‖J δ‖² ≤ gap of it, J the curve's Jacobian in (λ, σ, κ). That gives the curve a distance
  and each parameter a tolerance sqrt(gap · [(JᵀJ)⁻¹]ᵢᵢ), wide for a parameter the data do
  not fix and tight for one they do. Four times the gap (twice the distance) allows for
  the curve not being linear in the parameters, and rounding adds 1e-9 of the data's norm;
- the peak N* = sqrt((1 − σ) / κ) scipy gave lies among the peaks of the σ, κ so allowed.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from lockscope.analysis.usl import fit_usl, usl

RECORDED = Path(__file__).resolve().parents[3] / "tests" / "data" / "usl-scipy-fits.json"
CASES = json.loads(RECORDED.read_text())["cases"]
ROUNDING = 1e-9      # of the data's norm: what rounding leaves of an exact fit's curve
SLACK = 4.0          # times the sum's gap: the curve is not linear in σ, κ


def _jacobian(n: np.ndarray, lam: float, sigma: float, kappa: float) -> np.ndarray:
    """d X(n) / d(λ, σ, κ)."""
    den = 1.0 + sigma * (n - 1.0) + kappa * n * (n - 1.0)
    g = n / den
    return np.column_stack((g, -lam * g * (n - 1.0) / den, -lam * g * n * (n - 1.0) / den))


def _tolerances(jac: np.ndarray, budget: float) -> np.ndarray:
    """How far each parameter may move while ‖J δ‖² ≤ budget: sqrt(budget · (JᵀJ)⁻¹ᵢᵢ),
    through the SVD of J with its columns scaled (λ and κ are far apart in size)."""
    norms = np.linalg.norm(jac, axis=0)
    norms[norms == 0.0] = 1.0
    _, sv, vt = np.linalg.svd(jac / norms, full_matrices=False)
    with np.errstate(divide="ignore"):
        inv = np.where(sv > sv[0] * 1e-15, 1.0 / sv, np.inf)
    spread = np.sqrt(np.sum((vt.T * inv) ** 2, axis=1)) / norms
    out: np.ndarray = math.sqrt(budget) * spread
    return out


def _peak(sigma: float, kappa: float) -> float:
    return math.sqrt((1.0 - sigma) / kappa) if kappa > 1e-12 else math.inf


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_numpy_fit_agrees_with_scipy(case):
    ref, fit = case["fit"], fit_usl(case["threads"], case["throughput"])
    assert fit["ok"] == ref["ok"] and fit["note"] == ref["note"]
    if not ref["ok"]:
        assert fit == ref
        return
    n, x = np.array(case["threads"]), np.array(case["throughput"])
    ours = usl(n, fit["lambda"], fit["sigma"], fit["kappa"])
    theirs = usl(n, ref["lambda"], ref["sigma"], ref["kappa"])
    ss_ours, ss_theirs = float(np.sum((x - ours) ** 2)), float(np.sum((x - theirs) ** 2))
    floor = (ROUNDING * float(np.linalg.norm(x))) ** 2
    assert ss_ours <= ss_theirs * (1 + 1e-6) + floor
    assert fit["r2"] == pytest.approx(ref["r2"], abs=1e-6)
    assert 0.0 <= fit["sigma"] <= 1.0 and 0.0 <= fit["kappa"] <= 1.0 and fit["lambda"] >= 0.0

    budget = SLACK * max(ss_theirs - ss_ours, 0.0) + floor
    assert float(np.sum((ours - theirs) ** 2)) <= budget
    tol = _tolerances(_jacobian(n, fit["lambda"], fit["sigma"], fit["kappa"]), budget)
    for i, key in enumerate(("lambda", "sigma", "kappa")):
        assert abs(fit[key] - ref[key]) <= tol[i], (key, fit[key], ref[key], tol[i])

    # the peak falls as σ and κ grow: scipy's lies between the ends of the allowed box
    lo = _peak(min(fit["sigma"] + tol[1], 1.0), min(fit["kappa"] + tol[2], 1.0))
    hi = _peak(max(fit["sigma"] - tol[1], 0.0), max(fit["kappa"] - tol[2], 0.0))
    theirs_peak = math.inf if ref["peak_threads"] is None else ref["peak_threads"]
    assert lo * (1 - 1e-9) <= theirs_peak <= hi * (1 + 1e-9)
    assert fit["peak_threads"] == (None if fit["kappa"] <= 1e-12 else
                                   pytest.approx(_peak(fit["sigma"], fit["kappa"])))


def test_recorded_cases_cover_the_repository_sweeps():
    names = {c["name"].split(":")[0] for c in CASES}
    assert {"tests/data/sweep-ext4-xfs.json", "reports/examples/default-sweep-results.json",
            "docs/experiments.json"} <= names
    assert sum(c["fit"]["ok"] for c in CASES) >= 30


def test_nan_throughput_is_refused():
    fit = fit_usl([1, 2, 4], [10.0, float("nan"), 30.0])
    assert fit == {"ok": False, "note": "throughput must be positive at every point"}
