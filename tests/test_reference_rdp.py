"""Moments ↔ RDP and RDP → (ε, δ): hand-computed values and dp_accounting's conversion."""
from __future__ import annotations

import math

import numpy as np
import pytest
from dp_accounting import GaussianDpEvent
from dp_accounting.rdp import RdpAccountant, rdp_privacy_accountant
from hypothesis import given
from hypothesis import strategies as st

from dpcheck.reference import (
    gaussian_rdp,
    moments_epsilon,
    moments_to_rdp,
    pategan_epsilon,
    pategan_moments,
    rdp_epsilon,
    rdp_to_moments,
)


def test_classic_conversion_hand_computed() -> None:
    # ε_RDP(a) = a/2 (Gaussian, σ = 1), δ = 1e-5, log(1/δ) = 11.512925:
    # a = 4: 2 + 11.512925/3 = 5.837642; a = 5: 2.5 + 2.878231 = 5.378231; a = 6: 3 + 2.302585 = 5.302585;
    # a = 7: 3.5 + 1.918821 = 5.418821 → minimum 5.302585 at a = 6
    orders = [4.0, 5.0, 6.0, 7.0]
    eps, order = rdp_epsilon(orders, np.array(orders) / 2, 1e-5)
    assert eps == pytest.approx(3 + math.log(1e5) / 5, rel=1e-14) and order == 6.0


def test_improved_conversion_hand_computed() -> None:
    # same curve, ε = r + log(1 − 1/a) − log(δ·a)/(a − 1):
    # a = 4: 2   + log(3/4) − log(4e-5)/3 = 2   − 0.2876821 + 3.3755437 = 5.0878616
    # a = 5: 2.5 + log(4/5) − log(5e-5)/4 = 2.5 − 0.2231436 + 2.4758720 = 4.7527284
    # a = 6: 3   + log(5/6) − log(6e-5)/5 = 3   − 0.1823216 + 1.9442332 = 4.7619116
    # → minimum at a = 5, below the classic 5.302585 (the improvement is log(1 − 1/a) − log(a)/(a − 1))
    eps, order = rdp_epsilon([4.0, 5.0, 6.0, 7.0], [2.0, 2.5, 3.0, 3.5], 1e-5, conversion="improved")
    assert eps == pytest.approx(2.5 + math.log(4 / 5) - math.log(5e-5) / 4, rel=1e-14) and order == 5.0
    assert eps == pytest.approx(4.7527284, rel=1e-7)


@given(
    orders=st.lists(st.floats(1.02, 5000.0), min_size=1, max_size=20, unique=True),
    data=st.data(),
    delta=st.floats(1e-12, 1e-2),
)
def test_improved_conversion_matches_dp_accounting(orders: list[float], data: st.DataObject, delta: float) -> None:
    # dp_accounting also uses a KL-divergence bound when δ² ≥ 1 − e^{−r}; keep r ≥ 0.01 where it does not apply.
    rdp = data.draw(st.lists(st.floats(0.01, 1e4), min_size=len(orders), max_size=len(orders)))
    theirs, their_order = rdp_privacy_accountant.compute_epsilon(orders, rdp, delta)
    ours, our_order = rdp_epsilon(orders, rdp, delta, conversion="improved")
    assert ours == pytest.approx(theirs, rel=1e-12, abs=1e-12)


@given(sigma=st.floats(0.3, 200.0), steps=st.integers(1, 5000), delta=st.sampled_from([1e-3, 1e-6, 1e-9]))
def test_gaussian_composition_matches_rdp_accountant(sigma: float, steps: int, delta: float) -> None:
    orders = [1.25, 1.5, 2.0, 3.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0, 1024.0]
    accountant = RdpAccountant(orders=orders)
    accountant.compose(GaussianDpEvent(noise_multiplier=sigma), steps)
    ours = rdp_epsilon(orders, steps * gaussian_rdp(sigma, orders), delta, conversion="improved")[0]
    assert ours == pytest.approx(accountant.get_epsilon(delta), rel=1e-10, abs=1e-12)


@given(alpha=st.lists(st.floats(0.0, 1e6, allow_subnormal=False), min_size=1, max_size=50), delta=st.floats(1e-15, 0.5))
def test_moments_tail_bound_is_the_classic_rdp_conversion(alpha: list[float], delta: float) -> None:
    # α(l) = l·ε_RDP(l + 1): (α(l) + log(1/δ))/l = ε_RDP(a) + log(1/δ)/(a − 1) with a = l + 1
    l = np.arange(1, len(alpha) + 1)
    a, r = moments_to_rdp(l, alpha)
    np.testing.assert_array_equal(a, l + 1)
    assert moments_epsilon(l, alpha, delta)[0] == pytest.approx(rdp_epsilon(a, r, delta)[0], rel=1e-12)
    back_l, back_alpha = rdp_to_moments(a, r)
    np.testing.assert_allclose(back_alpha, alpha, rtol=1e-14)


@given(lam=st.floats(1e-4, 1e-2), queries=st.integers(1, 10**5), delta=st.sampled_from([1e-5, 1e-8]))
def test_pategan_data_independent_regime_equals_a_gaussian_curve(lam: float, queries: int, delta: float) -> None:
    # For ties with small λ the minimum is always 2λ²l(l+1) (q = 1/2 is never a discount), so after N
    # samples α(l)/l = 2Nλ²·(l + 1): the RDP curve a/(2σ²) of a Gaussian with σ = 1/(2λ√N). Cross-check
    # ε̂ with dp_accounting's Gaussian RDP (improved conversion) and the classic one with the tail bound.
    L = 64
    alpha = pategan_moments(np.full(queries, 3), np.full(queries, 3), lam, L)
    l = np.arange(1, L + 1)
    np.testing.assert_allclose(alpha, queries * 2 * lam**2 * l * (l + 1), rtol=1e-12)
    sigma = 1 / (2 * lam * math.sqrt(queries))
    accountant = RdpAccountant(orders=list(map(float, l + 1)))
    accountant.compose(GaussianDpEvent(noise_multiplier=sigma))
    a, r = moments_to_rdp(l, alpha)
    assert rdp_epsilon(a, r, delta, conversion="improved")[0] == pytest.approx(accountant.get_epsilon(delta), rel=1e-9)
    assert pategan_epsilon(alpha, delta) == pytest.approx(rdp_epsilon(a, r, delta)[0], rel=1e-12)


def test_nan_moments_have_no_guarantee_and_bad_inputs_raise() -> None:
    assert math.isnan(moments_epsilon(3, [0.1, float("nan"), 0.3], 1e-5)[0])
    with pytest.raises(ValueError):
        rdp_epsilon([1.0, 2.0], [0.1, 0.2], 1e-5)
    with pytest.raises(ValueError):
        rdp_epsilon([2.0], [0.1], 1e-5, conversion="mystery")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        moments_epsilon(2, [0.1, 0.2], 1.5)
