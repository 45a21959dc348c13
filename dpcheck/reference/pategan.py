"""PATE-GAN's moments accountant (Jordon et al. 2019, Theorem 5 and Algorithm 1, lines 16-19).

For each teacher-labelled sample with votes ``n0`` (fake) and ``n1`` (real)::

    q     = (2 + λ|n0 − n1|) / (4·exp(λ|n0 − n1|))
    α(l) += min{ 2λ²·l(l+1),  log((1 − q)·((1 − q)/(1 − e^{2λ}q))^l + q·e^{2λl}) }   l = 1..L
    ε̂     = min_l (α(l) + log(1/δ)) / l

This is Papernot et al. 2017 (Theorems 2-3) with ``γ`` replaced by ``λ`` — see
``docs/reference.md`` for what that substitution means (λ vs γ, the factor 2, Lap(λ) vs
Lap(1/λ)). This oracle follows the formula exactly as printed in Theorem 5, so implementations
of PATE-GAN can be compared with it term for term:

* **two terms, no validity check by default.** Theorem 5 omits PATE's condition
  ``q < (e^{2λ} − 1)/(e^{4λ} − 1)`` and PATE's third term; ``check_validity=True`` /
  ``third_term=True`` give PATE's reading instead.
* **where the data-dependent term is undefined** (``1 − e^{2λ}q ≤ 0``) it counts as ``+inf``,
  so the minimum is the data-independent term ``2λ²l(l+1)`` — the bound that holds for every
  dataset. Because ``q ≤ 1/2`` (equality at a tie), this region exists only for
  ``λ ≥ ln(2)/2 ≈ 0.347`` and small vote gaps. A literal float transcription behaves
  differently there: ``(1 − q)/(1 − e^{2λ}q)`` is negative, raised to an odd ``l`` it makes the
  sum negative and ``log`` returns NaN (``np.min``/``np.minimum`` then propagate NaN, Python's
  ``min(a, nan)`` returns ``a``), and at ``1 − e^{2λ}q = 0`` the division gives ``inf``.
* **ties** ``n0 = n1`` give ``q = 1/2`` exactly; **q → 0** (large ``λ|n0 − n1|``) is handled in
  log space, the data-dependent term tends to 0 without underflow or overflow.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike

from . import pate2017
from ._logmath import Float, as_orders
from .rdp import moments_epsilon


def _gaps(n0: ArrayLike, n1: ArrayLike) -> Float:
    a = np.asarray(n0, dtype=np.float64)
    b = np.asarray(n1, dtype=np.float64)
    if np.any(~np.isfinite(a)) or np.any(~np.isfinite(b)) or np.any(a < 0) or np.any(b < 0):
        raise ValueError("vote counts must be finite and non-negative")
    return np.abs(a - b)


def _check_lambda(lam: float) -> float:
    lam = float(lam)
    if not np.isfinite(lam) or lam < 0:
        raise ValueError(f"lambda must be finite and >= 0, got {lam}")
    return lam


def pategan_q(n0: ArrayLike, n1: ArrayLike, lam: float) -> Float:
    """``q = (2 + λ|n0 − n1|)/(4 exp(λ|n0 − n1|))`` (underflows to 0 for huge gaps; use the log)."""
    return np.exp(pategan_log_q(n0, n1, lam))


def pategan_log_q(n0: ArrayLike, n1: ArrayLike, lam: float) -> Float:
    return pate2017.log_q_from_gap(_gaps(n0, n1), _check_lambda(lam))


def pategan_terms(n0: ArrayLike, n1: ArrayLike, lam: float, orders: ArrayLike | int) -> tuple[Float, Float]:
    """The two terms of the minimum for every sample and order: ``(data_independent,
    data_dependent)``, each of shape ``n0.shape + (L,)``; undefined data-dependent terms are +inf."""
    lam = _check_lambda(lam)
    log_q = pategan_log_q(n0, n1, lam)
    di = np.broadcast_to(pate2017.data_independent_moment(lam, orders), log_q.shape + (as_orders(orders, minimum=0.0).size,))
    return di, pate2017.data_dependent_moment(log_q, lam, orders)


def pategan_moment_increments(
    n0: ArrayLike,
    n1: ArrayLike,
    lam: float,
    orders: ArrayLike | int,
    *,
    check_validity: bool = False,
    third_term: bool = False,
) -> Float:
    """Per-sample increments of ``α(l)``, shape ``n0.shape + (L,)`` (evaluated once per distinct gap)."""
    lam = _check_lambda(lam)
    gaps = _gaps(n0, n1)
    unique, inverse = np.unique(gaps.ravel(), return_inverse=True)
    per_gap = pate2017.moment_bound(
        pate2017.log_q_from_gap(unique, lam), lam, orders, check_validity=check_validity, third_term=third_term
    )
    return per_gap[inverse.ravel()].reshape(gaps.shape + per_gap.shape[-1:])


def pategan_moments(
    n0: ArrayLike,
    n1: ArrayLike,
    lam: float,
    orders: ArrayLike | int,
    *,
    initial: ArrayLike | None = None,
    check_validity: bool = False,
    third_term: bool = False,
) -> Float:
    """``α(l)`` after labelling every sample of ``(n0, n1)``, starting from ``initial`` (zeros).

    ``orders`` is ``L`` (orders ``1..L``, as in Algorithm 1) or an explicit sequence of orders.
    Samples are grouped by ``|n0 − n1|`` so a batch of N samples costs O(unique gaps × L).
    """
    lam = _check_lambda(lam)
    grid = as_orders(orders, minimum=0.0)
    gaps = _gaps(n0, n1).ravel()
    alpha = np.zeros(grid.size) if initial is None else np.array(initial, dtype=np.float64)
    if alpha.shape != grid.shape:
        raise ValueError(f"initial moments have shape {alpha.shape}, expected {grid.shape}")
    if gaps.size == 0:
        return alpha
    unique, multiplicity = np.unique(gaps, return_counts=True)
    per_gap = pate2017.moment_bound(
        pate2017.log_q_from_gap(unique, lam), lam, grid, check_validity=check_validity, third_term=third_term
    )
    return alpha + multiplicity.astype(np.float64) @ per_gap


def pategan_moment_increment(n0: ArrayLike, n1: ArrayLike, lam: float, num_moments: ArrayLike | int) -> Float:
    """Total increase of ``α(1..L)`` from labelling the samples ``(n0, n1)`` (scalars or arrays):
    ``pategan_moments`` starting from zero, shape ``(L,)``."""
    return pategan_moments(n0, n1, lam, num_moments)


def pategan_epsilon(alpha: ArrayLike, delta: float, orders: ArrayLike | int | None = None) -> float:
    """``ε̂ = min_l (α(l) + log(1/δ))/l``; ``orders`` defaults to ``1..len(alpha)``."""
    alpha = np.asarray(alpha, dtype=np.float64)
    return moments_epsilon(alpha.size if orders is None else orders, alpha, delta)[0]


@dataclass
class PateGanAccountant:
    """Stateful reference accountant: feed it the votes of each labelled batch.

    >>> acc = PateGanAccountant(lam=1e-3, num_moments=20)
    >>> acc.update([3, 10], [7, 0])
    >>> acc.epsilon(delta=1e-5) > 0
    True
    """

    lam: float
    num_moments: int = 20
    check_validity: bool = False
    third_term: bool = False
    alpha: Float = field(init=False)
    queries: int = field(init=False, default=0)

    def __post_init__(self) -> None:
        _check_lambda(self.lam)
        self.alpha = np.zeros(as_orders(self.num_moments, minimum=1.0).size)

    @property
    def orders(self) -> Float:
        return as_orders(self.num_moments, minimum=1.0)

    def update(self, n0: ArrayLike, n1: ArrayLike) -> Float:
        self.alpha = pategan_moments(
            n0, n1, self.lam, self.num_moments, initial=self.alpha,
            check_validity=self.check_validity, third_term=self.third_term,
        )
        self.queries += int(np.size(n0))
        return self.alpha

    def epsilon(self, delta: float) -> float:
        return pategan_epsilon(self.alpha, delta)
