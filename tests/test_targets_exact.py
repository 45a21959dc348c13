"""The exact reference mechanisms behind the tightness table."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from dpcheck.audit.core.gdp import gdp_epsilon
from dpcheck.targets.base import Column, Schema, TargetError, shadow_release
from dpcheck.targets.exact_targets import mu_for
from dpcheck.targets.registry import get

SCHEMA = Schema(tuple(Column(n, "categorical", categories=(0, 1)) for n in "abc"))
WITHOUT = pd.DataFrame({"a": [0] * 4, "b": [0] * 4, "c": [0] * 4})
WITH = pd.concat([WITHOUT, pd.DataFrame({"a": [1], "b": [1], "c": [1]})], ignore_index=True)


def _release(name: str, data: pd.DataFrame, seed: int, **knobs) -> np.ndarray:
    return shadow_release(get(name), data, SCHEMA, 1.0, 1e-5, seed, 0, knobs)


def test_laplace_histogram_noise_is_laplace_one_over_epsilon() -> None:
    out = np.array([_release("reference:laplace-histogram", WITH, s) for s in range(400)])
    assert out.shape == (400, 8)
    assert np.mean(out[:, 0]) == pytest.approx(4.0, abs=0.2)  # cell (0,0,0)
    assert np.mean(out[:, 7]) == pytest.approx(1.0, abs=0.2)  # the target's cell
    assert np.mean(np.abs(out[:, 3] - 0.0)) == pytest.approx(1.0, abs=0.15)  # E|Lap(1)| = 1


def test_randomized_response_flips_with_the_right_probability() -> None:
    out = np.array([_release("reference:randomized-response", WITHOUT, s) for s in range(2000)])
    flip = 1 / (1 + math.e)
    assert np.mean(out[:, 7]) == pytest.approx(flip, abs=0.03)  # empty cell reported occupied
    assert np.mean(out[:, 0]) == pytest.approx(1 - flip, abs=0.03)


def test_gaussian_marginals_are_calibrated_to_the_claim() -> None:
    mu = mu_for(1.0, 1e-5)
    assert gdp_epsilon(mu, 1e-5) == pytest.approx(1.0, rel=1e-6)
    out = np.array([_release("reference:gaussian-marginals", WITH, s) for s in range(2000)])
    assert out.shape == (2000, 6)
    assert np.std(out[:, 0]) == pytest.approx(math.sqrt(3) / mu, rel=0.06)
    forced = np.array([_release("reference:gaussian-marginals", WITH, s, mu=2.0) for s in range(2000)])
    assert np.std(forced[:, 1]) == pytest.approx(math.sqrt(3) / 2.0, rel=0.06)


def test_data_outside_the_public_domain_is_refused() -> None:
    bad = pd.DataFrame({"a": [0, 1], "b": [0, 1], "c": [0, 3]})
    with pytest.raises(TargetError):
        _release("reference:laplace-histogram", bad, 0)
