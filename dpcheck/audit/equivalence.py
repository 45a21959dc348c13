"""Does the fast path compute what the plain path computes? A two-sample test on attack features.

For one implementation, R shadow runs per world on each path (independent seeds: the plain runs
use spec seed ``seed``, the fast runs ``seed + 1``), featurised with both attacks of the audit
(Querybased cell counts and GroundHog column statistics). Two families of tests, all at family-
wise level α with Holm's step-down correction over every test of the implementation:

* a two-sample Kolmogorov–Smirnov test per feature and world (``scipy.stats.ks_2samp``; on
  discrete features it is conservative);
* a classifier two-sample test per world: a random forest tells fast from plain runs in 5-fold
  cross-validation; under H0 (same distribution) its accuracy on the 2R held-out predictions is
  Binomial(2R, 1/2) (one-sided binomial test).

H0 is kept when no test rejects; the attack's AUC and ε_emp on each path are reported alongside.
"""
from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from dpcheck.audit import attacks, datasets
from dpcheck.audit.executor import Task, run_group, run_one
from dpcheck.audit.settings import paper_hyperparams
from dpcheck.audit.spec import WORLDS, AuditSpec

FEATURE_SETS = ("querybased", "groundhog")


@dataclass
class PathRuns:
    path: str
    seed: int
    features: dict[int, np.ndarray]  # world -> runs x features (both feature sets side by side)
    seconds: float


@dataclass
class Equivalence:
    impl: str
    dataset: str
    runs_per_world: int
    alpha: float
    tests: int
    rejected: list[str]
    min_p_ks: float
    c2st_accuracy: dict[str, float]
    c2st_p: dict[str, float]
    equivalent: bool
    plain_seconds: float
    fast_seconds: float
    attack: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def spec_for(impl: str, runs: int, seed: int, dataset: str = "worstcase",
             hyperparams: dict[str, Any] | None = None) -> AuditSpec:
    hp = paper_hyperparams(impl, dataset) if hyperparams is None else hyperparams
    return AuditSpec(impl, dataset=dataset, runs=max(runs, 5), seed=seed, hyperparams=hp)


def path_runs(spec: AuditSpec, runs: int, path: str, *, batch: int = 32) -> PathRuns:
    """``runs`` shadow runs per world of ``spec`` on ``path`` ("fast" or "plain"), featurised."""
    generation = spec.generation()
    data = datasets.load(spec.dataset, spec.target, spec.data)
    feats: dict[int, list[np.ndarray]] = {w: [] for w in WORLDS}
    started = time.perf_counter()
    for world in WORLDS:
        tasks = [Task(generation, world, i) for i in range(runs)]
        if path == "fast":
            outcomes = [o for k in range(0, runs, batch) for o in run_group(tasks[k:k + batch], "fast")]
        else:
            outcomes = [run_one(t) for t in tasks]
        for out in outcomes:
            if out.error is not None or out.synth is None:
                raise RuntimeError(f"{spec.impl} {path} run (world {out.world}, index {out.index}) failed: {out.error}")
            if path == "fast" and not out.worker.endswith("+fast"):
                raise RuntimeError(f"{spec.impl}: the fast path did not run (worker {out.worker})")
            synth = out.synth[: out.rows_requested]
            feats[world].append(np.concatenate([attacks.featurize(a, synth, data) for a in FEATURE_SETS]))
    return PathRuns(path, spec.seed, {w: np.vstack(f) for w, f in feats.items()}, time.perf_counter() - started)


def holm(pvalues: list[float], alpha: float) -> list[bool]:
    """Holm's step-down procedure: which hypotheses are rejected at family-wise level ``alpha``."""
    order = np.argsort(pvalues)
    rejected = [False] * len(pvalues)
    m = len(pvalues)
    for rank, i in enumerate(order):
        if pvalues[i] > alpha / (m - rank):
            break
        rejected[i] = True
    return rejected


def c2st(a: np.ndarray, b: np.ndarray, seed: int) -> tuple[float, float]:
    """(cross-validated accuracy, one-sided binomial p-value) of a forest telling ``a`` from ``b``."""
    from scipy.stats import binomtest
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.model_selection import StratifiedKFold, cross_val_predict

    x = np.vstack([a, b])
    y = np.r_[np.zeros(len(a)), np.ones(len(b))]
    folds = StratifiedKFold(n_splits=5, shuffle=True, random_state=seed)
    clf = RandomForestClassifier(n_estimators=100, random_state=seed, n_jobs=1, min_samples_leaf=3)
    predicted = cross_val_predict(clf, x, y, cv=folds)
    correct = int(np.sum(predicted == y))
    return correct / len(y), float(binomtest(correct, len(y), 0.5, alternative="greater").pvalue)


def compare(impl: str, plain: PathRuns, fast: PathRuns, *, alpha: float = 0.05, seed: int = 0,
            dataset: str = "worstcase") -> Equivalence:
    """Holm-corrected KS per feature and world plus a classifier two-sample test per world."""
    from scipy.stats import ks_2samp

    names: list[str] = []
    pvalues: list[float] = []
    ks_p: list[float] = []
    for world in WORLDS:
        a, b = plain.features[world], fast.features[world]
        for j in range(a.shape[1]):
            if np.all(a[:, j] == a[0, j]) and np.all(b[:, j] == a[0, j]):
                p = 1.0  # the same constant on both paths
            else:
                p = float(ks_2samp(a[:, j], b[:, j]).pvalue)
            names.append(f"KS world {world} feature {j}")
            pvalues.append(p)
            ks_p.append(p)
    accuracy, c2st_p = {}, {}
    for world in WORLDS:
        acc, p = c2st(plain.features[world], fast.features[world], seed)
        accuracy[str(world)], c2st_p[str(world)] = acc, p
        names.append(f"C2ST world {world}")
        pvalues.append(p)
    rejected = [n for n, r in zip(names, holm(pvalues, alpha)) if r]
    runs = len(plain.features[WORLDS[0]])
    return Equivalence(impl, dataset, runs, alpha, len(pvalues), rejected, min(ks_p), accuracy, c2st_p,
                       not rejected, plain.seconds, fast.seconds, attack_on_both(plain, fast, seed))


def attack_on_both(plain: PathRuns, fast: PathRuns, seed: int) -> dict[str, Any]:
    """The audit's forest attack (both feature sets) on each path: AUC (descriptive only)."""
    out = {}
    for run in (plain, fast):
        outcome = attacks.run_attack(run.features, split=(0.4, 0.2, 0.4), seed=seed, delta=1e-5, confidence=0.95)
        out[f"auc_{run.path}"] = round(float(outcome.auc), 4)
    return out


def equivalence(impl: str, runs: int, *, alpha: float = 0.05, seed: int = 0, dataset: str = "worstcase",
                hyperparams: dict[str, Any] | None = None) -> tuple[Equivalence, PathRuns, PathRuns]:
    plain = path_runs(spec_for(impl, runs, seed, dataset, hyperparams), runs, "plain")
    fast = path_runs(spec_for(impl, runs, seed + 1, dataset, hyperparams), runs, "fast")
    return compare(impl, plain, fast, alpha=alpha, seed=seed, dataset=dataset), plain, fast
