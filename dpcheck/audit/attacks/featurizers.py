"""Black-box featurizers beyond ``querybased`` and ``groundhog`` (F_naive), and their scorers.

All of them see only the released synthetic rows, the public bounds and the target record (the
audit game's adversary knows D′ and the target). Coordinates are min-max scaled by the public
bounds; distances are Euclidean divided by √d, so two points inside the bounds are at most 1 apart.

* ``querybased-subsets`` (after Houssiau et al. 2022): for each non-empty subset S of columns, the
  number of synthetic rows that fall in the target's cell on every column of S (cells as in
  ``groundhog-histogram``). With d ≤ 16 columns every one of the 2^d − 1 subsets is counted; above
  that a fixed sample (seed ``SUBSET_SEED``, the same for every run and attack) of ``SUBSET_SAMPLE``
  subsets: every subset of one or two columns, the rest drawn with a size uniform in 3..d.
* ``groundhog-histogram`` (Stadler et al. 2022, F_hist): per column, the fraction of rows in each
  cell — one cell per integer when an integer/categorical column spans at most
  ``MAX_INTEGER_CELLS`` values, else ``HIST_BINS`` equal-width bins over the public bounds
  (values outside the bounds count in the edge cells, NaN nowhere).
* ``groundhog-correlation`` (F_corr): Pearson correlation of every pair of columns (0 where a
  column is constant).
* ``groundhog-ensemble``: F_naive, F_hist and F_corr concatenated.
* ``dcr`` (distance to closest record): [score, −DCR, fraction of rows within each of
  ``DCR_RADII`` of the target]; score = mean of those fractions − DCR. No classifier is trained:
  the score is thresholded directly (threshold still chosen on the validation part).
* ``mc-density`` (privGAN paper, Algorithm 6, after Hilprecht et al. 2019): the fraction of
  synthetic rows in the ε-neighbourhood of the target, with ε set by the paper's median
  heuristic ε = median_j min_i d(x_i, g_j) over the synthetic rows g_j and the records x_i under
  test — here the target and the rows of D′ (at most ``MC_REFERENCE_MAX``, a fixed sample). The
  paper's PCA step is for images and is not used on tabular columns. Thresholded directly.
* ``tvd`` (privGAN paper, Algorithms 4–5 and Theorem 3): per run, two scores of the target in
  [0, 1] play the role of the discriminators' scores — closeness 1 − min(DCR, 1) and the
  ``mc-density`` fraction. Each is binned into ``TVD_BINS`` equal bins of [0, 1]; on the training
  part P (with the target) and Q (without) are its binned distributions. As in Algorithm 5 (several
  discriminators) the score with the largest TVD(P, Q) on the training part is kept, and a run in
  its bin i scores p_i / (p_i + q_i) — the oracle adversary of Theorem 3, whose advantage is TVD(P, Q).
"""
from __future__ import annotations

import functools
import itertools
from typing import Any

import numpy as np

from dpcheck.audit.worlds.datasets import AuditDataset

MAX_ENUMERATED_COLUMNS = 16
SUBSET_SAMPLE = 4096
SUBSET_SEED = 20220601
MAX_INTEGER_CELLS = 32
HIST_BINS = 16
DCR_RADII = (0.01, 0.05, 0.1)
MC_REFERENCE_MAX = 1000
MC_REFERENCE_SEED = 0
TVD_BINS = 10
FAR = 1e6  # scaled coordinate given to NaN/inf values: far from every record

FEATURIZERS = ("querybased-subsets", "groundhog-histogram", "groundhog-correlation", "groundhog-ensemble",
               "dcr", "mc-density", "tvd")
#: attacks scored without training a classifier (the score is the first feature)
FIXED_SCORE = ("dcr", "mc-density")


# ---------------------------------------------------------------- discretisation and scaling

def column_cells(dataset: AuditDataset) -> list[tuple[bool, float, float, int]]:
    """Per column: (one cell per integer?, lower, upper, number of cells)."""
    schema = dataset.get_schema()
    out = []
    for column, lo, hi in zip(schema.columns, dataset.lower, dataset.upper):
        lo, hi = float(lo), float(hi)
        values = int(round(hi) - round(lo)) + 1
        if column.kind in ("integer", "categorical") and values <= MAX_INTEGER_CELLS:
            out.append((True, lo, hi, max(values, 1)))
        else:
            out.append((False, lo, hi, HIST_BINS if hi > lo else 1))
    return out


def cells_of(values: np.ndarray, dataset: AuditDataset) -> tuple[np.ndarray, np.ndarray]:
    """(cell index per entry, entry is a number) for an (n, d) array."""
    values = np.asarray(values, dtype=float)
    finite = ~np.isnan(values)
    safe = np.where(finite, values, 0.0)
    cells = np.zeros(values.shape, dtype=np.int64)
    for j, (integer, lo, hi, count) in enumerate(column_cells(dataset)):
        if integer:
            raw = np.rint(np.clip(safe[:, j], -FAR, FAR)) - round(lo)
        else:
            raw = np.floor((np.clip(safe[:, j], -FAR, FAR) - lo) / ((hi - lo) / count)) if hi > lo else 0 * safe[:, j]
        cells[:, j] = np.clip(raw, 0, count - 1).astype(np.int64)
    return cells, finite


def scaled(values: np.ndarray, dataset: AuditDataset) -> np.ndarray:
    """Min-max scaled by the public bounds; NaN and ±inf pushed far away."""
    span = np.where(dataset.upper > dataset.lower, dataset.upper - dataset.lower, 1.0)
    with np.errstate(invalid="ignore", over="ignore"):
        out = (np.asarray(values, dtype=float) - dataset.lower) / span
    return np.clip(np.nan_to_num(out, nan=FAR, posinf=FAR, neginf=-FAR), -FAR, FAR)


def distances(points: np.ndarray, records: np.ndarray) -> np.ndarray:
    """(len(points), len(records)) Euclidean distances of scaled rows, divided by √d."""
    from scipy.spatial.distance import cdist

    return cdist(points, records) / np.sqrt(max(points.shape[1], 1))


# ---------------------------------------------------------------- querybased over column subsets

def subset_masks(columns: int) -> np.ndarray:
    """Boolean (subsets, columns) matrix of the column subsets ``querybased-subsets`` counts on."""
    if columns <= MAX_ENUMERATED_COLUMNS:
        codes = np.arange(1, 2**columns)
        return (codes[:, None] >> np.arange(columns)[None, :]) & 1 == 1
    return _sampled_subsets(columns).copy()


@functools.lru_cache(maxsize=8)
def _sampled_subsets(columns: int) -> np.ndarray:
    chosen: list[tuple[int, ...]] = [(j,) for j in range(columns)]
    chosen += list(itertools.combinations(range(columns), 2))
    seen = set(chosen)
    rng = np.random.default_rng(SUBSET_SEED)
    while len(chosen) < SUBSET_SAMPLE:
        size = int(rng.integers(3, columns + 1))
        subset = tuple(sorted(int(j) for j in rng.choice(columns, size=size, replace=False)))
        if subset not in seen:
            seen.add(subset)
            chosen.append(subset)
    masks = np.zeros((len(chosen), columns), dtype=bool)
    for row, subset in enumerate(chosen):
        masks[row, list(subset)] = True
    return masks


def querybased_subset_features(synth: np.ndarray, dataset: AuditDataset) -> np.ndarray:
    d = synth.shape[1]
    cells, finite = cells_of(synth, dataset)
    target_cells, _ = cells_of(dataset.target[None, :], dataset)
    match = (cells == target_cells) & finite
    if d <= MAX_ENUMERATED_COLUMNS:
        codes = match.astype(np.int64) @ (1 << np.arange(d, dtype=np.int64))
        counts = np.bincount(codes, minlength=2**d).astype(np.int64).reshape((2,) * d)
        for axis in range(d):  # superset sums: rows matching on at least the subset's columns
            counts = np.flip(np.cumsum(np.flip(counts, axis), axis=axis), axis)
        return counts.reshape(-1)[1:].astype(np.float32)
    masks = subset_masks(d)
    misses = (~match).astype(np.float32) @ masks.T.astype(np.float32)
    return np.sum(misses == 0, axis=0).astype(np.float32)


# ---------------------------------------------------------------- GroundHog F_hist, F_corr, ensemble

def histogram_features(synth: np.ndarray, dataset: AuditDataset) -> np.ndarray:
    layout = column_cells(dataset)
    if synth.shape[0] == 0:
        return np.zeros(sum(count for *_, count in layout))
    cells, finite = cells_of(synth, dataset)
    parts = [np.bincount(cells[finite[:, j], j], minlength=count) / synth.shape[0]
             for j, (*_, count) in enumerate(layout)]
    return np.concatenate(parts).astype(float)


def correlation_features(synth: np.ndarray) -> np.ndarray:
    d = synth.shape[1]
    upper = np.triu_indices(d, k=1)
    if synth.shape[0] < 2 or d < 2:
        return np.zeros(len(upper[0]))
    x = np.clip(np.nan_to_num(synth.astype(float), nan=0.0, posinf=FAR, neginf=-FAR), -FAR, FAR)
    centred = x - x.mean(axis=0)
    norms = np.sqrt(np.sum(centred**2, axis=0))
    norms[x.max(axis=0) == x.min(axis=0)] = np.inf  # constant column: correlation 0
    with np.errstate(invalid="ignore", divide="ignore"):
        corr = (centred.T @ centred) / np.outer(norms, norms)
    return np.clip(np.nan_to_num(corr[upper], nan=0.0, posinf=0.0, neginf=0.0), -1.0, 1.0)


def groundhog_features(synth: np.ndarray) -> np.ndarray:
    """GroundHog's naive features (dpcheck.audit.attacks.attacks re-exports them): per column min, max, mean, median, std."""
    if synth.shape[0] == 0:
        return np.zeros(5 * synth.shape[1])
    x = synth.astype(float)
    feats = np.concatenate([x.min(axis=0), x.max(axis=0), x.mean(axis=0),
                            np.median(x, axis=0), x.std(axis=0)])
    return np.nan_to_num(feats, nan=0.0, posinf=1e12, neginf=-1e12)


def ensemble_features(synth: np.ndarray, dataset: AuditDataset) -> np.ndarray:
    return np.concatenate([groundhog_features(synth), histogram_features(synth, dataset),
                           correlation_features(synth)])


# ---------------------------------------------------------------- distance-based attacks

def dcr_features(synth: np.ndarray, dataset: AuditDataset) -> np.ndarray:
    if synth.shape[0] == 0:
        return np.array([-1.0, -1.0, *([0.0] * len(DCR_RADII))])
    target = scaled(dataset.target[None, :], dataset)
    dist = distances(scaled(synth, dataset), target)[:, 0]
    dcr = float(dist.min())
    fractions = [float(np.mean(dist <= r)) for r in DCR_RADII]
    return np.array([float(np.mean(fractions)) - dcr, -dcr, *fractions])


def mc_reference(dataset: AuditDataset) -> np.ndarray:
    """The records under test besides the target (scaled): D′, or a fixed sample of it."""
    rows = dataset.without_target
    if len(rows) > MC_REFERENCE_MAX:
        pick = np.random.default_rng(MC_REFERENCE_SEED).choice(len(rows), MC_REFERENCE_MAX, replace=False)
        rows = rows[np.sort(pick)]
    return scaled(rows, dataset)


def mc_density_features(synth: np.ndarray, dataset: AuditDataset) -> np.ndarray:
    """[fraction of synthetic rows within ε of the target, ε] with the median heuristic ε."""
    if synth.shape[0] == 0:
        return np.zeros(2)
    points = scaled(synth, dataset)
    to_target = distances(points, scaled(dataset.target[None, :], dataset))[:, 0]
    reference = mc_reference(dataset)
    nearest = to_target if len(reference) == 0 else np.minimum(to_target, distances(points, reference).min(axis=1))
    radius = float(np.median(nearest))
    return np.array([float(np.mean(to_target <= radius)), radius])


def tvd_features(synth: np.ndarray, dataset: AuditDataset) -> np.ndarray:
    """[closeness 1 − min(DCR, 1), mc-density fraction]."""
    if synth.shape[0] == 0:
        return np.zeros(2)
    dcr = -dcr_features(synth, dataset)[1]
    return np.array([1.0 - min(dcr, 1.0), mc_density_features(synth, dataset)[0]])


def featurize(attack: str, synth: np.ndarray, dataset: AuditDataset) -> np.ndarray:
    """``synth`` is (rows, columns) float."""
    if attack == "querybased-subsets":
        return querybased_subset_features(synth, dataset)
    if attack == "groundhog-histogram":
        return histogram_features(synth, dataset)
    if attack == "groundhog-correlation":
        if synth.shape[1] < 2:
            raise ValueError("groundhog-correlation needs at least two columns")
        return correlation_features(synth)
    if attack == "groundhog-ensemble":
        return ensemble_features(synth, dataset)
    if attack == "dcr":
        return dcr_features(synth, dataset)
    if attack == "mc-density":
        return mc_density_features(synth, dataset)
    if attack == "tvd":
        return tvd_features(synth, dataset)
    raise ValueError(f"unknown attack {attack!r}")


# ---------------------------------------------------------------- scorers used instead of the forest

class FixedScore:
    """No training: the first feature is the membership score."""

    classes_ = np.array([0, 1])

    def fit(self, x: np.ndarray, y: np.ndarray) -> "FixedScore":
        return self

    def predict_proba(self, x: np.ndarray) -> np.ndarray:
        score = np.asarray(x, dtype=float)[:, 0]
        return np.column_stack([-score, score])


class BinnedLikelihood:
    """privGAN Algorithms 4–5 on scores in [0, 1]: equal bins, P/Q from the training part, the
    column (discriminator) with the largest TVD kept (ties: the first)."""

    classes_ = np.array([0, 1])

    def __init__(self, bins: int = TVD_BINS) -> None:
        self.bins = bins
        self.column = 0
        self.p = np.zeros(bins)
        self.q = np.zeros(bins)
        self.tvd_ = 0.0

    def _bin(self, x: np.ndarray, column: int) -> np.ndarray:
        score = np.clip(np.asarray(x, dtype=float)[:, column], 0.0, 1.0)
        return np.minimum((score * self.bins).astype(int), self.bins - 1)

    def fit(self, x: np.ndarray, y: np.ndarray) -> "BinnedLikelihood":
        y = np.asarray(y).astype(bool)
        best = None
        for column in range(np.asarray(x).shape[1]):
            index = self._bin(x, column)
            p = np.bincount(index[y], minlength=self.bins) / max(int(y.sum()), 1)
            q = np.bincount(index[~y], minlength=self.bins) / max(int((~y).sum()), 1)
            tvd = float(0.5 * np.abs(p - q).sum())
            if best is None or tvd > best:
                best, self.column, self.p, self.q, self.tvd_ = tvd, column, p, q, tvd
        return self

    def predict_proba(self, x: np.ndarray) -> np.ndarray:
        index = self._bin(x, self.column)
        p, q = self.p[index], self.q[index]
        with np.errstate(invalid="ignore", divide="ignore"):
            member = np.where(p + q > 0, p / (p + q), 0.5)
        return np.column_stack([1.0 - member, member])


class LinearScore:
    """Diagonal linear discriminant: score = Σ_j x_j (m1_j − m0_j) / s_j², with the class means m
    and the pooled per-feature variance s² from the training part. The likelihood-ratio test when
    the two worlds' releases differ by a shift under independent noise of equal spread per feature
    (counts with Laplace/Gaussian noise, randomized-response bits), and needs few training runs.

    Sparsity: one record moves few coordinates of a release, and every coordinate given weight adds
    its estimation noise to the score (and, for Laplace noise, thins the tail the ε test lives in).
    A coordinate whose training mean difference is under ``min_z`` standard errors gets weight 0
    (all are kept when none passes). ``gdp_threshold`` is the score at the midpoint of the two
    worlds' training means — the classical LDA threshold, the α ≈ β point where a shift's μ bound
    peaks — so the GDP test needs no validation runs (run_attack uses it when a model has one).
    """

    classes_ = np.array([0, 1])
    #: 1.5 standard errors: chosen on simulated reference releases (Laplace, randomized response,
    #: Gaussian marginals; benchmarks/audit_tightness.py), not on any audited implementation
    MIN_Z = 1.5

    def __init__(self, min_z: float = MIN_Z) -> None:
        if not min_z >= 0:
            raise ValueError(f"min_z must be non-negative, got {min_z}")
        self.min_z = float(min_z)
        self.weights = np.zeros(0)
        self.gdp_threshold = 0.0

    def fit(self, x: np.ndarray, y: np.ndarray) -> "LinearScore":
        x = np.asarray(x, dtype=float)
        y = np.asarray(y).astype(bool)
        if y.all() or not y.any():
            raise ValueError("the linear score needs training runs from both worlds")
        n1, n0 = int(y.sum()), int((~y).sum())
        m1, m0 = x[y].mean(axis=0), x[~y].mean(axis=0)
        var = (x[y].var(axis=0) * n1 + x[~y].var(axis=0) * n0) / len(y)
        weights = np.where(var > 0, (m1 - m0) / np.where(var > 0, var, 1.0), 0.0)
        se = np.sqrt(var * (1.0 / n1 + 1.0 / n0))
        z = np.where(se > 0, np.abs(m1 - m0) / np.where(se > 0, se, 1.0), 0.0)
        keep = z >= self.min_z
        self.weights = np.where(keep, weights, 0.0) if keep.any() else weights
        self.gdp_threshold = float((m0 + m1) @ self.weights / 2.0)
        return self

    def predict_proba(self, x: np.ndarray) -> np.ndarray:
        score = np.asarray(x, dtype=float) @ self.weights
        return np.column_stack([-score, score])


def model_for(attack: str) -> Any:
    """The scorer replacing the random forest, or None for the forest."""
    if attack in FIXED_SCORE:
        return FixedScore()
    if attack == "release-linear":
        return LinearScore()
    if attack == "tvd":
        return BinnedLikelihood()
    if attack == "logan":  # white-box: the released critic's score (dpcheck.audit.attacks.whitebox)
        from dpcheck.audit.attacks.whitebox import model_for as whitebox_model

        return whitebox_model(attack)
    return None
