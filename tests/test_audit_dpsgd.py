"""ref-dpsgd and the gradient canary: the mechanism, its accountant, the audit's verdicts, bad input."""
from __future__ import annotations

import json
import math
import os

import numpy as np
import pytest

from dpcheck.audit.attacks import dpsgd
from dpcheck.audit.core import ceiling
from dpcheck.audit.core.gdp import gdp_delta
from dpcheck.audit.core.spec import AuditSpec
from dpcheck.audit.core.store import Store
from dpcheck.audit.runners.engine import run_audit
from dpcheck.audit.runners.executor import InlineExecutor
from dpcheck.audit.worlds import datasets
from dpcheck.cli import main

SMALL = os.environ.get("DPCHECK_SMALL") == "1"
CANARY = {"canary": "gradient"}


def audit(tmp_path, impl: str, *, epsilon: float, runs: int, seed: int = 0, dataset: str = "worstcase-classification",
          split: tuple[float, float, float] = (0.4, 0.2, 0.4), **hp):
    spec = AuditSpec(impl, dataset=dataset, attack="gradient-canary", epsilon=epsilon, runs=runs, seed=seed,
                     hyperparams={**CANARY, **hp}, split=split)
    with Store(tmp_path / "s.sqlite") as store:
        return run_audit(spec, store=store, executor=InlineExecutor())


def fit(impl: type, *, present: bool, seed: int = 3, **hp) -> np.ndarray:
    data = datasets.load("worstcase-classification")
    adapter = impl().fit(data.without_target.copy(), epsilon=2.0, delta=1e-5, seed=seed, bounds=data.bounds,
                         canary="gradient", canary_present=present, **hp)
    return adapter.sample(1)[0]


def test_the_canary_moves_only_its_coordinate_by_lr_t_c():
    """On the worst case no data gradient touches the feature weights, so with the same noise the
    canary shifts its coordinate by exactly −lr·T·C and nothing else."""
    hp = {"steps": 7, "clip": 2.0, "lr": 0.3, "canary_coord": 1}
    shift = fit(dpsgd.DPSGD, present=True, **hp) - fit(dpsgd.DPSGD, present=False, **hp)
    assert shift == pytest.approx([0.0, -0.3 * 7 * 2.0, 0.0], abs=1e-12)


def test_clipping_bounds_a_large_canary_only_in_the_correct_mechanism():
    hp = {"steps": 4, "canary_norm": 50.0}
    correct = fit(dpsgd.DPSGD, present=True, **hp) - fit(dpsgd.DPSGD, present=False, **hp)
    unclipped = fit(dpsgd.UnclippedDPSGD, present=True, **hp) - fit(dpsgd.UnclippedDPSGD, present=False, **hp)
    assert correct[0] == pytest.approx(-0.1 * 4 * 1.0)
    assert unclipped[0] == pytest.approx(-0.1 * 4 * 50.0)


def test_accountant_is_exact_mu_gdp_at_the_claim():
    for epsilon, steps in ((1.0, 10), (4.0, 3)):
        sigma = dpsgd.noise_multiplier(epsilon, 1e-5, steps)
        mu = math.sqrt(steps) / sigma
        assert gdp_delta(epsilon, mu) == pytest.approx(1e-5, rel=1e-6)
        assert dpsgd.accountant_epsilon(sigma, steps, 1e-5) == pytest.approx(epsilon, rel=1e-6)


def test_noise_of_the_released_coordinate_has_the_accounted_spread():
    """Without the canary the canary coordinate is pure noise: lr·σ·C·√T."""
    hp = {"steps": 5}
    draws = np.array([fit(dpsgd.DPSGD, present=False, seed=s, **hp)[0] for s in range(400)])
    expected = 0.1 * dpsgd.noise_multiplier(2.0, 1e-5, 5) * 1.0 * math.sqrt(5)
    assert draws.std() == pytest.approx(expected, rel=0.12)
    mean_noise = np.array([fit(dpsgd.MeanNoiseDPSGD, present=False, seed=s, **hp)[0] for s in range(400)])
    assert mean_noise.std() == pytest.approx(expected / 4, rel=0.12)  # 4 background rows: σC/n


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_correct_dpsgd_stays_below_its_claim(tmp_path, seed):
    result = audit(tmp_path, "ref-dpsgd", epsilon=2.0, runs=300, seed=seed)
    mu = dpsgd.claimed_mu(2.0, 1e-5)
    assert result.eps_cp <= 2.0 and result.verdict != "violation"
    assert result.gdp["mu_emp"] <= mu
    assert result.threat_model == "white-box (active): gradient canary"


def test_a_large_canary_is_clipped_by_the_correct_mechanism(tmp_path):
    result = audit(tmp_path, "ref-dpsgd", epsilon=2.0, runs=200, canary_norm=10.0)
    assert result.eps_cp <= 2.0


def test_broken_twins_are_proven_in_violation(tmp_path):
    mean_noise = audit(tmp_path, "ref-dpsgd-mean-noise", epsilon=1.0, runs=200, dataset="worstcase-classification@20")
    assert mean_noise.verdict == "violation" and mean_noise.eps_cp > 1.0
    unclipped = audit(tmp_path, "ref-dpsgd-unclipped", epsilon=1.0, runs=200, canary_norm=10.0)
    assert unclipped.verdict == "violation" and unclipped.eps_cp > 1.0


@pytest.mark.slow
def test_the_gradient_canary_is_tight_against_the_ceiling(tmp_path):
    """The canary coordinate faces exactly the Gaussian tradeoff with μ = √T/σ: the CP μ bound
    reaches most of the ceiling (the best any test certifies from this many test runs)."""
    runs = 300 if SMALL else 1000
    result = audit(tmp_path, "ref-dpsgd", epsilon=4.0, runs=runs, split=(0.01, 0.19, 0.8))
    mu = dpsgd.claimed_mu(4.0, 1e-5)
    best = ceiling.ceiling("gaussian", result.gdp["test_per_world"], confidence=result.gdp["confidence_each"], mu=mu)
    assert result.gdp["by_method"]["clopper-pearson"] <= mu
    assert result.gdp["by_method"]["clopper-pearson"] >= 0.75 * best.value


def test_gradient_canary_on_a_target_without_dpsgd_is_refused_before_any_run(tmp_path):
    spec = AuditSpec("ref-laplace", dataset="worstcase", attack="gradient-canary", runs=20, hyperparams=CANARY)
    with Store(tmp_path / "s.sqlite") as store:
        with pytest.raises(ValueError, match="DP-SGD-style target: ref-laplace lacks per-example gradients"):
            run_audit(spec, store=store, executor=InlineExecutor())
        assert not store.done(spec.generation_hash())


@pytest.mark.parametrize("impl", ["ref-laplace", "reference:laplace-histogram"])
def test_cli_refuses_gradient_canary_on_other_targets(tmp_path, capsys, impl):
    code = main(["audit", "--impl", impl, "--attack", "gradient-canary", "--runs", "20", "--workers", "1",
                 "--store", str(tmp_path / "s.sqlite"), "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2 and f"{impl} lacks per-example gradients with clipping and Gaussian noise" in err
    assert not (tmp_path / "s.sqlite").exists()  # refused before the store is even opened


@pytest.mark.parametrize("hp, message", [({"canary_coord": 3}, "canary_coord must be an integer in \\[0, 3\\)"),
                                         ({"canary": "gradient-x"}, "set the hyperparameter canary=gradient")])
def test_bad_canary_settings_are_refused(tmp_path, hp, message):
    spec = AuditSpec("ref-dpsgd", dataset="worstcase-classification", attack="gradient-canary", runs=20,
                     hyperparams={**CANARY, **hp})
    with Store(tmp_path / "s.sqlite") as store, pytest.raises(ValueError, match=message):
        run_audit(spec, store=store, executor=InlineExecutor())


def test_cli_end_to_end_reports_mu_and_threat_model(tmp_path):
    out = tmp_path / "r.json"
    code = main(["audit", "--impl", "ref-dpsgd", "--attack", "gradient-canary", "--epsilon", "4", "--runs", "60",
                 "--workers", "1", "--store", str(tmp_path / "s.sqlite"), "--json", str(out), "--no-progress"])
    result = json.loads(out.read_text())["results"][0]
    assert code == 0
    assert result["spec"]["hyperparams"]["canary"] == "gradient"
    assert result["dataset"] == "worstcase-classification"
    assert result["threat_model"] == "white-box (active): gradient canary"
    assert 0.0 <= result["gdp"]["mu_emp"] <= dpsgd.claimed_mu(4.0, 1e-5)


def test_release_attacks_read_the_parameters_of_ref_dpsgd(tmp_path):
    """A passive read of the same canary runs: release-linear weighs every parameter."""
    spec = AuditSpec("ref-dpsgd-unclipped", dataset="worstcase-classification", attack="release-linear", runs=100,
                     hyperparams={**CANARY, "canary_norm": 10.0})
    with Store(tmp_path / "s.sqlite") as store:
        result = run_audit(spec, store=store, executor=InlineExecutor())
    assert result.auc > 0.95 and result.threat_model == "white-box (active): gradient canary"
