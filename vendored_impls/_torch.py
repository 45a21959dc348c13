"""Plumbing shared by the PyTorch adapters (synthcity, borealis, smartnoise); not part of any upstream.

Hyperparameter checking, public bounds, integer-column schema and single-threaded seeding.
torch is imported lazily so that importing an adapter module stays cheap.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ._common import seed_everything


def merge_hyperparams(name: str, defaults: Mapping[str, Any], given: Mapping[str, Any]) -> dict[str, Any]:
    """``defaults`` updated with ``given``; unknown names raise TypeError naming them."""
    unknown = sorted(set(given) - set(defaults))
    if unknown:
        raise TypeError(f"{name}: unknown hyperparameter(s) {', '.join(unknown)}; "
                        f"accepted: {', '.join(sorted(defaults))}")
    merged = dict(defaults)
    merged.update(given)
    for knob in ("max_iterations", "batch_size", "num_moments", "student_batches"):
        if knob in merged and merged[knob] is not None and int(merged[knob]) < 1:
            raise ValueError(f"{name}: {knob} must be >= 1, got {merged[knob]}")
    if merged.get("num_teachers") is not None and int(merged["num_teachers"]) < 1:
        raise ValueError(f"{name}: num_teachers must be >= 1, got {merged['num_teachers']}")
    if merged.get("lamda") is not None and not float(merged["lamda"]) > 0:
        raise ValueError(f"{name}: lamda must be > 0, got {merged['lamda']}")
    return merged


def public_bounds(bounds: Any, d: int) -> tuple[np.ndarray, np.ndarray] | None:
    """``bounds=(lower, upper)`` (scalars or length-d sequences) as two float arrays, or None."""
    if bounds is None:
        return None
    try:
        lower, upper = bounds
    except (TypeError, ValueError):
        raise ValueError("bounds must be a pair (lower, upper)") from None
    lo = np.broadcast_to(np.asarray(lower, dtype=np.float64), (d,)).copy()
    hi = np.broadcast_to(np.asarray(upper, dtype=np.float64), (d,)).copy()
    if not (np.isfinite(lo).all() and np.isfinite(hi).all()) or np.any(hi < lo):
        raise ValueError(f"bounds must be finite with lower <= upper, got {lo.tolist()} / {hi.tolist()}")
    return lo, hi


def require_bounds(name: str, bounds: Any, d: int) -> tuple[np.ndarray, np.ndarray]:
    parsed = public_bounds(bounds, d)
    if parsed is None:
        raise ValueError(f"{name}: bounds=(lower, upper) is required: data bounds are public metadata that "
                         "must be passed in, reading them from the private data is not differentially private")
    return parsed


def integer_columns(data: Any, array: np.ndarray, given: Any = None) -> np.ndarray:
    """Boolean mask of integer columns: ``given`` indices, else the input's schema (integer dtypes, or
    float columns holding whole numbers only, the way a CSV of counts arrives)."""
    d = array.shape[1]
    mask = np.zeros(d, dtype=bool)
    if given is not None:
        mask[np.asarray(list(given), dtype=int)] = True
        return mask
    dtypes = getattr(data, "dtypes", None)
    if dtypes is not None:
        mask |= np.array([np.dtype(t).kind in "biu" for t in dtypes], dtype=bool)
    elif isinstance(data, np.ndarray) and data.dtype.kind in "biu":
        mask[:] = True
    mask |= np.all(array == np.round(array), axis=0)
    return mask


def seed_torch(seed: int) -> np.random.Generator:
    """Seed python, numpy and torch, and pin torch to one thread (determinism, shared cores)."""
    import torch

    torch.set_num_threads(1)
    rng = seed_everything(seed)
    torch.manual_seed(seed)
    return rng


def single_threaded() -> Any:
    """Context limiting BLAS/OpenMP pools (numpy, scipy, sklearn) to one thread: tiny problems only
    lose time to thread wake-ups, and the machine's cores are shared by parallel shadow runs."""
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=1)

