"""From attack error counts to a lower bound on epsilon.

For an (ε, δ)-DP mechanism every test's false-positive rate α and false-negative rate β satisfy
α + e^ε β ≥ 1 − δ and β + e^ε α ≥ 1 − δ, hence
ε ≥ ε_emp = max{log((1−ᾱ−δ)/β̄), log((1−β̄−δ)/ᾱ), 0} for any upper bounds ᾱ, β̄ on the rates.

* Clopper–Pearson: ᾱ and β̄ are exact one-sided binomial upper bounds, each at level
  ``(1 − confidence) / 2`` so that both hold jointly with probability ≥ ``confidence``
  (union bound). The result is a valid frequentist lower bound.
* Bayesian (Zanella-Béguelin et al. 2023): uniform Beta(1, 1) priors on α and β, independent
  Beta posteriors, and ε_emp is the ``(1 − confidence)`` quantile of the posterior of the
  ε expression above (a one-sided credible bound; not a frequentist guarantee).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.stats import beta as beta_dist

BAYES_SAMPLES = 200_000
BAYES_SEED = 20230717


def cp_upper(errors: int, n: int, alpha: float) -> float:
    """Exact one-sided Clopper–Pearson upper bound: P(rate ≤ bound) ≥ 1 − alpha."""
    if n <= 0:
        return 1.0
    if errors >= n:
        return 1.0
    return float(beta_dist.ppf(1.0 - alpha, errors + 1, n - errors))


def eps_from_rates(fpr: float | np.ndarray, fnr: float | np.ndarray, delta: float) -> float | np.ndarray:
    """The ε implied by (upper bounds on) the two error rates; vectorised; never negative."""
    fpr = np.asarray(fpr, dtype=float)
    fnr = np.asarray(fnr, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        one = np.log(np.clip(1.0 - fpr - delta, 0.0, None) / fnr)
        two = np.log(np.clip(1.0 - fnr - delta, 0.0, None) / fpr)
    out = np.fmax(np.fmax(np.nan_to_num(one, nan=0.0, posinf=np.inf, neginf=0.0),
                          np.nan_to_num(two, nan=0.0, posinf=np.inf, neginf=0.0)), 0.0)
    return float(out) if out.ndim == 0 else out


def eps_clopper_pearson(fp: int, negatives: int, fn: int, positives: int, *, delta: float,
                        confidence: float) -> float:
    alpha = (1.0 - confidence) / 2.0
    return float(eps_from_rates(cp_upper(fp, negatives, alpha), cp_upper(fn, positives, alpha), delta))


def eps_bayesian(fp: int, negatives: int, fn: int, positives: int, *, delta: float,
                 confidence: float, samples: int = BAYES_SAMPLES) -> float:
    rng = np.random.default_rng(BAYES_SEED)
    fpr = rng.beta(fp + 1, negatives - fp + 1, size=samples)
    fnr = rng.beta(fn + 1, positives - fn + 1, size=samples)
    eps = eps_from_rates(fpr, fnr, delta)
    return float(np.quantile(eps, 1.0 - confidence))


def certifiable_max(negatives: int, positives: int, *, delta: float, confidence: float) -> tuple[float, float]:
    """The largest (CP, Bayesian) ε_emp these sample sizes can give: a perfect attack, zero errors."""
    return (eps_clopper_pearson(0, negatives, 0, positives, delta=delta, confidence=confidence),
            eps_bayesian(0, negatives, 0, positives, delta=delta, confidence=confidence))


@dataclass(frozen=True)
class Counts:
    """Errors of a fixed decision rule on the test part. Positive = 'target was in the data'."""

    fp: int
    negatives: int
    fn: int
    positives: int

    @property
    def fpr(self) -> float:
        return self.fp / self.negatives if self.negatives else math.nan

    @property
    def fnr(self) -> float:
        return self.fn / self.positives if self.positives else math.nan


def counts_at(scores: np.ndarray, labels: np.ndarray, threshold: float) -> Counts:
    """Predict 'member' when score ≥ threshold."""
    pred = scores >= threshold
    labels = labels.astype(bool)
    return Counts(fp=int(np.sum(pred & ~labels)), negatives=int(np.sum(~labels)),
                  fn=int(np.sum(~pred & labels)), positives=int(np.sum(labels)))


def best_threshold(scores: np.ndarray, labels: np.ndarray, *, delta: float, confidence: float) -> float:
    """The threshold maximising the Clopper–Pearson ε_emp on (validation) scores.

    Ties are broken by fewer total errors, then by the smaller threshold, so the choice is
    deterministic.
    """
    candidates = np.unique(np.concatenate([scores, [np.inf]]))
    best: tuple[float, int, float] | None = None
    best_t = float(candidates[0])
    for t in candidates:
        c = counts_at(scores, labels, float(t))
        key = (eps_clopper_pearson(c.fp, c.negatives, c.fn, c.positives, delta=delta, confidence=confidence),
               -(c.fp + c.fn), -float(t))
        if best is None or key > best:
            best, best_t = key, float(t)
    return best_t
