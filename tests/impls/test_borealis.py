"""borealis (models/pate_gan.py + utils/helper.py rebuilt) exhibits its Table 2 cells through the
probe — moments_accountant, metadata, processing — and borealis-fixed does not."""
from __future__ import annotations

import numpy as np
import pytest

from dpcheck import impls

RUN = dict(max_iterations=4, num_teachers=3, batch_size=8, lamda=1e-3, num_moments=20, teacher_iters=2,
           student_iters=2)


@pytest.fixture(scope="module")
def buggy(h):
    adapter, probe = h.fit("borealis", h.tiny(18), **RUN)
    return adapter, probe, adapter.sample(50)


@pytest.fixture(scope="module")
def twin(h):
    adapter, probe = h.fit("borealis-fixed", h.tiny(18), **RUN)
    return adapter, probe, adapter.sample(50)


@pytest.mark.parametrize("fixture", ["buggy", "twin"])
def test_trains_and_samples_tiny_data(fixture, request):
    _, probe, out = request.getfixturevalue(fixture)
    assert out.shape == (50, 3) and np.isfinite(out).all()
    assert probe.of("training_end")[-1].args[0] == RUN["max_iterations"]


def test_moments_accountant_hook_buggy_departs_from_theorem5(compare_hook, accountant_grid):
    assert compare_hook(impls.get("borealis"), accountant_grid) > 1.0


def test_moments_accountant_hook_twin_equals_theorem5(compare_hook, accountant_grid):
    assert compare_hook(impls.get("borealis-fixed"), accountant_grid, check_validity=True) < 1e-6


def test_missing_log_overestimates_where_the_data_dependent_term_wins(h):
    """lamda=0.5, |n0-n1|=10: Theorem 5 takes log(t) ~ 0.04 < 2λ²l(l+1) = 1; without the log the
    clamp returns the bound itself."""
    n0, n1 = np.array([0.0]), np.array([10.0])
    buggy = impls.get("borealis").accountant_update(n0, n1, lamda=0.5, num_moments=1)
    ref = h.theorem5(n0, n1, 0.5, 1)
    assert ref[0] == pytest.approx(0.0398, abs=1e-3)
    assert buggy[0] == pytest.approx(1.0)


def test_moments_accountant_twin_probe_matches_theorem5(h):
    _, probe = h.fit("borealis-fixed", h.tiny(18), **dict(RUN, lamda=0.3))
    updates = h.increments(probe)
    assert len(updates) == len(probe.of("votes")) > 0
    assert probe.of("training_end")[-1].kwargs["reason"] == "budget"
    for n0, n1, inc in updates:
        np.testing.assert_allclose(inc, h.theorem5(n0, n1, 0.3, RUN["num_moments"], check_validity=True), rtol=1e-6)


def test_moments_accountant_buggy_probe_departs_from_theorem5(h):
    _, probe = h.fit("borealis", h.tiny(18), **dict(RUN, lamda=0.3))
    updates = h.increments(probe)
    assert updates
    assert any(not np.allclose(inc, h.theorem5(n0, n1, 0.3, RUN["num_moments"]), rtol=1e-6)
               for n0, n1, inc in updates)


def test_metadata_buggy_reads_bounds_from_data(buggy, h):
    _, probe, _ = buggy
    (event,) = probe.of("bounds")
    assert event.kwargs["source"] == "data"
    data = h.tiny(18)
    np.testing.assert_allclose(event.args[0], data.min(axis=0))
    np.testing.assert_allclose(event.args[1], data.max(axis=0))


def test_metadata_twin_uses_public_bounds(twin, h):
    _, probe, _ = twin
    (event,) = probe.of("bounds")
    assert event.kwargs["source"] == "parameter"
    np.testing.assert_array_equal(event.args[0], h.lower)
    np.testing.assert_array_equal(event.args[1], h.upper)


def test_twin_without_bounds_refuses(h):
    with pytest.raises(ValueError, match="public metadata"):
        h.fit("borealis-fixed", h.tiny(18), bounds=None, **RUN)


def test_processing_buggy_output_stays_in_scaled_space(buggy, h):
    _, probe, out = buggy
    assert [e.args[0] for e in probe.of("output_transform")] == ["none"]
    assert (out >= 0).all() and (out <= 1).all()
    assert (out[:, 1] < h.lower[1]).all(), "integer column 100..140 came back in the scaled space"


def test_processing_twin_output_in_input_scale_and_types(twin, h):
    _, probe, out = twin
    assert "inverse_minmax" in [e.args[0] for e in probe.of("output_transform")]
    assert (out >= h.lower).all() and (out <= h.upper).all()
    np.testing.assert_array_equal(out[:, 1:], np.rint(out[:, 1:]))


def test_partition_disjoint_contiguous_slices_in_both(buggy, twin, h):
    for _, probe, _ in (buggy, twin):
        seen = h.teacher_rows(probe)
        assert sorted(seen) == [0, 1, 2]
        assert all(not (seen[a] & seen[b]) for a in seen for b in seen if a < b)
        assert seen[0] <= set(range(0, 6)) and seen[2] <= set(range(12, 18))


def test_unconditional_by_default_no_labels_at_generation(buggy, twin):
    for _, probe, _ in (buggy, twin):
        assert probe.of("generation_labels") == []


def test_conditional_buggy_samples_training_class_ratios(h):
    data = h.tiny(18)
    adapter, probe = h.fit("borealis", data, conditional=True, **RUN)
    out = adapter.sample(30)
    (event,) = probe.of("generation_labels")
    assert event.kwargs["source"] == "training"
    np.testing.assert_allclose(event.args[0], [np.mean(data[:, 2] == 0), np.mean(data[:, 2] == 1)])
    assert out.shape == (30, 3) and set(np.unique(out[:, 2])) <= {0.0, 1.0}


def test_conditional_twin_uses_public_ratios(h):
    adapter, probe = h.fit("borealis-fixed", h.tiny(18), conditional=True, class_ratios=(0.5, 0.5), **RUN)
    out = adapter.sample(30)
    (event,) = probe.of("generation_labels")
    assert event.kwargs["source"] == "public"
    np.testing.assert_allclose(event.args[0], [0.5, 0.5])
    assert out.shape == (30, 3)


def test_vote_noise_laplace_inverse_lambda(buggy):
    _, probe, _ = buggy
    assert {e.kwargs["scale"] for e in probe.of("noise")} == {1 / RUN["lamda"]}
    assert {e.kwargs["applied_to"] for e in probe.of("noise")} == {"votes"}
