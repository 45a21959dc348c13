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

from dpcheck.audit.attacks import attacks
from dpcheck.audit.core.progress import NullProgress
from dpcheck.audit.core.spec import WORLD_IN, WORLD_OUT, AuditSpec, spec_hash
from dpcheck.audit.core.store import Store
from dpcheck.audit.runners import engine
from dpcheck.audit.worlds import datasets

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


def mini_features(spec: AuditSpec, world: int, runs: int, store: Store) -> np.ndarray:
    """Attack features of the first ``runs`` stored runs of ``world`` (one row per run)."""
    records = [r for r in store.load(spec.generation_hash(), runs) if r.world == world]
    if len(records) != runs:
        raise engine.AuditRunError(f"mini-audit: expected {runs} runs in world {world}, found {len(records)}")
    if spec.attack == "release":
        width = max(int(r.synth.size) for r in records)
        return np.vstack([attacks.release_features(r.synth, width) for r in records])
    data = datasets.load(spec.dataset, spec.target, spec.data)
    return np.vstack([attacks.featurize(spec.attack, r.synth[: r.rows_requested], data) for r in records])


def shared_mini_audits(minis: dict[Any, AuditSpec], shared_world: int, runs: int, *, store: Store, executor: Any,
                       progress: Any, seed: int, label: str) -> dict[Any, float]:
    """CV AUC of a mini-audit per candidate when ``shared_world`` is the same dataset for all of them:
    its runs are made once (under the first candidate's spec) and the other world once per candidate."""
    other = WORLD_OUT if shared_world == WORLD_IN else WORLD_IN
    keys = list(minis)
    first = minis[keys[0]]
    engine.execute_runs(first, runs, store=store, executor=executor, progress=progress, worlds=(shared_world,),
                        label=f"{label}: {runs} runs shared by {len(keys)} candidates")
    common = mini_features(first, shared_world, runs, store)
    aucs: dict[Any, float] = {}
    for n, key in enumerate(keys, 1):
        engine.execute_runs(minis[key], runs, store=store, executor=executor, progress=progress, worlds=(other,),
                            label=f"{label} {n}/{len(keys)} ({key})")
        own = mini_features(minis[key], other, runs, store)
        width = max(own.shape[1], common.shape[1])  # release lengths may differ between worlds
        own, shared = (np.pad(f, ((0, 0), (0, width - f.shape[1]))) for f in (own, common))
        member, non_member = (own, shared) if other == WORLD_IN else (shared, own)
        aucs[key] = cv_auc(member, non_member, seed)
    return aucs


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

    minis = {index: spec.with_(target=index, runs=mini_runs, attack=SELECTION_ATTACK, phase="select")
             for index in pool}
    # D holds every candidate, so one set of runs on D stands for all of them
    aucs = shared_mini_audits(minis, WORLD_IN, mini_runs, store=store, executor=executor, progress=progress,
                              seed=spec.seed, label="target selection")
    best = max(pool, key=lambda i: (aucs[i], -i))
    choice = {"method": "vulnerable-record", "target": best, "auc": aucs[best], "candidates": candidates,
              "mini_runs": mini_runs, "design": "one set of runs on D shared by all candidates; 5-fold CV AUC",
              "pool": pool, "aucs": {str(k): v for k, v in aucs.items()},
              "runs": (1 + len(pool)) * mini_runs, "seconds": time.perf_counter() - started}
    store.put_target(key, json.loads(json.dumps(choice)))
    progress.note(f"target: record {best} (highest mini-audit AUC {aucs[best]:.3f} of {len(pool)} candidates)")
    return spec.with_(target=best), choice
