"""diffprivlib 0.6.6 targets: each fits and releases on tiny data, is seeded, and the -nobounds
variants take the documented fallback (PrivacyLeakWarning)."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from diffprivlib.utils import PrivacyLeakWarning

from dpcheck.audit.worlds import datasets
from dpcheck.targets import registry
from dpcheck.targets.base import shadow_release
from dpcheck.targets.diffprivlib_targets import TARGETS

NAMES = [t.name for t in TARGETS]
#: released values per target on the 3-column worst cases (2 features + label, or 3 columns)
EXPECTED_SIZE = {"GaussianNB": 2 * 2 + 2 * 2 + 2, "LogisticRegression": 2 + 1, "LinearRegression": 2 + 1,
                 "KMeans": 2 * 3, "StandardScaler": 3 + 3, "PCA": 3 + 2 * 3, "mean": 3, "var": 3, "histogram": 2}


def release(name: str, world: int, seed: int, *, record: list | None = None) -> np.ndarray:
    info = registry.get(name)
    data = datasets.load(info.dataset)
    schema = data.get_schema()
    frame = schema.decode(data.world(world))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = shadow_release(info, frame, schema, 1.0, 1e-5, seed, 1)
    if record is not None:
        record.extend(caught)
    return out


def test_every_required_model_has_both_variants_and_the_tools_exist():
    for model in ("GaussianNB", "LogisticRegression", "LinearRegression", "KMeans", "StandardScaler", "PCA"):
        assert f"diffprivlib:{model}" in NAMES and f"diffprivlib:{model}-nobounds" in NAMES
    for tool in ("mean", "var", "histogram"):
        assert f"diffprivlib:{tool}" in NAMES
    assert all(t.env == "main" and t.kind == "mechanism" and "diffprivlib" in t.doc for t in TARGETS)


@pytest.mark.parametrize("name", NAMES)
def test_target_releases_a_finite_array_of_the_documented_size(name):
    out = release(name, world=1, seed=3)
    assert out.ndim == 1
    assert out.size == EXPECTED_SIZE[name.split(":")[1].removesuffix("-nobounds")]
    assert np.all(np.isfinite(out))


MAIN_ENV = [t.name for t in registry.all_targets() if t.env == "main"]


@pytest.mark.parametrize("name", MAIN_ENV)
def test_same_seed_same_release_other_seed_other_release(name):
    """Every main-env target: fitting twice with one seed gives the identical release."""
    first = release(name, world=1, seed=11)
    np.testing.assert_array_equal(first, release(name, world=1, seed=11))
    assert not np.array_equal(first, release(name, world=1, seed=12))


@pytest.mark.parametrize("name", [n for n in NAMES if n.endswith("-nobounds")])
def test_nobounds_variant_warns_privacy_leak_and_bounded_does_not(name):
    caught: list = []
    release(name, world=1, seed=0, record=caught)
    assert any(issubclass(w.category, PrivacyLeakWarning) for w in caught)
    caught_bounded: list = []
    release(name.removesuffix("-nobounds"), world=1, seed=0, record=caught_bounded)
    assert not any(issubclass(w.category, PrivacyLeakWarning) for w in caught_bounded)


def test_nobounds_fallback_reads_the_domain_from_d_prime():
    """On D′ (all features 0) the bounds read from the data are (0, 0): the release collapses."""
    bounded = release("diffprivlib:StandardScaler", world=0, seed=4)
    fallback = release("diffprivlib:StandardScaler-nobounds", world=0, seed=4)
    assert np.all(fallback[:3] == 0.0)
    assert not np.array_equal(bounded, fallback)


def test_pca_fallback_raises_on_d_prime():
    """diffprivlib's PCA without data_norm takes the norm from the data; on D′ it is 0 and fit raises."""
    with pytest.raises(ValueError, match="strictly positive"):
        release("diffprivlib:PCA-nobounds", world=0, seed=0)
