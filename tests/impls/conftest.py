"""Shared fixtures for the implementation tests (PyTorch ones and the cross-cutting test_all_impls).

Plain helpers are handed out as session fixtures (``fit_impl``, ``theorem5``, ``tiny``) so test
modules need no imports from this file.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest

from dpcheck import impls
from dpcheck.probe import RecordingProbe

#: tiny dataset: a continuous column, an integer column, a 0/1 label (last); its public bounds
TINY_LOWER = np.array([0.0, 100.0, 0.0])
TINY_UPPER = np.array([10.0, 140.0, 1.0])
#: small, fast runs honoured by every implementation
SMALL: dict[str, Any] = dict(max_iterations=3, num_teachers=2, batch_size=8, lamda=1e-3, num_moments=20)


def make_tiny(rows: int = 16, seed: int = 5) -> np.ndarray:
    rng = np.random.default_rng(seed)
    cont = rng.uniform(1.0, 9.0, rows)
    ints = rng.integers(105, 135, rows).astype(float)
    label = (rng.random(rows) < 0.4).astype(float)
    label[:2] = (0.0, 1.0)
    return np.column_stack([cont, ints, label])


def theorem5_increment(n0: Any, n1: Any, lamda: float, num_moments: int, *,
                       check_validity: bool = False) -> np.ndarray:
    """Sum over samples of Theorem 5's alpha(l) increment, l = 1..L, in plain float64.

    Where 1 - e^{2λ}q <= 0 the data-dependent term is undefined and only 2λ²l(l+1) applies.
    ``check_validity``: PATE 2017's reading (the corrected twins), which uses the data-dependent
    term only where q < (e^{2λ} - 1)/(e^{4λ} - 1)."""
    n0 = np.atleast_1d(np.asarray(n0, dtype=np.float64))
    n1 = np.atleast_1d(np.asarray(n1, dtype=np.float64))
    gap = np.abs(n0 - n1)[:, None]
    q = (2 + lamda * gap) / (4 * np.exp(lamda * gap))
    l = np.arange(1, num_moments + 1, dtype=np.float64)[None, :]
    bound = 2 * lamda**2 * l * (l + 1)
    denom = 1 - np.exp(2 * lamda) * q
    with np.errstate(all="ignore"):
        term = np.log((1 - q) * ((1 - q) / denom) ** l + q * np.exp(2 * lamda * l))
    term = np.where(denom > 0, term, np.inf)
    if check_validity:
        term = np.where(q < np.expm1(2 * lamda) / np.expm1(4 * lamda), term, np.inf)
    return np.minimum(bound, term).sum(axis=0)


def fit_with_probe(name: str, data: np.ndarray | None = None, *, epsilon: float = 1.0, delta: float | None = 1e-5,
                   seed: int = 0, bounds: Any = "tiny", small: bool = True,
                   **hyperparams: Any) -> tuple[Any, RecordingProbe]:
    """Fit ``name`` with a RecordingProbe; SMALL knobs (unless ``small=False``) and the tiny dataset's
    bounds unless overridden (``bounds=None`` passes no bounds)."""
    probe = RecordingProbe()
    params = dict(SMALL) if small else {}
    params.update(hyperparams)
    if isinstance(bounds, str):
        bounds = (TINY_LOWER, TINY_UPPER)
    if bounds is not None:
        params["bounds"] = bounds
    adapter = impls.get(name)
    adapter.fit(make_tiny() if data is None else data, epsilon=epsilon, delta=delta, seed=seed, probe=probe, **params)
    return adapter, probe


def teacher_rows(probe: RecordingProbe) -> dict[int, set[int]]:
    seen: dict[int, set[int]] = {}
    for event in probe.of("teacher_data"):
        seen.setdefault(int(event.args[0]), set()).update(int(i) for i in np.ravel(event.args[1]))
    return seen


def accountant_increments(probe: RecordingProbe) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """(n0, n1, observed increment) for every accountant update that follows a vote aggregation."""
    out = []
    previous: np.ndarray | None = None
    votes = None
    for event in probe.events:
        if event.kind == "votes":
            votes = (np.asarray(event.args[0], float), np.asarray(event.args[1], float))
        elif event.kind == "accountant":
            moments = np.asarray(event.args[0], float)
            if votes is not None:
                out.append((*votes, moments - (previous if previous is not None else 0.0)))
            previous, votes = moments, None
    return out


class Helpers:
    tiny = staticmethod(make_tiny)
    fit = staticmethod(fit_with_probe)
    theorem5 = staticmethod(theorem5_increment)
    teacher_rows = staticmethod(teacher_rows)
    increments = staticmethod(accountant_increments)
    lower, upper, small = TINY_LOWER, TINY_UPPER, SMALL


@pytest.fixture(scope="session")
def h() -> type[Helpers]:
    """The shared helpers: ``h.fit``, ``h.tiny``, ``h.theorem5``, ``h.teacher_rows``, ``h.increments``."""
    return Helpers


#: inputs of the accountant hook where Theorem 5's data-dependent term is defined and moderate:
#: (n0, n1, lamda) with n0 + n1 = k teachers
ACCOUNTANT_GRID: list[tuple[np.ndarray, np.ndarray, float]] = [
    (np.array([k - v for v in votes], float), np.array(votes, float), lam)
    for k, votes in ((2, [0, 1, 2]), (10, [0, 3, 5, 9, 10]), (50, [0, 10, 25, 49]))
    for lam in (1e-4, 1e-3, 0.05, 0.2, 0.3)
] + [
    (np.array([0.0, 20.0]), np.array([20.0, 0.0]), 1.0),
    (np.array([1.0, 40.0]), np.array([39.0, 0.0]), 0.6),
]


@pytest.fixture(scope="session")
def accountant_grid() -> list[tuple[np.ndarray, np.ndarray, float]]:
    return ACCOUNTANT_GRID


@pytest.fixture(scope="session")
def compare_hook() -> Callable[..., float]:
    """Largest relative error of ``adapter.accountant_update`` against Theorem 5 over the inputs."""

    def worst(adapter: Any, cases: list[tuple[np.ndarray, np.ndarray, float]], num_moments: int = 20, *,
              check_validity: bool = False) -> float:
        errors = []
        for n0, n1, lam in cases:
            got = np.asarray(adapter.accountant_update(n0, n1, lamda=lam, num_moments=num_moments), float)
            ref = theorem5_increment(n0, n1, lam, num_moments, check_validity=check_validity)
            assert got.shape == ref.shape
            with np.errstate(invalid="ignore"):
                err = np.abs(got - ref) / np.maximum(np.abs(ref), 1e-300)
            errors.append(float(np.nanmax(np.where(np.isfinite(got), err, np.inf))))
        return max(errors)

    return worst
