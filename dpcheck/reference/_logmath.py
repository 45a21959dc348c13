"""Log-space helpers shared by the oracles (float64 throughout)."""
from __future__ import annotations

from collections.abc import Iterable

import numpy as np
from numpy.typing import ArrayLike, NDArray

Float = NDArray[np.float64]
_LN2 = np.log(2.0)


def log1mexp(x: ArrayLike) -> Float:
    """``log(1 - exp(x))`` for ``x <= 0``, accurate at both ends (Mächler 2012).

    Returns ``-inf`` at ``x == 0`` and NaN for ``x > 0`` (the quantity is undefined there).
    """
    x = np.asarray(x, dtype=np.float64)
    out = np.full(x.shape, np.nan)
    near = (x <= 0) & (x > -_LN2)
    far = x <= -_LN2
    with np.errstate(divide="ignore"):
        out[near] = np.log(-np.expm1(x[near]))
        out[far] = np.log1p(-np.exp(x[far]))
    return out


def as_orders(orders: int | Iterable[float] | ArrayLike, *, minimum: float) -> Float:
    """An order grid: an int ``L`` means ``1..L``; anything else is taken as the orders."""
    if isinstance(orders, (int, np.integer)):
        if orders < 1:
            raise ValueError(f"number of orders must be >= 1, got {orders}")
        grid = np.arange(1, int(orders) + 1, dtype=np.float64)
    else:
        grid = np.atleast_1d(np.asarray(list(orders) if not isinstance(orders, np.ndarray) else orders,
                                        dtype=np.float64))
    if grid.ndim != 1 or grid.size == 0:
        raise ValueError("orders must be a non-empty 1-d sequence")
    if not np.all(np.isfinite(grid)) or np.any(grid < minimum):
        raise ValueError(f"every order must be finite and >= {minimum}")
    return grid


def check_delta(delta: float) -> float:
    delta = float(delta)
    if not 0.0 < delta < 1.0:
        raise ValueError(f"delta must lie in (0, 1), got {delta}")
    return delta
