"""PATE-GAN Theorem 5 oracle: hand-computed values, a 40-digit evaluation of the printed formula,
soundness against the exact moments of the two-class Laplace noisy max, numerical edge cases."""
from __future__ import annotations

import math
import warnings

import mpmath as mp
import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from dpcheck.reference import (
    PateGanAccountant,
    moments_epsilon,
    pategan_epsilon,
    pategan_log_q,
    pategan_moment_increment,
    pategan_moment_increments,
    pategan_moments,
    pategan_q,
    pategan_terms,
)
from dpcheck.testing import lambdas, vote_counts

def printed_formula(n0: int, n1: int, lam: float, l: int) -> mp.mpf | None:
    """Theorem 5 term for one sample exactly as printed, in multi-precision arithmetic (no log
    tricks): t = 1 + O(q) with q ≈ e^{−λ|n0−n1|}, so the working precision grows with λ|n0−n1|."""
    with mp.workdps(int(lam * abs(n0 - n1) / 2.3) + 40):
        return _printed_formula(n0, n1, mp.mpf(lam), l)


def _printed_formula(n0: int, n1: int, lam: mp.mpf, l: int) -> mp.mpf | None:
    x = lam * abs(n0 - n1)
    q = (2 + x) / (4 * mp.exp(x))
    data_independent = 2 * lam**2 * l * (l + 1)
    denominator = 1 - mp.exp(2 * lam) * q
    if abs(denominator) < mp.mpf(10) ** -12:
        return None  # on the boundary 1 − e^{2λ}q = 0 (e.g. λ = 1, |n0 − n1| = 2): rounding decides
    if denominator < 0:
        return data_independent
    t = (1 - q) * ((1 - q) / denominator) ** l + q * mp.exp(2 * lam * l)
    return min(data_independent, mp.log(t))


def test_hand_computed_gap_two_lambda_half() -> None:
    # λ = 0.5, n0 = 3, n1 = 1: λ|n0 − n1| = 1, q = (2 + 1)/(4e) = 3/10.873127 = 0.2759095809;
    # e^{2λ} q = e · 3/(4e) = 0.75 exactly, so 1 − e^{2λ}q = 0.25 and (1 − q)/0.25 = 2.8963617.
    # l = 1: t = 0.7240904·2.8963617 + 0.2759096·e   = 2.0972277 + 0.75      = 2.8472277, log = 1.0463458
    #        data-independent 2·0.25·1·2 = 1.0                          → min = 1.0
    # l = 2: t = 0.7240904·2.8963617² + 0.2759096·e² = 6.0742988 + 2.0387426 = 8.1130414, log = 2.0934728
    #        data-independent 2·0.25·2·3 = 3.0                          → min = 2.0934728
    # l = 3: t = 23.135249, log = 3.1413574 vs 2·0.25·3·4 = 6.0          → min = 3.1413574
    assert pategan_q(3, 1, 0.5) == pytest.approx(0.2759095808785817, rel=1e-15)
    alpha = pategan_moments([3], [1], 0.5, 3)
    np.testing.assert_allclose(alpha, [1.0, 2.0934728194121962, 3.1413573788239978], rtol=1e-13)
    di, dd = pategan_terms([3], [1], 0.5, 3)
    np.testing.assert_allclose(dd[0], [1.0463457981608074, 2.0934728194121962, 3.1413573788239978], rtol=1e-13)
    np.testing.assert_allclose(di[0], [1.0, 3.0, 6.0], rtol=0)


def test_hand_computed_tie_small_lambda() -> None:
    # n0 = n1 → q = 2/4 = 1/2 exactly. λ = 0.01: e^{0.02}/2 = 0.5101007, 1 − 0.5101007 = 0.4898993,
    # l = 1: t = 0.5·(0.5/0.4898993) + 0.5·e^{0.02} = 0.5103062 + 0.5101007 = 1.0204069, log = 0.0202041
    # data-independent 2·1e-4·1·2 = 4e-4 → the minimum is the data-independent term at every order:
    # a tie gives the teachers' vote no data-dependent discount.
    assert pategan_q(7, 7, 0.01) == 0.5
    _, dd = pategan_terms([7], [7], 0.01, 2)
    np.testing.assert_allclose(dd[0], [0.02020410954207756, 0.04040826073635708], rtol=1e-13)
    np.testing.assert_allclose(pategan_moments([7], [7], 0.01, 2), [4e-4, 1.2e-3], rtol=1e-14)


def test_undefined_data_dependent_term_falls_back_to_data_independent() -> None:
    # λ = 1 and a tie: e^{2}·0.5 = 3.69 > 1, so 1 − e^{2λ}q < 0 and the log term is undefined.
    # The oracle counts it as +inf: α(l) increases by exactly 2λ²l(l+1) = 2·l(l+1).
    di, dd = pategan_terms([4], [4], 1.0, 5)
    assert np.all(np.isinf(dd))
    np.testing.assert_array_equal(pategan_moments([4], [4], 1.0, 5), [4.0, 12.0, 24.0, 40.0, 60.0])
    # At λ just below ln(2)/2 a tie is still defined (1 − e^{2λ}/2 > 0), just above it is not.
    assert np.isfinite(pategan_terms([1], [1], math.log(2) / 2 - 1e-9, 1)[1]).all()
    assert np.isinf(pategan_terms([1], [1], math.log(2) / 2 + 1e-9, 1)[1]).all()


def test_epsilon_hand_computed() -> None:
    # α = (1.0, 2.0934728, 3.1413574) from the first test, δ = 1e-5, log(1/δ) = 11.5129255:
    # l = 1: 12.5129255; l = 2: 13.6063983/2 = 6.8031991; l = 3: 14.6542828/3 = 4.8847609 → ε̂ = 4.8847609
    alpha = pategan_moments([3], [1], 0.5, 3)
    assert pategan_epsilon(alpha, 1e-5) == pytest.approx(4.8847609479, rel=1e-9)
    assert moments_epsilon(3, alpha, 1e-5)[1] == 3.0


def test_accountant_is_the_sum_of_per_sample_updates() -> None:
    acc = PateGanAccountant(lam=0.05, num_moments=10)
    acc.update([0, 3, 10], [10, 7, 0])
    acc.update([5], [5])
    per_sample = pategan_moment_increments([0, 3, 10, 5], [10, 7, 0, 5], 0.05, 10).sum(axis=0)
    np.testing.assert_allclose(acc.alpha, per_sample, rtol=1e-14)
    np.testing.assert_allclose(pategan_moment_increment([0, 3, 10, 5], [10, 7, 0, 5], 0.05, 10), per_sample, rtol=1e-14)
    assert acc.queries == 4
    assert acc.epsilon(1e-5) == pategan_epsilon(per_sample, 1e-5)


def test_rejects_bad_inputs() -> None:
    with pytest.raises(ValueError):
        pategan_moments([1], [2], -0.1, 3)
    with pytest.raises(ValueError):
        pategan_moments([-1], [2], 0.1, 3)
    with pytest.raises(ValueError):
        pategan_moments([1], [2], 0.1, 0)
    with pytest.raises(ValueError):
        pategan_epsilon([0.1, 0.2], 0.0)


@given(
    votes=vote_counts(num_teachers=(1, 300), size=1),
    lam=lambdas(1e-4, 3.0),
    l=st.integers(1, 60),
)
def test_matches_printed_formula_in_high_precision(votes: np.ndarray, lam: float, l: int) -> None:
    n0, n1 = (int(v) for v in votes[0])
    exact = printed_formula(n0, n1, lam, l)
    assume(exact is not None)
    expected = float(exact)
    observed = pategan_moments([n0], [n1], lam, [l])[0]
    assert observed == pytest.approx(expected, rel=1e-10, abs=1e-300)


def _log_p_top(advantage: int, lam: float) -> tuple[float, float]:
    """(log P[class with vote advantage s wins], log P[it loses]) under Lap(1/λ) on both counts;
    the loss probability of the leader is exactly (2 + λ|s|)/(4 e^{λ|s|})."""
    x = lam * abs(advantage)
    log_lose = math.log(2 + x) - math.log(4) - x
    log_win = math.log1p(-math.exp(log_lose))
    return (log_win, log_lose) if advantage >= 0 else (log_lose, log_win)


@given(
    k=st.integers(2, 120),
    data=st.data(),
    lam=lambdas(1e-3, 2.0),
    l=st.integers(1, 120),
)
def test_bound_is_sound_for_two_class_laplace_noisy_max(k: int, data: st.DataObject, lam: float, l: int) -> None:
    # α(l) = log Σ_o P_D(o)^{l+1} P_D'(o)^{−l}; a neighbour moves one teacher's vote: advantage ± 2.
    n1 = data.draw(st.integers(0, k))
    s = n1 - (k - n1)
    bound = pategan_moments([k - n1], [n1], lam, [l])[0]
    p_win, p_lose = _log_p_top(s, lam)
    for s2 in (s - 2, s + 2):
        if abs(s2) > k:
            continue
        q_win, q_lose = _log_p_top(s2, lam)
        exact = float(np.logaddexp((l + 1) * p_win - l * q_win, (l + 1) * p_lose - l * q_lose))
        assert exact <= bound * (1 + 1e-9) + 1e-12


@given(votes=vote_counts(), lam=lambdas(1e-5, 10.0), L=st.integers(1, 200))
def test_moments_are_nonnegative_below_data_independent_and_increasing_in_order(
    votes: np.ndarray, lam: float, L: int
) -> None:
    alpha = pategan_moments(votes[:, 0], votes[:, 1], lam, L)
    l = np.arange(1, L + 1)
    assert np.all(np.isfinite(alpha)) and np.all(alpha >= 0)
    assert np.all(alpha <= len(votes) * 2 * lam**2 * l * (l + 1) * (1 + 1e-12))
    assert np.all(np.diff(alpha) >= -1e-12 * alpha[1:])


@given(k=st.integers(1, 200), lam=lambdas(1e-5, 20.0), L=st.integers(1, 50))
def test_larger_vote_gap_never_costs_more(k: int, lam: float, L: int) -> None:
    gaps = np.arange(k % 2, k + 1, 2)  # reachable |n0 − n1| for k teachers
    n0 = (k + gaps) // 2
    per_gap = pategan_moment_increments(n0, k - n0, lam, L)
    assert np.all(np.diff(per_gap, axis=0) <= 1e-12 * per_gap[:-1])


@given(k=st.integers(0, 100), lam_small=lambdas(1e-5, 3.0), factor=st.floats(1.0, 100.0), L=st.integers(1, 50))
def test_tie_cost_increases_with_lambda(k: int, lam_small: float, factor: float, L: int) -> None:
    small = pategan_moments([k], [k], lam_small, L)
    large = pategan_moments([k], [k], lam_small * factor, L)
    assert np.all(large >= small * (1 - 1e-12))


def test_cost_is_not_monotone_in_lambda_away_from_ties() -> None:
    # More noise (smaller λ) is not always cheaper: at |n0 − n1| = 100, λ = 0.01 gives q = 3/(4e) = 0.276,
    # no data-dependent discount, α(1) = 2·0.01²·2 = 4e-4; λ = 0.1 gives q = 12/(4e^{10}) = 1.36e-4 and
    # α(1) ≈ q·(2e^{0.2} − 2) = 6.0e-5. Monotonicity in λ holds for the data-independent term and at ties.
    low, high = pategan_moments([100, 100], [0, 0], 0.01, 1)[0], pategan_moments([100, 100], [0, 0], 0.1, 1)[0]
    assert low == pytest.approx(8e-4, rel=1e-12)
    assert high == pytest.approx(2 * 12 / (4 * math.exp(10)) * (2 * math.exp(0.2) - 2), rel=1e-3)
    assert high < low


@given(votes=vote_counts(), lam=lambdas(), L=st.integers(1, 100))
def test_more_orders_never_increase_epsilon(votes: np.ndarray, lam: float, L: int) -> None:
    alpha = pategan_moments(votes[:, 0], votes[:, 1], lam, L + 1)
    assert pategan_epsilon(alpha, 1e-5) <= pategan_epsilon(alpha[:L], 1e-5)


@given(votes=vote_counts(size=(2, 20)), lam=lambdas(), L=st.integers(1, 30), seed=st.integers(0, 2**32 - 1))
def test_order_and_batching_of_samples_do_not_matter(votes: np.ndarray, lam: float, L: int, seed: int) -> None:
    perm = np.random.default_rng(seed).permutation(len(votes))
    whole = pategan_moments(votes[:, 0], votes[:, 1], lam, L)
    cut = len(votes) // 2
    first = pategan_moments(votes[perm[:cut], 0], votes[perm[:cut], 1], lam, L)
    both = pategan_moments(votes[perm[cut:], 0], votes[perm[cut:], 1], lam, L, initial=first)
    np.testing.assert_allclose(both, whole, rtol=1e-12, atol=1e-300)


@given(gap=st.integers(10**3, 10**9), lam=lambdas(1.0, 100.0), l=st.sampled_from([1, 10, 1000, 10**5, 10**6]))
def test_no_overflow_or_underflow_for_huge_gaps_and_orders(gap: int, lam: float, l: int) -> None:
    # q = (2 + λg)/(4e^{λg}) underflows float64 once λg > ~745 and e^{2λl} overflows once 2λl > ~709;
    # the log-space oracle must still return the tiny positive data-dependent value, never inf/NaN.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        alpha = pategan_moments([gap], [0], lam, [l])[0]
    assert np.isfinite(alpha) and 0.0 <= alpha <= 2 * lam**2 * l * (l + 1)
    x = lam * gap
    log_q = math.log(2 + x) - math.log(4) - x
    # log t ≈ q·(e^{2λl} − 1) + O(q·l·λ) when q·e^{2λl} is small: check the order of magnitude.
    if log_q + 2 * lam * l < -50:
        assert alpha <= math.exp(log_q + 2 * lam * l + math.log(l + 2))


def test_q_tends_to_zero_smoothly() -> None:
    lam = 0.1
    gaps = np.array([10, 100, 1000, 7000])
    alpha = pategan_moment_increments(gaps, np.zeros_like(gaps), lam, [1])[:, 0]
    assert np.all(np.diff(alpha) < 0) and np.all(alpha > 0)
    # q = (2 + 700)/(4e^{700}) = 175.5·e^{−700} ≈ 1.7e-302; α(1) ≈ −2q + 2e^{0.2}q = 0.443·q: tiny
    # but representable, and equal to the multi-precision value:
    assert alpha[3] == pytest.approx(float(printed_formula(7000, 0, lam, 1)), rel=1e-9)
    assert pategan_q(10**5, 0, lam) == 0.0  # q underflows, its log does not:
    assert pategan_log_q(10**5, 0, lam) == pytest.approx(math.log(10002 / 4) - 10**4, rel=1e-15)
    assert pategan_moments([10**5], [0], lam, 1)[0] == 0.0
