"""Crafted canary records by name and by shape: what ``spec`` (checking a target), ``datasets``
(building D = D′ + canary) and ``crafting`` (choosing a canary by mini-audits) share.

A spec's target ``"craft:K"`` is candidate K; ``"craft"`` is not chosen yet. Candidates are corners
of the public domain, ordered as :mod:`dpcheck.audit.runners.crafting` describes. This module imports
nothing of the audit, so every layer above may use it.
"""
from __future__ import annotations

import itertools
import re
from typing import Any

import numpy as np

CRAFT = "craft"
MAX_COLUMNS_ALL = 12  # 2^12 corners: every one is a candidate up to here
SAMPLE_SEED = 20240514
_PATTERN = re.compile(r"^craft(?::(\d+))?$")


def is_craft(target: Any) -> bool:
    return isinstance(target, str) and _PATTERN.match(target) is not None


def check_target(target: Any) -> None:
    """ValueError unless ``target`` is a row index, None, ``"craft"`` or ``"craft:K"``."""
    if target is None or isinstance(target, (int, np.integer)) and not isinstance(target, bool):
        return
    if not is_craft(target):
        raise ValueError(f"target must be a row index, {CRAFT!r} or '{CRAFT}:K' (crafted candidate K), got {target!r}")


def candidate_index(target: str) -> int | None:
    """K of ``"craft:K"``; None for ``"craft"`` (not chosen yet)."""
    match = _PATTERN.match(target)
    if match is None:
        raise ValueError(f"not a crafted target: {target!r}")
    return None if match.group(1) is None else int(match.group(1))


def candidates(lower: np.ndarray, upper: np.ndarray, count: int) -> np.ndarray:
    """The first ``count`` crafted candidates (rows) for the public box [lower, upper]."""
    lower, upper = np.asarray(lower, dtype=float), np.asarray(upper, dtype=float)
    d = len(lower)
    if count < 1:
        raise ValueError(f"need at least one crafted candidate, got {count}")
    if d <= MAX_COLUMNS_ALL:
        bits = np.array(list(itertools.product((1, 0), repeat=d)), dtype=float)
    else:
        rng = np.random.default_rng(SAMPLE_SEED)
        drawn = rng.integers(0, 2, size=(4 * count, d)).astype(float)
        bits = np.unique(np.vstack([np.ones((1, d)), np.zeros((1, d)), drawn]), axis=0)
    degenerate = upper <= lower  # a single public value: both corners coincide
    bits[:, degenerate] = 1.0
    bits = np.unique(bits, axis=0)
    # distance from the lower corner in min-max scaled units = √(columns at their upper bound)
    order = sorted(range(len(bits)), key=lambda i: (-bits[i].sum(), tuple(-bits[i])))
    order.insert(1, order.pop())  # the lower corner (fewest upper bounds) second
    chosen = bits[order[:count]]
    return lower + chosen * (upper - lower)
