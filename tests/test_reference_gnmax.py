"""GNMax / Confident-GNMax RDP oracle: dp_accounting for the data-independent Gaussian curves,
hand-computed Theorem 6 values, and soundness against exact Rényi divergences of the outputs."""
from __future__ import annotations

import math

import numpy as np
import pytest
from dp_accounting import GaussianDpEvent
from dp_accounting.rdp import RdpAccountant
from hypothesis import given
from hypothesis import strategies as st
from scipy.special import log_ndtr

from dpcheck.reference import gnmax, rdp_epsilon

ORDERS = [1.5, 2.0, 3.0, 5.0, 10.0, 20.0, 50.0, 100.0, 256.0]


@given(sigma=st.floats(0.5, 500.0), queries=st.integers(1, 1000), delta=st.sampled_from([1e-5, 1e-8]))
def test_data_independent_gnmax_is_gaussian_with_sensitivity_sqrt2(sigma: float, queries: int, delta: float) -> None:
    # a/σ² = a·Δ²/(2σ²) with Δ = √2, i.e. dp_accounting's Gaussian event with noise multiplier σ/√2.
    accountant = RdpAccountant(orders=ORDERS)
    accountant.compose(GaussianDpEvent(noise_multiplier=sigma / math.sqrt(2)), queries)
    ours = rdp_epsilon(ORDERS, queries * gnmax.gnmax_rdp_data_independent(sigma, ORDERS), delta, conversion="improved")
    assert ours[0] == pytest.approx(accountant.get_epsilon(delta), rel=1e-9, abs=1e-12)


@given(sigma1=st.floats(0.5, 500.0), queries=st.integers(1, 1000))
def test_data_independent_threshold_is_gaussian_with_sensitivity_one(sigma1: float, queries: int) -> None:
    accountant = RdpAccountant(orders=ORDERS)
    accountant.compose(GaussianDpEvent(noise_multiplier=sigma1), queries)
    ours = rdp_epsilon(ORDERS, queries * gnmax.threshold_rdp_data_independent(sigma1, ORDERS), 1e-6, conversion="improved")
    assert ours[0] == pytest.approx(accountant.get_epsilon(1e-6), rel=1e-9, abs=1e-12)


def test_log_q_hand_computed() -> None:
    # counts (10, 4), σ = 3: ½·erfc(6/(2·3)) = ½·erfc(1) = ½·0.15729921 = 0.07864960
    assert math.exp(gnmax.gnmax_log_q([10, 4], 3.0)) == pytest.approx(0.0786496035251426, rel=1e-13)
    # ties: (5, 5) gives ½·erfc(0) = ½; (3, 3, 3) gives 1, capped at 1 − 1/3
    assert math.exp(gnmax.gnmax_log_q([5, 5], 3.0)) == pytest.approx(0.5, rel=1e-15)
    assert math.exp(gnmax.gnmax_log_q([3, 3, 3], 3.0)) == pytest.approx(2 / 3, rel=1e-15)
    # far tail: gap 1000 at σ = 1 → log(½ erfc(500)) ≈ −250000 − log(500·√π) − log 2, no underflow
    assert gnmax.gnmax_log_q([1000, 0], 1.0) == pytest.approx(-250000 - math.log(500 * math.sqrt(math.pi)) - math.log(2), rel=1e-9)


def test_theorem6_hand_computed() -> None:
    # counts (100, 0), σ = 10: q = ½ erfc(100/20) = ½ erfc(5) = 7.6872990e-13, log q = −27.894037
    # Prop. 10: μ2 = 10·√27.894037 = 52.814805, μ1 = 53.814805, ε2 = 0.52814805, ε1 = 0.53814805
    # condition: (μ2 − 1)ε2 − μ2(log(μ1/(μ1−1)) + log(μ2/(μ2−1))) = 27.36569 − 2.00004 = 25.36565 ≥ log q ✓
    # A = (1 − q)/(1 − (q e^{ε2})^{(μ2−1)/μ2}) = 1 + 1.4199e-12;  B = e^{ε1}/q^{1/(μ1−1)} = e^{1.066296} = 2.9046012
    # a = 2: log((1 − q)·A + q·B) = log(1 + 1.4199e-12 − 7.687e-13 + 2.2328e-12) = 2.8840343e-12
    # a = 5: (1/4)·log((1 − q)A⁴ + qB⁴) = 1.4906901e-11;  a = 20: 2.5442456e-05
    rdp = gnmax.gnmax_rdp_data_dependent([100, 0], 10.0, [2.0, 5.0, 20.0])
    np.testing.assert_allclose(rdp, [2.884034338793e-12, 1.490690104242e-11, 2.544245555608e-05], rtol=1e-6)
    # orders above μ1 = 53.8 keep the data-independent a/σ² = a/100
    assert gnmax.gnmax_rdp_data_dependent([100, 0], 10.0, [60.0])[0] == pytest.approx(0.6)


def test_data_dependent_falls_back_when_conditions_fail() -> None:
    # a tie: q = ½ → μ2 = σ·√log 2; at σ = 1 that is 0.83 < 1 → Theorem 6 inapplicable
    np.testing.assert_array_equal(gnmax.gnmax_rdp_data_dependent([5, 5], 1.0, ORDERS), np.array(ORDERS) / 1.0)
    assert np.all(np.isinf(gnmax.theorem6_rdp(math.log(0.5), 0.9, 1.0, 0.8, 1.0, ORDERS)))
    # q = 0 (log q = −inf): a deterministic output costs nothing
    np.testing.assert_array_equal(gnmax.gaussian_curve_data_dependent_rdp(-math.inf, 5.0, ORDERS), 0.0)


def _renyi_bernoulli(log_p: tuple[float, float], log_p2: tuple[float, float], a: float) -> float:
    terms = [a * lp - (a - 1) * lq for lp, lq in zip(log_p, log_p2)]
    return float(np.logaddexp(*terms)) / (a - 1)


def _gnmax_two_class(advantage: float, sigma: float) -> tuple[float, float]:
    z = advantage / (math.sqrt(2) * sigma)
    return float(log_ndtr(z)), float(log_ndtr(-z))


@given(k=st.integers(2, 400), data=st.data(), sigma=st.floats(0.3, 100.0), a=st.sampled_from(ORDERS + [400.0]))
def test_gnmax_bound_is_sound_for_two_classes(k: int, data: st.DataObject, sigma: float, a: float) -> None:
    # Output of two-class GNMax is Bernoulli(Φ(s/(√2σ))) for vote advantage s; a neighbour moves one
    # vote (s ± 2). Theorem 6 bounds D_a(M(D)‖M(D')) for every neighbour D'.
    n1 = data.draw(st.integers(0, k))
    s = 2 * n1 - k
    bound = gnmax.gnmax_rdp_data_dependent([k - n1, n1], sigma, [a])[0]
    for s2 in (s - 2, s + 2):
        if abs(s2) <= k:
            exact = _renyi_bernoulli(_gnmax_two_class(s, sigma), _gnmax_two_class(s2, sigma), a)
            assert exact <= bound * (1 + 1e-9) + 1e-15


@given(top=st.integers(0, 500), threshold=st.integers(0, 500), sigma1=st.floats(0.5, 200.0), a=st.sampled_from(ORDERS))
def test_threshold_bound_is_sound(top: int, threshold: int, sigma1: float, a: float) -> None:
    # P[answered] = Φ((max − T)/σ1); a neighbour moves the max count by at most 1.
    bound = gnmax.threshold_rdp_data_dependent([top, 0], threshold, sigma1, [a])[0]
    here = (float(log_ndtr((top - threshold) / sigma1)), float(log_ndtr((threshold - top) / sigma1)))
    for top2 in (top - 1, top + 1):
        there = (float(log_ndtr((top2 - threshold) / sigma1)), float(log_ndtr((threshold - top2) / sigma1)))
        assert _renyi_bernoulli(here, there, a) <= bound * (1 + 1e-9) + 1e-15


@given(gap_small=st.integers(0, 300), extra=st.integers(1, 300), sigma=st.floats(1.0, 80.0))
def test_data_dependent_cost_shrinks_with_consensus(gap_small: int, extra: int, sigma: float) -> None:
    loose = gnmax.gnmax_rdp_data_dependent([gap_small, 0], sigma, ORDERS)
    tight = gnmax.gnmax_rdp_data_dependent([gap_small + extra, 0], sigma, ORDERS)
    di = gnmax.gnmax_rdp_data_independent(sigma, ORDERS)
    assert np.all(tight <= loose * (1 + 1e-9) + 1e-300)
    assert np.all(loose <= di)


def test_confident_gnmax_composition() -> None:
    counts = [[180, 10, 10], [70, 65, 65]]
    answered = [True, False]
    a = np.array(ORDERS)
    di = gnmax.confident_gnmax_rdp(counts, answered, threshold=150, sigma1=40, sigma2=20, orders=a, data_dependent=False)
    # both queries pay a/(2·40²); only the first pays a/20² on top
    np.testing.assert_allclose(di, 2 * a / 3200 + a / 400, rtol=1e-14)
    dd = gnmax.confident_gnmax_rdp(counts, answered, threshold=150, sigma1=40, sigma2=20, orders=a)
    expected = (
        gnmax.threshold_rdp_data_dependent(counts[0], 150, 40, a)
        + gnmax.threshold_rdp_data_dependent(counts[1], 150, 40, a)
        + gnmax.gnmax_rdp_data_dependent(counts[0], 20, a)
    )
    np.testing.assert_allclose(dd, expected, rtol=1e-14)
    assert np.all(dd <= di * (1 + 1e-12))
    assert np.all(dd[:4] < di[:4])  # a strong consensus is cheaper at low orders


def test_totals_group_identical_queries() -> None:
    counts = np.array([[30, 0], [30, 0], [16, 14], [0, 30]])
    total = gnmax.gnmax_rdp(counts, 6.0, ORDERS)
    one_by_one = sum(gnmax.gnmax_rdp_data_dependent(row, 6.0, ORDERS) for row in counts)
    np.testing.assert_allclose(total, one_by_one, rtol=1e-14)
    np.testing.assert_allclose(gnmax.gnmax_rdp(counts, 6.0, ORDERS, data_dependent=False), 4 * np.array(ORDERS) / 36, rtol=1e-14)


def test_pate2017_formula_transplanted_to_gnmax_is_not_a_bound() -> None:
    # PATE-TabTransGAN (Eq. 2) charges GNMax with the PATE 2017 moment formula, 2γ := 2/σ², l := a − 1,
    # divided by l. GNMax is not (2/σ², 0)-DP, so Theorem 2 of PATE 2017 does not apply — and indeed
    # at σ = 10, vote advantage 100, order 20 the true divergence to the neighbour with advantage 102
    # is 1.25e-5 while that formula claims 3.4e-14; Theorem 6 (this oracle) gives 2.5e-5.
    from dpcheck.reference import pate2017

    sigma, a = 10.0, 20.0
    log_q = float(gnmax.gnmax_log_q([100, 0], sigma))
    transplanted = pate2017.data_dependent_moment(log_q, 1 / sigma**2, [a - 1])[0] / (a - 1)
    exact = _renyi_bernoulli(_gnmax_two_class(100, sigma), _gnmax_two_class(102, sigma), a)
    ours = gnmax.gnmax_rdp_data_dependent([100, 0], sigma, [a])[0]
    assert transplanted < 1e-12
    assert exact == pytest.approx(1.2549e-5, rel=1e-3)
    assert ours == pytest.approx(2.5442e-5, rel=1e-3) and exact <= ours
