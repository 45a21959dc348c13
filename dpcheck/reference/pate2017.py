"""Papernot et al. 2017 (PATE): data-dependent moments bound of the Laplace noisy-max aggregator.

Notation of the paper: ``PATE_γ`` adds ``Lap(1/γ)`` to every vote count and is ``(2γ, 0)``-DP
(one record changes one teacher's vote: one count −1, another +1).

* Theorem 3 (q bound): with ``j*`` the top class,
  ``q = Σ_{j≠j*} (2 + γ·(n_{j*} − n_j)) / (4·exp(γ·(n_{j*} − n_j)))``. For two classes this is
  exactly ``P[M(D) ≠ j*]`` (the difference of two Laplace variables has that tail).
  Capped at ``1 − 1/m``: the top class is the most likely output, so a larger value cannot be a
  tighter statement (the PATE 2017 analysis code applies the same cap).
* Theorem 2 (data-dependent moment): if ``q < (e^{2γ} − 1)/(e^{4γ} − 1) = 1/(e^{2γ} + 1)``,
  ``α(l) ≤ log((1 − q)·((1 − q)/(1 − e^{2γ}q))^l + q·e^{2γl})``.
* Data-independent moment of a ``(2γ,0)``-DP mechanism: ``α(l) ≤ 2γ²·l(l + 1)``
  (``ε²·l(l+1)/2`` with ``ε = 2γ``).
* Third term: a ``(2γ,0)``-DP mechanism has privacy loss at most ``2γ`` so ``α(l) ≤ 2γ·l``. The
  PATE 2017 analysis code takes the minimum with this term too (``priv_eps * l`` with
  ``priv_eps = 2γ``); the audit paper (App. A.2) writes it "γl" in its own notation.
* Fallback: outside the validity condition only the data-independent terms are used.

Everything is evaluated in log space: ``log q`` directly from the gap (no underflow for huge
``γ·gap``), ``log(1 − e^{2γ}q)`` with ``log1mexp``, the sum of the two terms with
``logaddexp``; so large orders and large ``2γl`` never overflow.
"""
from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import logsumexp

from ._logmath import Float, as_orders, log1mexp
from .rdp import moments_epsilon

_LOG4 = np.log(4.0)


def log_q_from_gap(gap: ArrayLike, gamma: float) -> Float:
    """``log((2 + γ·g) / (4·exp(γ·g)))`` for non-negative gaps ``g`` (Theorem 3, one term)."""
    g = np.abs(np.asarray(gap, dtype=np.float64))
    x = float(gamma) * g
    return np.log(2.0 + x) - _LOG4 - x


def log_q_from_counts(counts: ArrayLike, gamma: float) -> Float:
    """``log q`` of Theorem 3 for vote-count vectors (last axis = classes), capped at ``1 − 1/m``.

    Ties for the top class are handled as the theorem reads: one top class is ``j*`` and every
    other tied class contributes a gap-0 term of 1/2.
    """
    counts = np.asarray(counts, dtype=np.float64)
    if counts.ndim == 0 or counts.shape[-1] < 2:
        raise ValueError("counts need at least two classes on the last axis")
    m = counts.shape[-1]
    top = np.argmax(counts, axis=-1)
    gaps = np.take_along_axis(counts, top[..., None], axis=-1) - counts
    terms = log_q_from_gap(gaps, gamma)
    mask = np.zeros(counts.shape, dtype=bool)
    np.put_along_axis(mask, top[..., None], True, axis=-1)
    terms = np.where(mask, -np.inf, terms)
    return np.minimum(logsumexp(terms, axis=-1), np.log1p(-1.0 / m))


def validity_threshold(gamma: float) -> float:
    """``(e^{2γ} − 1)/(e^{4γ} − 1)``, computed as ``1/(e^{2γ} + 1)`` (equal, and fine at γ → 0)."""
    return float(np.exp(-np.logaddexp(0.0, 2.0 * float(gamma))))


def is_valid(log_q: ArrayLike, gamma: float) -> np.ndarray:
    """Theorem 2's condition ``q < (e^{2γ} − 1)/(e^{4γ} − 1)``, tested in log space."""
    return np.asarray(log_q, dtype=np.float64) < -np.logaddexp(0.0, 2.0 * float(gamma))


def data_independent_moment(gamma: float, orders: ArrayLike | int) -> Float:
    """``2γ²·l(l + 1)``."""
    l = as_orders(orders, minimum=0.0)
    return 2.0 * float(gamma) ** 2 * l * (l + 1.0)


def pure_dp_moment(gamma: float, orders: ArrayLike | int) -> Float:
    """The third term ``2γ·l`` (privacy loss of a ``(2γ,0)``-DP mechanism is at most ``2γ``)."""
    l = as_orders(orders, minimum=0.0)
    return 2.0 * float(gamma) * l


def data_dependent_moment(log_q: ArrayLike, gamma: float, orders: ArrayLike | int) -> Float:
    """``log((1 − q)((1 − q)/(1 − e^{2γ}q))^l + q e^{2γl})`` in log space, shape ``q.shape + (L,)``.

    Returns ``+inf`` where ``1 − e^{2γ}q ≤ 0`` (the expression is undefined there, and as a bound
    it is vacuous). It does *not* apply the validity condition: see :func:`is_valid`.
    """
    l = as_orders(orders, minimum=0.0)
    lq = np.asarray(log_q, dtype=np.float64)[..., None]
    two_gamma = 2.0 * float(gamma)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        log_1mq = log1mexp(lq)
        log_den = log1mexp(lq + two_gamma)
        defined = (lq + two_gamma) < 0
        first = log_1mq + l * (log_1mq - np.where(defined, log_den, 0.0))
        second = lq + two_gamma * l
        value = np.logaddexp(first, second)
    return np.where(defined, value, np.inf)


def moment_bound(
    log_q: ArrayLike,
    gamma: float,
    orders: ArrayLike | int,
    *,
    check_validity: bool = True,
    third_term: bool = True,
) -> Float:
    """Per-query PATE 2017 moment bound, shape ``log_q.shape + (L,)``.

    ``min(2γ²l(l+1), [2γl], [data-dependent if valid])``. With ``check_validity=False`` the
    data-dependent term is used wherever it is defined (that is PATE-GAN's Theorem 5 reading).
    """
    lq = np.asarray(log_q, dtype=np.float64)
    bound = np.broadcast_to(data_independent_moment(gamma, orders), lq.shape + (as_orders(orders, minimum=0.0).size,))
    if third_term:
        bound = np.minimum(bound, pure_dp_moment(gamma, orders))
    dd = data_dependent_moment(lq, gamma, orders)
    if check_validity:
        dd = np.where(is_valid(lq, gamma)[..., None], dd, np.inf)
    return np.minimum(bound, dd)


def pate2017_moments(
    counts: ArrayLike,
    gamma: float,
    orders: ArrayLike | int = 8,
    *,
    check_validity: bool = True,
    third_term: bool = True,
) -> Float:
    """Accumulated ``α(l)`` over a batch of queries (counts shape ``(N, m)``), shape ``(L,)``."""
    lq = np.atleast_1d(log_q_from_counts(np.atleast_2d(counts), gamma))
    return moment_bound(lq, gamma, orders, check_validity=check_validity, third_term=third_term).sum(axis=0)


def pate2017_epsilon(
    counts: ArrayLike,
    gamma: float,
    delta: float,
    orders: ArrayLike | int = 8,
    *,
    check_validity: bool = True,
    third_term: bool = True,
) -> float:
    """Data-dependent ε of answering all queries: the moments tail bound over ``orders``.

    PATE 2017 itself releases a smoothed-sensitivity noisy version of this value; this oracle
    returns the raw (unreleasable) number the noisy release starts from.
    """
    alpha = pate2017_moments(counts, gamma, orders, check_validity=check_validity, third_term=third_term)
    return moments_epsilon(orders, alpha, delta)[0]
