"""Attack features for mechanism outputs of any shape: numbers, indices, sentinels, NaN/inf.

The layout is learnt from training outputs only: a column with few distinct values is
categorical (one-hot), other columns are numeric with one flag per sentinel (declared, or a value
that recurs exactly), NaN, +inf and −inf, the flagged entries zeroed. ``float_bits`` adds, per
numeric column, how many low mantissa bits are zero: a gap in the set of floating-point outputs
one input can produce (Mironov 2012) shows there.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

MAX_CATEGORIES = 32
RECURRING = 0.01  # a value taking ≥ 1 % of a continuous column's outputs is treated as a sentinel


@dataclass(frozen=True)
class ColumnCode:
    categories: tuple[float, ...] | None  # one-hot when set
    sentinels: tuple[float, ...]


@dataclass(frozen=True)
class Layout:
    columns: tuple[ColumnCode, ...]
    float_bits: bool

    @property
    def width(self) -> int:
        return self.transform(np.zeros((1, len(self.columns)))).shape[1]

    def transform(self, outputs: np.ndarray) -> np.ndarray:
        outputs = as_matrix(outputs)
        if outputs.shape[1] != len(self.columns):
            raise ValueError(f"the mechanism returned {outputs.shape[1]} values per output, "
                             f"{len(self.columns)} earlier")
        parts: list[np.ndarray] = []
        for j, code in enumerate(self.columns):
            col = outputs[:, j]
            if code.categories is not None:
                parts.append(np.stack([col == c for c in code.categories], axis=1).astype(np.float32))
                continue
            flags = [col == s for s in code.sentinels]
            flags += [np.isnan(col), col == np.inf, col == -np.inf]
            special = np.any(np.stack(flags, axis=1), axis=1)
            value = np.where(special, 0.0, col)
            parts.append(value[:, None])
            parts.append(np.stack(flags, axis=1).astype(np.float32))
            if self.float_bits:
                parts.append(trailing_zero_bits(value)[:, None])
        return np.hstack(parts).astype(np.float64)


def as_matrix(outputs: np.ndarray) -> np.ndarray:
    arr = np.asarray(outputs, dtype=np.float64)
    if arr.ndim == 0:
        return arr.reshape(1, 1)
    if arr.ndim == 1:
        return arr[:, None]
    return arr.reshape(arr.shape[0], -1)


def trailing_zero_bits(values: np.ndarray) -> np.ndarray:
    """Zero bits at the bottom of each double's 52-bit mantissa (52 for an exact power of two)."""
    mantissa = np.ascontiguousarray(values, dtype=np.float64).view(np.uint64) & np.uint64((1 << 52) - 1)
    out = np.full(values.shape, 52.0)
    rest = mantissa.copy()
    nonzero = rest != 0
    count = np.zeros(values.shape)
    for _ in range(52):
        low = nonzero & ((rest & np.uint64(1)) == 0)
        if not low.any():
            break
        count += low
        rest = np.where(low, rest >> np.uint64(1), rest)
    out[nonzero] = count[nonzero]
    return out


def learn_layout(outputs: np.ndarray, *, sentinels: tuple[float, ...] = (), float_bits: bool = False) -> Layout:
    outputs = as_matrix(outputs)
    codes = []
    for j in range(outputs.shape[1]):
        col = outputs[:, j]
        finite = col[np.isfinite(col)]
        values, counts = np.unique(finite, return_counts=True)
        if values.size <= MAX_CATEGORIES and not np.isnan(col).any() and np.isfinite(col).all():
            codes.append(ColumnCode(tuple(float(v) for v in values), ()))
            continue
        recurring = values[counts >= RECURRING * max(col.size, 1)]
        found = tuple(sorted(set(float(s) for s in sentinels) | set(float(v) for v in recurring)))
        codes.append(ColumnCode(None, found))
    return Layout(tuple(codes), float_bits)
