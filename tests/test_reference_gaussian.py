"""Gaussian mechanism oracles: hand-computed classic σ, analytic Gaussian against dp_accounting."""
from __future__ import annotations

import math

import pytest
from dp_accounting import gaussian_mechanism
from hypothesis import given
from hypothesis import strategies as st

from dpcheck.reference import analytic_delta, analytic_epsilon, analytic_sigma, classic_sigma, gaussian_rdp
from dpcheck.testing import privacy_params


def test_classic_sigma_hand_computed() -> None:
    # ε = 1, δ = 1e-5: ln(1.25/1e-5) = ln(125000) = 11.736069, √(2·11.736069) = √23.472139 = 4.8448053
    assert classic_sigma(1.0, 1e-5) == pytest.approx(4.844805262605389, rel=1e-14)
    # sensitivity scales linearly, ε inversely: Δ = 2, ε = 0.5 → 4·4.8448053
    assert classic_sigma(0.5, 1e-5, sensitivity=2.0) == pytest.approx(4 * 4.844805262605389, rel=1e-14)
    # the oracle divides, it does not commit the DP102/delta_scale slip (1.25·δ): inverting σ = √(2 ln x)/ε
    # gives x = e^{(σε)²/2} = 1.25/δ = 125000, where the slip would give 1.25e-5 (and ln < 0: no σ at all)
    x = math.exp((classic_sigma(1.0, 1e-5) * 1.0) ** 2 / 2)
    assert x == pytest.approx(1.25 / 1e-5, rel=1e-12)
    # and below ε = 1 the classic σ meets δ (Dwork & Roth Thm A.1), checked with the exact analytic δ
    assert analytic_delta(0.5, classic_sigma(0.5, 1e-5)) <= 1e-5


@given(params=privacy_params(epsilon=(1e-3, 50.0), delta=(1e-12, 0.1)), sensitivity=st.sampled_from([0.5, 1.0, 3.0]))
def test_analytic_sigma_matches_dp_accounting(params: tuple[float, float], sensitivity: float) -> None:
    epsilon, delta = params
    theirs = sensitivity * gaussian_mechanism.get_sigma_gaussian(epsilon, delta)
    assert analytic_sigma(epsilon, delta, sensitivity) == pytest.approx(theirs, rel=1e-8)


@given(sigma=st.floats(0.05, 500.0), delta=st.floats(1e-12, 0.1))
def test_analytic_epsilon_matches_dp_accounting(sigma: float, delta: float) -> None:
    theirs = gaussian_mechanism.get_epsilon_gaussian(sigma, delta)
    assert analytic_epsilon(sigma, delta) == pytest.approx(theirs, rel=1e-8, abs=1e-10)


@given(params=privacy_params(epsilon=(1e-3, 0.99), delta=(1e-12, 0.1)))
def test_classic_is_sufficient_below_one(params: tuple[float, float]) -> None:
    # Dwork & Roth Thm A.1 holds for ε < 1, so the classic σ must be at least the optimal one, and the
    # mechanism it calibrates must meet δ exactly or better.
    epsilon, delta = params
    sigma = classic_sigma(epsilon, delta)
    assert sigma >= analytic_sigma(epsilon, delta)
    assert analytic_delta(epsilon, sigma) <= delta * (1 + 1e-9)


def test_classic_is_not_sufficient_for_large_epsilon() -> None:
    # ε = 10, δ = 1e-3: classic σ = √(2 ln 1250)/10 = √14.2654/10 = 0.3776; the analytic minimum is 0.4061,
    # so the classic calibration is NOT (10, 1e-3)-DP: its true δ is 3.36e-3.
    sigma = classic_sigma(10.0, 1e-3)
    assert sigma == pytest.approx(math.sqrt(2 * math.log(1250)) / 10, rel=1e-14)
    assert sigma < analytic_sigma(10.0, 1e-3)
    assert analytic_delta(10.0, sigma) > 3e-3


def test_delta_round_trip_and_rdp() -> None:
    sigma = analytic_sigma(1.0, 1e-6)
    assert analytic_delta(1.0, sigma) == pytest.approx(1e-6, rel=1e-9)
    assert analytic_epsilon(sigma, 1e-6) == pytest.approx(1.0, rel=1e-9)
    # a·Δ²/(2σ²): a = 4, Δ = 2, σ = 2 → 4·4/8 = 2
    assert list(gaussian_rdp(2.0, [4.0], sensitivity=2.0)) == [2.0]
    with pytest.raises(ValueError):
        analytic_sigma(1.0, 0.0)
    with pytest.raises(ValueError):
        classic_sigma(0.0, 1e-5)
