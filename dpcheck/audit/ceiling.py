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
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.stats import laplace, norm

from dpcheck.audit import gdp
from dpcheck.audit.stats import eps_clopper_pearson

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
    ``method`` (a :data:`dpcheck.audit.gdp.METHODS` name; the posterior one is evaluated only on
    the thresholds CP ranks highest, since it is smooth in the counts)."""
    if n <= 0:
        raise ValueError(f"n must be positive, got {n}")
    alpha, beta = tradeoff(mechanism, epsilon=epsilon, mu=mu)
    bound: Callable[[int, int], float]
    if mechanism == "gaussian":
        def bound(fp: int, fn: int) -> float:
            return gdp.mu_clopper_pearson(fp, n, fn, n, confidence=confidence)
    else:
        def bound(fp: int, fn: int) -> float:
            return eps_clopper_pearson(fp, n, fn, n, delta=delta, confidence=confidence)
    scored: dict[tuple[int, int], tuple[float, float, float]] = {}
    for a, b in zip(alpha, beta):
        counts = (int(round(n * a)), int(round(n * b)))
        if counts not in scored:
            scored[counts] = (bound(*counts), float(a), float(b))
    if mechanism == "gaussian" and method != "clopper-pearson":
        top = sorted(scored, key=lambda c: scored[c][0], reverse=True)[:POSTERIOR_CANDIDATES]
        scored = {c: (gdp.mu_lower_bound(method, c[0], n, c[1], n, confidence=confidence), *scored[c][1:])
                  for c in top}
    value, a, b = max(scored.values(), default=(0.0, 1.0, 1.0))
    return Ceiling(mechanism, n, confidence, value, a, b)


def _positive(value: float | None, name: str) -> float:
    if value is None or not value > 0:
        raise ValueError(f"{name} must be given and positive, got {value}")
    return float(value)
