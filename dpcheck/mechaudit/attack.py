"""Threshold attacks on a classifier's score (the idea of DP-Sniper, Bichsel et al. 2021).

A probabilistic classifier learns which input produced an output; its log-odds order the outputs
by (an estimate of) the likelihood ratio. The attack is the set S of outputs scoring at or above
a threshold (or below it), and the privacy loss it shows is ln((P[M(a) ∈ S] − δ) / P[M(b) ∈ S])
with either input in the numerator. The threshold and the classifier are chosen on validation
outputs by the Clopper–Pearson bound those counts would give, so small sets are not favoured
by luck; the bound that counts is computed on fresh outputs.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.stats import beta as beta_dist
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from threadpoolctl import threadpool_limits

from dpcheck.audit.attacks.signs import MedianSigns, increments, learn_median_signs
from dpcheck.mechaudit.encode import Layout, learn_layout

# logistic-signs: logistic regression that also sees each continuous column's sign against its median;
# logistic-diff-signs: the same over the columns and their consecutive differences (running sums' increments)
CLASSIFIERS = ("logistic", "logistic-signs", "logistic-diff-signs", "boosting", "boosting-bits", "table")
MAX_THRESHOLDS = 4000
MAX_TABLE_ROWS = 5000
# DP-Sniper's probability floor: a set the numerator input rarely hits is chosen among thousands
# of candidates by luck, and its validation bound does not carry over to fresh outputs
MIN_MASS = 0.01


class TooManyOutputs(ValueError):
    """The outputs take too many distinct values for a frequency table."""


def _row_keys(x: np.ndarray) -> np.ndarray:
    x = np.ascontiguousarray(x, dtype=np.float64)
    return x.view(np.dtype((np.void, x.dtype.itemsize * x.shape[1]))).ravel()


class FrequencyTable:
    """For outputs with few distinct values: the log-ratio of their training frequencies, which
    orders outputs as the likelihood ratio does (the Neyman–Pearson test) once counts are large."""

    def fit(self, x: np.ndarray, y: np.ndarray) -> "FrequencyTable":
        keys, inverse = np.unique(_row_keys(x), return_inverse=True)
        if keys.size > MAX_TABLE_ROWS:
            raise TooManyOutputs(f"{keys.size} distinct outputs (a table takes at most {MAX_TABLE_ROWS})")
        n_a, n_b = max(int(y.sum()), 1), max(int((1 - y).sum()), 1)
        count_a = np.bincount(inverse, weights=y, minlength=keys.size)
        count_b = np.bincount(inverse, weights=1 - y, minlength=keys.size)
        self.keys = keys
        self.log_ratio = np.log((count_a + 0.5) / n_a) - np.log((count_b + 0.5) / n_b)
        return self

    def predict_proba(self, x: np.ndarray) -> np.ndarray:
        keys = _row_keys(x)
        pos = np.clip(np.searchsorted(self.keys, keys), 0, self.keys.size - 1)
        known = self.keys[pos] == keys
        logit = np.where(known, self.log_ratio[pos], 0.0)
        p = 1 / (1 + np.exp(-logit))
        return np.column_stack([1 - p, p])


@dataclass
class Scorer:
    name: str
    layout: "Layout | _SignedLayout | _RawLayout"
    model: object

    def score(self, outputs: np.ndarray) -> np.ndarray:
        """Log-odds that the output came from input a (larger: more like a)."""
        with threadpool_limits(limits=1):  # blocks are large; OpenMP threads only oversubscribe the cores
            proba = self.model.predict_proba(self.layout.transform(outputs))[:, 1]  # type: ignore[attr-defined]
        proba = np.clip(proba, 1e-12, 1 - 1e-12)
        return np.log(proba) - np.log1p(-proba)


def fit_scorer(name: str, out_a: np.ndarray, out_b: np.ndarray, sentinels: tuple[float, ...], seed: int) -> Scorer:
    layout = learn_layout(np.vstack([out_a, out_b]), sentinels=sentinels, float_bits=name == "boosting-bits")
    x = np.vstack([layout.transform(out_a), layout.transform(out_b)])
    y = np.concatenate([np.ones(len(out_a)), np.zeros(len(out_b))])
    features: Layout | _SignedLayout = layout
    if name in ("logistic", "logistic-signs", "logistic-diff-signs"):
        model = make_pipeline(StandardScaler(), LogisticRegression(C=1.0, max_iter=300))
        if name != "logistic":
            diffs = name == "logistic-diff-signs"
            if diffs:
                x = np.hstack([x, increments(np.vstack([out_a, out_b]))])
            features = _SignedLayout(layout, learn_median_signs(x), diffs)
            x = np.hstack([x, features.signs.transform(x)])
    elif name == "table":
        model = FrequencyTable()
        raw = np.vstack([np.asarray(out_a, dtype=float).reshape(len(out_a), -1),
                         np.asarray(out_b, dtype=float).reshape(len(out_b), -1)])
        model.fit(raw, y)
        return Scorer(name, _RawLayout(raw.shape[1]), model)
    elif name in ("boosting", "boosting-bits"):
        model = HistGradientBoostingClassifier(max_iter=100, learning_rate=0.1, max_leaf_nodes=31,
                                               early_stopping=False, random_state=seed)
    else:
        raise ValueError(f"unknown classifier {name!r}; choose from {', '.join(CLASSIFIERS)}")
    with threadpool_limits(limits=1):
        model.fit(x, y)
    return Scorer(name, features, model)


@dataclass(frozen=True)
class _SignedLayout:
    """The layout's features followed by their median signs."""

    base: Layout
    signs: MedianSigns
    with_increments: bool = False

    def transform(self, outputs: np.ndarray) -> np.ndarray:
        x = self.base.transform(outputs)
        if self.with_increments:
            x = np.hstack([x, increments(outputs)])
        return np.hstack([x, self.signs.transform(x)])


@dataclass(frozen=True)
class _RawLayout:
    """The outputs as they are (the frequency table keys on exact values)."""

    columns: int

    def transform(self, outputs: np.ndarray) -> np.ndarray:
        out = np.asarray(outputs, dtype=float).reshape(len(outputs), -1)
        if out.shape[1] != self.columns:
            raise ValueError(f"the mechanism returned {out.shape[1]} values per output, {self.columns} earlier")
        return out


def cp_lower(k: np.ndarray, n: int, alpha: float) -> np.ndarray:
    k = np.asarray(k, dtype=float)
    out = np.zeros_like(k)
    pos = k > 0
    out[pos] = beta_dist.ppf(alpha, k[pos], n - k[pos] + 1)
    return out


def cp_upper(k: np.ndarray, n: int, alpha: float) -> np.ndarray:
    k = np.asarray(k, dtype=float)
    out = np.ones_like(k)
    below = k < n
    out[below] = beta_dist.ppf(1 - alpha, k[below] + 1, n - k[below])
    return out


def eps_bound(hits_num: np.ndarray, n_num: int, hits_den: np.ndarray, n_den: int, *, delta: float,
              confidence: float) -> np.ndarray:
    """Lower bound on ε from P[M(a) ∈ S] ≤ e^ε P[M(b) ∈ S] + δ, both probabilities bounded by
    exact one-sided Clopper–Pearson intervals at (1 − confidence)/2 each (jointly ≥ confidence)."""
    alpha = (1 - confidence) / 2
    low = cp_lower(hits_num, n_num, alpha) - delta
    high = cp_upper(hits_den, n_den, alpha)
    with np.errstate(divide="ignore", invalid="ignore"):
        eps = np.log(np.where(low > 0, low, np.nan) / high)
    return np.nan_to_num(np.maximum(eps, 0.0), nan=0.0)


@dataclass(frozen=True)
class Threshold:
    value: float
    above: bool  # S = {score ≥ value} when True, {score < value} otherwise
    a_in_numerator: bool  # the bound reads ln(P_a[S] / P_b[S]) when True

    def member(self, scores: np.ndarray) -> np.ndarray:
        return scores >= self.value if self.above else scores < self.value


def choose_threshold(val_a: np.ndarray, val_b: np.ndarray, *, delta: float, confidence: float,
                     min_mass: float = MIN_MASS) -> tuple[Threshold, float]:
    """The set S and its orientation with the best Clopper–Pearson bound on the validation scores,
    among sets the numerator input hits with probability ≥ min_mass."""
    pooled = np.concatenate([val_a, val_b])
    values = np.unique(pooled)
    if values.size > MAX_THRESHOLDS:
        values = np.unique(np.quantile(pooled, np.linspace(0, 1, MAX_THRESHOLDS)))
    sa, sb = np.sort(val_a), np.sort(val_b)
    ge_a = sa.size - np.searchsorted(sa, values, side="left")
    ge_b = sb.size - np.searchsorted(sb, values, side="left")
    best: tuple[float, Threshold] = (-1.0, Threshold(float(values[0]), True, True))
    for above in (True, False):
        hits_a = ge_a if above else sa.size - ge_a
        hits_b = ge_b if above else sb.size - ge_b
        for a_num in (True, False):
            num, den = (hits_a, hits_b) if a_num else (hits_b, hits_a)
            n_num, n_den = (sa.size, sb.size) if a_num else (sb.size, sa.size)
            bounds = eps_bound(num, n_num, den, n_den, delta=delta, confidence=confidence)
            bounds = np.where(num >= min_mass * n_num, bounds, 0.0)
            i = int(np.argmax(bounds))
            if bounds[i] > best[0]:
                best = (float(bounds[i]), Threshold(float(values[i]), above, a_num))
    return best[1], best[0]
