"""GDP lower bounds: formulas against closed forms, validity on a simulated Gaussian mechanism."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import norm

from dpcheck.audit.core import gdp
from dpcheck.reference.gaussian import analytic_delta, analytic_sigma


def test_mu_from_rates_matches_the_gaussian_tradeoff_curve() -> None:
    mu = 1.3
    for alpha in (0.01, 0.1, 0.4):
        beta = norm.cdf(norm.isf(alpha) - mu)
        assert gdp.mu_from_rates(alpha, beta) == pytest.approx(mu, rel=1e-9)


def test_mu_from_rates_is_zero_for_a_useless_test() -> None:
    assert gdp.mu_from_rates(0.5, 0.5) == 0.0
    assert gdp.mu_from_rates(0.7, 0.6) == 0.0
    assert gdp.mu_from_rates(1.0, 0.0) == 0.0


@pytest.mark.parametrize("sigma", [0.5, 1.0, 3.0])
def test_gdp_delta_is_the_analytic_gaussian_curve(sigma: float) -> None:
    # Balle & Wang's exact δ(ε) of the Gaussian mechanism is μ-GDP's δ(ε) with μ = Δ/σ
    for eps in (0.0, 0.5, 2.0):
        assert gdp.gdp_delta(eps, gdp.gaussian_mu(sigma)) == pytest.approx(analytic_delta(eps, sigma), rel=1e-7, abs=1e-15)


def test_gdp_epsilon_inverts_the_analytic_gaussian() -> None:
    eps, delta = 1.0, 1e-5
    sigma = analytic_sigma(eps, delta)
    assert gdp.gdp_epsilon(gdp.gaussian_mu(sigma), delta) == pytest.approx(eps, rel=1e-6)
    assert gdp.gdp_epsilon(0.0, delta) == 0.0
    with pytest.raises(ValueError):
        gdp.gdp_epsilon(1.0, 0.0)


def test_bounds_shrink_with_errors_and_grow_with_samples() -> None:
    conf = 0.95
    few = gdp.mu_clopper_pearson(5, 200, 5, 200, confidence=conf)
    more = gdp.mu_clopper_pearson(20, 200, 20, 200, confidence=conf)
    bigger = gdp.mu_clopper_pearson(50, 2000, 50, 2000, confidence=conf)
    assert few > more > 0
    assert bigger > few
    assert gdp.certifiable_mu(200, 200, confidence=conf) >= few


def test_jeffreys_bound_is_at_least_as_tight_as_clopper_pearson() -> None:
    cp = gdp.mu_clopper_pearson(30, 500, 40, 500, confidence=0.95)
    jf = gdp.mu_jeffreys_joint(30, 500, 40, 500, confidence=0.95)
    assert jf > cp > 0
    assert gdp.mu_lower_bound("jeffreys-joint", 30, 500, 40, 500, confidence=0.95) == jf
    with pytest.raises(ValueError):
        gdp.mu_lower_bound("gdp-magic", 1, 2, 1, 2, confidence=0.95)


@pytest.mark.parametrize("bad", [(-1, 10, 0, 10), (11, 10, 0, 10), (0, 0, 0, 10)])
def test_bad_counts_are_refused(bad: tuple[int, int, int, int]) -> None:
    with pytest.raises(ValueError):
        gdp.mu_clopper_pearson(*bad, confidence=0.95)


def _simulated_counts(mu: float, n: int, rng: np.random.Generator) -> tuple[int, int]:
    """The optimal (likelihood-ratio) test at threshold μ/2 on one draw per run: N(0,1) vs N(μ,1)."""
    out = rng.normal(0.0, 1.0, n)  # world without the target
    inn = rng.normal(mu, 1.0, n)  # world with it
    return int(np.sum(out > mu / 2)), int(np.sum(inn <= mu / 2))


def test_clopper_pearson_bound_is_valid_and_close_on_an_exact_gaussian_mechanism() -> None:
    mu, n, conf = 1.0, 2000, 0.95
    rng = np.random.default_rng(7)
    bounds = [gdp.mu_clopper_pearson(*(c := _simulated_counts(mu, n, rng))[:1], n, c[1], n, confidence=conf)
              for _ in range(40)]
    assert sum(b > mu for b in bounds) <= 4  # ≤ 5 % + slack over 40 seeds at 95 % confidence
    assert np.median(bounds) > 0.8 * mu  # and the bound is tight at this sample size


def test_a_leaky_mechanism_is_shown_above_its_claim() -> None:
    claimed, true_mu, n = 0.5, 2.0, 1000
    fp, fn = _simulated_counts(true_mu, n, np.random.default_rng(3))
    assert gdp.mu_clopper_pearson(fp, n, fn, n, confidence=0.95) > claimed


def test_gdp_threshold_matches_brute_force() -> None:
    rng = np.random.default_rng(5)
    mu = 1.0
    scores = np.r_[rng.normal(0, 1, 600), rng.normal(mu, 1, 600)]
    labels = np.r_[np.zeros(600), np.ones(600)]
    t = gdp.best_threshold(scores, labels, confidence=0.95)

    def bound(c: float) -> float:
        return gdp.mu_clopper_pearson(int(np.sum((scores >= c) & (labels == 0))), 600,
                                      int(np.sum((scores < c) & (labels == 1))), 600, confidence=0.95)
    assert bound(t) == pytest.approx(max(bound(c) for c in np.unique(scores)), abs=1e-9)
    assert bound(t) > 0.8 * mu
    assert gdp.best_threshold(scores, np.zeros(1200), confidence=0.95) == float("inf")
