"""Choosing a vulnerable target record (audit paper Section 6.2, after Meeus et al. 2023).

Take the ``candidates`` records of D farthest from the rest, run a short mini-audit (``mini_runs``
shadow runs per world, GroundHog features) against each, and keep the one with the highest AUC.

World D is the same dataset for every candidate (only D′ = D − candidate differs), and the
GroundHog features do not depend on the target, so one set of ``mini_runs`` runs on D serves all
candidates: a selection costs (1 + candidates) · mini_runs runs instead of 2 · candidates · mini_runs.
Each candidate's AUC is the out-of-fold AUC of a 5-fold cross-validation over all its mini-runs
(a split of so few runs into train/validation/test would leave a handful of test runs).
Mini-audits use their own runs (``phase="select"``) so the final audit is not evaluated on the
runs that picked its target. The choice is cached in the store.
"""
from __future__ import annotations

import json
import time
from typing import Any

import numpy as np

from dpcheck.audit import attacks, datasets, engine
from dpcheck.audit.progress import NullProgress
from dpcheck.audit.spec import WORLD_IN, WORLD_OUT, AuditSpec, spec_hash
from dpcheck.audit.store import Store

DEFAULT_CANDIDATES = 64
DEFAULT_MINI_RUNS = 25
CV_FOLDS = 5
SELECTION_ATTACK = "groundhog"


def selection_key(spec: AuditSpec, candidates: int, mini_runs: int) -> str:
    generation = spec.with_(target=None).generation()
    return spec_hash({"select": generation, "candidates": candidates, "mini_runs": mini_runs,
                      "attack": SELECTION_ATTACK, "design": "shared-D, 5-fold CV AUC"})


def cv_auc(member: np.ndarray, non_member: np.ndarray, seed: int) -> float:
    """Out-of-fold AUC of the attack classifier, stratified ``CV_FOLDS``-fold."""
    from sklearn.metrics import roc_auc_score
    from sklearn.model_selection import StratifiedKFold

    x = np.vstack([member, non_member])
    y = np.concatenate([np.ones(len(member), dtype=int), np.zeros(len(non_member), dtype=int)])
    folds = min(CV_FOLDS, len(member), len(non_member))
    scores = np.zeros(len(y))
    for train, test in StratifiedKFold(folds, shuffle=True, random_state=seed).split(x, y):
        clf = attacks.forest(seed).fit(x[train], y[train])
        scores[test] = clf.predict_proba(x[test])[:, list(clf.classes_).index(1)]
    return float(roc_auc_score(y, scores))


def _world_features(spec: AuditSpec, world: int, runs: int, store: Store) -> np.ndarray:
    data = datasets.load(spec.dataset, spec.target, spec.data)
    rows = [attacks.featurize(SELECTION_ATTACK, r.synth[: r.rows_requested], data)
            for r in store.load(spec.generation_hash(), runs) if r.world == world]
    if len(rows) != runs:
        raise engine.AuditRunError(f"target selection: expected {runs} runs in world {world}, found {len(rows)}")
    return np.vstack(rows)


def resolve_target(spec: AuditSpec, *, store: Store, executor: Any, progress: Any = None,
                   candidates: int = DEFAULT_CANDIDATES, mini_runs: int = DEFAULT_MINI_RUNS) -> tuple[AuditSpec, dict]:
    """The spec with its target fixed, and how it was chosen."""
    if spec.dataset != "cervical" or spec.target is not None:
        return spec, {"method": "given" if spec.target is not None else "fixed"}
    if candidates < 1 or mini_runs < 5:
        raise ValueError(f"target selection needs --candidates ≥ 1 and --mini-runs ≥ 5, got {candidates}, {mini_runs}")
    progress = progress or NullProgress()
    key = selection_key(spec, candidates, mini_runs)
    cached = store.get_target(key)
    if cached is not None:
        progress.note(f"target: record {cached['target']} (cached selection, AUC {cached['auc']:.3f})")
        return spec.with_(target=int(cached["target"])), cached
    started = time.perf_counter()
    train, _, _, lower, upper = datasets.cervical_clean()
    pool = datasets.farthest_records(train, lower, upper, candidates)

    def mini(index: int) -> AuditSpec:
        return spec.with_(target=index, runs=mini_runs, attack=SELECTION_ATTACK, phase="select")

    shared = mini(pool[0])  # its world-D runs stand for every candidate's: D holds all of them
    engine.execute_runs(shared, mini_runs, store=store, executor=executor, progress=progress, worlds=(WORLD_IN,),
                        label=f"target selection: {mini_runs} runs on D, shared by {len(pool)} candidates")
    member = _world_features(shared, WORLD_IN, mini_runs, store)
    aucs: dict[int, float] = {}
    for n, index in enumerate(pool, 1):
        engine.execute_runs(mini(index), mini_runs, store=store, executor=executor, progress=progress,
                            worlds=(WORLD_OUT,), label=f"target selection {n}/{len(pool)} (record {index})")
        aucs[index] = cv_auc(member, _world_features(mini(index), WORLD_OUT, mini_runs, store), spec.seed)
    best = max(pool, key=lambda i: (aucs[i], -i))
    choice = {"method": "vulnerable-record", "target": best, "auc": aucs[best], "candidates": candidates,
              "mini_runs": mini_runs, "design": "one set of runs on D shared by all candidates; 5-fold CV AUC",
              "pool": pool, "aucs": {str(k): v for k, v in aucs.items()},
              "runs": (1 + len(pool)) * mini_runs, "seconds": time.perf_counter() - started}
    store.put_target(key, json.loads(json.dumps(choice)))
    progress.note(f"target: record {best} (highest mini-audit AUC {aucs[best]:.3f} of {len(pool)} candidates)")
    return spec.with_(target=best), choice
