"""Black-box featurizers (dpcheck.audit.attacks.featurizers): values on hand-made data, and separation of
leaky vs correct mechanisms (fixed seeds, R = 100 runs per world, 40 test runs per world)."""
import numpy as np
import pytest

from dpcheck.audit.attacks import attacks, featurizers
from dpcheck.audit.attacks.selection import CANDIDATES
from dpcheck.audit.core import stats
from dpcheck.audit.core.spec import WORLD_IN, WORLD_OUT
from dpcheck.audit.reference import mechanisms
from dpcheck.audit.worlds import datasets

WORST = datasets.worst_case()
CONTINUOUS = datasets.load("worstcase-continuous")
HAND = np.array([[0, 0, 0], [1, 1, 1], [1, 0, 1], [0, 1, 1], [np.nan, 1, 1]], dtype=float)


def test_querybased_subsets_counts_target_matches_on_every_subset():
    feats = attacks.featurize("querybased-subsets", HAND, WORST)
    # subset code k has column j when bit j is set: {a}, {b}, {a,b}, {c}, {a,c}, {b,c}, {a,b,c}
    assert feats.tolist() == [2, 3, 1, 4, 2, 3, 1]


def test_querybased_subsets_superset_sums_agree_with_brute_force():
    rng = np.random.default_rng(3)
    schema_free = datasets.AuditDataset("five", np.ones((1, 5)), np.zeros((0, 5)), 0, tuple("abcde"),
                                        np.zeros(5), np.full(5, 2.0), 10)
    synth = rng.integers(0, 3, size=(40, 5)).astype(float)
    feats = featurizers.querybased_subset_features(synth, schema_free)
    for code in range(1, 32):
        cols = [j for j in range(5) if code >> j & 1]
        assert feats[code - 1] == np.sum(np.all(synth[:, cols] == 1, axis=1))


def test_querybased_subsets_above_sixteen_columns_uses_a_fixed_sample():
    masks = featurizers.subset_masks(20)
    assert masks.shape == (featurizers.SUBSET_SAMPLE, 20)
    assert len({m.tobytes() for m in masks}) == len(masks) and masks.any(axis=1).all()
    sizes = masks.sum(axis=1)
    assert np.sum(sizes == 1) == 20 and np.sum(sizes == 2) == 190 and sizes.max() > 10
    assert np.array_equal(masks, featurizers.subset_masks(20))  # the same for every run
    assert featurizers.subset_masks(16).shape == (2**16 - 1, 16)
    wide = datasets.AuditDataset("wide", np.ones((1, 20)), np.zeros((0, 20)), 0, tuple(f"c{j}" for j in range(20)),
                                 np.zeros(20), np.ones(20), 10)
    synth = np.random.default_rng(0).integers(0, 2, size=(30, 20)).astype(float)
    feats = featurizers.querybased_subset_features(synth, wide)
    for row in (0, 25, 300, 4000):
        assert feats[row] == np.sum(np.all(synth[:, masks[row]] == 1, axis=1))


def test_histogram_uses_integer_cells_or_equal_bins_over_the_public_bounds():
    assert attacks.featurize("groundhog-histogram", HAND, WORST).tolist() == [0.4, 0.4, 0.4, 0.6, 0.2, 0.8]
    synth = np.array([[0.0, 0.5, 1.0], [0.99, 0.03, 2.0], [0.5, -1.0, 0.5]])
    feats = attacks.featurize("groundhog-histogram", synth, CONTINUOUS).reshape(3, featurizers.HIST_BINS)
    third = 1 / 3
    assert feats[0, 0] == pytest.approx(third) and feats[0, 8] == pytest.approx(third)
    assert feats[0, 15] == pytest.approx(third)
    assert feats[1, 0] == pytest.approx(2 * third) and feats[1, 8] == pytest.approx(third)  # -1 clipped
    assert feats[2, 15] == pytest.approx(2 * third)  # 2.0 clipped into the top bin
    assert feats.sum() == pytest.approx(3)


def test_correlation_is_pearson_on_pairs_and_zero_for_constant_columns():
    rng = np.random.default_rng(1)
    synth = rng.normal(size=(50, 3))
    synth[:, 1] = synth[:, 0] * 2 + rng.normal(scale=0.1, size=50)
    feats = attacks.featurize("groundhog-correlation", synth, CONTINUOUS)
    c = np.corrcoef(synth.T)
    np.testing.assert_allclose(feats, [c[0, 1], c[0, 2], c[1, 2]], atol=1e-12)
    synth[:, 2] = 0.3
    assert attacks.featurize("groundhog-correlation", synth, CONTINUOUS)[1:].tolist() == [0.0, 0.0]
    one = datasets.AuditDataset("one", np.ones((1, 1)), np.zeros((0, 1)), 0, ("a",), np.zeros(1), np.ones(1), 10)
    with pytest.raises(ValueError, match="two columns"):
        attacks.featurize("groundhog-correlation", np.zeros((5, 1)), one)


def test_ensemble_concatenates_naive_histogram_correlation():
    feats = attacks.featurize("groundhog-ensemble", HAND, WORST)
    parts = [attacks.groundhog_features(HAND), featurizers.histogram_features(HAND, WORST),
             featurizers.correlation_features(HAND)]
    np.testing.assert_array_equal(feats, np.concatenate(parts))
    assert feats.shape == (15 + 6 + 3,)


def test_dcr_distance_and_fractions_near_the_target():
    synth = np.array([[1.0, 1.0, 0.97], [0.0, 0.0, 0.0], [0.5, 0.5, 0.5], [1.0, 1.0, 1.0]])
    score, minus_dcr, *fractions = attacks.featurize("dcr", synth, CONTINUOUS)
    assert minus_dcr == 0.0 and fractions == [0.25, 0.5, 0.5]  # 0.03/√3 ≈ 0.017 is within 0.05
    assert score == pytest.approx(np.mean([0.25, 0.5, 0.5]))
    score, minus_dcr, *_ = attacks.featurize("dcr", synth[:3], CONTINUOUS)
    assert minus_dcr == pytest.approx(-0.03 / np.sqrt(3))
    assert attacks.featurize("dcr", np.zeros((0, 3)), CONTINUOUS).tolist() == [-1.0, -1.0, 0.0, 0.0, 0.0]


def test_mc_density_uses_the_median_heuristic_over_target_and_reference():
    # nearest record (target (1,1,1) or a D' row (0,0,0)): 0, 0, 1/√3, 1/√3, far (NaN) → ε = 1/√3
    fraction, radius = attacks.featurize("mc-density", HAND, WORST)
    assert radius == pytest.approx(1 / np.sqrt(3))
    assert fraction == pytest.approx(3 / 5)  # (1,1,1), (1,0,1), (0,1,1)
    closeness, density = attacks.featurize("tvd", HAND, WORST)
    assert closeness == 1.0 and density == pytest.approx(3 / 5)


def test_binned_likelihood_is_the_tvd_oracle_on_the_better_score():
    x = np.array([[0.05, 0.5], [0.15, 0.5], [0.95, 0.5], [0.92, 0.5], [0.05, 0.5], [0.95, 0.5]])
    y = np.array([0, 0, 1, 1, 0, 0])
    model = featurizers.BinnedLikelihood().fit(x, y)
    # P (with the target): bin 9 = 1; Q: bin 0 = 1/2, bin 1 = 1/4, bin 9 = 1/4
    assert model.column == 0 and model.tvd_ == pytest.approx(0.5 * (1 / 2 + 1 / 4 + 3 / 4))
    member = model.predict_proba(np.array([[0.95, 0.0], [0.05, 0.0], [0.55, 0.0]]))[:, 1]
    assert member.tolist() == pytest.approx([1 / (1 + 1 / 4), 0.0, 0.5])
    swapped = featurizers.BinnedLikelihood().fit(x[:, ::-1], y)
    assert swapped.column == 1


def test_fixed_score_attacks_do_not_train():
    model = featurizers.model_for("dcr")
    assert model.fit(np.zeros((2, 2)), np.array([0, 1])) is model
    assert model.predict_proba(np.array([[0.3, 9.0]]))[:, 1].tolist() == [0.3]
    assert featurizers.model_for("groundhog-histogram") is None


# ------------------------------------------------------------------ separation

RUNS = 100


def _toy(leaky: bool):
    def release(world: int, index: int) -> np.ndarray:
        rows = np.random.default_rng([index, world]).uniform(0, 0.5, (100, 3))
        if leaky and world == WORLD_IN:
            rows[0] = 1.0  # the target row copied into the output
        return rows
    return CONTINUOUS, release


def _reference(name: str, epsilon: float):
    def release(world: int, index: int) -> np.ndarray:
        impl = mechanisms.get_impl(name).fit(WORST.world(world), epsilon=epsilon, delta=1e-5,
                                             seed=1000 * world + index, bounds=WORST.bounds)
        return impl.sample(100)
    return WORST, release


@pytest.fixture(scope="module")
def releases():
    out = {}
    for case, (data, release) in {"copy": _toy(True), "independent": _toy(False),
                                  "ref-broken": _reference("ref-broken", 1.0),
                                  "ref-laplace": _reference("ref-laplace", 0.05)}.items():
        out[case] = (data, {w: [release(w, i) for i in range(RUNS)] for w in (WORLD_OUT, WORLD_IN)})
    return out


def _audit(attack: str, data, synth) -> tuple[float, float]:
    feats = {w: np.vstack([attacks.featurize(attack, s, data) for s in runs]) for w, runs in synth.items()}
    out = attacks.run_attack(feats, split=(0.4, 0.2, 0.4), seed=0, delta=1e-5, confidence=0.95,
                             model=featurizers.model_for(attack))
    c = out.counts
    return stats.eps_clopper_pearson(c.fp, c.negatives, c.fn, c.positives, delta=1e-5, confidence=0.95), out.auc


@pytest.mark.parametrize("attack", CANDIDATES)
def test_attack_separates_leaky_mechanisms_and_not_correct_ones(attack, releases):
    eps, auc = _audit(attack, *releases["copy"])
    assert auc >= 0.98 and eps > 2.0, (eps, auc)
    eps, auc = _audit(attack, *releases["ref-broken"])
    assert auc >= 0.85 and eps > 0.8, (eps, auc)
    for correct in ("independent", "ref-laplace"):
        eps, auc = _audit(attack, *releases[correct])
        assert eps == 0.0 and abs(auc - 0.5) < 0.2, (correct, eps, auc)


def test_new_attacks_are_accepted_everywhere():
    from dpcheck.audit.core.spec import ATTACKS, AuditSpec
    from dpcheck.commands.audit import ATTACK_DATASET

    for name in (*featurizers.FEATURIZERS, "auto"):
        assert name in ATTACKS and name in ATTACK_DATASET
        base = AuditSpec("ref-laplace")
        assert base.with_(attack=name).generation_hash() == base.generation_hash()  # runs are shared
    assert set(featurizers.FEATURIZERS) <= set(CANDIDATES) and len(set(CANDIDATES)) == len(CANDIDATES)
