"""The public dpcheck.testing API: strategies, the accountant assertion, profiles, the example."""
from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

import dpcheck.testing as testing
from dpcheck.reference import pategan_moment_increment
from dpcheck.testing import (
    AccountantMismatch,
    accountant_cases,
    assert_matches_pategan_accountant,
    lambdas,
    moment_orders,
    privacy_params,
    vote_counts,
)

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "test_my_accountant.py"


def _load_example():
    spec = importlib.util.spec_from_file_location("dpcheck_example_test_my_accountant", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


example = _load_example()


def naive_update(alpha: np.ndarray, n0: int, n1: int, lam: float) -> np.ndarray:
    return example.moments_update(alpha, n0, n1, lam)


def synthcity_index_slip(alpha: np.ndarray, n0: int, n1: int, lam: float) -> np.ndarray:
    # exp(2λ·l + 1) where exp(2λ·(l + 1)) was meant, with 0-based l: the audit's synthcity bug
    gap = abs(n0 - n1)
    q = (2 + lam * gap) / (4 * math.exp(lam * gap))
    out = alpha.copy()
    for i in range(len(alpha)):
        a = 2 * lam**2 * (i + 1) * (i + 2)
        t = (1 - q) * ((1 - q) / (1 - math.exp(2 * lam) * q)) ** (i + 1) + q * math.exp(2 * lam * i + 1)
        out[i] += min(a, math.log(t))
    return out


def precedence_slip(alpha: np.ndarray, n0: int, n1: int, lam: float) -> np.ndarray:
    # 2λ²·l·l + 1 where 2λ²·l(l + 1) was meant (the DP104 shape)
    gap = abs(n0 - n1)
    q = (2 + lam * gap) / (4 * math.exp(lam * gap))
    out = alpha.copy()
    for l in range(1, len(alpha) + 1):
        t = (1 - q) * ((1 - q) / (1 - math.exp(2 * lam) * q)) ** l + q * math.exp(2 * lam * l)
        out[l - 1] += min(2 * lam**2 * l * l + 1, math.log(t))
    return out


# --------------------------------------------------------------------------- strategies


@given(votes=vote_counts(num_teachers=(1, 50), size=(1, 12), num_classes=3), k=st.integers(1, 50))
def test_vote_counts_rows_sum_to_the_number_of_teachers(votes: np.ndarray, k: int) -> None:
    assert votes.ndim == 2 and votes.shape[1] == 3 and 1 <= votes.shape[0] <= 12
    assert votes.dtype == np.int64 and np.all(votes >= 0)
    assert len(set(votes.sum(axis=1).tolist())) == 1


@given(votes=vote_counts(num_teachers=7, size=5))
def test_vote_counts_fixed_sizes(votes: np.ndarray) -> None:
    assert votes.shape == (5, 2)
    assert np.all(votes.sum(axis=1) == 7)


def test_vote_counts_draw_ties_and_unanimity_often() -> None:
    rows: list[list[int]] = []

    @settings(max_examples=200, derandomize=True, database=None)
    @given(votes=vote_counts(num_teachers=20, size=4))
    def collect(votes: np.ndarray) -> None:
        rows.extend(votes.tolist())

    collect()
    assert [10, 10] in rows and [20, 0] in rows and [0, 20] in rows


@given(lam=lambdas(1e-5, 3.0), params=privacy_params(), orders=moment_orders(64))
def test_scalar_strategies_stay_in_range(lam: float, params: tuple[float, float], orders: tuple[int, ...]) -> None:
    assert 1e-5 <= lam <= 3.0
    epsilon, delta = params
    assert 1e-2 <= epsilon <= 1e2 and 1e-12 <= delta <= 1e-2
    assert list(orders) == sorted(set(orders)) and 1 <= orders[0] and orders[-1] <= 64


def test_lambdas_cover_several_decades() -> None:
    seen: list[float] = []

    @settings(max_examples=300, derandomize=True, database=None)
    @given(lam=lambdas(1e-5, 10.0))
    def collect(lam: float) -> None:
        seen.append(lam)

    collect()
    decades = {math.floor(math.log10(v)) for v in seen}
    assert len(decades) >= 5
    assert math.log(2) / 2 in seen


@given(case=accountant_cases())
def test_accountant_cases_are_where_a_direct_transcription_is_exact(case: dict) -> None:
    # the safe default region: a straightforward float implementation matches the oracle tightly
    alpha = np.zeros(case["num_moments"])
    for n0, n1 in zip(case["n0"].tolist(), case["n1"].tolist()):
        alpha = naive_update(alpha, n0, n1, case["lamda"])
    reference = pategan_moment_increment(case["n0"], case["n1"], case["lamda"], case["num_moments"])
    np.testing.assert_allclose(alpha, reference, rtol=1e-9, atol=1e-13)
    assert np.all(case["n0"] + case["n1"] == case["num_teachers"])


# --------------------------------------------------------------------------- the assertion


@given(votes=vote_counts(size=(1, 6)), lam=lambdas(1e-4, 0.3), orders=moment_orders(30))
def test_correct_accountant_passes_on_any_order_set(votes: np.ndarray, lam: float, orders: tuple[int, ...]) -> None:
    def update(alpha: np.ndarray, n0: int, n1: int, lam: float) -> np.ndarray:
        full = naive_update(np.zeros(max(orders)), n0, n1, lam)
        return alpha + full[np.asarray(orders) - 1]

    assert_matches_pategan_accountant(update, votes, lam, orders=list(orders))


@pytest.mark.parametrize("buggy", [synthcity_index_slip, precedence_slip, example.moments_update_missing_log])
def test_known_bugs_are_caught_and_reported(buggy) -> None:
    @settings(max_examples=100, derandomize=True, database=None, deadline=None,
              phases=[Phase.explicit, Phase.generate, Phase.shrink])
    @given(votes=vote_counts(num_teachers=(1, 60), size=(1, 5)), lam=lambdas(1e-3, 0.3), L=st.integers(1, 30))
    def check(votes: np.ndarray, lam: float, L: int) -> None:
        assert_matches_pategan_accountant(buggy, votes, lam, orders=L)

    with pytest.raises(AccountantMismatch) as failure:
        check()
    error = failure.value
    assert error.relative_error > 1e-6
    assert error.sample is not None and error.n0 is not None and error.order is not None
    message = str(error)
    assert "relative error" in message and f"n0={error.n0}" in message and "λ=" in message


def test_reports_first_diverging_sample_and_worst_order() -> None:
    votes = [[5, 5], [60, 0], [59, 1]]
    with pytest.raises(AccountantMismatch) as failure:
        assert_matches_pategan_accountant(example.moments_update_missing_log, votes, 0.05, orders=10)
    # at λ = 0.05 a tie costs the data-independent term in both versions; the unanimous vote diverges
    assert failure.value.sample == 1 and (failure.value.n0, failure.value.n1) == (60, 0)
    assert failure.value.expected == pytest.approx(
        pategan_moment_increment([5, 60], [5, 0], 0.05, 10)[int(failure.value.order) - 1], rel=1e-12
    )


def test_batched_and_in_place_updates() -> None:
    votes = np.array([[3, 7], [10, 0], [5, 5]])

    def batched(alpha: np.ndarray, n0: np.ndarray, n1: np.ndarray, lam: float) -> np.ndarray:
        for a, b in zip(n0.tolist(), n1.tolist()):
            alpha = naive_update(alpha, a, b, lam)
        return alpha

    def in_place(alpha: np.ndarray, n0: int, n1: int, lam: float) -> None:
        alpha[:] = naive_update(alpha, n0, n1, lam)

    assert_matches_pategan_accountant(batched, votes, 0.05, orders=12, batched=True)
    assert_matches_pategan_accountant(in_place, votes, 0.05, orders=12)
    with pytest.raises(AccountantMismatch, match="batched"):
        assert_matches_pategan_accountant(lambda a, n0, n1, lam: a, votes, 0.05, orders=12, batched=True)


def test_epsilon_is_checked_when_asked() -> None:
    votes = [[8, 2], [0, 10]]

    def wrong_sign(alpha: np.ndarray, delta: float) -> float:
        return min((a + math.log(delta)) / l for l, a in enumerate(alpha, start=1))

    assert_matches_pategan_accountant(naive_update, votes, 0.1, orders=8, delta=1e-5, epsilon_fn=example.epsilon_hat)
    with pytest.raises(AccountantMismatch, match="ε̂"):
        assert_matches_pategan_accountant(naive_update, votes, 0.1, orders=8, delta=1e-5, epsilon_fn=wrong_sign)


def test_shape_errors_and_nan_are_mismatches() -> None:
    with pytest.raises(AccountantMismatch, match="returned 3 moments"):
        assert_matches_pategan_accountant(lambda a, n0, n1, lam: np.zeros(3), [[1, 2]], 0.1, orders=5)
    with pytest.raises(AccountantMismatch):
        assert_matches_pategan_accountant(lambda a, n0, n1, lam: a + np.nan, [[1, 2]], 0.1, orders=5)
    with pytest.raises(ValueError):
        assert_matches_pategan_accountant(naive_update, [[1, 2, 3]], 0.1, orders=5)


# --------------------------------------------------------------------------- profiles, example


def test_profiles_follow_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    original = settings._current_profile  # restored below so other tests keep the session profile
    try:
        monkeypatch.delenv("HYPOTHESIS_PROFILE", raising=False)
        monkeypatch.setenv("CI", "true")
        assert testing.register_hypothesis_profiles() == "ci"
        assert settings.default.derandomize and settings.default.max_examples == 50
        monkeypatch.delenv("CI")
        assert testing.register_hypothesis_profiles() == "dev"
        monkeypatch.setenv("HYPOTHESIS_PROFILE", "ci")
        assert testing.register_hypothesis_profiles() == "ci"
    finally:
        settings.load_profile(original)


def test_the_documented_example_passes() -> None:
    example.test_my_accountant_matches_theorem_5()
    example.test_a_missing_log_is_caught()


def test_the_public_names_resolve() -> None:
    for name in testing.__all__:
        assert getattr(testing, name) is not None
