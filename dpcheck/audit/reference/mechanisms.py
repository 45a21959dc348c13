"""Built-in reference mechanisms with known privacy, as implementation adapters.

They calibrate the audit: the correct ones must come out with ε_emp ≤ ε, the broken ones must
be caught. All take the public domain as ``bounds=(lower, upper)`` and ignore other
hyperparameters (so PATE-GAN budget knobs can be passed to every implementation alike).

* ``ref-laplace`` (:class:`LaplaceCounts`): the histogram over the integer domain with
  Laplace(1/ε) noise per cell — one record changes one count by one, so this is exactly ε-DP
  under add/remove — then synthetic rows sampled from the clipped, normalised noisy histogram.
* ``ref-broken`` (:class:`MeanScaledCounts`): the same, but the noise is calibrated to the
  sensitivity of a *mean* (1/N) instead of a count: scale 1/(εN), i.e. ≈ Nε-DP.
* ``ref-marginals`` (:class:`LaplaceMarginals`): one histogram per column over the public
  bounds (integers when the range is small, 16 equal-width bins otherwise), Laplace(d/ε) per
  bin for d columns — ε-DP by composition; columns sampled independently.
* ``ref-leaky-bounds`` (:class:`DataBoundsMarginals`): the same with the bins spanning the
  data's own min/max (the paper's "metadata" violation), so an outlying target moves the range.
* ``ref-dpsgd`` and its broken twins ``ref-dpsgd-mean-noise``, ``ref-dpsgd-unclipped``
  (:mod:`dpcheck.audit.attacks.dpsgd`): full-batch DP-SGD logistic regression releasing its parameters.

Each also implements ``release_model()`` (:mod:`dpcheck.audit.attacks.whitebox`): its noisy measurements
(the noisy counts before clipping, plus the bin edges for the marginals) as parameters, and as
"critic" the released probability of a record's cell (for the marginals, the product over columns).
"""
from __future__ import annotations

import itertools
import time
from typing import Any

import numpy as np

from dpcheck.audit.core.released import ReleasedModel
from dpcheck.audit.reference import refdpsgd
from dpcheck.vendored_impls._common import as_numeric_array

MAX_CELLS = 4096
MAX_INTEGER_RANGE = 32
BINS = 16


def _public_bounds(bounds: Any, columns: int) -> tuple[np.ndarray, np.ndarray]:
    if bounds is None:
        raise ValueError("reference mechanisms need the public domain as bounds=(lower, upper)")
    lower, upper = (np.broadcast_to(np.asarray(b, dtype=float), (columns,)).copy() for b in bounds)
    if np.any(upper < lower):
        raise ValueError("bounds: every upper bound must be >= its lower bound")
    return lower, upper


def _normalised(noisy_counts: np.ndarray) -> np.ndarray:
    """Noisy counts clipped at 0 and normalised (uniform when nothing is left)."""
    noisy = np.clip(noisy_counts, 0.0, None)
    total = noisy.sum()
    return noisy / total if total > 0 else np.full(noisy.shape, 1.0 / noisy.size)


class LaplaceCounts:
    name = "ref-laplace"
    framework = "numpy"
    upstream = "dpcheck built-in reference (Laplace histogram, exactly epsilon-DP)"

    def __init__(self) -> None:
        self._cells: np.ndarray | None = None
        self._p: np.ndarray | None = None
        self._noisy: np.ndarray | None = None
        self._domain: tuple[np.ndarray, tuple[int, ...]] | None = None
        self._rng = np.random.default_rng(0)

    def noise_scale(self, epsilon: float, rows: int) -> float:
        return 1.0 / epsilon

    def fit(self, data: Any, *, epsilon: float, delta: float, seed: int, probe: Any = None,
            bounds: Any = None, delay: float = 0.0, **hyperparams: Any) -> "LaplaceCounts":
        x, _ = as_numeric_array(data)
        lower, upper = _public_bounds(bounds, x.shape[1])
        lo, hi = np.rint(lower).astype(int), np.rint(upper).astype(int)
        sizes = hi - lo + 1
        if int(np.prod(sizes.astype(float))) > MAX_CELLS:
            raise ValueError(f"{self.name}: domain has {int(np.prod(sizes.astype(float)))} cells, "
                             f"more than {MAX_CELLS}; use ref-marginals")
        self._rng = np.random.default_rng(seed)
        self._cells = np.array(list(itertools.product(*(range(a, b + 1) for a, b in zip(lo, hi)))), dtype=float)
        codes = np.ravel_multi_index(tuple((np.clip(np.rint(x), lo, hi).astype(int) - lo).T), tuple(sizes))
        counts = np.bincount(codes, minlength=int(np.prod(sizes))).astype(float)
        self._noisy = counts + self._rng.laplace(0.0, self.noise_scale(epsilon, len(x)), size=counts.shape)
        self._p = _normalised(self._noisy)
        self._domain = (lo, tuple(int(s) for s in sizes))
        if delay:
            time.sleep(float(delay))
        return self

    def sample(self, n: int) -> np.ndarray:
        if self._p is None or self._cells is None:
            raise RuntimeError("call fit() before sample()")
        return self._cells[self._rng.choice(len(self._cells), size=n, p=self._p)]

    def release_model(self) -> Any:
        """The noisy counts, and the released probability of a record's cell as the critic."""
        if self._p is None or self._noisy is None or self._domain is None:
            raise RuntimeError("call fit() before release_model()")
        p, (lo, sizes) = self._p.copy(), self._domain

        def cell_probability(x: np.ndarray) -> np.ndarray:
            cells = np.clip(np.rint(np.asarray(x, dtype=float)), lo, lo + np.asarray(sizes) - 1).astype(int) - lo
            return p[np.ravel_multi_index(tuple(cells.T), sizes)]

        return ReleasedModel(params=self._noisy.copy(), critic=cell_probability)


class MeanScaledCounts(LaplaceCounts):
    name = "ref-broken"
    upstream = "dpcheck built-in reference (deliberately broken: noise scale 1/(epsilon*N))"

    def noise_scale(self, epsilon: float, rows: int) -> float:
        return 1.0 / (epsilon * rows)


class LaplaceMarginals:
    name = "ref-marginals"
    framework = "numpy"
    upstream = "dpcheck built-in reference (independent Laplace marginals, epsilon-DP)"

    def __init__(self) -> None:
        self._edges: list[np.ndarray] = []
        self._integer: list[bool] = []
        self._p: list[np.ndarray] = []
        self._noisy: list[np.ndarray] = []
        self._rng = np.random.default_rng(0)

    def range_of(self, x: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return lower, upper

    def fit(self, data: Any, *, epsilon: float, delta: float, seed: int, probe: Any = None,
            bounds: Any = None, delay: float = 0.0, **hyperparams: Any) -> "LaplaceMarginals":
        x, _ = as_numeric_array(data)
        lower, upper = self.range_of(x, *_public_bounds(bounds, x.shape[1]))
        self._rng = np.random.default_rng(seed)
        scale = x.shape[1] / epsilon
        self._edges, self._integer, self._p, self._noisy = [], [], [], []
        for j in range(x.shape[1]):
            lo, hi = float(lower[j]), float(upper[j])
            integer = lo.is_integer() and hi.is_integer() and hi - lo <= MAX_INTEGER_RANGE
            edges = np.arange(lo, hi + 1) if integer else (np.linspace(lo, hi, BINS + 1) if hi > lo
                                                           else np.array([lo, lo]))
            codes = _column_codes(x[:, j], edges, integer)
            counts = np.bincount(codes, minlength=len(edges) if integer else len(edges) - 1).astype(float)
            self._edges.append(edges)
            self._integer.append(integer)
            self._noisy.append(counts + self._rng.laplace(0.0, scale, size=counts.shape))
            self._p.append(_normalised(self._noisy[-1]))
        if delay:
            time.sleep(float(delay))
        return self

    def sample(self, n: int) -> np.ndarray:
        if not self._p:
            raise RuntimeError("call fit() before sample()")
        out = np.empty((n, len(self._p)))
        for j, (edges, integer, p) in enumerate(zip(self._edges, self._integer, self._p)):
            cell = self._rng.choice(len(p), size=n, p=p)
            out[:, j] = edges[cell] if integer else self._rng.uniform(edges[cell], edges[cell + 1])
        return out

    def release_model(self) -> Any:
        """Per column the bin edges and noisy counts; the product of a record's cell probabilities
        over the columns as the critic."""
        if not self._p:
            raise RuntimeError("call fit() before release_model()")
        columns = [(e.copy(), i, p.copy()) for e, i, p in zip(self._edges, self._integer, self._p)]

        def probability(x: np.ndarray) -> np.ndarray:
            x = np.asarray(x, dtype=float)
            return np.prod([p[_column_codes(x[:, j], e, i)] for j, (e, i, p) in enumerate(columns)], axis=0)

        params = {f"{name}{j}": values for j in range(len(columns))
                  for name, values in (("edges", self._edges[j]), ("noisy", self._noisy[j]))}
        return ReleasedModel(params=params, critic=probability)


def _column_codes(values: np.ndarray, edges: np.ndarray, integer: bool) -> np.ndarray:
    """The cell of each value in one column: its integer offset, or its bin (edge bins catch the rest)."""
    if integer:
        return np.clip(np.rint(values), edges[0], edges[-1]).astype(int) - int(edges[0])
    return np.clip(np.searchsorted(edges, values, side="right") - 1, 0, len(edges) - 2)


class DataBoundsMarginals(LaplaceMarginals):
    name = "ref-leaky-bounds"
    upstream = "dpcheck built-in reference (deliberately broken: bins span the data's own min/max)"

    def range_of(self, x: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return x.min(axis=0), x.max(axis=0)


REFERENCE = {cls.name: cls for cls in (LaplaceCounts, MeanScaledCounts, LaplaceMarginals, DataBoundsMarginals)}
REFERENCE.update({cls.name: cls for cls in refdpsgd.ADAPTERS})  # releases parameters, not rows (dpcheck.audit.attacks.dpsgd)
#: reference mechanisms that are correct (must pass) vs deliberately broken (must be caught)
CORRECT = ("ref-laplace", "ref-marginals")
BROKEN = ("ref-broken", "ref-leaky-bounds")


def get_impl(name: str) -> Any:
    """An adapter for a reference name, or whatever :func:`dpcheck.impls.get` returns."""
    if name in REFERENCE:
        return REFERENCE[name]()
    from dpcheck import impls

    return impls.get(name)


def known_names() -> tuple[str, ...]:
    from dpcheck import impls

    return tuple(REFERENCE) + tuple(impls.NAMES)
