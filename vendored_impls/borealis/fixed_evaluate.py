"""Corrected twin of ``upstream_evaluate.py`` (borealis driver): features are scaled with public
bounds passed in as metadata, and the synthetic data is mapped back to the input's scale, integer
columns rounded."""
from __future__ import annotations

from typing import Any

import numpy as np


class PublicMinMaxScaler:
    def __init__(self, lower: np.ndarray, upper: np.ndarray) -> None:
        self.lower = np.asarray(lower, dtype=np.float64)
        self.upper = np.asarray(upper, dtype=np.float64)
        self.span = np.where(self.upper > self.lower, self.upper - self.lower, 1.0)

    def transform(self, x: np.ndarray) -> np.ndarray:
        return (np.clip(x, self.lower, self.upper) - self.lower) / self.span

    def inverse_transform(self, x: np.ndarray) -> np.ndarray:
        return np.clip(x, 0.0, 1.0) * self.span + self.lower


def preprocess(x_train: np.ndarray, bounds: tuple[np.ndarray, np.ndarray], probe: Any = None
               ) -> tuple[np.ndarray, PublicMinMaxScaler]:
    scaler = PublicMinMaxScaler(*bounds)
    if probe is not None:
        probe.bounds(scaler.lower, scaler.upper, source="parameter")
    return scaler.transform(x_train), scaler


def postprocess(x_synthetic: np.ndarray, scaler: PublicMinMaxScaler, integer_columns: np.ndarray,
                probe: Any = None) -> np.ndarray:
    out = scaler.inverse_transform(np.asarray(x_synthetic, dtype=np.float64))
    out[:, integer_columns] = np.rint(out[:, integer_columns])
    if probe is not None:
        probe.output_transform("inverse_minmax")
        if integer_columns.any():
            probe.output_transform("round_int", columns=np.flatnonzero(integer_columns).tolist())
    return out
