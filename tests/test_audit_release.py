"""What the audit feeds each built-in implementation and what it releases: the paper's settings
per implementation, output mapped back to input units, and where the worst-case leak shows."""
from __future__ import annotations

import numpy as np
import pytest

from dpcheck import impls
from dpcheck.audit.attacks import attacks
from dpcheck.audit.core.settings import DATASET_DEFAULTS, paper_hyperparams
from dpcheck.audit.core.spec import WORLD_IN, WORLD_OUT, AuditSpec
from dpcheck.audit.runners.executor import Task, run_one
from dpcheck.audit.worlds import datasets
from dpcheck.vendored_impls.turing import finite

#: short runs: the leaks below come from preprocessing, not from training length
QUICK = {"max_iterations": 3}


def release(name: str, world: int, seed: int = 5, rows: int = 60) -> np.ndarray:
    spec = AuditSpec(name, runs=5, seed=seed, synth_rows=rows,
                     hyperparams={**paper_hyperparams(name, "worstcase"), **QUICK})
    out = run_one(Task(spec.generation(), world, 0))
    assert out.error is None, out.error
    return out.synth


def cells(synth: np.ndarray) -> np.ndarray:
    data = datasets.worst_case()
    return attacks.querybased_features(synth, data.lower, data.upper)


def test_paper_settings_per_dataset_and_family():
    for name in impls.NAMES:
        hp = paper_hyperparams(name, "worstcase")
        assert {k: hp[k] for k in DATASET_DEFAULTS["worstcase"]} == DATASET_DEFAULTS["worstcase"]
        # a twin is run exactly like its buggy version
        assert hp == paper_hyperparams(name.removesuffix("-fixed"), "worstcase")
    assert paper_hyperparams("turing", "worstcase")["categorical_columns"] == (0, 1, 2)
    assert paper_hyperparams("borealis-fixed", "cervical")["conditional"] is True
    assert "categorical_columns" not in paper_hyperparams("turing", "cervical")
    assert paper_hyperparams("ref-laplace", "worstcase") == {}
    assert paper_hyperparams("examples.tiny_pate.adapter:TinyPate", "worstcase") == {}


def test_audit_cli_passes_the_settings():
    import argparse

    from dpcheck.commands.audit import build_specs

    args = argparse.Namespace(impl=["turing", "ref-laplace"], hp=["max_iterations=7"], attack=None, dataset=None,
                              target=None, epsilon=1.0, delta=1e-5, runs=10, synth_rows=None, seed=0,
                              split="40/20/40", confidence=0.95)
    turing, ref = build_specs(args)
    assert turing.hyperparams == {**paper_hyperparams("turing", "worstcase"), "max_iterations": 7}
    assert ref.hyperparams == {"max_iterations": 7}


@pytest.mark.parametrize("name", ["updated", "synthcity"])
def test_bounds_read_from_d_prime_allow_only_zeros(name):
    """D′ is four (0,0,0) rows: with min = max read from it every released row is (0,0,0)."""
    out_world = cells(release(name, WORLD_OUT))
    assert out_world[0] == out_world.sum() == 60
    in_world = cells(release(name, WORLD_IN))
    assert in_world.sum() == 60 and in_world[0] < 60


def test_borealis_class_ratios_read_from_d_prime_allow_no_positive_label():
    # the label is the last column: odd cell codes are the rows with label 1
    assert cells(release("borealis", WORLD_OUT))[1::2].sum() == 0
    assert cells(release("borealis", WORLD_IN))[1::2].sum() > 0
    assert cells(release("borealis-fixed", WORLD_OUT))[1::2].sum() > 0


@pytest.mark.parametrize("name", ["updated-fixed", "synthcity-fixed", "borealis-fixed"])
def test_twins_release_the_same_distribution_support_in_both_worlds(name):
    # public bounds and public class ratios: D′ can produce other cells than (0,0,0)
    counts = sum(cells(release(name, WORLD_OUT, seed=s)) for s in range(3))
    assert counts[0] < counts.sum()


def test_updated_release_is_the_inverse_of_its_driver_scaling():
    data = np.array([[2.0, 10.0], [4.0, 30.0], [3.0, 20.0]] * 4)
    adapter = impls.get("updated")
    adapter.fit(data, epsilon=1.0, delta=1e-5, seed=0, num_teachers=2, max_iterations=2, lamda=1e-3)
    raw = adapter.sample(40)
    assert raw.min() >= 0.0 and raw.max() <= 1.0  # the Processing bug: output left in [0, 1]
    back = adapter.release(raw)
    np.testing.assert_allclose(back, raw * (np.array([2.0, 20.0]) + 1e-8) + np.array([2.0, 10.0]))
    with pytest.raises(RuntimeError, match="fit"):
        impls.get("updated").release(raw)


def test_executor_applies_release_only_where_the_adapter_has_one():
    assert hasattr(impls.get("updated"), "release")
    assert not hasattr(impls.get("updated-fixed"), "release")
    assert not hasattr(impls.get("original"), "release")


def test_synthcity_constant_column_decodes_to_its_constant():
    from dpcheck.vendored_impls.synthcity.upstream import TabularEncoder

    x = np.column_stack([np.full(6, 3.0), np.arange(6.0)])
    enc = TabularEncoder(np.array([True, True])).fit(x)
    back = enc.inverse_transform(np.array([[0.7, -1.0], [-0.2, 1.0]]))
    np.testing.assert_array_equal(back[:, 0], [3.0, 3.0])
    np.testing.assert_array_equal(back[:, 1], [0.0, 5.0])


def test_finite_columns_take_categories_from_the_metadata():
    lower, upper = np.array([0.0, -1.0, 0.0]), np.array([1.0, 1.0, 5.0])
    cats = finite.categories(lower, upper, (0, 1))
    raw = np.array([[0.0, 1.0, 2.5], [0.0, -1.0, 4.0]])  # column 0 never shows category 1
    scaled = (raw - lower) / (upper - lower)
    enc = finite.expand(scaled, raw, cats)
    assert enc.shape == (2, 2 + 3 + 1)
    np.testing.assert_array_equal(enc[:, :5], [[1, 0, 0, 0, 1], [1, 0, 1, 0, 0]])
    generated = np.array([[0.1, 0.9, 0.2, 0.7, 0.1, 0.5]])
    np.testing.assert_array_equal(finite.collapse(generated, 3, cats), [[1.0, 0.0, 0.5]])
    with pytest.raises(ValueError, match="below"):
        finite.categories(np.array([2.0]), np.array([1.0]), (0,))


@pytest.mark.parametrize("name", ["turing", "turing-fixed"])
def test_turing_finite_columns_can_release_unseen_public_categories(name):
    # trained on D′ only (all zeros), the decoder still knows category 1 from the metadata
    counts = sum(cells(release(name, WORLD_OUT, seed=s)) for s in range(2))
    assert counts.sum() == 120 and counts[0] < 120
