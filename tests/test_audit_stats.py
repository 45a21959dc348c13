import math

import numpy as np
import pytest

from dpcheck.audit.core import stats


def test_cp_upper_zero_errors_has_closed_form():
    # with no errors the one-sided CP bound solves (1-p)^n = alpha
    assert stats.cp_upper(0, 400, 0.025) == pytest.approx(1 - 0.025 ** (1 / 400), rel=1e-9)


def test_cp_upper_matches_binomial_tail():
    from scipy.stats import binom

    bound = stats.cp_upper(7, 50, 0.05)
    assert binom.cdf(7, 50, bound) == pytest.approx(0.05, rel=1e-6)
    assert stats.cp_upper(50, 50, 0.05) == 1.0


def test_certifiable_max_at_paper_sizes_is_about_4_7():
    # Section 6.2: 400 test outputs per world give at most ~4.7 with Clopper-Pearson
    cp, bayes = stats.certifiable_max(400, 400, delta=1e-5, confidence=0.95)
    assert cp == pytest.approx(4.68, abs=0.01)
    assert bayes > cp  # the Bayesian interval is tighter at zero errors


def test_eps_formula_by_hand():
    a, b, d = 0.1, 0.2, 1e-5
    expected = max(math.log((1 - a - d) / b), math.log((1 - b - d) / a), 0)
    assert stats.eps_from_rates(a, b, d) == pytest.approx(expected)
    assert stats.eps_from_rates(0.5, 0.5, 0.0) == 0.0


def test_more_test_samples_certify_more():
    small = stats.certifiable_max(40, 40, delta=1e-5, confidence=0.95)[0]
    large = stats.certifiable_max(400, 400, delta=1e-5, confidence=0.95)[0]
    assert small < 2.5 < large


def test_clopper_pearson_bound_is_valid_for_a_tight_mechanism():
    # randomized response at eps=1 is exactly 1-DP: the best test has FPR = FNR = 1/(1+e)
    rng = np.random.default_rng(3)
    eps, n, trials = 1.0, 200, 400
    rate = 1 / (1 + math.e)
    fp = rng.binomial(n, rate, trials)
    fn = rng.binomial(n, rate, trials)
    bounds = [stats.eps_clopper_pearson(int(a), n, int(b), n, delta=0.0, confidence=0.95) for a, b in zip(fp, fn)]
    false_alarms = np.mean(np.asarray(bounds) > eps)
    assert false_alarms <= 0.05
    assert np.median(bounds) > 0.3  # and it is not vacuous


def test_best_threshold_separates_perfectly_separable_scores():
    scores = np.array([0.1, 0.2, 0.3, 0.7, 0.8, 0.9])
    labels = np.array([0, 0, 0, 1, 1, 1])
    t = stats.best_threshold(scores, labels, delta=1e-5, confidence=0.95)
    c = stats.counts_at(scores, labels, t)
    assert (c.fp, c.fn) == (0, 0)
    assert 0.3 < t <= 0.7


def test_bayesian_bound_is_deterministic_and_ordered():
    one = stats.eps_bayesian(5, 100, 5, 100, delta=1e-5, confidence=0.95)
    two = stats.eps_bayesian(5, 100, 5, 100, delta=1e-5, confidence=0.95)
    assert one == two
    assert stats.eps_bayesian(1, 100, 1, 100, delta=1e-5, confidence=0.95) > one > 0
