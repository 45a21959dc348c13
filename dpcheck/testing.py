"""Public testing API: reference oracles, Hypothesis strategies and assertion helpers.

For library authors who want to test their own DP accountant in their own pytest suite::

    from hypothesis import given
    from dpcheck.testing import assert_matches_pategan_accountant, lambdas, vote_counts

    @given(votes=vote_counts(num_teachers=50), lam=lambdas(1e-4, 0.3))
    def test_my_accountant(votes, lam):
        assert_matches_pategan_accountant(my_update, votes=votes, lam=lam, orders=20)

``docs/testing.md`` walks through a complete example (``examples/test_my_accountant.py``).
Requires the ``test`` extra (``hypothesis``).
"""
from __future__ import annotations

import math
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from dpcheck.reference import (
    PateGanAccountant,
    analytic_delta,
    analytic_epsilon,
    analytic_sigma,
    classic_sigma,
    confident_gnmax_rdp,
    gaussian_rdp,
    gnmax_log_q,
    gnmax_rdp,
    gnmax_rdp_data_dependent,
    gnmax_rdp_data_independent,
    moments_epsilon,
    moments_to_rdp,
    pate2017_epsilon,
    pate2017_moments,
    pategan_epsilon,
    pategan_log_q,
    pategan_moment_increment,
    pategan_moment_increments,
    pategan_moments,
    pategan_q,
    pategan_terms,
    rdp_epsilon,
    rdp_to_moments,
    validity_threshold,
)
from dpcheck.reference._logmath import as_orders

__all__ = [
    # strategies
    "vote_counts",
    "privacy_params",
    "lambdas",
    "moment_orders",
    "accountant_cases",
    # assertions
    "AccountantMismatch",
    "assert_matches_pategan_accountant",
    "register_hypothesis_profiles",
    # oracles (re-exported from dpcheck.reference)
    "PateGanAccountant",
    "analytic_delta",
    "analytic_epsilon",
    "analytic_sigma",
    "classic_sigma",
    "confident_gnmax_rdp",
    "gaussian_rdp",
    "gnmax_log_q",
    "gnmax_rdp",
    "gnmax_rdp_data_dependent",
    "gnmax_rdp_data_independent",
    "moments_epsilon",
    "moments_to_rdp",
    "pate2017_epsilon",
    "pate2017_moments",
    "pategan_epsilon",
    "pategan_log_q",
    "pategan_moment_increment",
    "pategan_moment_increments",
    "pategan_moments",
    "pategan_q",
    "pategan_terms",
    "rdp_epsilon",
    "rdp_to_moments",
    "validity_threshold",
]

IntOrStrategy = int | st.SearchStrategy[int]


# --------------------------------------------------------------------------- strategies


def _log_uniform(low: float, high: float) -> st.SearchStrategy[float]:
    if not 0 < low <= high:
        raise ValueError(f"need 0 < low <= high, got {low}, {high}")
    lo, hi = math.log10(low), math.log10(high)
    return st.floats(lo, hi, allow_nan=False).map(lambda e: float(min(max(10.0**e, low), high)))


def _ints(value: IntOrStrategy | tuple[int, int] | None, default: tuple[int, int]) -> st.SearchStrategy[int]:
    if value is None:
        return st.integers(*default)
    if isinstance(value, st.SearchStrategy):
        return value
    if isinstance(value, tuple):
        return st.integers(*value)
    return st.just(int(value))


def _n1(k: int) -> st.SearchStrategy[int]:
    return st.one_of(st.sampled_from(sorted({0, k, k // 2, (k + 1) // 2})), st.integers(0, k))


@st.composite
def _vote_counts(draw: st.DrawFn, num_teachers: st.SearchStrategy[int], size: st.SearchStrategy[int], m: int) -> np.ndarray:
    k = draw(num_teachers)
    n = draw(size)
    if m == 2:
        n1 = np.asarray(draw(st.lists(_n1(k), min_size=n, max_size=n)), dtype=np.int64)
        return np.stack([k - n1, n1], axis=1)
    cuts = np.sort(np.asarray(draw(st.lists(st.integers(0, k), min_size=n * (m - 1), max_size=n * (m - 1))),
                              dtype=np.int64).reshape(n, m - 1), axis=1)
    edges = np.concatenate([np.zeros((n, 1), np.int64), cuts, np.full((n, 1), k, np.int64)], axis=1)
    return np.diff(edges, axis=1)


def vote_counts(
    num_teachers: IntOrStrategy | tuple[int, int] | None = None,
    size: IntOrStrategy | tuple[int, int] | None = None,
    num_classes: int = 2,
) -> st.SearchStrategy[np.ndarray]:
    """Teacher vote counts: int64 arrays of shape ``(size, num_classes)``, rows summing to the
    number of teachers. With two classes the columns are ``(n0, n1)`` (fake, real).

    ``num_teachers`` and ``size`` are an int, an ``(min, max)`` tuple or a strategy (defaults:
    1..250 teachers, 1..32 samples). Ties, unanimous votes and near-ties are drawn often.
    """
    if num_classes < 2:
        raise ValueError("num_classes must be >= 2")
    return _vote_counts(_ints(num_teachers, (1, 250)), _ints(size, (1, 32)), num_classes)


def lambdas(min_value: float = 1e-5, max_value: float = 10.0) -> st.SearchStrategy[float]:
    """PATE-GAN's λ (inverse Laplace scale) log-uniformly over the decades of
    ``[min_value, max_value]``, plus the values where behaviour changes (λ = ln(2)/2, where
    ``1 − e^{2λ}q`` can first reach 0 at a tie) and values implementations use by default."""
    special = [v for v in (1e-4, 1e-3, 1e-2, math.log(2) / 2, 1.0) if min_value <= v <= max_value]
    return st.one_of(st.sampled_from(special), _log_uniform(min_value, max_value)) if special else _log_uniform(min_value, max_value)


def privacy_params(
    epsilon: tuple[float, float] = (1e-2, 1e2), delta: tuple[float, float] = (1e-12, 1e-2)
) -> st.SearchStrategy[tuple[float, float]]:
    """``(ε, δ)`` pairs, each log-uniform over its range."""
    return st.tuples(_log_uniform(*epsilon), _log_uniform(*delta))


def moment_orders(max_order: int = 100, *, contiguous: bool = False) -> st.SearchStrategy[tuple[int, ...]]:
    """Moment orders ``l``: ``1..L`` for random ``L <= max_order`` (the PATE-GAN habit) or, unless
    ``contiguous``, a sorted set of distinct orders."""
    full = st.integers(1, max_order).map(lambda n: tuple(range(1, n + 1)))
    if contiguous:
        return full
    subset = st.lists(st.integers(1, max_order), min_size=1, max_size=min(max_order, 16), unique=True).map(
        lambda xs: tuple(sorted(xs))
    )
    return st.one_of(full, subset)


#: λ below ln(2)/2 keeps ``1 − e^{2λ}q > 0`` for every vote count, so a literal float
#: transcription of Theorem 5 is defined everywhere in the default accountant cases.
SAFE_LAMBDA_MAX = 0.3


@st.composite
def _accountant_case(
    draw: st.DrawFn, lam: st.SearchStrategy[float], teachers: st.SearchStrategy[int],
    size: st.SearchStrategy[int], moments: st.SearchStrategy[int],
) -> dict[str, Any]:
    k = draw(teachers)
    votes = draw(vote_counts(num_teachers=k, size=size))
    return {"n0": votes[:, 0], "n1": votes[:, 1], "lamda": draw(lam), "num_moments": draw(moments), "num_teachers": k}


def accountant_cases(
    lam_range: tuple[float, float] = (1e-5, SAFE_LAMBDA_MAX),
    num_teachers: IntOrStrategy | tuple[int, int] = (1, 250),
    size: IntOrStrategy | tuple[int, int] = (1, 16),
    num_moments: IntOrStrategy | tuple[int, int] = (1, 100),
) -> st.SearchStrategy[dict[str, Any]]:
    """One accountant update: ``{"n0", "n1"}`` (int64 arrays of one batch's votes), ``"lamda"``,
    ``"num_moments"`` (L) and ``"num_teachers"``. Compare an implementation's increment with
    ``pategan_moment_increment(n0, n1, lamda, num_moments)``.

    The default λ range stays below ln(2)/2 and ``2λL <= 60``, where a float transcription of
    Theorem 5 neither divides by ``1 − e^{2λ}q <= 0`` nor overflows ``e^{2λl}``; widen it to
    test numerical robustness as well.
    """
    return _accountant_case(
        lambdas(*lam_range), _ints(num_teachers, (1, 250)), _ints(size, (1, 16)), _ints(num_moments, (1, 100))
    )


# --------------------------------------------------------------------------- assertions


@dataclass
class _Diff:
    index: int
    observed: float
    expected: float

    @property
    def relative_error(self) -> float:
        if self.observed == self.expected:
            return 0.0
        if not (math.isfinite(self.observed) and math.isfinite(self.expected)):
            return math.inf
        return abs(self.observed - self.expected) / max(abs(self.expected), np.finfo(float).tiny)


class AccountantMismatch(AssertionError):
    """An accountant disagrees with the reference. Attributes: ``order``, ``observed``,
    ``expected``, ``relative_error``, ``sample`` (index of the first sample whose update diverged,
    or None for a batched/ε comparison), ``n0``, ``n1``, ``lam``."""

    def __init__(self, message: str, **detail: Any) -> None:
        super().__init__(message)
        self.__dict__.update(detail)


def _worst(observed: np.ndarray, expected: np.ndarray, rtol: float, atol: float) -> _Diff | None:
    bad = ~np.isclose(observed, expected, rtol=rtol, atol=atol, equal_nan=False)
    bad |= np.isnan(observed) != np.isnan(expected)
    if not bad.any():
        return None
    diffs = [_Diff(int(i), float(observed[i]), float(expected[i])) for i in np.flatnonzero(bad)]
    return max(diffs, key=lambda d: d.relative_error)


def _call_update(update_fn: Callable[..., Any], alpha: np.ndarray, n0: Any, n1: Any, lam: float) -> np.ndarray:
    result = update_fn(alpha, n0, n1, lam)
    out = alpha if result is None else result
    return np.asarray(out, dtype=np.float64).reshape(-1)


def assert_matches_pategan_accountant(
    update_fn: Callable[..., Any],
    votes: np.ndarray | Sequence[Sequence[int]],
    lam: float,
    orders: int | Sequence[float] = 20,
    *,
    delta: float | None = None,
    epsilon_fn: Callable[[np.ndarray, float], float] | None = None,
    batched: bool = False,
    rtol: float = 1e-6,
    atol: float = 1e-12,
    check_validity: bool = False,
    third_term: bool = False,
) -> None:
    """Check an accountant update against PATE-GAN's Theorem 5 (:func:`pategan_moments`).

    ``update_fn(alpha, n0, n1, lam)`` receives the current moments (float64 array, ``alpha[i]``
    is the moment of order ``orders[i]``; ``orders=L`` means ``1..L``) and one sample's votes
    (``batched=True``: arrays of all samples' votes at once). It returns the new moments or
    updates ``alpha`` in place and returns None. ``votes`` has rows ``(n0, n1)``.

    The moments are compared after every sample (``|obs − ref| <= atol + rtol·|ref|``, NaN never
    matches); with ``delta`` and ``epsilon_fn(alpha, delta)`` the ε̂ is compared as well. On
    failure raises :class:`AccountantMismatch` naming the first sample that diverged, the order,
    both values and the relative error — under Hypothesis that is the shrunk counterexample.
    """
    votes = np.asarray(votes)
    if votes.ndim != 2 or votes.shape[1] != 2:
        raise ValueError(f"votes must have shape (N, 2) with columns (n0, n1), got {votes.shape}")
    grid = as_orders(orders, minimum=0.0)
    alpha = np.zeros(grid.size)
    expected = np.zeros(grid.size)
    kw = dict(check_validity=check_validity, third_term=third_term)
    context = f"λ={lam!r}, orders={_show_orders(grid)}, {votes.shape[0]} sample(s)"

    def fail(diff: _Diff, where: str, **detail: Any) -> None:
        order = grid[diff.index]
        order_s = f"{order:g}"
        raise AccountantMismatch(
            f"accountant disagrees with PATE-GAN Theorem 5 {where}: α({order_s}) observed "
            f"{diff.observed!r}, reference {diff.expected!r}, relative error {diff.relative_error:.3g} "
            f"[{context}]",
            order=float(order), observed=diff.observed, expected=diff.expected,
            relative_error=diff.relative_error, lam=lam, **detail,
        )

    with np.errstate(all="ignore"):
        if batched:
            alpha = _call_update(update_fn, alpha.copy(), votes[:, 0].copy(), votes[:, 1].copy(), lam)
            expected = pategan_moments(votes[:, 0], votes[:, 1], lam, grid, **kw)
            _check_shape(alpha, grid)
            diff = _worst(alpha, expected, rtol, atol)
            if diff is not None:
                fail(diff, "after the batched update", sample=None, n0=None, n1=None)
        else:
            for i, (n0, n1) in enumerate(votes.tolist()):
                alpha = _call_update(update_fn, alpha.copy(), int(n0), int(n1), lam)
                _check_shape(alpha, grid)
                expected = pategan_moments([n0], [n1], lam, grid, initial=expected, **kw)
                diff = _worst(alpha, expected, rtol, atol)
                if diff is not None:
                    q = float(pategan_q(n0, n1, lam))
                    fail(diff, f"at sample {i} (n0={n0}, n1={n1}, q={q:.6g})", sample=i, n0=n0, n1=n1)
        if delta is not None and epsilon_fn is not None:
            observed_eps = float(epsilon_fn(alpha.copy(), delta))
            expected_eps = moments_epsilon(grid, expected, delta)[0]
            diff = _worst(np.array([observed_eps]), np.array([expected_eps]), rtol, atol)
            if diff is not None:
                raise AccountantMismatch(
                    f"ε̂ disagrees with min_l (α(l) + log(1/δ))/l at δ={delta!r}: observed {observed_eps!r}, "
                    f"reference {expected_eps!r}, relative error {diff.relative_error:.3g} [{context}]",
                    order=None, observed=observed_eps, expected=expected_eps,
                    relative_error=diff.relative_error, lam=lam, sample=None, n0=None, n1=None,
                )


def _check_shape(alpha: np.ndarray, grid: np.ndarray) -> None:
    if alpha.shape != grid.shape:
        raise AccountantMismatch(
            f"accountant returned {alpha.size} moments, expected {grid.size} (orders {_show_orders(grid)})",
            order=None, observed=None, expected=None, relative_error=math.inf,
            lam=None, sample=None, n0=None, n1=None,
        )


def _show_orders(grid: np.ndarray) -> str:
    if np.array_equal(grid, np.arange(1, grid.size + 1)):
        return f"1..{grid.size}"
    return "[" + ", ".join(f"{o:g}" for o in grid) + "]"


# --------------------------------------------------------------------------- profiles


def register_hypothesis_profiles() -> str:
    """Register the ``ci`` (derandomised, 50 examples, no deadline) and ``dev`` profiles and load
    ``$HYPOTHESIS_PROFILE`` — ``ci`` when ``$CI`` is set, else ``dev``. Returns the profile."""
    settings.register_profile(
        "ci", derandomize=True, max_examples=50, deadline=None, print_blob=True,
        suppress_health_check=[HealthCheck.too_slow],
    )
    settings.register_profile("dev", max_examples=100, deadline=None)
    name = os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "dev")
    settings.load_profile(name)
    return name
