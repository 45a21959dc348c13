"""Slow: calibration of the audit on REAL, installed, correct mechanisms (issue 12, item 7).

diffprivlib's ``tools.mean``, ``tools.var`` and ``tools.histogram`` with public bounds are audited
exactly as ``dpcheck audit --impl diffprivlib:NAME`` does (the target's own worst-case dataset, the
``release`` attack, ε = 1, δ = 1e-5) over ≥ 20 audit seeds. Each seed is a different generation
spec, so its shadow runs are fresh and independent of every other seed's; R per world is fixed per
seed (no --until-verdict). The broken reference, ``diffprivlib:GaussianNB-nobounds`` (bounds read
from the private data: the documented PrivacyLeakWarning fallback), goes through the same harness
and must be caught on most seeds, so the harness can fail.

Sizes: DPCHECK_SMALL=1 (CI) runs R = 60 per world (24 test runs per world: a perfect attack could
certify ε_emp ≈ 1.5 > ε, so an alarm is possible); otherwise R = 200. DPCHECK_CAL_SEEDS /
DPCHECK_CAL_RUNS / DPCHECK_CAL_WORKERS override. The full-size numbers are in
reports/calibration_real.json (benchmarks/calibration_real.py).
"""
from __future__ import annotations

import os
from math import comb

import pytest

from dpcheck.audit.runners.calibration import Calibration, calibrate
from dpcheck.audit.runners.executor import make_executor
from dpcheck.targets import registry

SMALL = bool(os.environ.get("DPCHECK_SMALL"))
SEEDS = int(os.environ.get("DPCHECK_CAL_SEEDS", 20))
RUNS = int(os.environ.get("DPCHECK_CAL_RUNS", 60 if SMALL else 200))
CONFIDENCE = 0.95  # of each seed's Clopper–Pearson bound (AuditSpec default)
#: probability that a correct mechanism fails this test by chance, at most
FALSE_FAILURE = 0.02

CORRECT = ("diffprivlib:mean", "diffprivlib:var", "diffprivlib:histogram")
BROKEN = "diffprivlib:GaussianNB-nobounds"


def binomial_tail(n: int, p: float, k: int) -> float:
    """P(X > k) for X ~ Binomial(n, p)."""
    return sum(comb(n, i) * p ** i * (1 - p) ** (n - i) for i in range(k + 1, n + 1))


def allowed_exceedances(seeds: int, per_seed: float = 1 - CONFIDENCE, tail: float = FALSE_FAILURE) -> int:
    """Fewest exceedances k such that a correct mechanism has P(more than k) ≤ ``tail``.

    For a correct ε-DP mechanism each seed's bound exceeds ε with probability ≤ 1 − confidence,
    independently across seeds, so the count is dominated by Binomial(seeds, 0.05); with 20
    seeds P(X > 3) ≈ 0.016 ≤ 0.02 while P(X > 2) ≈ 0.075, hence 3.
    """
    k = 0
    while binomial_tail(seeds, per_seed, k) > tail:
        k += 1
    return k


def audit_target(name: str, executor) -> Calibration:
    info = registry.get(name)
    assert info.kind == "mechanism"  # the CLI's default attack for a mechanism target is "release"
    return calibrate(name, seeds=SEEDS, runs=RUNS, executor=executor, attack="release", dataset=info.dataset)


@pytest.fixture(scope="module")
def executor():
    ex = make_executor(workers=int(os.environ.get("DPCHECK_CAL_WORKERS", 2)))
    yield ex
    ex.close()


def test_allowed_exceedances_follow_the_binomial_tail():
    assert allowed_exceedances(20) == 3
    assert binomial_tail(20, 0.05, 3) == pytest.approx(0.0159, abs=5e-4)
    assert binomial_tail(20, 0.05, 2) > FALSE_FAILURE


@pytest.mark.slow
@pytest.mark.parametrize("name", CORRECT)
def test_correct_real_mechanism_stays_within_epsilon(name, executor):
    cal = audit_target(name, executor)
    print(cal.summary())
    assert len(cal.results) == SEEDS and (SEEDS >= 20 or "DPCHECK_CAL_SEEDS" in os.environ)
    assert len({r.spec_hash for r in cal.results}) == SEEDS  # every seed ran its own shadow runs
    assert all(r.runs == RUNS for r in cal.results)
    assert all(r.failed_runs["with_target"] == r.failed_runs["without_target"] == 0 for r in cal.results)
    assert all(r.certifiable_cp > r.epsilon for r in cal.results)  # the audit could have alarmed
    assert cal.alarms <= allowed_exceedances(len(cal.results)), cal.summary()


@pytest.mark.slow
def test_broken_real_mechanism_is_caught_on_most_seeds(executor):
    cal = audit_target(BROKEN, executor)
    print(cal.summary())
    assert cal.rate >= 0.8, cal.summary()
