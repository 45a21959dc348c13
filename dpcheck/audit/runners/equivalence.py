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
Keeping H0 is a failure to reject, not a proof of equality: :func:`detectable_shift` states the
test's power as the smallest shift of one continuous feature (in standard deviations) that the KS
test detects with 80 % probability at Holm's strictest threshold α/m, the level a single changed
feature must reach (about 0.5 σ at R = 200 per path and 48 tests, 1.3 σ at R = 30).
"""
from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from dpcheck.audit.attacks import attacks
from dpcheck.audit.core.settings import paper_hyperparams
from dpcheck.audit.core.spec import WORLDS, AuditSpec
from dpcheck.audit.runners.executor import Task, run_group, run_one
from dpcheck.audit.worlds import datasets

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
    #: smallest location shift (in s.d.) of one continuous feature detected with 80 % power (KS, level α/tests)
    detectable_shift_sd: float | None = None

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


def ks_critical_distance(runs: int, level: float) -> float:
    """Smallest two-sample KS distance (R vs R samples) whose exact p-value is ≤ ``level``."""
    import warnings

    from scipy.stats import ks_2samp

    base = np.arange(runs, dtype=float)
    for k in range(1, runs + 1):  # samples k apart have distance exactly k / R
        with warnings.catch_warnings():  # compare() calls ks_2samp the same way, falling back to asymp alike
            warnings.simplefilter("ignore", RuntimeWarning)
            p = ks_2samp(base, base + k).pvalue
        if p <= level:
            return k / runs
    return float("inf")


def detectable_shift(runs: int, tests: int, alpha: float = 0.05, *, power: float = 0.8, sims: int = 2000,
                     seed: int = 0) -> float:
    """Smallest shift δ (in s.d., to 0.01) of one normal feature that the KS test, R runs per path, rejects
    with probability ≥ ``power`` at Holm's first threshold α/tests; by simulation, ``sims`` fixed-seed pairs."""
    critical = ks_critical_distance(runs, alpha / tests)
    rng = np.random.default_rng(seed)
    a = np.sort(rng.standard_normal((sims, runs)), axis=1)
    b = np.sort(rng.standard_normal((sims, runs)), axis=1)

    def rejected(delta: float) -> float:
        shifted = b + delta
        both = np.concatenate([a, shifted], axis=1)
        fa = np.stack([np.searchsorted(a[i], both[i], side="right") for i in range(sims)])
        fb = np.stack([np.searchsorted(shifted[i], both[i], side="right") for i in range(sims)])
        distance = np.max(np.abs(fa - fb), axis=1) / runs
        return float(np.mean(distance >= critical - 1e-12))

    lo, hi = 0, 1000  # hundredths of an s.d.
    while lo < hi:
        mid = (lo + hi) // 2
        if rejected(mid / 100) >= power:
            hi = mid
        else:
            lo = mid + 1
    return lo / 100


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
                       not rejected, plain.seconds, fast.seconds, attack_on_both(plain, fast, seed),
                       detectable_shift(runs, len(pvalues), alpha))


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
