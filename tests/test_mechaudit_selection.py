"""The threshold selection of the mechanism audit: the confidence that ranks candidate sets."""
from __future__ import annotations

import numpy as np

from dpcheck.mechaudit.attack import choose_threshold
from dpcheck.mechaudit.runner import Budget, audit
from dpcheck.mechaudit.target import from_benchmark


def test_a_stricter_selection_confidence_prefers_larger_sets() -> None:
    # Laplace shift: every set {y ≥ t}, t ≥ 1, has the same ratio e^0.1, so only noise makes a small
    # set look better; ranking by a stricter bound keeps the larger, less noisy set
    rng = np.random.default_rng(5)
    a, b = 1 + rng.laplace(0, 10, 200_000), rng.laplace(0, 10, 200_000)
    masses = []
    for conf in (0.9, 0.999):
        threshold, _ = choose_threshold(a, b, delta=0.0, confidence=conf)
        masses.append(float(np.mean(threshold.member(a if threshold.a_in_numerator else b))))
    assert masses[1] >= masses[0] and masses[1] > 0.2
    r = audit(from_benchmark("laplace"), hood="l1", length=1, pair=(np.ones(1), np.zeros(1)), seed=1,
              classifiers=("logistic",), budget=Budget(train=2_000, validation=20_000, test=20_000,
                                                       select_confidence=0.999))
    assert r.verdict == "pass"
