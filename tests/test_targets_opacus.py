"""opacus 1.6.0 DP-SGD as a real-library target: the release, its seeding, opacus's own accounting,
the gradient canary (the target row), and the verdicts on the correct use and a misuse."""
from __future__ import annotations

import json
import math
import os
import warnings

import numpy as np
import pytest

from dpcheck.audit.attacks import dpsgd
from dpcheck.audit.core.spec import AuditSpec
from dpcheck.audit.core.store import Store
from dpcheck.audit.runners.engine import run_audit
from dpcheck.audit.runners.executor import InlineExecutor
from dpcheck.audit.worlds import datasets
from dpcheck.cli import main
from dpcheck.targets import registry
from dpcheck.targets.base import Column, Schema, shadow_release
from dpcheck.targets.opacus_target import SETTINGS, DPSGD, MisaccountedDPSGD

SMALL = os.environ.get("DPCHECK_SMALL") == "1"
DELTA = 1e-5
DATA = datasets.load("worstcase-classification")
SCHEMA = DATA.get_schema()


def release(cls: type = DPSGD, *, world_in: bool = True, seed: int = 3, epsilon: float = 1.0,
            **knobs) -> tuple[np.ndarray, DPSGD]:
    target = cls()
    rows = DATA.with_target if world_in else DATA.without_target
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = target.release(SCHEMA.decode(rows), schema=SCHEMA, epsilon=epsilon, delta=DELTA, seed=seed,
                             **{**SETTINGS, **knobs})
    return out, target


def test_both_targets_are_registered_for_the_gradient_canary():
    for name in ("opacus:DPSGD", "opacus:DPSGD-misaccounted"):
        info = registry.get(name)
        assert info.kind == "mechanism" and info.env == "main" and info.dataset == "worstcase-classification"
        assert dpsgd.is_dpsgd_style(name)
    assert not dpsgd.is_dpsgd_style("diffprivlib:mean")


@pytest.mark.parametrize("batch_size", [64, 3])  # one batch (rate 1) and Poisson sampling at rate 1/2
def test_release_is_the_parameters_with_a_fixed_length(batch_size):
    for world_in in (True, False):
        out, target = release(world_in=world_in, batch_size=batch_size, accountant="rdp")  # rdp: a fast σ search
        assert out.shape == (3,) and np.all(np.isfinite(out))  # weights of a and b, then the bias
        assert target.sample_rate == (1.0 if batch_size == 64 else 0.5)  # the same in both worlds


def test_same_seed_gives_the_same_release_and_another_seed_does_not():
    info = registry.get("opacus:DPSGD")
    frame = SCHEMA.decode(DATA.with_target)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        first, again, other = (shadow_release(info, frame, SCHEMA, 1.0, DELTA, seed, 1)
                               for seed in (11, 11, 12))
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first, other)


def test_the_canary_row_shifts_the_parameters_by_exactly_lr_t_c():
    """With the same seed both worlds draw the same noise, so the difference is the canary's clipped
    gradient alone: C·(1, 1, 1)/√3 (descent raises the weights: label 1) at every one of the T steps.
    Exactly that much means opacus clipped it to C at every step (its norm was ≥ C)."""
    with_canary, _ = release(world_in=True)
    without, _ = release(world_in=False)
    step = SETTINGS["lr"] * SETTINGS["max_grad_norm"] / math.sqrt(3)
    np.testing.assert_allclose(with_canary - without, SETTINGS["epochs"] * step, rtol=1e-4)


def test_without_the_canary_its_weights_are_pure_noise_of_the_accounted_spread():
    """In D′ no gradient reaches the feature weights: over seeds they are centred Gaussian noise with
    the spread opacus's σ implies, lr·σ·C·√T."""
    draws = np.array([release(world_in=False, seed=s)[0][:2] for s in range(40)]).ravel()
    sigma = release(world_in=False)[1].noise_multiplier
    spread = SETTINGS["lr"] * sigma * SETTINGS["max_grad_norm"] * math.sqrt(SETTINGS["epochs"])
    assert draws.std() == pytest.approx(spread, rel=0.2)
    assert abs(draws.mean()) < 3 * spread / math.sqrt(draws.size)


def test_sigma_is_what_make_private_with_epsilon_picks_and_opacus_accounts_the_claim():
    import torch
    from opacus import PrivacyEngine
    from torch.utils.data import DataLoader, TensorDataset

    _, target = release(epsilon=2.0)
    model = torch.nn.Linear(2, 1)
    loader = DataLoader(TensorDataset(torch.zeros(5, 2), torch.zeros(5)), batch_size=SETTINGS["batch_size"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, optimizer, _ = PrivacyEngine(accountant="prv").make_private_with_epsilon(
            module=model, optimizer=torch.optim.SGD(model.parameters(), lr=0.1), data_loader=loader,
            target_epsilon=2.0, target_delta=DELTA, epochs=SETTINGS["epochs"], max_grad_norm=1.0)
    assert target.noise_multiplier == optimizer.noise_multiplier
    assert 1.9 <= target.spent_epsilon(DELTA) <= 2.0  # opacus's get_epsilon after the real training


def test_the_misuse_spends_far_more_than_it_claims_by_opacus_own_accountant():
    _, correct = release()
    _, misused = release(MisaccountedDPSGD)
    assert misused.noise_multiplier < correct.noise_multiplier / 4
    assert misused.spent_epsilon(DELTA) > 5.0  # claimed ε = 1


@pytest.mark.parametrize("knobs, message", [({"canary": "row"}, "unknown canary 'row'"),
                                            ({"loss_reduction": "avg"}, "loss_reduction is 'sum' or 'mean'"),
                                            ({"max_grad_norm": 0.0}, "need epochs >= 1")])
def test_bad_knobs_are_refused(knobs, message):
    with pytest.raises(ValueError, match=message):
        release(**knobs)


def test_a_schema_without_a_label_is_refused():
    schema = Schema((Column("a", "continuous", lower=0.0, upper=1.0),))
    with pytest.raises(ValueError, match="needs a label column"):
        DPSGD().release(schema.decode(np.zeros((3, 1))), schema=schema, epsilon=1.0, delta=DELTA, seed=0)


def test_a_dataset_without_a_label_is_refused_before_any_run(tmp_path):
    spec = AuditSpec("opacus:DPSGD", dataset="worstcase-continuous", attack="gradient-canary", runs=20,
                     hyperparams={"canary": "gradient"})
    with Store(tmp_path / "s.sqlite") as store:
        with pytest.raises(ValueError, match="needs a label column"):
            run_audit(spec, store=store, executor=InlineExecutor())
        assert not store.done(spec.generation_hash())


def test_the_canary_score_is_the_sum_of_the_target_rows_feature_weights_signed_up():
    spec = AuditSpec("opacus:DPSGD", dataset="worstcase-classification", attack="gradient-canary", runs=20,
                     hyperparams={"canary": "gradient"})
    scorer = dpsgd.model_for(spec)
    assert scorer.columns == [dpsgd.RELEASE_PREFIX, dpsgd.RELEASE_PREFIX + 1]
    rows = np.array([[0.0, 3.0, 0.1, 0.2, -9.0], [0.0, 3.0, -0.1, -0.2, 9.0]])  # [failed?, length, θ]
    member = scorer.predict_proba(rows)[:, 1]
    assert member == pytest.approx([0.3, -0.3])  # the bias (last column) is not read


def test_cli_end_to_end_passes_with_the_gradient_canary_threat_model(tmp_path):
    out = tmp_path / "r.json"
    code = main(["audit", "--impl", "opacus:DPSGD", "--attack", "gradient-canary", "--runs", "20", "--split",
                 "1/19/80", "--workers", "1", "--store", str(tmp_path / "s.sqlite"), "--json", str(out),
                 "--no-progress"])
    result = json.loads(out.read_text())["results"][0]
    assert code == 0 and result["verdict"] != "violation"
    assert result["threat_model"] == "white-box (active): gradient canary"
    assert result["dataset"] == "worstcase-classification" and result["spec"]["hyperparams"]["canary"] == "gradient"
    assert result["target_info"]["version"] == "1.6.0"
    # one batch: T full-batch Gaussian steps, exactly μ-GDP, so μ_emp is a valid bound on μ = √T/σ
    mu = math.sqrt(SETTINGS["epochs"]) / release()[1].noise_multiplier
    assert 0.0 <= result["gdp"]["mu_emp"] <= mu


@pytest.mark.slow
def test_the_misuse_is_proven_in_violation_and_the_correct_use_is_not(tmp_path):
    runs = 150 if SMALL else 300
    results = {}
    with Store(tmp_path / "s.sqlite") as store:
        for impl in ("opacus:DPSGD-misaccounted", "opacus:DPSGD"):
            spec = AuditSpec(impl, dataset="worstcase-classification", attack="gradient-canary", epsilon=1.0,
                             runs=runs, hyperparams={"canary": "gradient"}, split=(0.01, 0.19, 0.8))
            results[impl] = run_audit(spec, store=store, executor=InlineExecutor())
    misused, correct = results["opacus:DPSGD-misaccounted"], results["opacus:DPSGD"]
    assert misused.verdict == "violation" and misused.eps_cp > 1.0
    assert correct.verdict != "violation" and correct.eps_cp <= 1.0
