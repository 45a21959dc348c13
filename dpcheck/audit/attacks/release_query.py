"""``release-query``: Querybased on a released table — the noisy counts in the target's own cells.

A mechanism that releases a count table over the *public* domain (a full histogram, or every
1-way marginal) declares its layout (``TargetInfo.release_layout``). The layout and the target
record are public, so the cells the target moves are known before any run: the target's cell of
the histogram, or its value's cell in every marginal. The score of a release is the sum of those
counts — the likelihood-ratio statistic when every count carries noise of the same spread — so,
unlike ``release-linear``, nothing is learned but the thresholds: the GDP threshold is the midpoint
of the two worlds' mean scores on the training part (the α ≈ β point), the (ε, δ) threshold is
chosen on the validation part as for every attack.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from dpcheck.audit.worlds.datasets import AuditDataset

ATTACK = "release-query"
LAYOUTS = ("histogram", "marginals")
PREFIX = 2  # release features: [failed?, length] before the released values


def layout_of(impl: str) -> str | None:
    from dpcheck.targets import registry

    return registry.get(impl).release_layout if registry.is_target(impl) else None


def check_supported(impl: str, attack: str) -> None:
    """Refuse, before any run, ``release-query`` on a target that declares no table layout."""
    if attack != ATTACK:
        return
    if layout_of(impl) is None:
        raise ValueError(f"--attack {ATTACK} sums the released counts in the target's cells, so it needs a target "
                         f"that releases a count table over the public domain and declares its layout "
                         f"(release_layout: {' or '.join(LAYOUTS)}); {impl} declares none (use --attack release-linear)")


def target_cells(layout: str, dataset: AuditDataset) -> np.ndarray:
    """Indices, into the released array, of the counts the target record adds to."""
    if layout not in LAYOUTS:
        raise ValueError(f"unknown release layout {layout!r}; known: {', '.join(LAYOUTS)}")
    lower = np.rint(dataset.lower).astype(int)
    sizes = np.rint(dataset.upper).astype(int) - lower + 1
    codes = np.rint(dataset.with_target[dataset.target_index]).astype(int) - lower
    if layout == "histogram":
        return np.array([np.ravel_multi_index(tuple(codes), tuple(sizes))])
    offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    return offsets + codes


def table_size(layout: str, dataset: AuditDataset) -> int:
    sizes = np.rint(dataset.upper).astype(int) - np.rint(dataset.lower).astype(int) + 1
    return int(np.prod(sizes)) if layout == "histogram" else int(sizes.sum())


class QueryScore:
    """score = Σ of the released values at ``cells``; ``gdp_threshold`` from the training part."""

    classes_ = np.array([0, 1])

    def __init__(self, cells: np.ndarray, width: int) -> None:
        self.columns = PREFIX + np.asarray(cells, dtype=int)
        self.width = int(width)
        self.gdp_threshold = 0.0

    def _score(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        lengths = x[:, 1]
        if np.any(lengths != self.width):
            bad = sorted({int(v) for v in lengths[lengths != self.width]})
            raise ValueError(f"{ATTACK}: the layout gives {self.width} released values, a run released {bad}")
        return x[:, self.columns].sum(axis=1)

    def fit(self, x: np.ndarray, y: np.ndarray) -> "QueryScore":
        y = np.asarray(y).astype(bool)
        if y.all() or not y.any():
            raise ValueError(f"{ATTACK} needs training runs from both worlds (for its GDP threshold)")
        s = self._score(x)
        self.gdp_threshold = float((s[y].mean() + s[~y].mean()) / 2.0)
        return self

    def predict_proba(self, x: np.ndarray) -> np.ndarray:
        s = self._score(x)
        return np.column_stack([-s, s])


def model_for(spec: Any, dataset: AuditDataset) -> QueryScore | None:
    """The scorer of ``spec`` when it runs ``release-query``, else None."""
    if spec.attack != ATTACK:
        return None
    layout = layout_of(spec.impl)
    if layout is None:
        check_supported(spec.impl, spec.attack)  # raises, naming what is missing
    return QueryScore(target_cells(layout, dataset), table_size(layout, dataset))
