"""updated (2021 pate_gan.py rebuilt) exhibits its Table 2 cells (data_partition, metadata,
laplace_noise, teachers, processing) through the probe; updated-fixed does not."""
from __future__ import annotations

import numpy as np
import pytest
from scipy import stats
from sklearn.linear_model import LogisticRegression

from _tf_helpers import (LOWER, UPPER, assert_deterministic, assert_rejects_bad_input, assert_trains_and_samples,
                         assert_twin_requires_bounds, fit, noise_draws, teacher_rows, tiny_data)
from dpcheck.reference import pategan_moment_increment
from dpcheck.vendored_impls.updated import upstream

NAMES = ("updated", "updated-fixed")
#: λ small enough that the budget lasts the SMALL run's 4 iterations
RUN = dict(lamda=1e-3, student_iters=2)


@pytest.fixture(scope="module")
def buggy():
    adapter, probe = fit("updated", **RUN)
    return adapter, probe, adapter.sample(60)


@pytest.fixture(scope="module")
def twin():
    adapter, probe = fit("updated-fixed", **RUN)
    return adapter, probe, adapter.sample(60)


def test_trains_and_samples(buggy, twin):
    assert_trains_and_samples("updated", buggy[0], buggy[2])
    assert_trains_and_samples("updated-fixed", twin[0], twin[2])


def test_same_seed_same_output(buggy, twin):
    assert_deterministic("updated", buggy[2], **RUN)
    assert_deterministic("updated-fixed", twin[2], **RUN)


@pytest.mark.parametrize("name", NAMES)
def test_bad_input_is_rejected_before_training(name):
    assert_rejects_bad_input(name)


def test_twin_needs_public_bounds():
    assert_twin_requires_bounds("updated-fixed")


def test_budget_loop_and_theorem5_accountant_in_both(buggy, twin):
    for _, probe, _ in (buggy, twin):
        assert probe.of("training_end")[-1].kwargs["reason"] == "max_iterations"
        previous = np.zeros(20)
        for votes, acct in zip(probe.of("votes"), probe.of("accountant")):
            increment = acct.args[0] - previous
            np.testing.assert_allclose(increment, pategan_moment_increment(*votes.args, 1e-3, 20), rtol=1e-9)
            previous = acct.args[0]


# --- data_partition ---------------------------------------------------------------------
def test_every_teacher_fitted_on_the_last_partition_in_updated(buggy):
    _, probe, _ = buggy
    per_iteration: dict[int, list[set[int]]] = {}
    for e in probe.of("teacher_data"):
        per_iteration.setdefault(e.kwargs["iteration"], []).append(set(np.ravel(e.args[1]).tolist()))
    for sets in per_iteration.values():
        assert len(sets) == 3 and all(len(rows) == 8 for rows in sets)  # batch 8 from a 10-row partition
    seen = teacher_rows(probe)
    # stale ``i``: all three teachers draw from the same (last) partition of 30 // 3 rows
    assert len(seen[0] | seen[1] | seen[2]) <= 10
    assert seen[0] & seen[1] and seen[1] & seen[2] and seen[0] & seen[2]


def test_teachers_on_disjoint_partitions_in_twin(twin):
    _, probe, _ = twin
    seen = teacher_rows(probe)
    assert len(seen) == 3 and all(0 < len(rows) <= 10 for rows in seen.values())
    assert not (seen[0] & seen[1] or seen[0] & seen[2] or seen[1] & seen[2])


# --- metadata ---------------------------------------------------------------------------
def test_bounds_read_from_data_in_updated(buggy):
    _, probe, _ = buggy
    (event,) = probe.of("bounds")
    data = tiny_data()
    assert event.kwargs["source"] == "data"
    np.testing.assert_allclose(event.args[0], data.min(axis=0))
    np.testing.assert_allclose(event.args[1], data.max(axis=0))


def test_public_bounds_used_in_twin(twin):
    _, probe, _ = twin
    (event,) = probe.of("bounds")
    assert event.kwargs["source"] == "parameter"
    np.testing.assert_allclose(event.args[0], LOWER)
    np.testing.assert_allclose(event.args[1], UPPER)


# --- laplace_noise ----------------------------------------------------------------------
def test_laplace_scale_is_lambda_in_updated(buggy):
    _, probe, _ = buggy
    assert {e.kwargs["scale"] for e in probe.of("noise")} == {1e-3}
    draws = noise_draws(probe)
    assert np.abs(draws).max() < 0.05  # Lap(λ = 1e-3): the votes are left practically unperturbed
    assert stats.kstest(draws, "laplace", args=(0.0, 1e3)).pvalue < 1e-6


def test_laplace_scale_is_inverse_lambda_in_twin(twin):
    _, probe, _ = twin
    assert {(e.kwargs["distribution"], e.kwargs["scale"]) for e in probe.of("noise")} == {("laplace", 1e3)}
    assert stats.kstest(noise_draws(probe), "laplace", args=(0.0, 1e3)).pvalue > 0.01


# --- teachers ---------------------------------------------------------------------------
def test_logistic_regression_refitted_every_iteration_in_updated(monkeypatch):
    created: list[object] = []

    class Counting(LogisticRegression):
        def fit(self, *args, **kwargs):
            created.append(self)
            return super().fit(*args, **kwargs)

    monkeypatch.setattr(upstream, "LogisticRegression", Counting)
    _, probe = fit("updated", **RUN)
    iterations = probe.of("training_end")[0].args[0]
    assert len(created) == 3 * iterations == len(probe.of("teacher_data"))
    assert len({id(m) for m in created}) == len(created)  # a fresh model every time


def test_neural_teachers_trained_incrementally_in_twin(monkeypatch):
    def forbidden(*args, **kwargs):
        raise AssertionError("the twin must not fit sklearn models")

    monkeypatch.setattr(LogisticRegression, "fit", forbidden)

    def teacher_weights(adapter):
        graph = adapter._session.graph
        (w,) = [v for v in graph.get_collection("variables") if v.shape.as_list() == [3, 3, 3]
                and "RMSProp" not in v.name]
        return adapter._session.run(w)

    one = teacher_weights(fit("updated-fixed", **dict(RUN, max_iterations=1))[0])
    two = teacher_weights(fit("updated-fixed", **dict(RUN, max_iterations=2))[0])
    step = np.abs(two - one)
    assert 0 < step.max() < 5e-3  # one more small optimiser step, not a re-fit from scratch


# --- processing -------------------------------------------------------------------------
def test_output_left_in_unit_scale_in_updated(buggy):
    _, probe, samples = buggy
    assert {e.args[0] for e in probe.of("output_transform")} == {"none"}
    assert samples.min() >= 0.0 and samples.max() <= 1.0  # the input lives in [-250, 1040]


def test_output_mapped_back_in_twin(twin):
    _, probe, samples = twin
    assert [e.args[0] for e in probe.of("output_transform")][:2] == ["inverse_minmax", "round_int"]
    assert np.all((samples >= LOWER - 1e-6) & (samples <= UPPER + 1e-6))
    np.testing.assert_array_equal(samples[:, 1:], np.rint(samples[:, 1:]))


def test_twin_accountant_checks_the_validity_condition_without_dividing_by_zero():
    """At λ = ln(2)/2 a tie gives q·e^{2λ} = 1: the twin falls back to the data-independent term
    (PATE's validity condition) instead of dividing by zero."""
    import warnings

    from dpcheck.reference.pategan import pategan_moments

    lamda = float(np.log(2) / 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        _, probe = fit("updated-fixed", lamda=lamda, num_teachers=4, student_iters=2)
    votes = probe.of("votes")
    assert sum(int(np.sum(np.asarray(v.args[0]) == np.asarray(v.args[1]))) for v in votes) > 0, "no tie exercised"
    previous = np.zeros(20)
    for v, acct in zip(votes, probe.of("accountant")):
        expected = pategan_moments(*v.args, lamda, 20, check_validity=True)
        np.testing.assert_allclose(acct.args[0] - previous, expected, rtol=1e-9)
        previous = acct.args[0]
