"""Small stand-ins for installed accountant and noise-calibration functions (tests of
``dpcheck test --accountant/--noise``): one correct version and known bugs of each."""
from __future__ import annotations

import math

import numpy as np


def _gaps(num_teachers: int, votes: object) -> np.ndarray:
    return np.abs(2.0 * np.asarray(votes, dtype=np.float64).ravel() - num_teachers)


def _terms(num_teachers: int, votes: object, lap_scale: float, l_list: object) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    gap = _gaps(num_teachers, votes)
    q = (2.0 + lap_scale * gap) / (4.0 * np.exp(lap_scale * gap))
    orders = np.asarray(l_list, dtype=np.float64).ravel()[:, None]
    data_independent = 2.0 * lap_scale**2 * orders * (orders + 1.0)
    t = (1 - q) * ((1 - q) / (1 - math.exp(2 * lap_scale) * q)) ** orders + q * np.exp(2 * lap_scale * orders)
    return data_independent, t, orders


def moments_ok(num_teachers: int, votes: object, lap_scale: float, l_list: object) -> np.ndarray:
    """Theorem 5 with the log (correct for λ < ln(2)/2)."""
    a, t, _ = _terms(num_teachers, votes, lap_scale, l_list)
    return np.minimum(a, np.log(t)).sum(axis=1)


def moments_missing_log(num_teachers: int, votes: object, lap_scale: float, l_list: object) -> np.ndarray:
    """The 2025 audit's bug: the minimum is taken with ``t``, not ``log t`` (over-charges)."""
    a, t, _ = _terms(num_teachers, votes, lap_scale, l_list)
    return np.minimum(a, t).sum(axis=1)


def moments_half_bound(num_teachers: int, votes: object, lap_scale: float, l_list: object) -> np.ndarray:
    """Data-independent term without its factor 2 (under-charges wherever that term is the minimum)."""
    a, t, _ = _terms(num_teachers, votes, lap_scale, l_list)
    return np.minimum(a / 2.0, np.log(t)).sum(axis=1)


def laplace_ok(epsilon: float, sensitivity: float) -> float:
    return sensitivity / epsilon


def laplace_inverted(epsilon: float, sensitivity: float) -> float:
    """Scale and inverse scale swapped."""
    return epsilon / sensitivity


def gaussian_classic_unguarded(epsilon: float, delta: float, sensitivity: float) -> float:
    """The classic σ used beyond ε < 1, where it is too small."""
    return sensitivity * math.sqrt(2.0 * math.log(1.25 / delta)) / epsilon


def gaussian_no_sensitivity(epsilon: float, delta: float, sensitivity: float) -> float:
    """Δ forgotten: right for Δ ≤ 1 only."""
    return math.sqrt(2.0 * math.log(1.25 / delta)) / min(epsilon, 1.0)


def gaussian_twice(epsilon: float, delta: float, sensitivity: float) -> float:
    """Twice the analytic-safe classic σ at min(ε, 1): loose, never too small."""
    return 2.0 * sensitivity * math.sqrt(2.0 * math.log(1.25 / delta)) / min(epsilon, 1.0)


class LaplaceMechanism:
    """A mechanism object exposing its scale only through ``variance(value)``, as diffprivlib does."""

    def __init__(self, *, epsilon: float, sensitivity: float) -> None:
        self.scale = sensitivity / epsilon

    def variance(self, value: float) -> float:
        return 2.0 * self.scale**2


def raises(epsilon: float, sensitivity: float) -> float:
    raise ValueError("refuses every input")
