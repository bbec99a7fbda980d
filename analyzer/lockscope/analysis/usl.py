"""Universal Scalability Law fit: X(N) = λN / (1 + σ(N−1) + κN(N−1)).

σ (contention) is the serialized fraction, κ (coherency) the cost of keeping
workers in step; the peak lies at N* = sqrt((1 − σ) / κ).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
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


def fit_usl(threads: Sequence[float], throughput: Sequence[float]) -> UslFit:
    """Least-squares USL fit with σ, κ in [0, 1]; reports R² and the predicted peak."""
    import numpy as np
    from scipy.optimize import OptimizeWarning, curve_fit

    n = np.asarray(threads, dtype=float)
    x = np.asarray(throughput, dtype=float)
    if len(n) < 3 or len(set(n.tolist())) < 3:
        return {"ok": False, "note": f"needs at least 3 thread counts, got {len(set(n.tolist()))}"}
    if np.any(x <= 0) or not np.all(np.isfinite(x)):
        return {"ok": False, "note": "throughput must be positive at every point"}
    lam0 = float(x[np.argmin(n)] / n.min())
    try:
        with warnings.catch_warnings():
            # Few points give no covariance estimate; R² below still says how good the fit is.
            warnings.simplefilter("ignore", OptimizeWarning)
            (lam, sigma, kappa), _ = curve_fit(
                usl, n, x, p0=[lam0, 0.1, 0.001],
                bounds=([0.0, 0.0, 0.0], [np.inf, 1.0, 1.0]), maxfev=20000)
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
