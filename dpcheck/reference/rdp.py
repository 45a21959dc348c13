"""From accumulated privacy curves to an (ε, δ) guarantee.

Two curve conventions meet in this project:

* the **moments accountant** of Abadi et al. 2016 (used by PATE 2017 and PATE-GAN):
  ``α(l) = log E[exp(l · C)]`` for the privacy-loss variable ``C``, orders ``l = 1, 2, …``;
  tail bound (Theorem 4 of the PATE-GAN appendix): ``δ = min_l exp(α(l) − l·ε)``, i.e.
  ``ε = min_l (α(l) + log(1/δ)) / l``;
* **Rényi DP** (Mironov 2017; used by GNMax / Confident-GNMax): ``ε_RDP(a) = D_a(M(D)‖M(D'))``
  for orders ``a > 1``.

They are the same object on shifted orders: ``α(l) = l · ε_RDP(l + 1)``. With that identity the
classic RDP conversion ``ε = ε_RDP(a) + log(1/δ)/(a − 1)`` (Mironov 2017, Prop. 3) *is* the
moments tail bound. The improved conversion (Canonne, Kamath, Steinke 2020, Prop. 12; Asoodeh
et al. 2020) ``ε = ε_RDP(a) + log1p(−1/a) − log(δ·a)/(a − 1)`` is always at least as small and
is what ``dp_accounting`` reports.
"""
from __future__ import annotations

from typing import Literal

import numpy as np
from numpy.typing import ArrayLike

from ._logmath import Float, as_orders, check_delta

Conversion = Literal["classic", "improved"]


def moments_to_rdp(orders: ArrayLike, alpha: ArrayLike) -> tuple[Float, Float]:
    """``(a, ε_RDP(a))`` with ``a = l + 1`` and ``ε_RDP = α(l) / l``."""
    l = as_orders(orders, minimum=np.finfo(float).tiny)
    alpha = np.asarray(alpha, dtype=np.float64)
    return l + 1.0, alpha / l


def rdp_to_moments(orders: ArrayLike, rdp: ArrayLike) -> tuple[Float, Float]:
    """``(l, α(l))`` with ``l = a − 1`` and ``α = l · ε_RDP(a)``."""
    a = np.asarray(orders, dtype=np.float64)
    if np.any(a <= 1):
        raise ValueError("RDP orders must be > 1")
    return a - 1.0, (a - 1.0) * np.asarray(rdp, dtype=np.float64)


def moments_epsilon(orders: ArrayLike | int, alpha: ArrayLike, delta: float) -> tuple[float, float]:
    """Tail bound ``ε̂ = min_l (α(l) + log(1/δ)) / l``; returns ``(ε̂, argmin l)``.

    NaN moments propagate (a NaN accountant has no guarantee); ``+inf`` moments are skipped by
    the minimum like any other large value.
    """
    delta = check_delta(delta)
    l = as_orders(orders, minimum=np.finfo(float).tiny)
    alpha = np.broadcast_to(np.asarray(alpha, dtype=np.float64), l.shape)
    if np.any(np.isnan(alpha)):
        return float("nan"), float("nan")
    eps = (alpha + np.log(1.0 / delta)) / l
    i = int(np.argmin(eps))
    return float(eps[i]), float(l[i])


def rdp_epsilon(
    orders: ArrayLike, rdp: ArrayLike, delta: float, *, conversion: Conversion = "classic"
) -> tuple[float, float]:
    """``(ε, optimal order)`` for a Rényi-DP curve at target ``δ``.

    ``classic``: ``min_a ε_RDP(a) + log(1/δ)/(a − 1)`` (Mironov 2017, Prop. 3).
    ``improved``: ``min_a ε_RDP(a) + log1p(−1/a) − log(δ·a)/(a − 1)``, floored at 0
    (Canonne–Kamath–Steinke 2020, Prop. 12).
    """
    delta = check_delta(delta)
    a = as_orders(orders, minimum=1.0)
    if np.any(a <= 1):
        raise ValueError("RDP orders must be > 1")
    r = np.broadcast_to(np.asarray(rdp, dtype=np.float64), a.shape)
    if np.any(np.isnan(r)):
        return float("nan"), float("nan")
    if conversion == "classic":
        eps = r + np.log(1.0 / delta) / (a - 1.0)
    elif conversion == "improved":
        eps = r + np.log1p(-1.0 / a) - (np.log(delta) + np.log(a)) / (a - 1.0)
    else:
        raise ValueError(f"unknown conversion {conversion!r}")
    i = int(np.argmin(eps))
    return max(0.0, float(eps[i])), float(a[i])
