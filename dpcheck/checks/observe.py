"""Observation runs: fit an implementation once with a RecordingProbe, shared by the checks."""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np

from dpcheck import impls
from dpcheck.probe import RecordingProbe

#: integer-valued columns sit far from [0, 1] so a missing inverse transform is visible
INT_LOW, INT_HIGH = 1000, 1040
CONT_LOW, CONT_HIGH = -250.0, -200.0


@dataclass(frozen=True)
class ProbeData:
    data: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    integer_columns: tuple[int, ...]
    label_column: int


def probe_dataset(rows: int = 48, seed: int = 7) -> ProbeData:
    """Public-bounded data: one continuous column, one integer column, a 0/1 label (last)."""
    rng = np.random.default_rng(seed)
    cont = rng.uniform(CONT_LOW, CONT_HIGH, rows)
    ints = rng.integers(INT_LOW, INT_HIGH + 1, rows).astype(float)
    label = (rng.random(rows) < 0.3).astype(float)
    data = np.column_stack([cont, ints, label])
    lower = np.array([CONT_LOW, INT_LOW, 0.0])
    upper = np.array([CONT_HIGH, INT_HIGH, 1.0])
    return ProbeData(data, lower, upper, (1, 2), 2)


@dataclass
class Observation:
    impl: str
    hyperparams: dict[str, Any]
    epsilon: float
    delta: float
    probe: RecordingProbe
    samples: np.ndarray | None
    data: ProbeData
    error: str | None = None
    seconds: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)


def _freeze(params: dict[str, Any]) -> tuple[tuple[str, Any], ...]:
    return tuple(sorted(params.items()))


@lru_cache(maxsize=64)
def _observe(impl: str, epsilon: float, delta: float, seed: int, frozen: tuple[tuple[str, Any], ...],
             n_samples: int) -> Observation:
    params = dict(frozen)
    pd_ = probe_dataset()
    probe = RecordingProbe()
    start = time.perf_counter()
    adapter = impls.get(impl)
    try:
        adapter.fit(pd_.data, epsilon=epsilon, delta=delta, seed=seed, probe=probe,
                    bounds=(pd_.lower, pd_.upper), **params)
        samples = np.asarray(adapter.sample(n_samples), dtype=float) if n_samples else None
        error = None
    except Exception as exc:  # noqa: BLE001 - recorded as evidence, the check decides
        samples, error = None, f"{type(exc).__name__}: {exc}"
    return Observation(impl, params, epsilon, delta, probe, samples, pd_, error, time.perf_counter() - start)


def observe(impl: str, *, epsilon: float = 1.0, delta: float = 1e-5, seed: int = 0,
            n_samples: int = 200, **hyperparams: Any) -> Observation:
    """Fit ``impl`` on the probe dataset (cached per arguments within the process)."""
    return _observe(impl, float(epsilon), float(delta), int(seed), _freeze(hyperparams), n_samples)


#: the standard observation run most checks share: 4 teachers, a few iterations
STANDARD = dict(max_iterations=3, num_teachers=4, lamda=1e-3, num_moments=20, batch_size=16)


def standard(impl: str) -> Observation:
    return observe(impl, **STANDARD)
