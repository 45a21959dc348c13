"""The tightness ceiling of exact mechanisms."""
from __future__ import annotations

import math

import numpy as np
import pytest

from dpcheck.audit import ceiling as ce


def test_laplace_tradeoff_never_beats_pure_dp() -> None:
    eps = 1.0
    alpha, beta = ce.tradeoff("laplace", epsilon=eps)
    # every test of an ε-DP mechanism: α + e^ε β ≥ 1 and β + e^ε α ≥ 1, with equality reached
    slack = np.minimum(alpha + math.exp(eps) * beta, beta + math.exp(eps) * alpha) - 1.0
    assert slack.min() >= -1e-12
    assert slack.min() < 1e-3


def test_randomized_response_rates() -> None:
    alpha, beta = ce.tradeoff("randomized-response", epsilon=math.log(3))
    assert alpha[0] == pytest.approx(0.25) and beta[0] == pytest.approx(0.25)


@pytest.mark.parametrize("mechanism,kw", [("laplace", {"epsilon": 1.0}), ("randomized-response", {"epsilon": 1.0}),
                                          ("gaussian", {"mu": 1.0})])
def test_ceiling_stays_below_the_truth_and_approaches_it(mechanism: str, kw: dict) -> None:
    truth = next(iter(kw.values()))
    small = ce.ceiling(mechanism, 200, confidence=0.95, **kw)
    large = ce.ceiling(mechanism, 20_000, confidence=0.95, **kw)
    assert 0 < small.value < large.value < truth
    assert large.value > 0.85 * truth


def test_ceiling_at_the_old_reference_size_matches_what_was_seen() -> None:
    # ref-laplace reached ε_emp ≤ 0.54 at R = 200 with ε = 1: below the ceiling, as it must be
    assert ce.ceiling("laplace", 200, confidence=0.95, epsilon=1.0).value > 0.54


def test_bad_arguments() -> None:
    with pytest.raises(ValueError):
        ce.ceiling("laplace", 100, confidence=0.95)
    with pytest.raises(ValueError):
        ce.ceiling("exponential", 100, confidence=0.95, epsilon=1.0)
    with pytest.raises(ValueError):
        ce.ceiling("gaussian", 0, confidence=0.95, mu=1.0)


def test_posterior_ceiling_of_the_gaussian_is_higher_than_cp() -> None:
    cp = ce.ceiling("gaussian", 5000, confidence=0.95, mu=0.455)
    jf = ce.ceiling("gaussian", 5000, confidence=0.95, mu=0.455, method="jeffreys-joint")
    assert cp.value < jf.value < 0.455
