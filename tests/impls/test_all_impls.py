"""Every one of the twelve registered implementations: trains on a tiny dataset, samples the requested
rows with the input's column count, is deterministic per seed (and seed-sensitive), and rejects bad
input with a ValueError naming the problem before any training event reaches the probe."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dpcheck import impls
from dpcheck.probe import RecordingProbe

NAMES = impls.NAMES
assert len(NAMES) == 12


@pytest.mark.parametrize("name", NAMES)
def test_registry_entry(name):
    adapter = impls.get(name)
    assert adapter.name == name
    assert adapter.framework in {"torch", "tensorflow"}
    assert adapter.upstream
    assert all(p.exists() for p in impls.source_files(adapter))


@pytest.mark.parametrize("name", NAMES)
def test_trains_samples_and_is_deterministic_per_seed(name, h):
    data = h.tiny()
    frame = pd.DataFrame(data, columns=["x", "count", "label"])
    first, probe = h.fit(name, frame, seed=11, max_iterations=2)
    assert probe.of("training_end"), "training never reported its end"
    out_a = first.sample(23)
    assert out_a.shape == (23, data.shape[1])
    assert np.asarray(out_a).dtype.kind in "fiu" and np.isfinite(out_a).all()

    again, _ = h.fit(name, data, seed=11, max_iterations=2)
    np.testing.assert_array_equal(again.sample(23), out_a)

    other, _ = h.fit(name, data, seed=12, max_iterations=2)
    assert not np.array_equal(other.sample(23), out_a), "a different seed gave the same synthetic data"


def _bad_inputs(tiny: np.ndarray) -> list[tuple[str, object, str]]:
    with_nan = tiny.copy()
    with_nan[3, 0] = np.nan
    with_inf = tiny.copy()
    with_inf[4, 1] = np.inf
    text = pd.DataFrame(tiny, columns=["x", "count", "label"]).assign(city=["a"] * len(tiny))
    return [
        ("nan", with_nan, "NaN"),
        ("inf", with_inf, "infinite"),
        ("non_numeric", text, "non-numeric columns: city"),
        ("empty", np.empty((0, 3)), "empty"),
        ("fewer_rows_than_teachers", tiny[:2], "fewer than the 3 teachers"),
    ]


@pytest.mark.parametrize("case", ["nan", "inf", "non_numeric", "empty", "fewer_rows_than_teachers"])
@pytest.mark.parametrize("name", NAMES)
def test_bad_input_rejected_before_training(name, case, h):
    _, data, message = next(c for c in _bad_inputs(h.tiny()) if c[0] == case)
    probe = RecordingProbe()
    adapter = impls.get(name)
    with pytest.raises(ValueError, match=message):
        adapter.fit(data, epsilon=1.0, delta=1e-5, seed=0, probe=probe,
                    **dict(h.small, num_teachers=3, bounds=(h.lower, h.upper)))
    assert probe.events == [], f"{name} emitted {probe.events[0].kind} before rejecting the input"


@pytest.mark.parametrize("name", NAMES)
def test_unknown_hyperparameter_is_named(name, h):
    with pytest.raises((TypeError, ValueError), match="no_such_knob"):
        impls.get(name).fit(h.tiny(), epsilon=1.0, delta=1e-5, seed=0, no_such_knob=1, **h.small)
