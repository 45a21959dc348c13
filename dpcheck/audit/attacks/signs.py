"""Median signs: one bounded feature per continuous column, for vectors of independent noisy outputs.

When each output x_j is a value plus its own symmetric, heavy-tailed noise (Laplace), the log-likelihood
ratio between two inputs that shift the value is a sum of bounded per-coordinate terms, each almost the
sign of x_j against the midpoint of the two shifts. A linear model on the raw values sums them instead,
and a few large draws drown the sum. The midpoint is estimated as the median of the training outputs of
both inputs pooled, so the feature is learnt from training outputs only.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

MIN_DISTINCT = 3  # a column with two values is already an indicator; its sign would repeat it


@dataclass(frozen=True)
class MedianSigns:
    columns: tuple[int, ...]  # feature columns that get a sign
    medians: tuple[float, ...]

    def transform(self, features: np.ndarray) -> np.ndarray:
        """1.0 where a column is at or above its training median, else 0.0 (NaN is below)."""
        if not self.columns:
            return np.zeros((features.shape[0], 0))
        cols = features[:, list(self.columns)]
        return (cols >= np.asarray(self.medians)[None, :]).astype(np.float64)


def increments(outputs: np.ndarray) -> np.ndarray:
    """Differences of consecutive output columns (non-finite entries read as 0). A running sum's
    increments carry its independent noise terms, one per column, where medians and signs apply."""
    x = np.asarray(outputs, dtype=np.float64).reshape(len(outputs), -1)
    x = np.where(np.isfinite(x), x, 0.0)
    return np.diff(x, axis=1)


def learn_median_signs(features: np.ndarray) -> MedianSigns:
    """The columns of a training feature matrix with at least MIN_DISTINCT finite values, and their medians."""
    columns, medians = [], []
    for j in range(features.shape[1]):
        col = features[:, j]
        finite = col[np.isfinite(col)]
        if finite.size == 0 or np.unique(finite).size < MIN_DISTINCT:
            continue
        columns.append(j)
        medians.append(float(np.median(finite)))
    return MedianSigns(tuple(columns), tuple(medians))
