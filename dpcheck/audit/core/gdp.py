"""Gaussian-DP (f-DP) lower bounds from attack error rates.

A mechanism is μ-GDP when every test between neighbouring worlds has
β ≥ Φ(Φ⁻¹(1 − α) − μ) (Dong, Roth & Su 2019); so one test with false-positive rate α and
false-negative rate β shows μ ≥ Φ⁻¹(1 − α) − Φ⁻¹(β). With upper bounds on both rates the
inequality gives a lower bound μ_emp:

* ``clopper-pearson`` (Nasr et al. 2023): one-sided exact binomial upper bounds on α and β,
  each at level (1 − confidence)/2 (union bound) — a valid frequentist bound;
* ``jeffreys-joint`` (Zanella-Béguelin et al. 2023): independent Jeffreys posteriors
  Beta(k + ½, n − k + ½) on α and β; μ_emp is the (1 − confidence) quantile of the posterior of
  μ(α, β) — a credible bound, not a frequentist one.

Validity: μ_emp bounds μ only for mechanisms whose guarantee *is* μ-GDP (the Gaussian mechanism,
DP-SGD-style accounting). The ε obtained from μ via :func:`gdp_epsilon` is a lower bound on ε only
for such mechanisms; an (ε, δ) claim of any other mechanism is judged with the (ε, δ) bounds of
:mod:`dpcheck.audit.core.stats`.
"""
from __future__ import annotations

import math

import numpy as np
from scipy.optimize import brentq
from scipy.stats import beta as beta_dist
from scipy.stats import norm

from dpcheck.audit.core.stats import cp_upper

METHODS = ("clopper-pearson", "jeffreys-joint")
POSTERIOR_SAMPLES = 200_000
POSTERIOR_SEED = 20230301


def mu_from_rates(fpr: float | np.ndarray, fnr: float | np.ndarray) -> float | np.ndarray:
    """μ shown by one test with rates (α, β): Φ⁻¹(1 − α) − Φ⁻¹(β), at least 0."""
    a = np.clip(np.asarray(fpr, dtype=np.float64), 0.0, 1.0)
    b = np.clip(np.asarray(fnr, dtype=np.float64), 0.0, 1.0)
    with np.errstate(invalid="ignore"):
        mu = norm.isf(a) - norm.ppf(b)
    mu = np.where(np.isnan(mu), 0.0, np.maximum(mu, 0.0))
    return float(mu) if mu.ndim == 0 else mu


def mu_clopper_pearson(fp: int, negatives: int, fn: int, positives: int, *, confidence: float) -> float:
    """Frequentist lower bound on μ holding with probability ≥ ``confidence``."""
    _check(fp, negatives, fn, positives, confidence)
    split = (1.0 - confidence) / 2.0
    return float(mu_from_rates(cp_upper(fp, negatives, split), cp_upper(fn, positives, split)))


def mu_jeffreys_joint(fp: int, negatives: int, fn: int, positives: int, *, confidence: float,
                      samples: int = POSTERIOR_SAMPLES, seed: int = POSTERIOR_SEED) -> float:
    """(1 − confidence) quantile of μ under independent Jeffreys posteriors on (α, β)."""
    _check(fp, negatives, fn, positives, confidence)
    rng = np.random.default_rng(seed)
    alpha = beta_dist.rvs(fp + 0.5, negatives - fp + 0.5, size=samples, random_state=rng)
    beta = beta_dist.rvs(fn + 0.5, positives - fn + 0.5, size=samples, random_state=rng)
    return float(np.quantile(mu_from_rates(alpha, beta), 1.0 - confidence))


def mu_lower_bound(method: str, fp: int, negatives: int, fn: int, positives: int, *, confidence: float) -> float:
    if method == "clopper-pearson":
        return mu_clopper_pearson(fp, negatives, fn, positives, confidence=confidence)
    if method == "jeffreys-joint":
        return mu_jeffreys_joint(fp, negatives, fn, positives, confidence=confidence)
    raise ValueError(f"unknown GDP method {method!r}; choose from {', '.join(METHODS)}")


def certifiable_mu(negatives: int, positives: int, *, confidence: float) -> float:
    """The largest μ_emp any test can certify with these sample sizes (zero errors, CP)."""
    return mu_clopper_pearson(0, negatives, 0, positives, confidence=confidence)


def gdp_delta(epsilon: float, mu: float) -> float:
    """δ(ε) of μ-GDP: Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2) (Dong, Roth & Su, Corollary 2.13)."""
    if mu <= 0.0:
        return 0.0
    # log-space second term: e^ε Φ(·) under/overflows for large ε
    first = norm.cdf(-epsilon / mu + mu / 2.0)
    second = math.exp(epsilon + norm.logcdf(-epsilon / mu - mu / 2.0))
    return max(first - second, 0.0)


def gdp_epsilon(mu: float, delta: float) -> float:
    """Smallest ε with (ε, δ)-DP implied by μ-GDP (0 when μ-GDP already gives δ at ε = 0)."""
    if not 0.0 < delta < 1.0:
        raise ValueError(f"delta must be in (0, 1), got {delta}")
    if mu <= 0.0 or gdp_delta(0.0, mu) <= delta:
        return 0.0
    hi = 1.0
    while gdp_delta(hi, mu) > delta:
        hi *= 2.0
    return float(brentq(lambda e: gdp_delta(e, mu) - delta, 0.0, hi, xtol=1e-12))


def gaussian_mu(sigma: float, sensitivity: float = 1.0, compositions: int = 1) -> float:
    """μ of ``compositions`` Gaussian mechanisms with noise σ and ℓ2-sensitivity Δ: √k·Δ/σ."""
    if sigma <= 0.0:
        raise ValueError(f"sigma must be positive, got {sigma}")
    return math.sqrt(compositions) * sensitivity / sigma


def _check(fp: int, negatives: int, fn: int, positives: int, confidence: float) -> None:
    if not (0 <= fp <= negatives and 0 <= fn <= positives) or negatives <= 0 or positives <= 0:
        raise ValueError(f"bad error counts: fp={fp}/{negatives}, fn={fn}/{positives}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")


def best_threshold(scores: np.ndarray, labels: np.ndarray, *, confidence: float) -> float:
    """The threshold maximising the CP μ bound on (validation) scores; 'member' when score ≥ t.

    μ is largest near the middle of the tradeoff curve, unlike the (ε, δ) bound whose best test
    sits in a tail, so the GDP bound gets its own threshold (chosen on validation data only).
    Ties: fewer total errors, then the smaller threshold.
    """
    scores = np.asarray(scores, dtype=float)
    member = np.asarray(labels).astype(bool)
    negatives, positives = int((~member).sum()), int(member.sum())
    if negatives == 0 or positives == 0:
        return float("inf")
    candidates = np.unique(np.concatenate([scores, [np.inf]]))
    order = np.argsort(scores)
    sorted_scores, sorted_member = scores[order], member[order]
    # for t = candidates[i]: predicted member ⇔ score ≥ t
    below = np.searchsorted(sorted_scores, candidates, side="left")
    members_below = np.concatenate([[0], np.cumsum(sorted_member)])[below]
    fn = members_below
    fp = negatives - (below - members_below)
    split = (1.0 - confidence) / 2.0
    alpha = beta_dist.ppf(1.0 - split, fp + 1, np.maximum(negatives - fp, 1))
    beta = beta_dist.ppf(1.0 - split, fn + 1, np.maximum(positives - fn, 1))
    alpha = np.where(fp >= negatives, 1.0, alpha)
    beta = np.where(fn >= positives, 1.0, beta)
    mu = mu_from_rates(alpha, beta)
    keys = np.lexsort((candidates, fp + fn, -np.asarray(mu)))
    return float(candidates[keys[0]])


def mu_for(epsilon: float, delta: float) -> float:
    """The μ whose μ-GDP gives exactly (ε, δ): the analytic Gaussian calibration."""
    hi = 1.0
    while gdp_delta(epsilon, hi) < delta:
        hi *= 2.0
    return float(brentq(lambda m: gdp_delta(epsilon, m) - delta, 1e-9, hi, xtol=1e-13))
