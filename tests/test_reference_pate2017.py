"""Papernot et al. 2017 oracle: q bound, validity condition, third term, data-independent fallback;
cross-checked by hand and against dp_accounting's exact Laplace-mechanism RDP."""
from __future__ import annotations

import math

import numpy as np
import pytest
from dp_accounting import LaplaceDpEvent
from dp_accounting.rdp import RdpAccountant
from hypothesis import given
from hypothesis import strategies as st

from dpcheck.reference import pate2017, pategan_moments, rdp_epsilon
from dpcheck.testing import lambdas, vote_counts


def test_validity_threshold_hand_computed() -> None:
    # γ = 0.5: (e^1 − 1)/(e^2 − 1) = 1.7182818/6.3890561 = 0.2689414 = 1/(e + 1)
    assert pate2017.validity_threshold(0.5) == pytest.approx((math.e - 1) / (math.e**2 - 1), rel=1e-15)
    assert pate2017.validity_threshold(0.5) == pytest.approx(0.2689414213699951, rel=1e-15)
    # γ → 0: the ratio is 0/0 but the limit is 1/2; γ = 1e-12 must not lose precision
    assert pate2017.validity_threshold(1e-12) == pytest.approx(0.5 - 0.5e-12, rel=1e-15)
    # γ large: e^{4γ} overflows at γ = 200, 1/(e^{2γ}+1) = e^{−400} does not
    assert pate2017.validity_threshold(200.0) == pytest.approx(math.exp(-400.0), rel=1e-12)


def test_q_from_counts_hand_computed_and_capped() -> None:
    # counts (8, 1, 1), γ = 0.25: two gaps of 7, each (2 + 1.75)/(4·e^{1.75}) = 3.75/23.018412 = 0.1629131,
    # q = 0.3258261
    assert math.exp(pate2017.log_q_from_counts([8, 1, 1], 0.25)) == pytest.approx(0.32582614396958461, rel=1e-14)
    # a three-way tie sums to 1/2 + 1/2 = 1 and is capped at 1 − 1/3
    assert math.exp(pate2017.log_q_from_counts([3, 3, 3], 0.25)) == pytest.approx(2 / 3, rel=1e-15)
    # two classes: q = (2 + γ|n0 − n1|)/(4 e^{γ|n0 − n1|}) and never above 1/2
    assert math.exp(pate2017.log_q_from_counts([2, 9], 0.1)) == pytest.approx((2 + 0.7) / (4 * math.exp(0.7)), rel=1e-15)
    assert math.exp(pate2017.log_q_from_counts([5, 5], 3.0)) == pytest.approx(0.5, rel=1e-15)


def test_data_dependent_term_equals_third_term_at_the_validity_boundary() -> None:
    # q* = 1/(e^{2γ}+1): 1 − q* = e^{2γ}/(e^{2γ}+1), 1 − e^{2γ}q* = 1/(e^{2γ}+1), their ratio is e^{2γ},
    # so t = (1 − q*)e^{2γl} + q* e^{2γl} = e^{2γl} and log t = 2γl exactly.
    for gamma in (1e-3, 0.1, 0.5, 2.0):
        log_q = math.log(pate2017.validity_threshold(gamma))
        l = np.array([1.0, 2.0, 10.0, 100.0])
        np.testing.assert_allclose(pate2017.data_dependent_moment(log_q, gamma, l), 2 * gamma * l, rtol=1e-9)


def test_fallback_outside_the_condition() -> None:
    # γ = 0.1, a tie: q = 1/2 ≥ 1/(e^{0.2}+1) = 0.4502 → invalid: min(2γ²l(l+1), 2γl)
    gamma, l = 0.1, np.arange(1, 21)
    assert not pate2017.is_valid(math.log(0.5), gamma)
    expected = np.minimum(2 * gamma**2 * l * (l + 1), 2 * gamma * l)
    np.testing.assert_array_equal(pate2017.pate2017_moments([[5, 5]], gamma, 20), expected)
    # the third term wins from l = 10 on (γ(l + 1) > 1): 2·0.1·10 = 2.0 < 2·0.01·10·11 = 2.2
    assert expected[9] == pytest.approx(2.0) and 2 * gamma**2 * 10 * 11 == pytest.approx(2.2)


def test_valid_case_hand_computed() -> None:
    # γ = 0.5, counts (10, 0): q = (2 + 5)/(4e^5) = 7/593.65264 = 0.011791407 < 1/(e+1) = 0.2689 → valid.
    # l = 1: 1 − e·q = 0.96794763; (1 − q)/that = 1.0209319; t = 0.98820859·1.0209319 + 0.011791407·e
    #        = 1.0088937 + 0.0320524 = 1.0409460, log t = 0.0401299; 2γ²·2 = 1.0; 2γ·1 = 1.0 → 0.0401299
    alpha = pate2017.pate2017_moments([[10, 0]], 0.5, [1])
    assert alpha[0] == pytest.approx(0.0401299, rel=1e-5)
    q = 7 / (4 * math.exp(5))
    t = (1 - q) * ((1 - q) / (1 - math.e * q)) + q * math.e
    assert alpha[0] == pytest.approx(math.log(t), rel=1e-13)


def test_pategan_is_pate2017_with_gamma_lambda_without_condition_and_third_term() -> None:
    counts = np.array([[9, 1], [5, 5], [0, 10], [4, 6]])
    for lam in (1e-3, 0.2, 1.5):
        np.testing.assert_allclose(
            pategan_moments(counts[:, 0], counts[:, 1], lam, 30),
            pate2017.pate2017_moments(counts, lam, 30, check_validity=False, third_term=False),
            rtol=1e-14,
        )


def test_epsilon_single_unanimous_query() -> None:
    # γ = 1, counts (10, 0), δ = 1e-5: q = 12/(4e^{10}) = 1.362e-4; the data-dependent term is
    # tiny for small l and the tail bound is dominated by log(1/δ)/l: at L = 8 orders ε ≈ 11.51/8 + α(8)/8.
    alpha = pate2017.pate2017_moments([[10, 0]], 1.0, 8)
    eps = pate2017.pate2017_epsilon([[10, 0]], 1.0, 1e-5, 8)
    assert eps == pytest.approx(min((alpha + math.log(1e5)) / np.arange(1, 9)), rel=1e-14)
    assert eps == pytest.approx((alpha[-1] + math.log(1e5)) / 8, rel=1e-14)


@given(gamma=lambdas(1e-4, 5.0), where=st.floats(0.0, 1.0), l=st.integers(1, 2000))
def test_beyond_the_condition_the_data_dependent_term_never_undercuts_the_third_term(
    gamma: float, where: float, l: int
) -> None:
    # Consequence of the boundary identity and monotonicity in q: where PATE's condition fails the
    # data-dependent expression is ≥ 2γl — so PATE-GAN's missing condition check cannot make its
    # bound smaller than PATE's min(2γ²l(l+1), 2γl) fallback, which is a valid bound.
    # Every example is drawn where the condition fails: log q between the boundary
    # −log(1 + e^{2γ}) and log(1/2), the largest q two-class votes give.
    boundary = -float(np.logaddexp(0.0, 2.0 * gamma))
    log_q = boundary + where * (math.log(0.5) - boundary)
    assert not pate2017.is_valid(log_q, gamma)
    dd = pate2017.data_dependent_moment(log_q, gamma, [l])[0]
    assert dd >= 2 * gamma * l * (1 - 1e-9)


@given(votes=vote_counts(num_classes=3, size=(1, 8)), gamma=lambdas(1e-4, 3.0), L=st.integers(1, 64))
def test_pate_bound_is_below_every_term_it_takes_the_minimum_of(votes: np.ndarray, gamma: float, L: int) -> None:
    alpha = pate2017.pate2017_moments(votes, gamma, L)
    l = np.arange(1, L + 1)
    n = len(votes)
    assert np.all(alpha >= 0)
    assert np.all(alpha <= n * np.minimum(2 * gamma**2 * l * (l + 1), 2 * gamma * l) * (1 + 1e-12))
    loose = pate2017.pate2017_moments(votes, gamma, L, check_validity=False, third_term=False)
    assert np.all(alpha <= loose * (1 + 1e-12) + 1e-300)


@given(gamma=lambdas(1e-3, 5.0), order=st.integers(2, 400), delta=st.sampled_from([1e-3, 1e-5, 1e-8]))
def test_data_independent_terms_bound_dp_accountings_exact_laplace_rdp(gamma: float, order: int, delta: float) -> None:
    # A (2γ,0)-DP mechanism: the Laplace mechanism with scale 1/(2γ). dp_accounting computes its exact
    # RDP (Mironov 2017, Prop. 6). Both data-independent terms must bound it at every order; through
    # α(l) = l·ε_RDP(l + 1) they are ε_RDP ≤ 2γ²·a and ε_RDP ≤ 2γ — written with γ instead of 2γ
    # ("γl", as in the audit paper's wording) the second one fails at large orders.
    eps = 2 * gamma
    accountant = RdpAccountant(orders=[order])
    accountant.compose(LaplaceDpEvent(noise_multiplier=1 / eps))
    exact_eps = accountant.get_epsilon(delta)
    l = order - 1
    bound_moment = min(pate2017.data_independent_moment(gamma, [l])[0], pate2017.pure_dp_moment(gamma, [l])[0])
    ours = rdp_epsilon([order], [bound_moment / l], delta, conversion="improved")[0]
    assert ours >= exact_eps * (1 - 1e-9) - 1e-12


def test_gamma_l_would_not_be_a_valid_third_term() -> None:
    # Laplace mechanism with ε = 2γ = 2: the exact RDP tends to ε = 2 as the order grows (dp_accounting),
    # above the per-order value γ = 1 a "γl" third term would claim.
    accountant = RdpAccountant(orders=[1000.0])
    accountant.compose(LaplaceDpEvent(noise_multiplier=0.5))
    exact_eps = accountant.get_epsilon(1e-5)
    claimed = rdp_epsilon([1000.0], [1.0], 1e-5, conversion="improved")[0]
    assert claimed < exact_eps
    assert rdp_epsilon([1000.0], [2.0], 1e-5, conversion="improved")[0] >= exact_eps
