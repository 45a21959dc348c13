"""original (2018 PATE_GAN.py rebuilt) exhibits its six Table 2 cells through the probe;
original-fixed (a real conditional PATE-GAN) does not."""
from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from _tf_helpers import (LOWER, UPPER, assert_deterministic, assert_rejects_bad_input, assert_trains_and_samples,
                         assert_twin_requires_bounds, fit, gaussian_sigma, noise_draws, teacher_rows, tiny_data)

NAMES = ("original", "original-fixed")


@pytest.fixture(scope="module")
def buggy():
    adapter, probe = fit("original")
    return adapter, probe, adapter.sample(60)


@pytest.fixture(scope="module")
def twin():
    adapter, probe = fit("original-fixed", label_ratio=0.9)
    return adapter, probe, adapter.sample(400)


def test_trains_and_samples(buggy, twin):
    assert_trains_and_samples("original", buggy[0], buggy[2])
    assert_trains_and_samples("original-fixed", twin[0], twin[2])


def test_same_seed_same_output(buggy, twin):
    assert_deterministic("original", buggy[2])
    assert_deterministic("original-fixed", twin[2], label_ratio=0.9)


@pytest.mark.parametrize("name", NAMES)
def test_bad_input_is_rejected_before_training(name):
    assert_rejects_bad_input(name)


def test_twin_needs_public_bounds():
    assert_twin_requires_bounds("original-fixed")


# --- pate -------------------------------------------------------------------------------
def test_pate_missing_in_original(buggy):
    _, probe, _ = buggy
    assert probe.of("teacher_data")  # the inner "teacher" passes exist ...
    assert not probe.of("votes")  # ... but no votes are ever aggregated
    assert not probe.of("accountant")
    assert [e.kwargs["reason"] for e in probe.of("training_end")] == ["fixed"]
    assert probe.of("training_end")[0].args[0] == 4


def test_pate_present_in_twin():
    _, probe = fit("original-fixed", lamda=0.02, max_iterations=50)
    votes = probe.of("votes")
    assert votes and all(np.all(np.asarray(e.args[0]) + np.asarray(e.args[1]) == 3) for e in votes)
    eps_hats = [e.args[1] for e in probe.of("accountant")]
    assert eps_hats == sorted(eps_hats) and eps_hats[-1] >= 1.0 > eps_hats[-2]
    end = probe.of("training_end")[-1]
    assert end.kwargs["reason"] == "budget" and end.args[0] < 50


# --- data_partition ---------------------------------------------------------------------
def test_teacher_passes_share_rows_in_original(buggy):
    _, probe, _ = buggy
    seen = teacher_rows(probe)
    assert len(seen) == 3
    assert seen[0] & seen[1] and seen[1] & seen[2]


def test_teachers_disjoint_and_fixed_in_twin(twin):
    _, probe, _ = twin
    seen = teacher_rows(probe)
    assert len(seen) == 3
    assert not (seen[0] & seen[1] or seen[0] & seen[2] or seen[1] & seen[2])
    per_iteration = {}
    for e in probe.of("teacher_data"):
        per_iteration.setdefault(int(e.args[0]), []).append(set(np.ravel(e.args[1]).tolist()))
    for teacher, batches in per_iteration.items():
        assert all(batch <= seen[teacher] for batch in batches)


# --- metadata ---------------------------------------------------------------------------
def test_bounds_read_from_data_in_original(buggy):
    _, probe, _ = buggy
    (event,) = probe.of("bounds")
    data = tiny_data()
    assert event.kwargs["source"] == "data"
    np.testing.assert_allclose(event.args[0], data[:, :2].min(axis=0))
    np.testing.assert_allclose(event.args[1], data[:, :2].max(axis=0))


def test_public_bounds_used_in_twin(twin):
    _, probe, _ = twin
    (event,) = probe.of("bounds")
    assert event.kwargs["source"] == "parameter"
    np.testing.assert_allclose(event.args[0], LOWER[:2])
    np.testing.assert_allclose(event.args[1], UPPER[:2])


# --- laplace_noise ----------------------------------------------------------------------
def test_gaussian_noise_on_labels_in_original(buggy):
    _, probe, _ = buggy
    assert {(e.kwargs["distribution"], e.kwargs["applied_to"]) for e in probe.of("noise")} == {("gaussian", "labels")}


def test_laplace_inverse_lambda_on_votes_in_twin(twin):
    _, probe, _ = twin
    events = probe.of("noise")
    assert {(e.kwargs["distribution"], e.kwargs["applied_to"], e.kwargs["scale"]) for e in events} == {
        ("laplace", "votes", 1e3)}
    assert stats.kstest(noise_draws(probe), "laplace", args=(0.0, 1e3)).pvalue > 0.01


# --- delta_scale ------------------------------------------------------------------------
def test_noise_scale_ignores_delta_in_original():
    scales = [fit("original", delta=d, max_iterations=1)[1].of("noise")[0].kwargs["scale"] for d in (1e-7, 0.1)]
    assert scales[0] == scales[1]  # 10 ^ int(δ) == 10 for every δ < 1
    assert scales[0] == pytest.approx(np.sqrt(2 * np.log(12.5)))
    assert scales[0] != pytest.approx(gaussian_sigma(1.0, 1e-7), rel=0.1)


def test_delta_enters_only_the_accountant_in_twin():
    runs = {d: fit("original-fixed", delta=d, max_iterations=1)[1] for d in (1e-7, 0.1)}
    assert {e.kwargs["scale"] for p in runs.values() for e in p.of("noise")} == {1e3}
    moments = {d: p.of("accountant")[0].args[0] for d, p in runs.items()}
    for d, p in runs.items():
        expected = np.min((moments[d] + np.log(1 / d)) / np.arange(1, moments[d].size + 1))
        assert p.of("accountant")[0].args[1] == pytest.approx(expected)
    assert runs[0.1].of("accountant")[0].args[1] < runs[1e-7].of("accountant")[0].args[1]


# --- labels_distribution ----------------------------------------------------------------
def test_training_labels_fed_to_generation_in_original(buggy):
    _, probe, samples = buggy
    event = probe.of("generation_labels")[0]
    labels = tiny_data()[:, 2]
    assert event.kwargs["source"] == "training"
    np.testing.assert_array_equal(event.args[0], labels[np.arange(60) % labels.size])
    np.testing.assert_array_equal(samples[:, 2], event.args[0])


def test_public_label_ratio_at_generation_in_twin(twin):
    _, probe, samples = twin
    event = probe.of("generation_labels")[0]
    assert event.kwargs["source"] == "public"
    assert samples[:, 2].mean() == pytest.approx(0.9, abs=0.06)  # training ratio is about 0.3


# --- the twins' accountant hook (shared with turing-fixed) ------------------------------
@pytest.mark.parametrize("lamda", [1e-4, 1e-3, 0.1, 0.34, 0.5, 2.0])
def test_twin_accountant_hook_equals_theorem5(lamda):
    from dpcheck import impls
    from dpcheck.reference.pategan import pategan_moments

    n0 = np.array([0, 1, 2, 5, 5, 10, 0])
    n1 = np.array([10, 9, 8, 5, 4, 0, 1])
    for name in ("original-fixed", "turing-fixed"):
        observed = impls.get(name).accountant_update(n0, n1, lamda=lamda, num_moments=30)
        # the twins check PATE's validity condition of the data-dependent term (DP302)
        np.testing.assert_allclose(observed, pategan_moments(n0, n1, lamda, 30, check_validity=True), rtol=1e-9)
