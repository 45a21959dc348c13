"""synthcity (plugin_pategan.py rebuilt) exhibits its Table 2 cells through the probe —
data_partition, moments_accountant, metadata, teachers — and synthcity-fixed does not."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from sklearn.linear_model import LogisticRegression

from dpcheck import impls
from dpcheck.vendored_impls.synthcity import fixed, upstream
from dpcheck.vendored_impls.synthcity.adapter import DEFAULTS, FIXED_DEFAULTS

STUDENT_BATCHES = FIXED_DEFAULTS["student_batches"]

RUN = dict(max_iterations=4, num_teachers=3, batch_size=8, lamda=1e-3, num_moments=20, student_epochs=2)


@pytest.fixture(scope="module")
def buggy(h):
    return h.fit("synthcity", h.tiny(18), **RUN)


@pytest.fixture(scope="module")
def twin(h):
    return h.fit("synthcity-fixed", h.tiny(18), **RUN)


@pytest.mark.parametrize("name", ["synthcity", "synthcity-fixed"])
def test_trains_and_samples_tiny_data(h, name):
    adapter, probe = h.fit(name, h.tiny(18), **RUN)
    out = adapter.sample(25)
    assert out.shape == (25, 3) and np.isfinite(out).all()
    assert probe.of("training_end")[-1].args[0] == RUN["max_iterations"]


def test_data_partition_buggy_reshuffles_every_iteration(buggy, h):
    _, probe = buggy
    per_iteration: dict[int, list[set[int]]] = {}
    for e in probe.of("teacher_data"):
        per_iteration.setdefault(e.kwargs["iteration"], []).append(set(np.ravel(e.args[1]).tolist()))
    assert len(per_iteration) == RUN["max_iterations"]
    teacher0 = [slices[0] for _, slices in sorted(per_iteration.items())]
    assert any(a != teacher0[0] for a in teacher0[1:]), "teacher 0 saw the same rows every iteration"
    seen = h.teacher_rows(probe)
    assert any(seen[a] & seen[b] for a in seen for b in seen if a < b), "teachers never shared a row"


def test_data_partition_twin_fixed_disjoint_slices(twin, h):
    _, probe = twin
    per_teacher: dict[int, set[frozenset[int]]] = {}
    for e in probe.of("teacher_data"):
        per_teacher.setdefault(int(e.args[0]), set()).add(frozenset(np.ravel(e.args[1]).tolist()))
    assert len(per_teacher) == RUN["num_teachers"]
    assert all(len(slices) == 1 for slices in per_teacher.values()), "a teacher's rows changed between iterations"
    rows = [next(iter(s)) for s in per_teacher.values()]
    assert all(not (a & b) for i, a in enumerate(rows) for b in rows[i + 1:])
    assert set().union(*rows) == set(range(18))


def _teacher_objects(monkeypatch, module, name, h):
    seen: list[list[int]] = []
    types: set[type] = set()
    original = module.Teachers.fit

    def spy(self, X, generator, iteration=0):
        result = original(self, X, generator, iteration)
        seen.append([id(m) for m in self.model])
        types.update(type(m) for m in self.model)
        return result

    monkeypatch.setattr(module.Teachers, "fit", spy)
    adapter, _ = h.fit(name, h.tiny(18), **RUN)
    return seen, types, adapter


def test_teachers_buggy_logistic_regression_refitted(monkeypatch, h):
    seen, types, _ = _teacher_objects(monkeypatch, upstream, "synthcity", h)
    assert types == {LogisticRegression}
    assert len(seen) == RUN["max_iterations"]
    assert len({i for ids in seen for i in ids}) > RUN["num_teachers"], "teachers were not re-created"


def test_teachers_twin_neural_and_persistent(monkeypatch, h):
    seen, types, _ = _teacher_objects(monkeypatch, fixed, "synthcity-fixed", h)
    assert all(issubclass(t, torch.nn.Module) for t in types) and types
    assert all(ids == seen[0] for ids in seen), "twin teachers must persist across iterations"


def test_moments_accountant_hook_buggy_departs_from_theorem5(compare_hook, accountant_grid):
    assert compare_hook(impls.get("synthcity"), accountant_grid) > 1e-2


def test_moments_accountant_hook_twin_equals_theorem5(compare_hook, accountant_grid):
    assert compare_hook(impls.get("synthcity-fixed"), accountant_grid, check_validity=True) < 1e-6


def test_moments_accountant_index_bug_shape():
    """exp(2*lambda*j + 1) vs exp(2*lambda*(j+1)): identical only when 2*lambda = 1."""
    n0, n1 = np.array([1.0]), np.array([39.0])
    a = impls.get("synthcity").accountant_update(n0, n1, lamda=0.5, num_moments=5)
    b = impls.get("synthcity-fixed").accountant_update(n0, n1, lamda=0.5, num_moments=5)
    np.testing.assert_allclose(a, b, rtol=1e-9)


def test_moments_accountant_twin_probe_matches_theorem5(h):
    _, probe = h.fit("synthcity-fixed", h.tiny(18), **dict(RUN, lamda=0.3))
    updates = h.increments(probe)
    assert updates
    for n0, n1, inc in updates:
        np.testing.assert_allclose(inc, h.theorem5(n0, n1, 0.3, RUN["num_moments"], check_validity=True), rtol=1e-6)


def test_metadata_buggy_reads_bounds_from_data(buggy, h):
    _, probe = buggy
    (event,) = probe.of("bounds")
    assert event.kwargs["source"] == "data"
    data = h.tiny(18)
    np.testing.assert_array_equal(event.args[0], data.min(axis=0))
    np.testing.assert_array_equal(event.args[1], data.max(axis=0))


def test_metadata_twin_uses_public_bounds(twin, h):
    _, probe = twin
    (event,) = probe.of("bounds")
    assert event.kwargs["source"] == "parameter"
    np.testing.assert_array_equal(event.args[0], h.lower)
    np.testing.assert_array_equal(event.args[1], h.upper)


def test_twin_without_bounds_refuses_before_training(h):
    with pytest.raises(ValueError, match="public metadata"):
        h.fit("synthcity-fixed", h.tiny(18), bounds=None, **RUN)


def test_skip_accounting_branch_buggy_releases_uncharged_labels(buggy):
    """Outside Table 2: labelled batches with >= half 'real' labels never reach the accountant."""
    _, probe = buggy
    assert len(probe.of("accountant")) < len(probe.of("votes"))


def test_skip_accounting_branch_fixed_in_twin(twin):
    _, probe = twin
    assert len(probe.of("accountant")) == len(probe.of("votes")) > 0


def test_vote_noise_is_laplace_inverse_lambda_in_both(buggy, twin):
    for _, probe in (buggy, twin):
        scales = {e.kwargs["scale"] for e in probe.of("noise")}
        assert scales == {1 / RUN["lamda"]}
        assert {e.kwargs["distribution"] for e in probe.of("noise")} == {"laplace"}


def test_default_delta_is_one_over_n_sqrt_n(h):
    adapter, _ = h.fit("synthcity", h.tiny(16), delta=None, **dict(RUN, max_iterations=1))
    assert adapter._model.delta == pytest.approx(1 / (16 * np.sqrt(16)))


def test_integer_columns_restored_by_rounding(twin, h):
    adapter, probe = twin
    out = adapter.sample(40)
    np.testing.assert_array_equal(out[:, 1:], np.rint(out[:, 1:]))
    assert "round_int" in [e.args[0] for e in probe.of("output_transform")]
    assert (out >= h.lower).all() and (out <= h.upper).all()


def _schedule(h, name: str, rows: int) -> tuple[int, set[int]]:
    """(labelled batches, their sizes) over a run on ``rows`` rows: the student's training schedule."""
    _, probe = h.fit(name, h.tiny(rows), **dict(RUN, max_iterations=2))
    votes = probe.of("votes")
    return len(votes), {len(e.args[0]) for e in votes}


def test_training_schedule_buggy_reads_n(h):
    """Outside Table 2: upstream's batches per epoch (ceil(N / batch)) and generated rows per batch
    (min(batch, N)) follow N, which add/remove neighbours differ in."""
    assert _schedule(h, "synthcity", 16) != _schedule(h, "synthcity", 17)
    assert _schedule(h, "synthcity", 6)[1] == {6}


def test_training_schedule_twin_public(h):
    for rows in (6, 16, 17):
        assert _schedule(h, "synthcity-fixed", rows) == (2 * RUN["student_epochs"] * STUDENT_BATCHES,
                                                         {RUN["batch_size"]})
    _, probe = h.fit("synthcity-fixed", h.tiny(17), **dict(RUN, max_iterations=2, student_batches=2))
    assert len(probe.of("votes")) == 2 * RUN["student_epochs"] * 2


def test_twin_schedule_default_is_upstreams_at_cervical_size():
    """The public default equals upstream's ceil(N / batch_size) on both Cervical worlds, so the
    Cervical audits of the twin are unchanged by the fix."""
    from dpcheck.audit.worlds import datasets

    ds = datasets.load("cervical", 397)
    for world in (0, 1):
        n = len(ds.world(world))
        assert n >= DEFAULTS["batch_size"]
        assert int(np.ceil(n / DEFAULTS["batch_size"])) == STUDENT_BATCHES
