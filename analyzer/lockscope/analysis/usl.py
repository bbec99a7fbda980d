"""Universal Scalability Law fit: X(N) = λN / (1 + σ(N−1) + κN(N−1)).

σ (contention) is the serialized fraction, κ (coherency) the cost of keeping
workers in step; the peak lies at N* = sqrt((1 − σ) / κ).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from ..schema import UslFit

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt


def usl(n: npt.ArrayLike, lam: float, sigma: float, kappa: float) -> np.ndarray:
    import numpy as np  # imported on use: the CLI must start without numpy (doctor)

    x = np.asarray(n, dtype=float)
    out: np.ndarray = lam * x / (1.0 + sigma * (x - 1.0) + kappa * x * (x - 1.0))
    return out


# (n, x) -> (λ, σ, κ): a bounded least-squares solver of the USL
Solver = Callable[["np.ndarray", "np.ndarray"], tuple[float, float, float]]


def fit_usl(threads: Sequence[float], throughput: Sequence[float],
            solve: Solver | None = None) -> UslFit:
    """Least-squares USL fit with σ, κ in [0, 1]; reports R² and the predicted peak.
    `solve` replaces this module's solver (tools/record_usl_fits.py passes scipy's
    curve_fit, as the fit once was, to record the reference the tests check)."""
    import numpy as np

    n = np.asarray(threads, dtype=float)
    x = np.asarray(throughput, dtype=float)
    if len(n) < 3 or len(set(n.tolist())) < 3:
        return {"ok": False, "note": f"needs at least 3 thread counts, got {len(set(n.tolist()))}"}
    if np.any(x <= 0) or not np.all(np.isfinite(x)):
        return {"ok": False, "note": "throughput must be positive at every point"}
    try:
        lam, sigma, kappa = (solve or _least_squares)(n, x)
    except (RuntimeError, ValueError) as exc:
        return {"ok": False, "note": f"fit failed: {exc}"}
    pred = usl(n, lam, sigma, kappa)
    ss_res = float(np.sum((x - pred) ** 2))
    ss_tot = float(np.sum((x - x.mean()) ** 2))
    r2 = 1.0 - ss_res / ss_tot if ss_tot > 0 else 1.0
    peak = math.sqrt((1.0 - sigma) / kappa) if kappa > 1e-12 else None
    return {
        "ok": True, "lambda": float(lam), "sigma": float(sigma), "kappa": float(kappa),
        "peak_threads": peak, "r2": r2,
        "note": f"fitted on {len(set(n.tolist()))} thread counts"
        + (" (few points: treat σ and κ as rough)" if len(set(n.tolist())) < 5 else ""),
    }


# Where the search for (σ, κ) starts besides the linearised fit: a coarse grid, dense
# near 0, where contention and coherency of real sweeps lie (κ of 1e-4 peaks at ~100).
_SIGMA_GRID = (0.0, *(10.0 ** (k / 8) for k in range(-32, 1)))
_KAPPA_GRID = (0.0, *(10.0 ** (k / 6) for k in range(-42, 1)))
_STARTS = 3          # the best grid points refined, besides the linearised start
_ITERATIONS = 200    # Levenberg-Marquardt steps per start (a few dozen suffice)


def _least_squares(n: np.ndarray, x: np.ndarray) -> tuple[float, float, float]:
    """(λ, σ, κ) minimising Σ(x − X(n))² with σ, κ in [0, 1] and λ ≥ 0.

    X is linear in λ: for given σ, κ the best λ is Σxg / Σg² with g = n / (1 + σ(n−1) +
    κn(n−1)) (positive, as x is), which leaves a bounded problem in σ and κ alone. It
    starts from Gunther's linearisation (with C = X / X(1), n / C − 1 = σ(n−1) + κn(n−1),
    least squares through the origin) and from the best points of a coarse grid, and
    refines each with Levenberg-Marquardt on the throughputs themselves."""
    import numpy as np

    scale = float(np.max(x))
    xs = x / scale                                    # λ comes out in units of the largest x
    n1 = float(np.min(n))
    x1 = float(np.mean(xs[n == n1])) / n1             # X(1), as if linear up to the fewest
    a = np.column_stack((n - 1.0, n * (n - 1.0)))
    linear = np.linalg.lstsq(a, n * x1 / xs - 1.0, rcond=None)[0]
    sg, kg = np.meshgrid(np.array(_SIGMA_GRID), np.array(_KAPPA_GRID), indexing="ij")
    ssr = _profile(n, xs, sg.ravel(), kg.ravel())[1]
    best = np.argsort(ssr, kind="stable")[:_STARTS]
    starts = [np.clip(linear, 0.0, 1.0)] + [np.array([sg.ravel()[i], kg.ravel()[i]])
                                            for i in best]
    fits = [_refine(n, xs, s) for s in starts]
    theta, _ = min(fits, key=lambda f: f[1])
    lam = float(_profile(n, xs, theta[:1], theta[1:])[0][0]) * scale
    sigma, kappa = float(theta[0]), float(theta[1])
    if not all(math.isfinite(v) for v in (lam, sigma, kappa)):
        raise RuntimeError("no finite least-squares solution")
    return lam, sigma, kappa


def _profile(n: np.ndarray, x: np.ndarray, sigma: np.ndarray,
             kappa: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each (σ, κ): the best λ and the sum of squared residuals it leaves."""
    import numpy as np

    g = n / (1.0 + sigma[:, None] * (n - 1.0) + kappa[:, None] * n * (n - 1.0))
    lam = (g @ x) / np.einsum("ij,ij->i", g, g)
    r = x - lam[:, None] * g
    ssr: np.ndarray = np.einsum("ij,ij->i", r, r)
    return lam, ssr


def _residual(n: np.ndarray, x: np.ndarray,
              theta: np.ndarray) -> tuple[np.ndarray, float, np.ndarray]:
    """The residuals x − λg at θ = (σ, κ) with λ at its best, their sum of squares and
    their Jacobian with respect to θ (λ moving with θ: the variable projection's)."""
    import numpy as np

    d = 1.0 + theta[0] * (n - 1.0) + theta[1] * n * (n - 1.0)
    g = n / d
    gg = float(g @ g)
    lam = float(g @ x) / gg
    r = x - lam * g
    dg = -np.column_stack((n * (n - 1.0), n * n * (n - 1.0))) / (d * d)[:, None]
    dlam = (x @ dg - 2.0 * lam * (g @ dg)) / gg
    jac = -(np.outer(g, dlam) + lam * dg)
    return r, float(r @ r), jac


def _refine(n: np.ndarray, x: np.ndarray,
            theta: np.ndarray) -> tuple[np.ndarray, float]:
    """Levenberg-Marquardt (Marquardt's scaling) from θ, kept in [0, 1]²: a parameter on
    a bound that the gradient pushes outward stays there for the step."""
    import numpy as np

    r, ssr, jac = _residual(n, x, theta)
    mu = 1e-3
    for _ in range(_ITERATIONS):
        grad = jac.T @ r
        free = ~(((theta <= 0.0) & (grad > 0.0)) | ((theta >= 1.0) & (grad < 0.0)))
        if not free.any():
            break
        jf = jac[:, free]
        h = jf.T @ jf
        diag = np.diag(h).copy()
        diag[diag <= 0.0] = 1.0
        while mu < 1e20:
            trial = theta.copy()
            trial[free] += np.linalg.solve(h + mu * np.diag(diag), -grad[free])
            trial = np.clip(trial, 0.0, 1.0)
            t_r, t_ssr, t_jac = _residual(n, x, trial)
            if t_ssr < ssr:
                break
            mu *= 10.0
        else:
            break                                     # no step lowers the sum: a minimum
        done = ssr - t_ssr <= 1e-15 * ssr or np.array_equal(trial, theta)
        theta, r, ssr, jac = trial, t_r, t_ssr, t_jac
        mu = max(mu / 10.0, 1e-15)
        if done:
            break
    return theta, ssr
