"""Input validation and seeding shared by every vendored adapter (not part of any upstream)."""
from __future__ import annotations

import random
from typing import Any

import numpy as np


def as_numeric_array(data: Any, *, min_rows: int = 1) -> tuple[np.ndarray, list[str] | None]:
    """Validate ``data`` (numpy array or pandas DataFrame of numbers) before any training.

    Returns the float64 matrix and the column names (None for arrays).
    Raises ValueError naming the problem.
    """
    columns: list[str] | None = None
    try:
        import pandas as pd
    except ImportError:  # pragma: no cover - pandas is a core dependency
        pd = None
    if pd is not None and isinstance(data, pd.DataFrame):
        bad = [str(c) for c in data.columns if not pd.api.types.is_numeric_dtype(data[c])]
        if bad:
            raise ValueError(f"non-numeric columns: {', '.join(bad)}; encode them as numbers first")
        columns = [str(c) for c in data.columns]
        array = data.to_numpy(dtype=np.float64)
    elif isinstance(data, np.ndarray):
        if data.dtype.kind not in "biuf":
            raise ValueError(f"data must be numeric, got dtype {data.dtype}")
        array = np.asarray(data, dtype=np.float64)
    else:
        raise ValueError(f"data must be a numpy array or pandas DataFrame, got {type(data).__name__}")
    if array.ndim != 2:
        raise ValueError(f"data must be 2-dimensional (rows x columns), got shape {array.shape}")
    if array.shape[0] == 0 or array.shape[1] == 0:
        raise ValueError(f"data is empty (shape {array.shape})")
    if not np.isfinite(array).all():
        rows = np.unique(np.nonzero(~np.isfinite(array))[0])
        raise ValueError(f"data contains NaN or infinite values (rows {rows[:5].tolist()}...)")
    if array.shape[0] < min_rows:
        raise ValueError(f"data has {array.shape[0]} rows, fewer than the {min_rows} teachers; "
                         "every teacher needs at least one row")
    return array, columns


def seed_everything(seed: int) -> np.random.Generator:
    """Seed Python, numpy's global state and (if loaded) torch; return a Generator."""
    random.seed(seed)
    np.random.seed(seed % 2**32)
    import sys

    if "torch" in sys.modules:
        import torch

        torch.manual_seed(seed)
    return np.random.default_rng(seed)
