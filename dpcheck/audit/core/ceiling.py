"""The tightness ceiling: the largest lower bound a valid audit can certify on an exact mechanism.

For a mechanism whose tradeoff curve is known exactly, the best any membership test can do with
``n`` test runs per world is the optimal (likelihood-ratio) test. Its *expected* error counts at
threshold t are n·α(t) and n·β(t); the ceiling is the bound the statistic gives on those counts,
maximised over t. An audit's ε_emp (μ_emp) divided by the ceiling at the same n and confidence is
its tightness: 1.0 means nothing is left on the table by the attack.

Tradeoff curves (neighbouring worlds differ in one record):

* ``laplace`` — a count released with Laplace(1/ε) noise (exactly ε-DP): test "x > t",
  α(t) = P(Lap(0, b) > t), β(t) = P(Lap(1, b) ≤ t), b = 1/ε.
* ``randomized-response`` — one bit kept with probability e^ε/(1 + e^ε): α = β = 1/(1 + e^ε)
  (the only non-trivial deterministic test).
* ``gaussian`` — a sensitivity-1 statistic with N(0, σ²) noise, μ = 1/σ:
  β(α) = Φ(Φ⁻¹(1 − α) − μ).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.stats import beta as beta_dist
from scipy.stats import laplace, norm

from dpcheck.audit.core import gdp
from dpcheck.audit.core.stats import eps_from_rates

MECHANISMS = ("laplace", "randomized-response", "gaussian")
THRESHOLDS = 2001
POSTERIOR_CANDIDATES = 25


@dataclass(frozen=True)
class Ceiling:
    mechanism: str
    n: int
    confidence: float
    value: float  # ε (laplace, randomized-response) or μ (gaussian)
    fpr: float  # the error rates of the optimal test at the maximising threshold
    fnr: float

    def to_dict(self) -> dict[str, float | int | str]:
        return {"mechanism": self.mechanism, "n": self.n, "confidence": self.confidence, "value": self.value,
                "fpr": self.fpr, "fnr": self.fnr}


def tradeoff(mechanism: str, *, epsilon: float | None = None, mu: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(α, β) pairs of the optimal tests of ``mechanism`` over a grid of thresholds."""
    if mechanism == "laplace":
        b = 1.0 / _positive(epsilon, "epsilon")
        t = np.linspace(-3.0 * b, 1.0 + 3.0 * b, THRESHOLDS)
        return laplace.sf(t, loc=0.0, scale=b), laplace.cdf(t, loc=1.0, scale=b)
    if mechanism == "randomized-response":
        p = 1.0 / (1.0 + math.exp(_positive(epsilon, "epsilon")))
        return np.array([p]), np.array([p])
    if mechanism == "gaussian":
        m = _positive(mu, "mu")
        t = np.linspace(-4.0, m + 4.0, THRESHOLDS)
        return norm.sf(t), norm.cdf(t - m)
    raise ValueError(f"unknown mechanism {mechanism!r}; choose from {', '.join(MECHANISMS)}")


def ceiling(mechanism: str, n: int, *, confidence: float, epsilon: float | None = None, mu: float | None = None,
            delta: float = 0.0, method: str = "clopper-pearson") -> Ceiling:
    """Best bound over thresholds at the expected error counts: CP ε, or μ for ``gaussian`` by
    ``method`` (a :data:`dpcheck.audit.core.gdp.METHODS` name; the posterior one is evaluated only on
    the thresholds CP ranks highest, since it is smooth in the counts)."""
    if n <= 0:
        raise ValueError(f"n must be positive, got {n}")
    alpha, beta = tradeoff(mechanism, epsilon=epsilon, mu=mu)
    counts = np.stack([np.rint(n * alpha), np.rint(n * beta)], axis=1).astype(np.int64)
    pairs, first = np.unique(counts, axis=0, return_index=True)
    split = (1.0 - confidence) / 2.0

    def upper(errors: np.ndarray) -> np.ndarray:  # stats.cp_upper, vectorised
        return np.where(errors >= n, 1.0, beta_dist.ppf(1.0 - split, errors + 1, np.maximum(n - errors, 1)))

    a_up, b_up = upper(pairs[:, 0]), upper(pairs[:, 1])
    values = gdp.mu_from_rates(a_up, b_up) if mechanism == "gaussian" else eps_from_rates(a_up, b_up, delta)
    scored: dict[tuple[int, int], tuple[float, float, float]] = {
        (int(fp), int(fn)): (float(v), float(alpha[i]), float(beta[i]))
        for (fp, fn), v, i in zip(pairs, np.atleast_1d(values), first)}
    if mechanism == "gaussian" and method != "clopper-pearson":
        top = sorted(scored, key=lambda c: scored[c][0], reverse=True)[:POSTERIOR_CANDIDATES]
        scored = {c: (gdp.mu_lower_bound(method, c[0], n, c[1], n, confidence=confidence), *scored[c][1:])
                  for c in top}
    value, a, b = max(scored.values(), default=(0.0, 1.0, 1.0))
    return Ceiling(mechanism, n, confidence, value, a, b)


def runs_needed(mechanism: str, target: float, *, confidence: float, epsilon: float | None = None,
                mu: float | None = None, delta: float = 0.0, method: str = "clopper-pearson",
                limit: int = 10_000_000) -> int | None:
    """The smallest n whose :func:`ceiling` reaches ``target`` (bisection; the ceiling grows with n
    up to rounding of the expected counts), or None when even ``limit`` test runs fall short."""
    def value(n: int) -> float:
        return ceiling(mechanism, n, confidence=confidence, epsilon=epsilon, mu=mu, delta=delta, method=method).value

    lo, hi = 1, 64
    while value(min(hi, limit)) < target:
        if hi >= limit:
            return None
        lo, hi = hi, hi * 2
    hi = min(hi, limit)
    while hi - lo > max(1, lo // 200):  # 0.5 % resolution is plenty for a run budget
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if value(mid) < target else (lo, mid)
    return hi


def shift_limit(mu: float, n: int, *, confidence: float) -> float:
    """μ − z·√(2/n): the median lower confidence bound of the *efficient* estimator of a Gaussian
    shift (the difference of the two worlds' mean scores on the optimal projection, variance known)
    with n runs per world. By the Cramér–Rao bound no regular estimator of μ has a smaller
    asymptotic spread, so a valid method using the whole tradeoff curve (not one threshold) cannot
    be expected to certify more — an asymptotic yardstick, not a finite-sample theorem."""
    if n <= 0:
        raise ValueError(f"n must be positive, got {n}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    return float(_positive(mu, "mu") - norm.ppf(confidence) * math.sqrt(2.0 / n))


def _positive(value: float | None, name: str) -> float:
    if value is None or not value > 0:
        raise ValueError(f"{name} must be given and positive, got {value}")
    return float(value)
