"""reprosyn's *finite* columns: a small integer domain described in the metadata is one-hot
encoded with the categories listed there (not read from the data) and decoded by argmax."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def categories(lower: np.ndarray, upper: np.ndarray, columns: Sequence[int]) -> dict[int, np.ndarray]:
    """The metadata's categories of every finite column: the integers from its min to its max."""
    out = {}
    for col in columns:
        lo, hi = int(round(float(lower[col]))), int(round(float(upper[col])))
        if hi < lo:
            raise ValueError(f"finite column {col}: metadata max {hi} is below min {lo}")
        out[int(col)] = np.arange(lo, hi + 1, dtype=np.float64)
    return out


def expand(scaled: np.ndarray, raw: np.ndarray, cats: dict[int, np.ndarray]) -> np.ndarray:
    """Replace every finite column of ``scaled`` by the one-hot block of its raw value."""
    blocks = []
    for col in range(raw.shape[1]):
        if col in cats:
            blocks.append((raw[:, [col]] == cats[col][None, :]).astype(np.float64))
        else:
            blocks.append(scaled[:, [col]])
    return np.concatenate(blocks, axis=1)


def collapse(encoded: np.ndarray, n_columns: int, cats: dict[int, np.ndarray]) -> np.ndarray:
    """Inverse of :func:`expand` on generator output: argmax within each finite block."""
    out = np.empty((encoded.shape[0], n_columns))
    pos = 0
    for col in range(n_columns):
        if col in cats:
            width = len(cats[col])
            out[:, col] = cats[col][np.argmax(encoded[:, pos:pos + width], axis=1)]
            pos += width
        else:
            out[:, col] = encoded[:, pos]
            pos += 1
    return out
