"""Mechanisms with an exact, known guarantee: the yardstick of the audit's tightness.

Each releases a statistic of the whole dataset over the *public* domain, so a record's influence
is known exactly and so is the tradeoff curve the best possible attack faces
(:mod:`dpcheck.audit.core.ceiling`). Neighbouring datasets differ by adding or removing one record.

* ``reference:laplace-histogram`` — the count of every cell of the (small) domain with
  Laplace(1/ε) noise: one record changes one count by one, so exactly ε-DP.
* ``reference:randomized-response`` — per cell, the bit "some record is in this cell" kept with
  probability e^ε/(1 + e^ε), flipped otherwise: one record changes at most one bit, so ε-DP.
* ``reference:gaussian-marginals`` — every 1-way marginal with N(0, σ²) noise per count: one
  record changes d counts by one (ℓ2-sensitivity √d), so μ-GDP with μ = √d/σ. σ is set from the
  claimed (ε, δ) through μ-GDP's exact δ(ε) (the analytic Gaussian mechanism), or from a
  ``mu`` knob.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from dpcheck.audit.core.gdp import mu_for
from dpcheck.targets.base import Schema, TargetError, TargetInfo

MAX_CELLS = 4096


def _domain_codes(data: pd.DataFrame, schema: Schema) -> tuple[np.ndarray, tuple[int, ...]]:
    """Each row's cell in the product of the columns' public value sets."""
    x = schema.encode(data)
    lower, upper = schema.bounds()
    if not (np.all(np.equal(np.mod(lower, 1), 0)) and np.all(np.equal(np.mod(upper, 1), 0))):
        raise TargetError("exact reference mechanisms need integer or categorical columns")
    sizes = tuple(int(s) for s in upper - lower + 1)
    if math.prod(sizes) > MAX_CELLS:
        raise TargetError(f"domain has {math.prod(sizes)} cells, more than {MAX_CELLS}")
    if np.isnan(x).any() or np.any(x < lower) or np.any(x > upper):
        raise TargetError("data outside the schema's public domain")
    codes = (np.rint(x) - lower).astype(int)
    return codes, sizes


def _counts(codes: np.ndarray, sizes: tuple[int, ...]) -> np.ndarray:
    flat = np.ravel_multi_index(tuple(codes.T), sizes) if len(codes) else np.zeros(0, dtype=int)
    return np.bincount(flat, minlength=math.prod(sizes)).astype(np.float64)


class LaplaceHistogram:
    def release(self, data: pd.DataFrame, *, schema: Schema, epsilon: float, delta: float, seed: int,
                **knobs: Any) -> np.ndarray:
        counts = _counts(*_domain_codes(data, schema))
        return counts + np.random.default_rng(seed).laplace(0.0, 1.0 / epsilon, counts.shape)


class RandomizedResponse:
    def release(self, data: pd.DataFrame, *, schema: Schema, epsilon: float, delta: float, seed: int,
                **knobs: Any) -> np.ndarray:
        occupied = _counts(*_domain_codes(data, schema)) > 0
        flip = np.random.default_rng(seed).random(occupied.shape) < 1.0 / (1.0 + math.exp(epsilon))
        return (occupied ^ flip).astype(np.float64)


class GaussianMarginals:
    def release(self, data: pd.DataFrame, *, schema: Schema, epsilon: float, delta: float, seed: int,
                mu: float | None = None, **knobs: Any) -> np.ndarray:
        codes, sizes = _domain_codes(data, schema)
        target_mu = float(mu) if mu is not None else mu_for(epsilon, delta)
        sigma = math.sqrt(len(sizes)) / target_mu
        marginals = np.concatenate([np.bincount(codes[:, j], minlength=s) for j, s in enumerate(sizes)]).astype(float)
        return marginals + np.random.default_rng(seed).normal(0.0, sigma, marginals.shape)


_DOC = "dpcheck built-in exact mechanism (see dpcheck/targets/exact_targets.py)"
TARGETS: list[TargetInfo] = [
    TargetInfo(name="reference:laplace-histogram", library="dpcheck", kind="mechanism", env="main",
               factory=f"{__name__}:LaplaceHistogram", doc=_DOC, dataset="worstcase-categorical",
               note="exactly ε-DP; tightness yardstick (tradeoff curve: ceiling 'laplace')", release_layout="histogram"),
    TargetInfo(name="reference:randomized-response", library="dpcheck", kind="mechanism", env="main",
               factory=f"{__name__}:RandomizedResponse", doc=_DOC, dataset="worstcase-categorical",
               note="exactly ε-DP; tightness yardstick (ceiling 'randomized-response')", release_layout="histogram"),
    TargetInfo(name="reference:gaussian-marginals", library="dpcheck", kind="mechanism", env="main",
               factory=f"{__name__}:GaussianMarginals", doc=_DOC, dataset="worstcase-categorical",
               note="μ-GDP (analytic Gaussian at the claimed ε, δ); tightness yardstick (ceiling 'gaussian')",
               release_layout="marginals"),
]
