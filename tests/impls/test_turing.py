"""turing (reprosyn's PATEGAN rebuilt) exhibits its Table 2 cells (pate, data_partition,
laplace_noise, delta_scale, processing) through the probe; turing-fixed does not."""
from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from _tf_helpers import (LOWER, UPPER, assert_deterministic, assert_rejects_bad_input, assert_trains_and_samples,
                         assert_twin_requires_bounds, fit, gaussian_sigma, noise_draws, teacher_rows)
from dpcheck.vendored_impls.turing import fixed, upstream

NAMES = ("turing", "turing-fixed")


@pytest.fixture(scope="module")
def buggy():
    adapter, probe = fit("turing")
    return adapter, probe, adapter.sample(60)


@pytest.fixture(scope="module")
def twin():
    adapter, probe = fit("turing-fixed")
    return adapter, probe, adapter.sample(60)


def test_trains_and_samples(buggy, twin):
    assert_trains_and_samples("turing", buggy[0], buggy[2])
    assert_trains_and_samples("turing-fixed", twin[0], twin[2])


def test_same_seed_same_output(buggy, twin):
    assert_deterministic("turing", buggy[2])
    assert_deterministic("turing-fixed", twin[2])


@pytest.mark.parametrize("name", NAMES)
def test_bad_input_is_rejected_before_training(name):
    assert_rejects_bad_input(name)


@pytest.mark.parametrize("name", NAMES)
def test_bounds_are_public_metadata_in_both(name, buggy, twin):
    assert_twin_requires_bounds(name)
    probe = (buggy if name == "turing" else twin)[1]
    (event,) = probe.of("bounds")
    assert event.kwargs["source"] == "parameter"
    np.testing.assert_allclose(event.args[0], LOWER)


# --- pate -------------------------------------------------------------------------------
def test_pate_missing_in_turing(buggy):
    _, probe, _ = buggy
    assert not probe.of("votes") and not probe.of("accountant")
    assert [(e.args[0], e.kwargs["reason"]) for e in probe.of("training_end")] == [(4, "fixed")]


def test_pate_present_in_twin():
    _, probe = fit("turing-fixed", lamda=0.02, max_iterations=50)
    votes = probe.of("votes")
    assert votes and all(np.all(np.asarray(e.args[0]) + np.asarray(e.args[1]) == 3) for e in votes)
    eps_hats = [e.args[1] for e in probe.of("accountant")]
    assert eps_hats[-1] >= 1.0 > eps_hats[-2]
    end = probe.of("training_end")[-1]
    assert end.kwargs["reason"] == "budget" and end.args[0] == len(eps_hats) < 50


# --- data_partition ---------------------------------------------------------------------
def test_teacher_passes_share_rows_in_turing(buggy):
    seen = teacher_rows(buggy[1])
    assert len(seen) == 3 and seen[0] & seen[1] and seen[0] & seen[2] and seen[1] & seen[2]


def test_teachers_disjoint_in_twin(twin):
    seen = teacher_rows(twin[1])
    assert len(seen) == 3 and not (seen[0] & seen[1] or seen[0] & seen[2] or seen[1] & seen[2])


# --- laplace_noise ----------------------------------------------------------------------
def test_gaussian_noise_on_labels_in_turing(buggy):
    assert {(e.kwargs["distribution"], e.kwargs["applied_to"]) for e in buggy[1].of("noise")} == {
        ("gaussian", "labels")}


def test_laplace_inverse_lambda_on_votes_in_twin(twin):
    _, probe, _ = twin
    assert {(e.kwargs["distribution"], e.kwargs["applied_to"], e.kwargs["scale"]) for e in probe.of("noise")} == {
        ("laplace", "votes", 1e3)}
    assert stats.kstest(noise_draws(probe), "laplace", args=(0.0, 1e3)).pvalue > 0.01


# --- delta_scale ------------------------------------------------------------------------
def test_noise_scale_grows_with_delta_in_turing():
    scales = {d: fit("turing", delta=d, max_iterations=1)[1].of("noise")[0].kwargs["scale"] for d in (1e-7, 0.1)}
    assert scales[0.1] > scales[1e-7]  # more noise for a weaker guarantee: δ multiplied in
    for d, s in scales.items():
        assert s == pytest.approx(np.sqrt(2 * np.log(1.25 * 10 ** d)))
        assert s < gaussian_sigma(1.0, d) / 2


def test_delta_enters_only_the_accountant_in_twin():
    runs = {d: fit("turing-fixed", delta=d, max_iterations=1)[1] for d in (1e-7, 0.1)}
    assert {e.kwargs["scale"] for p in runs.values() for e in p.of("noise")} == {1e3}
    assert runs[0.1].of("accountant")[0].args[1] < runs[1e-7].of("accountant")[0].args[1]


# --- processing -------------------------------------------------------------------------
def _decode(cls, value: float) -> float:
    model = cls()
    model.encode(np.zeros((1, 1)), {"min": [0.0], "max": [10.0], "integer_columns": [0]})
    return float(model.decode(np.array([[value]]))[0, 0])


def test_integers_truncated_in_turing(buggy):
    assert _decode(upstream.PATEGAN, 0.39) == 3.0  # 3.9 rounds down
    transforms = [e.args[0] for e in buggy[1].of("output_transform")]
    assert transforms[:2] == ["inverse_minmax", "truncate_int"]
    np.testing.assert_array_equal(buggy[2][:, 1:], np.trunc(buggy[2][:, 1:]))


def test_integers_rounded_in_twin(twin):
    assert _decode(fixed.PATEGAN, 0.39) == 4.0
    transforms = [e.args[0] for e in twin[1].of("output_transform")]
    assert transforms[:2] == ["inverse_minmax", "round_int"]
    samples = twin[2]
    assert np.all((samples >= LOWER - 1e-6) & (samples <= UPPER + 1e-6))
