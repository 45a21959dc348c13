"""Median-sign features: vectors of independent Laplace outputs (DP-Sniper's LaplaceParallel shape)."""
from __future__ import annotations

import re

import numpy as np

from dpcheck.audit.attacks.signs import learn_median_signs
from dpcheck.mechaudit.attack import fit_scorer
from dpcheck.mechaudit.runner import Budget, audit
from dpcheck.mechaudit.target import MechanismTarget

# twenty Laplace releases of x[0] at ε = 0.05 each (ε = 1 in all): a small, fast twin of laplace-parallel
TWENTY = MechanismTarget("twenty-laplace", lambda x, n, rng: x[0] + rng.laplace(0, 20.0, size=(n, 20)), 1.0)
PAIR = (np.ones(1), np.full(1, 2.0))
BUDGET = Budget(train=20_000, validation=100_000, test=100_000)


def test_signs_are_learnt_per_continuous_column_at_the_pooled_median() -> None:
    rng = np.random.default_rng(0)
    a, b = 1 + rng.laplace(0, 20, (50_000, 3)), 2 + rng.laplace(0, 20, (50_000, 3))
    x = np.vstack([a, b])
    x[:, 2] = rng.integers(0, 2, x.shape[0])  # an indicator column gets no sign
    signs = learn_median_signs(x)
    assert signs.columns == (0, 1)
    assert all(abs(m - 1.5) < 0.5 for m in signs.medians)
    out = signs.transform(np.array([[1.0, 2.0, 1.0], [np.nan, -5.0, 0.0]]))
    np.testing.assert_array_equal(out, [[0.0, 1.0], [0.0, 0.0]])
    scorer = fit_scorer("logistic-signs", a, b, (), seed=0)
    base = scorer.layout.base.transform(a[:4])  # type: ignore[union-attr]
    assert scorer.layout.transform(a[:4]).shape == (4, base.shape[1] + 3)


def test_median_signs_raise_the_power_on_independent_laplace_coordinates() -> None:
    raw = audit(TWENTY, hood="l1", length=1, pair=PAIR, seed=3, classifiers=("logistic",), budget=BUDGET)
    signed = audit(TWENTY, hood="l1", length=1, pair=PAIR, seed=3, classifiers=("logistic-signs",), budget=BUDGET)
    # the best set of the sign count has ratio e^0.44 at 7 % mass (exact binomial); the raw sum is far weaker
    assert signed.eps_lower["0.9"] > raw.eps_lower["0.9"] + 0.1
    assert signed.eps_lower["0.95"] <= TWENTY.claimed  # a correct mechanism still passes


def test_the_classifier_is_chosen_on_validation_outputs_only() -> None:
    runs = []
    for test in (40_000, 80_000):
        lines: list[str] = []
        r = audit(TWENTY, hood="l1", length=1, pair=PAIR, seed=4, classifiers=("logistic", "logistic-signs"),
                  budget=Budget(train=20_000, validation=100_000, test=test), progress=lines.append)
        bounds = {m.group(1): float(m.group(2)) for line in lines
                  if (m := re.match(r"\s+(\S+): validation bound ([0-9.]+)", line))}
        assert set(bounds) == {"logistic", "logistic-signs"}
        assert r.classifier == max(bounds, key=bounds.__getitem__) == "logistic-signs"
        runs.append(r)
    # test outputs come after the choice: more of them change the counts, not the classifier or the set
    assert runs[0].classifier == runs[1].classifier and runs[0].threshold == runs[1].threshold
    assert runs[0].test_per_input != runs[1].test_per_input


def test_increments_recover_a_running_sums_noise_and_raise_its_power() -> None:
    from dpcheck.audit.attacks.signs import increments
    from dpcheck.mechaudit.target import from_benchmark
    np.testing.assert_array_equal(increments(np.array([[1.0, 3.0, np.nan, 4.0]])), [[2.0, -3.0, 4.0]])
    pair = (np.array([1.0] * 5 + [0.0] * 5), np.array([0.0] * 5 + [1.0] * 5))
    budget = Budget(train=20_000, validation=100_000, test=100_000)
    runs = {name: audit(from_benchmark("prefix-sum"), hood="linf", length=10, pair=pair, seed=3, classifiers=(name,),
                        budget=budget) for name in ("logistic", "logistic-diff-signs")}
    # prefix sums of x + Lap(10): the increments' signs give sets of log-ratio up to 0.82 at ≥ 1 % mass
    assert runs["logistic-diff-signs"].eps_lower["0.9"] > runs["logistic"].eps_lower["0.9"] + 0.15


def test_the_mass_floor_bounds_the_chosen_set() -> None:
    from dpcheck.mechaudit.attack import choose_threshold
    rng = np.random.default_rng(2)
    a, b = rng.normal(0, 1, 400_000), rng.normal(0, 1, 400_000)
    a[:2_000] = 10.0  # a rare region (0.5 %) only a reaches
    for floor in (0.01, 0.001):
        threshold, _ = choose_threshold(a, b, delta=0.0, confidence=0.9, min_mass=floor)
        chosen = a if threshold.a_in_numerator else b
        assert np.mean(threshold.member(chosen)) >= floor
    assert np.mean(threshold.member(a)) < 0.01 and threshold.a_in_numerator  # the lower floor admits the rare set
