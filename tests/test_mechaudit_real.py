"""Real libraries' Laplace / Gaussian mechanisms as mechanism targets (dpcheck.mechaudit.real).

diffprivlib and opendp come with the ``real`` extra, which CI installs: these tests do not skip.
"""
from __future__ import annotations

import numpy as np
import pytest

from dpcheck.mechaudit import real
from dpcheck.mechaudit.runner import Budget, audit
from dpcheck.mechaudit.target import MechanismError, probe


@pytest.mark.parametrize("kind,delta", [("Laplace", 0.0), ("Gaussian", 1e-5), ("GaussianAnalytic", 1e-5)])
def test_diffprivlib_wrappers_honour_the_contract(kind, delta):
    target = real.diffprivlib_target(kind, 0.1, delta)
    assert probe(target, np.array([0.0])) == 1  # same seed → same outputs, one value per output
    x = np.array([3.0])
    a = target.sample(x, 50, np.random.default_rng(1))
    b = target.sample(x, 50, np.random.default_rng(2))
    assert a.shape == (50, 1) and not np.array_equal(a, b)
    assert np.all(np.isfinite(a))


def test_diffprivlib_wrapper_refuses_bad_parameters():
    with pytest.raises(ValueError):
        real.diffprivlib_target("Gaussian", 0.1)  # no δ
    with pytest.raises(ValueError):
        real.diffprivlib_target("Exponential", 0.1)


def test_opendp_cannot_be_seeded_and_the_probe_says_so():
    target = real.opendp_target("laplace", 0.1, 10.0)
    with pytest.raises(MechanismError, match="ignores its rng"):
        probe(target, np.array([0.0]))
    assert real.unseeded_probe(target, np.array([0.0])) == 1
    out = target.sample(np.array([5.0]), 1000, np.random.default_rng(0))
    assert out.shape == (1000, 1) and np.unique(out).size > 900
    assert abs(float(np.median(out)) - 5.0) < 3.0


def test_opendp_states_its_epsilon():
    assert real.opendp_laplace_epsilon(10.0) == pytest.approx(0.1)
    assert real.opendp_gaussian_epsilon(30.0, 1e-5) > 0.1  # its zCDP conversion is looser than the exact curve
    with pytest.raises(ValueError):
        real.opendp_measurement("cauchy", 1.0)


def test_a_small_audit_of_a_library_mechanism_passes():
    target = real.diffprivlib_target("Laplace", 0.1)
    result = audit(target, hood="l1", length=1, pair=(np.array([0.0]), np.array([1.0])), classifiers=("logistic",),
                   budget=Budget(pilot=0, train=2_000, validation=4_000, test=8_000), seed=3)
    assert result.verdict == "pass" and result.eps_lower["0.95"] <= 0.1
