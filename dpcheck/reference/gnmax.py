"""GNMax and Confident-GNMax Rényi-DP (Papernot et al. 2018; restated in the G-PATE appendix D).

GNMax releases ``argmax_j (n_j + N(0, σ²))``. One record changes one teacher's vote (one count
−1, another +1: L2 sensitivity √2), so GNMax is ``(a, a/σ²)``-RDP for every order ``a > 1``
(Prop. 8) — the **data-independent** bound.

**Data-dependent** (Theorem 6, "Theorem 5" in the G-PATE appendix): if a mechanism is
``(μ1, ε1)``- and ``(μ2, ε2)``-RDP, ``q̃ ≥ P[M(D) ≠ i*]``, ``a ≤ μ1`` and
``q̃ ≤ e^{(μ2−1)ε2} / (μ1/(μ1−1) · μ2/(μ2−1))^{μ2}``, then for every neighbour D'
``D_a(M(D)‖M(D')) ≤ 1/(a−1) · log((1−q̃)·A^{a−1} + q̃·B^{a−1})`` with
``A = (1−q̃)/(1 − (q̃e^{ε2})^{(μ2−1)/μ2})`` and ``B = e^{ε1}/q̃^{1/(μ1−1)}``.
For a mechanism whose RDP curve is ``a/s²`` the orders are chosen as in Prop. 10:
``μ2 = s·√(log(1/q̃))``, ``μ1 = μ2 + 1``, ``ε_i = μ_i/s²``. Any other choice meeting the
conditions is also a valid bound; this one is the paper's. The result is the minimum with the
data-independent bound, which is also what is returned wherever a condition fails (including
``q̃e^{ε2} ≥ 1``, where ``A`` is undefined).

``q̃`` for GNMax (Prop. 7): ``Σ_{i≠i*} ½·erfc((n_{i*} − n_i)/(2σ))`` — computed as
``Σ Φ(−gap/(√2σ))`` with ``log_ndtr`` — capped at ``1 − 1/m``.

**Confident-GNMax** first releases whether ``max_j n_j + N(0, σ1²) ≥ T`` (sensitivity 1:
``(a, a/(2σ1²))``-RDP, i.e. the curve ``a/s²`` with ``s = √2·σ1``), then, if answered, GNMax
with ``σ2``. Total per query: ``ε_threshold(a) + [answered]·ε_GNMax(a)``. The threshold step's
data-dependent bound applies Theorem 6 to the two-outcome release with
``q̃ = min(P[answered], P[not answered])``, ``P[answered] = Φ((max_j n_j − T)/σ1)``.

Orders here are RDP orders ``a > 1`` (not the moments-accountant ``l``; see :mod:`.rdp`).
"""
from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import log_ndtr, logsumexp

from ._logmath import Float, as_orders, log1mexp


def _rdp_orders(orders: ArrayLike | int) -> Float:
    a = as_orders(orders, minimum=1.0)
    if np.any(a <= 1):
        raise ValueError("RDP orders must be > 1")
    return a


def gnmax_log_q(counts: ArrayLike, sigma: float) -> Float:
    """``log q̃`` (Prop. 7) for vote-count vectors (last axis = classes), capped at ``1 − 1/m``."""
    counts = np.asarray(counts, dtype=np.float64)
    if counts.ndim == 0 or counts.shape[-1] < 2:
        raise ValueError("counts need at least two classes on the last axis")
    if not sigma > 0:
        raise ValueError(f"sigma must be > 0, got {sigma}")
    m = counts.shape[-1]
    top = np.argmax(counts, axis=-1)
    gaps = np.take_along_axis(counts, top[..., None], axis=-1) - counts
    terms = log_ndtr(-gaps / (np.sqrt(2.0) * float(sigma)))
    mask = np.zeros(counts.shape, dtype=bool)
    np.put_along_axis(mask, top[..., None], True, axis=-1)
    terms = np.where(mask, -np.inf, terms)
    return np.minimum(logsumexp(terms, axis=-1), np.log1p(-1.0 / m))


def theorem6_rdp(
    log_q: float, mu1: float, eps1: float, mu2: float, eps2: float, orders: ArrayLike | int
) -> Float:
    """Theorem 6 bound at every order, ``+inf`` where a condition of the theorem fails."""
    a = _rdp_orders(orders)
    out = np.full(a.shape, np.inf)
    log_q = float(log_q)
    if not log_q < 0 or not (mu1 > 1 and mu2 > 1):
        return out
    if np.isneginf(log_q):
        return np.zeros(a.shape)
    log_limit = (mu2 - 1.0) * eps2 - mu2 * (np.log(mu1 / (mu1 - 1.0)) + np.log(mu2 / (mu2 - 1.0)))
    if not (log_q <= log_limit and log_q + eps2 < 0):
        return out
    log_1mq = float(log1mexp(log_q))
    log_a = log_1mq - float(log1mexp((log_q + eps2) * (mu2 - 1.0) / mu2))
    log_b = eps1 - log_q / (mu1 - 1.0)
    ok = a <= mu1
    value = np.logaddexp(log_1mq + (a - 1.0) * log_a, log_q + (a - 1.0) * log_b) / (a - 1.0)
    out[ok] = value[ok]
    return out


def gaussian_curve_data_dependent_rdp(log_q: float, scale: float, orders: ArrayLike | int) -> Float:
    """Data-dependent RDP of a mechanism with curve ``a/scale²`` and likely-outcome bound ``q̃``,
    with Prop. 10's orders; the minimum with the data-independent ``a/scale²``."""
    a = _rdp_orders(orders)
    di = a / float(scale) ** 2
    log_q = float(log_q)
    if np.isneginf(log_q):
        return np.zeros(a.shape)
    if not log_q < 0:
        return di
    mu2 = float(scale) * np.sqrt(-log_q)
    mu1 = mu2 + 1.0
    dd = theorem6_rdp(log_q, mu1, mu1 / scale**2, mu2, mu2 / scale**2, a)
    return np.minimum(di, dd)


def gnmax_rdp_data_independent(sigma: float, orders: ArrayLike | int) -> Float:
    """``a/σ²`` (Prop. 8)."""
    if not sigma > 0:
        raise ValueError(f"sigma must be > 0, got {sigma}")
    return _rdp_orders(orders) / float(sigma) ** 2


def gnmax_rdp_data_dependent(counts: ArrayLike, sigma: float, orders: ArrayLike | int) -> Float:
    """Per-query data-dependent RDP of GNMax for one count vector, shape ``(len(orders),)``."""
    log_q = float(gnmax_log_q(np.asarray(counts, dtype=np.float64), sigma))
    return gaussian_curve_data_dependent_rdp(log_q, sigma, orders)


def gnmax_rdp(
    counts: ArrayLike, sigma: float, orders: ArrayLike | int, *, data_dependent: bool = True
) -> Float:
    """Total RDP of answering every row of ``counts`` (shape ``(N, m)``) with GNMax."""
    counts = np.atleast_2d(np.asarray(counts, dtype=np.float64))
    a = _rdp_orders(orders)
    if not data_dependent:
        return counts.shape[0] * gnmax_rdp_data_independent(sigma, a)
    log_qs, multiplicity = np.unique(gnmax_log_q(counts, sigma), return_counts=True)
    total = np.zeros(a.shape)
    for log_q, times in zip(log_qs, multiplicity):
        total += times * gaussian_curve_data_dependent_rdp(log_q, sigma, a)
    return total


def threshold_log_pr_answered(counts: ArrayLike, threshold: float, sigma1: float) -> Float:
    """``log P[max_j n_j + N(0, σ1²) ≥ T]``."""
    counts = np.asarray(counts, dtype=np.float64)
    if not sigma1 > 0:
        raise ValueError(f"sigma1 must be > 0, got {sigma1}")
    return log_ndtr((counts.max(axis=-1) - float(threshold)) / float(sigma1))


def threshold_rdp_data_independent(sigma1: float, orders: ArrayLike | int) -> Float:
    """``a/(2σ1²)``: the Gaussian mechanism at sensitivity 1."""
    if not sigma1 > 0:
        raise ValueError(f"sigma1 must be > 0, got {sigma1}")
    return _rdp_orders(orders) / (2.0 * float(sigma1) ** 2)


def threshold_rdp_data_dependent(counts: ArrayLike, threshold: float, sigma1: float, orders: ArrayLike | int) -> Float:
    """Data-dependent RDP of the noisy-threshold step for one count vector."""
    counts = np.asarray(counts, dtype=np.float64)
    if not sigma1 > 0:
        raise ValueError(f"sigma1 must be > 0, got {sigma1}")
    z = (float(counts.max()) - float(threshold)) / float(sigma1)
    # both tails straight from log Φ: log(1 − Φ(z)) via log1mexp would round to −inf for large z
    log_q = min(float(log_ndtr(z)), float(log_ndtr(-z)))
    return gaussian_curve_data_dependent_rdp(log_q, np.sqrt(2.0) * float(sigma1), orders)


def confident_gnmax_rdp(
    counts: ArrayLike,
    answered: ArrayLike,
    *,
    threshold: float,
    sigma1: float,
    sigma2: float,
    orders: ArrayLike | int,
    data_dependent: bool = True,
) -> Float:
    """Total RDP of Confident-GNMax over the rows of ``counts``; ``answered[i]`` says whether row
    ``i`` passed the noisy threshold (every row pays the threshold step, answered rows also pay
    GNMax)."""
    counts = np.atleast_2d(np.asarray(counts, dtype=np.float64))
    answered = np.broadcast_to(np.asarray(answered, dtype=bool), counts.shape[:1])
    a = _rdp_orders(orders)
    total = np.zeros(a.shape)
    for row, ans in zip(counts, answered):
        if data_dependent:
            total += threshold_rdp_data_dependent(row, threshold, sigma1, a)
            if ans:
                total += gnmax_rdp_data_dependent(row, sigma2, a)
        else:
            total += threshold_rdp_data_independent(sigma1, a)
            if ans:
                total += gnmax_rdp_data_independent(sigma2, a)
    return total
