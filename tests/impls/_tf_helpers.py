"""Shared fixtures for the TensorFlow implementation tests (original, updated, turing and twins)."""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest

from dpcheck import impls
from dpcheck.probe import RecordingProbe

#: public bounds of the tiny dataset: a continuous column, an integer column, a 0/1 label (last)
LOWER = np.array([-250.0, 1000.0, 0.0])
UPPER = np.array([-200.0, 1040.0, 1.0])
INTEGER_COLUMNS = (1, 2)
#: small runs: every fit takes well under a second once TensorFlow is loaded
SMALL = dict(max_iterations=4, num_teachers=3, batch_size=8, lamda=1e-3, num_moments=20)


def tiny_data(rows: int = 30, seed: int = 3) -> np.ndarray:
    rng = np.random.default_rng(seed)
    cont = rng.uniform(-240.0, -210.0, rows)
    ints = rng.integers(1005, 1035, rows).astype(float)
    label = (rng.random(rows) < 0.3).astype(float)
    label[:2] = (0.0, 1.0)
    return np.column_stack([cont, ints, label])


def fit(name: str, data: np.ndarray | None = None, *, epsilon: float = 1.0, delta: float = 1e-5, seed: int = 0,
        **hyperparams: Any) -> tuple[Any, RecordingProbe]:
    """Fit ``name`` with a RecordingProbe and the public bounds; SMALL unless overridden."""
    probe = RecordingProbe()
    params = dict(SMALL, bounds=(LOWER, UPPER))
    params.update(hyperparams)
    adapter = impls.get(name)
    adapter.fit(tiny_data() if data is None else data, epsilon=epsilon, delta=delta, seed=seed, probe=probe,
                **params)
    return adapter, probe


def teacher_rows(probe: RecordingProbe) -> dict[int, set[int]]:
    """Every row index each teacher was trained on over the whole run."""
    seen: dict[int, set[int]] = {}
    for event in probe.of("teacher_data"):
        seen.setdefault(int(event.args[0]), set()).update(int(i) for i in np.ravel(event.args[1]))
    return seen


def noise_draws(probe: RecordingProbe) -> np.ndarray:
    return np.concatenate([np.ravel(e.args[0]) for e in probe.of("noise")])


def assert_trains_and_samples(name: str, adapter: Any, samples: np.ndarray) -> None:
    """``adapter`` was fitted by ``fit(name)`` on ``tiny_data()``; ``samples`` came from it."""
    assert samples.shape[1] == tiny_data().shape[1] and samples.shape[0] > 0
    assert np.isfinite(samples).all()
    assert adapter.sample(17).shape == (17, 3)
    assert adapter.name == name and adapter.framework == "tensorflow" and adapter.upstream
    assert adapter.source_files and all(str(f).endswith(".py") for f in adapter.source_files)


def assert_deterministic(name: str, first: np.ndarray, **fit_kwargs: Any) -> None:
    """``first`` is the first ``sample(len(first))`` after ``fit(name, seed=0, **fit_kwargs)``."""
    again = fit(name, seed=0, **fit_kwargs)[0].sample(len(first))
    other = fit(name, seed=1, **fit_kwargs)[0].sample(len(first))
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first, other)


def assert_rejects_bad_input(name: str) -> None:
    data = tiny_data()
    adapter = impls.get(name)
    kw = dict(epsilon=1.0, delta=1e-5, seed=0, bounds=(LOWER, UPPER), **SMALL)
    nan = data.copy()
    nan[4, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        adapter.fit(nan, **kw)
    with pytest.raises(ValueError, match="non-numeric"):
        adapter.fit(pd.DataFrame({"a": data[:, 0], "b": ["x"] * len(data), "c": data[:, 2]}), **kw)
    with pytest.raises(ValueError, match="empty"):
        adapter.fit(np.zeros((0, 3)), **kw)
    with pytest.raises(ValueError, match="teachers"):
        adapter.fit(data[:2], **kw)
    with pytest.raises(TypeError, match="not_a_knob"):
        adapter.fit(data, not_a_knob=1, **kw)


def assert_twin_requires_bounds(name: str) -> None:
    with pytest.raises(ValueError, match="public metadata"):
        impls.get(name).fit(tiny_data(), epsilon=1.0, delta=1e-5, seed=0, **SMALL)


def gaussian_sigma(epsilon: float, delta: float) -> float:
    return float(np.sqrt(2.0 * np.log(1.25 / delta)) / epsilon)
