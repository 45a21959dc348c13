"""Spec/seeding, datasets, reference mechanisms and attack features."""
import numpy as np
import pytest

from dpcheck.audit.attacks import attacks
from dpcheck.audit.core.spec import WORLD_IN, WORLD_OUT, AuditSpec, run_seed, split_sizes
from dpcheck.audit.reference import mechanisms
from dpcheck.audit.worlds import datasets


def test_generation_hash_ignores_analysis_only_fields():
    base = AuditSpec("ref-laplace", runs=100)
    assert base.generation_hash() == base.with_(runs=1000, attack="groundhog", confidence=0.9).generation_hash()
    assert base.generation_hash() != base.with_(epsilon=2.0).generation_hash()
    assert base.generation_hash() != base.with_(hyperparams={"max_iterations": 5}).generation_hash()
    assert base.generation_hash() != base.with_(phase="select").generation_hash()


def test_run_seeds_are_distinct_and_reproducible():
    gen = AuditSpec("ref-laplace").generation()
    seeds = {run_seed(gen, w, i) for w in (0, 1) for i in range(500)}
    assert len(seeds) == 1000
    assert run_seed(gen, 1, 17) == run_seed(dict(gen), 1, 17)
    assert run_seed(gen, 1, 17) != run_seed(AuditSpec("ref-laplace", seed=1).generation(), 1, 17)


def test_split_sizes_follow_the_paper():
    assert split_sizes(1000, (0.4, 0.2, 0.4)) == (400, 200, 400)
    with pytest.raises(ValueError):
        split_sizes(2, (0.4, 0.2, 0.4))


def test_worst_case_dataset():
    d = datasets.worst_case()
    assert d.world(WORLD_OUT).tolist() == [[0, 0, 0]] * 4
    assert d.world(WORLD_IN).tolist() == [[0, 0, 0]] * 4 + [[1, 1, 1]]
    assert d.target.tolist() == [1, 1, 1]


def test_cervical_cleaning():
    train, test, columns, lower, upper = datasets.cervical_clean()
    assert len(columns) == 36 - 7 and not set(datasets.CERVICAL_SPARSE) & set(columns)
    assert train.shape == (686, 29) and test.shape == (172, 29)
    assert np.isfinite(train).all() and np.isfinite(test).all()
    label = columns.index("Biopsy")
    # stratified: both parts keep the ~6.4 % positive rate
    assert abs(train[:, label].mean() - test[:, label].mean()) < 0.01
    assert np.all(train >= lower) and np.all(train <= upper)
    d = datasets.cervical(10)
    assert len(d.without_target) == 685 and np.array_equal(d.target, train[10])


def test_farthest_records_finds_the_outlier():
    rng = np.random.default_rng(0)
    data = rng.uniform(0, 0.1, size=(50, 3))
    data[17] = [1, 1, 1]
    assert datasets.farthest_records(data, np.zeros(3), np.ones(3), 3)[0] == 17


def _fit(name, data, seed=1, eps=1.0, **hp):
    impl = mechanisms.get_impl(name)
    return impl.fit(data, epsilon=eps, delta=1e-5, seed=seed, bounds=(np.zeros(3), np.ones(3)), **hp)


def test_laplace_counts_is_seeded_and_stays_in_the_domain():
    data = datasets.worst_case().with_target
    a, b = _fit("ref-laplace", data).sample(200), _fit("ref-laplace", data).sample(200)
    assert np.array_equal(a, b)
    assert a.shape == (200, 3) and set(np.unique(a)) <= {0.0, 1.0}
    assert not np.array_equal(a, _fit("ref-laplace", data, seed=2).sample(200))


def test_noise_scales_of_reference_mechanisms():
    assert mechanisms.LaplaceCounts().noise_scale(0.5, rows=5) == 2.0
    assert mechanisms.MeanScaledCounts().noise_scale(0.5, rows=5) == pytest.approx(0.4)


def test_reference_mechanisms_need_public_bounds():
    with pytest.raises(ValueError, match="bounds"):
        mechanisms.LaplaceCounts().fit(np.zeros((4, 3)), epsilon=1, delta=0, seed=0)


def test_laplace_counts_at_huge_epsilon_reproduces_the_histogram():
    data = datasets.worst_case().with_target
    synth = _fit("ref-laplace", data, eps=1e9).sample(5000)
    assert np.mean(np.all(synth == 1, axis=1)) == pytest.approx(0.2, abs=0.02)


def test_leaky_bounds_mechanism_follows_the_data_range():
    data = np.column_stack([np.linspace(0, 0.5, 40)])
    impl = mechanisms.get_impl("ref-leaky-bounds").fit(data, epsilon=1e6, delta=0, seed=0,
                                                       bounds=(np.zeros(1), np.full(1, 10.0)))
    assert impl.sample(500).max() <= 0.5
    fair = mechanisms.get_impl("ref-marginals").fit(data, epsilon=1e6, delta=0, seed=0,
                                                   bounds=(np.zeros(1), np.full(1, 10.0)))
    assert fair.sample(500).max() <= 10 * 1 / 16 + 1e-9  # only the first public bin is populated


def test_querybased_counts_every_cell():
    d = datasets.worst_case()
    synth = np.array([[0, 0, 0], [1, 1, 1], [0.9, 1.2, 0.6], [0, 1, 0], [2, 0, 0], [-0.2, 0.1, 0.4]])
    feats = attacks.featurize("querybased", synth, d)
    assert feats.shape == (8,)
    cells = attacks.querybased_domain(d)
    assert feats[cells.index((1, 1, 1))] == 2  # rounding
    assert feats[cells.index((0, 0, 0))] == 2
    assert feats[cells.index((0, 1, 0))] == 1
    assert feats.sum() == 5  # (2,0,0) lies outside the domain


def test_groundhog_naive_features():
    synth = np.array([[1.0, 10.0], [3.0, 30.0], [2.0, 20.0]])
    feats = attacks.groundhog_features(synth)
    np.testing.assert_allclose(feats, [1, 10, 3, 30, 2, 20, 2, 20, np.std([1, 2, 3]), np.std([10, 20, 30])])


def test_attack_separates_obviously_different_worlds():
    rng = np.random.default_rng(0)
    feats = {WORLD_OUT: rng.normal(0, 1, (100, 4)), WORLD_IN: rng.normal(5, 1, (100, 4))}
    out = attacks.run_attack(feats, split=(0.4, 0.2, 0.4), seed=0, delta=1e-5, confidence=0.95)
    assert out.auc == 1.0 and out.counts.fp == 0 and out.counts.fn == 0 and out.test == 40
