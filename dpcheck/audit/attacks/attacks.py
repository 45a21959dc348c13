"""Membership attacks: featurise a synthetic dataset, then a random forest guesses the world.

* ``querybased`` (Houssiau et al. 2022): the count of every cell of the (small, integer)
  domain in the synthetic data; values are rounded to the nearest integer first, rows outside
  the domain count nowhere.
* ``groundhog`` (Stadler et al. 2022) with F_naive: per column min, max, mean, median and
  standard deviation.
* ``release`` (mechanism targets: models, statistics): the released array itself, preceded by
  whether the run failed and how many values it released; fixed before any split.

More black-box attacks (column-subset queries, GroundHog's other featurizers, DCR, the privGAN
paper's Monte-Carlo and TVD attacks) live in :mod:`dpcheck.audit.attacks.featurizers`; ``auto``
(:mod:`dpcheck.audit.attacks.selection`) picks one of them on the validation part.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpcheck.audit.attacks.featurizers import groundhog_features
from dpcheck.audit.core import gdp, stats
from dpcheck.audit.core.spec import WORLD_IN, split_sizes
from dpcheck.audit.worlds.datasets import AuditDataset

MAX_QUERY_CELLS = 4096
FOREST_TREES = 100


def querybased_features(synth: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
    lo, hi = np.rint(lower).astype(int), np.rint(upper).astype(int)
    sizes = tuple(int(s) for s in hi - lo + 1)
    cells = int(np.prod(np.asarray(sizes, dtype=float)))
    if cells > MAX_QUERY_CELLS:
        raise ValueError(f"querybased needs a small integer domain; this one has {cells} cells "
                         f"(limit {MAX_QUERY_CELLS}); use the groundhog attack")
    if synth.size == 0:
        return np.zeros(cells)
    rounded = np.rint(np.nan_to_num(synth, nan=np.inf)).astype(float)
    inside = np.all((rounded >= lo) & (rounded <= hi), axis=1)
    codes = np.ravel_multi_index(tuple((rounded[inside].astype(int) - lo).T), sizes)
    return np.bincount(codes, minlength=cells).astype(float)


def release_features(release: np.ndarray, width: int) -> np.ndarray:
    values = np.nan_to_num(np.asarray(release, dtype=float).ravel(), nan=0.0, posinf=1e12, neginf=-1e12)
    values = np.clip(values, -1e12, 1e12)
    padded = np.zeros(width)
    padded[: values.size] = values[:width]
    return np.concatenate([[float(values.size == 0), float(values.size)], padded])


def featurize(attack: str, synth: np.ndarray, dataset: AuditDataset) -> np.ndarray:
    synth = np.asarray(synth, dtype=float)
    if attack in ("release", "release-linear", "release-query"):
        return release_features(synth, synth.size)
    if synth.ndim == 1:
        synth = synth.reshape(-1, len(dataset.columns))
    if attack == "querybased":
        return querybased_features(synth, dataset.lower, dataset.upper)
    if attack == "groundhog":
        return groundhog_features(synth)
    from dpcheck.audit.attacks import featurizers

    if attack in featurizers.FEATURIZERS:
        return featurizers.featurize(attack, synth, dataset)
    raise ValueError(f"unknown attack {attack!r}")


def querybased_domain(dataset: AuditDataset) -> list[tuple[int, ...]]:
    lo, hi = np.rint(dataset.lower).astype(int), np.rint(dataset.upper).astype(int)
    return list(itertools.product(*(range(a, b + 1) for a, b in zip(lo, hi))))


@dataclass(frozen=True)
class AttackOutcome:
    threshold: float
    counts: stats.Counts  # on the test part
    auc: float
    train: int
    validation: int
    test: int  # runs per world in each part
    validation_eps: float = float("nan")  # CP ε_emp at the chosen threshold on the validation part
    validation_auc: float = float("nan")
    selection: dict[str, Any] | None = None  # --attack auto: candidates, validation scores, choice
    #: errors on the test part at the threshold chosen on validation for the GDP (μ) bound
    gdp_counts: stats.Counts | None = None


def forest(seed: int):
    from sklearn.ensemble import RandomForestClassifier

    return RandomForestClassifier(n_estimators=FOREST_TREES, random_state=seed, n_jobs=1)


def run_attack(features: dict[int, np.ndarray], *, split: tuple[float, float, float], seed: int,
               delta: float, confidence: float, model: Any = None) -> AttackOutcome:
    """``features[world]`` holds one row per run, ordered by run index; both worlds equally many.

    The first part of each world's runs trains the classifier, the next picks the threshold,
    the last is the test part that every reported number comes from.
    """
    from sklearn.metrics import roc_auc_score

    runs = len(features[WORLD_IN])
    if any(len(f) != runs for f in features.values()):
        raise ValueError("both worlds need the same number of runs")
    n_train, n_val, n_test = split_sizes(runs, split)
    parts = {}
    for name, start, stop in (("train", 0, n_train), ("val", n_train, n_train + n_val),
                              ("test", n_train + n_val, runs)):
        x = np.vstack([features[w][start:stop] for w in sorted(features)])
        y = np.concatenate([np.full(stop - start, int(w == WORLD_IN)) for w in sorted(features)])
        parts[name] = (x, y)
    clf = (model if model is not None else forest(seed)).fit(*parts["train"])
    member = list(clf.classes_).index(1) if 1 in clf.classes_ else None

    def score(x: np.ndarray) -> np.ndarray:
        return clf.predict_proba(x)[:, member] if member is not None else np.zeros(len(x))

    val_scores = score(parts["val"][0])
    threshold = stats.best_threshold(val_scores, parts["val"][1], delta=delta, confidence=confidence)
    val = stats.counts_at(val_scores, parts["val"][1], threshold)
    val_eps = stats.eps_clopper_pearson(val.fp, val.negatives, val.fn, val.positives, delta=delta,
                                        confidence=confidence)
    val_auc = float(roc_auc_score(parts["val"][1], val_scores)) if len(set(parts["val"][1])) == 2 else float("nan")
    test_x, test_y = parts["test"]
    test_scores = score(test_x)
    auc = float(roc_auc_score(test_y, test_scores)) if len(set(test_y)) == 2 else float("nan")
    # a scorer may fix its GDP threshold from the training part (LinearScore: the α ≈ β point)
    gdp_threshold = getattr(clf, "gdp_threshold", None)
    if gdp_threshold is None:
        gdp_threshold = gdp.best_threshold(val_scores, parts["val"][1], confidence=confidence)
    return AttackOutcome(threshold, stats.counts_at(test_scores, test_y, threshold), auc,
                         n_train, n_val, n_test, val_eps, val_auc,
                         gdp_counts=stats.counts_at(test_scores, test_y, gdp_threshold))
