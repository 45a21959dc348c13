"""Testing your own PATE-GAN moments accountant with ``dpcheck.testing`` (see docs/testing.md).

Run with ``pytest examples/test_my_accountant.py``. The two functions under test would normally
be imported from your library; they are written here so the example is self-contained:

* ``moments_update`` — Algorithm 1, lines 16-19 of the PATE-GAN paper, transcribed directly;
* ``moments_update_missing_log`` — the same with the ``log`` dropped before the minimum, the bug
  the 2025 audit found in two public implementations. The second test shows that the property
  test catches it; it wraps the check in ``pytest.raises`` so that this file passes.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpcheck.testing import AccountantMismatch, assert_matches_pategan_accountant, lambdas, vote_counts


def moments_update(alpha: np.ndarray, n0: int, n1: int, lam: float) -> np.ndarray:
    """Add one teacher-labelled sample's privacy cost to the moments α(1..L)."""
    gap = abs(n0 - n1)
    q = (2 + lam * gap) / (4 * math.exp(lam * gap))
    out = alpha.copy()
    for l in range(1, len(alpha) + 1):
        data_independent = 2 * lam**2 * l * (l + 1)
        t = (1 - q) * ((1 - q) / (1 - math.exp(2 * lam) * q)) ** l + q * math.exp(2 * lam * l)
        out[l - 1] += min(data_independent, math.log(t))
    return out


def moments_update_missing_log(alpha: np.ndarray, n0: int, n1: int, lam: float) -> np.ndarray:
    gap = abs(n0 - n1)
    q = (2 + lam * gap) / (4 * math.exp(lam * gap))
    out = alpha.copy()
    for l in range(1, len(alpha) + 1):
        data_independent = 2 * lam**2 * l * (l + 1)
        t = (1 - q) * ((1 - q) / (1 - math.exp(2 * lam) * q)) ** l + q * math.exp(2 * lam * l)
        out[l - 1] += min(data_independent, t)
    return out


def epsilon_hat(alpha: np.ndarray, delta: float) -> float:
    return min((a + math.log(1 / delta)) / l for l, a in enumerate(alpha, start=1))


# λ below ln(2)/2 keeps 1 − e^{2λ}q > 0 for every vote count: the region where the direct
# transcription above is defined. derandomize makes the run reproducible in CI.
EXAMPLES = settings(max_examples=100, deadline=None, derandomize=True)
VOTES = vote_counts(num_teachers=(1, 100), size=(1, 10))


@EXAMPLES
@given(votes=VOTES, lam=lambdas(1e-4, 0.3), num_moments=st.integers(1, 40))
def test_my_accountant_matches_theorem_5(votes: np.ndarray, lam: float, num_moments: int) -> None:
    assert_matches_pategan_accountant(
        moments_update, votes, lam, orders=num_moments, delta=1e-5, epsilon_fn=epsilon_hat
    )


def test_a_missing_log_is_caught() -> None:
    @EXAMPLES
    @given(votes=VOTES, lam=lambdas(1e-4, 0.3), num_moments=st.integers(1, 40))
    def check(votes: np.ndarray, lam: float, num_moments: int) -> None:
        assert_matches_pategan_accountant(moments_update_missing_log, votes, lam, orders=num_moments)

    with pytest.raises(AccountantMismatch) as failure:
        check()
    # Hypothesis re-raises the failure of the shrunk example: a single sample and one order suffice.
    assert failure.value.sample == 0
    assert failure.value.relative_error > 1e-2
    assert "relative error" in str(failure.value)
