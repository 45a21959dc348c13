"""The Gaussian mechanism: classic calibration, the analytic Gaussian mechanism, and its RDP.

* Classic (Dwork & Roth 2014, Thm A.1): ``σ = Δ·√(2 ln(1.25/δ)) / ε``. The theorem proves
  (ε, δ)-DP only for ``ε < 1``; the formula is used far beyond that in practice. It is also the
  formula several PATE-GAN implementations garble (``1.25 * δ`` for ``1.25 / δ``, ``10 ^ δ``).
* Analytic (Balle & Wang 2018, Thm 8): ``N(0, σ²)`` with L2 sensitivity Δ is (ε, δ)-DP iff
  ``Φ(Δ/(2σ) − εσ/Δ) − e^ε·Φ(−Δ/(2σ) − εσ/Δ) ≤ δ``. The left side is evaluated in log space
  (``log_ndtr``) and inverted for σ or ε by bracketing + Brent's method. Valid for every ε ≥ 0.
* RDP (Mironov 2017, Prop. 7): ``ε_RDP(a) = a·Δ² / (2σ²)``.
"""
from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike
from scipy.optimize import brentq
from scipy.special import log_ndtr

from ._logmath import Float, as_orders, check_delta


def classic_sigma(epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """``Δ·√(2 ln(1.25/δ)) / ε`` (the textbook calibration; proven for ``ε < 1``)."""
    delta = check_delta(delta)
    if not epsilon > 0:
        raise ValueError(f"epsilon must be > 0, got {epsilon}")
    return float(sensitivity) * math.sqrt(2.0 * math.log(1.25 / delta)) / float(epsilon)


def analytic_log_delta(epsilon: float, sigma: float, sensitivity: float = 1.0) -> float:
    """``log δ(ε)`` of the Gaussian mechanism, exact (Balle & Wang 2018, Thm 8)."""
    if not (sigma > 0 and sensitivity > 0 and epsilon >= 0):
        raise ValueError("need sigma > 0, sensitivity > 0, epsilon >= 0")
    u = float(sensitivity) / (2.0 * float(sigma))
    v = float(epsilon) * float(sigma) / float(sensitivity)
    first = float(log_ndtr(u - v))
    second = float(epsilon) + float(log_ndtr(-u - v))
    if second >= first:
        return -math.inf
    return first + math.log1p(-math.exp(second - first))


def analytic_delta(epsilon: float, sigma: float, sensitivity: float = 1.0) -> float:
    return math.exp(analytic_log_delta(epsilon, sigma, sensitivity))


def analytic_sigma(epsilon: float, delta: float, sensitivity: float = 1.0, *, xtol: float = 1e-13) -> float:
    """Smallest σ for which ``N(0, σ²)`` is (ε, δ)-DP at L2 sensitivity Δ (analytic mechanism)."""
    delta = check_delta(delta)
    if not epsilon >= 0:
        raise ValueError(f"epsilon must be >= 0, got {epsilon}")
    target = math.log(delta)

    def gap(log_sigma: float) -> float:
        return analytic_log_delta(epsilon, math.exp(log_sigma), sensitivity) - target

    lo, hi = math.log(sensitivity) - 1.0, math.log(sensitivity) + 1.0
    while gap(lo) < 0:
        lo -= 2.0
    while gap(hi) > 0:
        hi += 2.0
    return math.exp(brentq(gap, lo, hi, xtol=xtol, rtol=4 * np.finfo(float).eps, maxiter=500))


def analytic_epsilon(sigma: float, delta: float, sensitivity: float = 1.0, *, xtol: float = 1e-13) -> float:
    """Smallest ε for which ``N(0, σ²)`` at L2 sensitivity Δ is (ε, δ)-DP."""
    delta = check_delta(delta)
    target = math.log(delta)
    if analytic_log_delta(0.0, sigma, sensitivity) <= target:
        return 0.0

    def gap(eps: float) -> float:
        return analytic_log_delta(eps, sigma, sensitivity) - target

    hi = 1.0
    while gap(hi) > 0:
        hi *= 2.0
    return brentq(gap, 0.0, hi, xtol=xtol, rtol=4 * np.finfo(float).eps, maxiter=500)


def gaussian_rdp(sigma: float, orders: ArrayLike | int, sensitivity: float = 1.0) -> Float:
    """``a·Δ²/(2σ²)`` for every order ``a``."""
    if not sigma > 0:
        raise ValueError(f"sigma must be > 0, got {sigma}")
    a = as_orders(orders, minimum=1.0)
    return a * float(sensitivity) ** 2 / (2.0 * float(sigma) ** 2)
