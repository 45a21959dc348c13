"""``release_model()`` of the vendored torch PATE-GANs without one before: smartnoise, synthcity and
their twins (passive white-box attacks, dpcheck.audit.attacks.whitebox)."""
from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from dpcheck.audit.attacks import whitebox
from dpcheck.audit.core.settings import paper_hyperparams
from dpcheck.audit.core.spec import WORLD_IN, AuditSpec
from dpcheck.audit.reference.mechanisms import get_impl
from dpcheck.audit.runners.executor import Task, group_tasks
from dpcheck.audit.worlds import datasets
from dpcheck.cli import main

IMPLS = ["smartnoise", "smartnoise-fixed", "synthcity", "synthcity-fixed"]
RECORDS = np.array([[0.0, 0.0, 0.0], [1.0, 1.0, 1.0], [0.0, 1.0, 1.0], [0.5, 0.0, 1.0]])


def _fit(impl: str, seed: int, rows: np.ndarray | None = None):
    data = datasets.worst_case()
    hyper = {**paper_hyperparams(impl, "worstcase"), "max_iterations": 2}
    rows = data.with_target if rows is None else rows
    return get_impl(impl).fit(rows, epsilon=1.0, delta=1e-5, seed=seed, bounds=data.bounds, **hyper)


def _student(impl: str, adapter) -> torch.nn.Module:
    return adapter._model.student_disc if impl.startswith("smartnoise") else adapter._model.discriminator


@pytest.mark.parametrize("impl", IMPLS)
def test_release_is_finite_and_its_length_does_not_depend_on_the_seed(impl):
    released = [whitebox.as_released(_fit(impl, seed).release_model()) for seed in (1, 2)]
    assert all(r.params.size > 0 and np.isfinite(r.params).all() for r in released)
    assert released[0].params.size == released[1].params.size
    assert not np.array_equal(released[0].params, released[1].params)  # the seed reaches the weights
    adapter = _fit(impl, 1)
    model = adapter._model
    n_weights = sum(p.numel() for m in (model.generator, _student(impl, adapter)) for p in m.parameters())
    assert released[0].params.size == n_weights + 2 * 3  # + the scaling's lower and upper bound per column


@pytest.mark.parametrize("impl", IMPLS)
def test_critic_is_the_student_on_the_models_own_scaling(impl):
    adapter = _fit(impl, 3)
    critic = whitebox.as_released(adapter.release_model()).critic
    scores = critic(RECORDS)
    assert scores.shape == (len(RECORDS),) and np.isfinite(scores).all()
    np.testing.assert_array_equal(scores, critic(RECORDS.copy()))  # deterministic
    # bounds (0, 1) on every column: the models see 2x - 1
    student = _student(impl, adapter)
    dtype = next(student.parameters()).dtype
    with torch.no_grad():
        expected = student(torch.as_tensor(2.0 * RECORDS - 1.0, dtype=dtype)).numpy().ravel()
    np.testing.assert_allclose(scores, expected, rtol=1e-6)
    with torch.no_grad():
        for p in student.parameters():
            p.add_(0.5)
    assert not np.allclose(critic(RECORDS), scores)  # the critic reads the trained weights, not a copy


@pytest.mark.parametrize("impl, reads_data", [("synthcity", True), ("synthcity-fixed", False),
                                              ("smartnoise", False), ("smartnoise-fixed", False)])
def test_released_scaling_is_what_the_model_applies(impl, reads_data):
    """synthcity reads its min/max from the data: without the target (four (0,0,0) rows) it releases
    max 0, which gives membership away; the twin and smartnoise (public bounds) release the bounds."""
    rows = datasets.worst_case().with_target
    without = rows[~np.all(rows == 1.0, axis=1)]
    params = whitebox.as_released(_fit(impl, 4, without).release_model()).params
    upper = params[-3:]
    np.testing.assert_array_equal(upper, np.zeros(3) if reads_data else np.ones(3))


def test_release_before_fit_is_refused():
    for impl in IMPLS:
        with pytest.raises(RuntimeError, match="call fit before release_model"):
            get_impl(impl).release_model()


@pytest.mark.parametrize("impl", IMPLS)
def test_white_box_attacks_are_accepted_and_take_the_plain_path(impl):
    for attack in ("logan", "model-params"):
        whitebox.check_supported(impl, attack)  # raises for an adapter without release_model()
    gen = AuditSpec(impl, attack="logan", runs=5).generation()
    assert [len(g) for g in group_tasks([Task(gen, WORLD_IN, i) for i in range(3)], "fast", 32)] == [1, 1, 1]


@pytest.mark.parametrize("impl", ["smartnoise", "synthcity"])
def test_cli_white_box_audit_end_to_end(tmp_path, impl):
    out = tmp_path / "audit.json"
    code = main(["audit", "--impl", impl, "--attack", "model-params", "--runs", "6", "--hp", "max_iterations=2",
                 "--workers", "1", "--store", str(tmp_path / "s.sqlite"), "--json", str(out), "--no-progress"])
    assert code == 0
    result = json.loads(out.read_text())["results"][0]
    assert result["impl"] == impl and result["attack"] == "model-params"
    assert result["threat_model"] == "white-box (passive)"
    assert result["run_paths"] == {"fast": 0, "plain": 12, "fallback": 0}
