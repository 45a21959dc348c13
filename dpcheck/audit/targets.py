"""Choosing a vulnerable target record (audit paper Section 6.2, after Meeus et al. 2023).

Take the ``candidates`` records of D farthest from the rest, run a short mini-audit (``mini_runs``
shadow runs per world, GroundHog features) against each, and keep the one with the highest AUC.
Mini-audits use their own runs (``phase="select"``) so the final audit is not evaluated on the
runs that picked its target. The choice is cached in the store.
"""
from __future__ import annotations

import json
from typing import Any

from dpcheck.audit import datasets, engine
from dpcheck.audit.progress import NullProgress
from dpcheck.audit.spec import AuditSpec, spec_hash
from dpcheck.audit.store import Store

DEFAULT_CANDIDATES = 64
DEFAULT_MINI_RUNS = 100


def selection_key(spec: AuditSpec, candidates: int, mini_runs: int) -> str:
    generation = spec.with_(target=None).generation()
    return spec_hash({"select": generation, "candidates": candidates, "mini_runs": mini_runs,
                      "attack": "groundhog", "split": list(spec.split)})


def resolve_target(spec: AuditSpec, *, store: Store, executor: Any, progress: Any = None,
                   candidates: int = DEFAULT_CANDIDATES, mini_runs: int = DEFAULT_MINI_RUNS) -> tuple[AuditSpec, dict]:
    """The spec with its target fixed, and how it was chosen."""
    if spec.dataset != "cervical" or spec.target is not None:
        return spec, {"method": "given" if spec.target is not None else "fixed"}
    progress = progress or NullProgress()
    key = selection_key(spec, candidates, mini_runs)
    cached = store.get_target(key)
    if cached is not None:
        progress.note(f"target: record {cached['target']} (cached selection, AUC {cached['auc']:.3f})")
        return spec.with_(target=int(cached["target"])), cached
    train, _, _, lower, upper = datasets.cervical_clean() if spec.dataset == "cervical" else (None,) * 5
    pool = datasets.farthest_records(train, lower, upper, candidates)
    aucs: dict[int, float] = {}
    for n, index in enumerate(pool, 1):
        mini = spec.with_(target=index, runs=mini_runs, attack="groundhog", phase="select")
        engine.execute_runs(mini, mini_runs, store=store, executor=executor, progress=progress,
                            label=f"target selection {n}/{len(pool)} (record {index})")
        outcome, *_ = engine.evaluate(mini, store.load(mini.generation_hash(), mini_runs), mini_runs,
                                      bound_confidence=spec.confidence)
        aucs[index] = outcome.auc
    best = max(pool, key=lambda i: (aucs[i], -i))
    choice = {"method": "vulnerable-record", "target": best, "auc": aucs[best], "candidates": candidates,
              "mini_runs": mini_runs, "aucs": {str(k): v for k, v in aucs.items()}}
    store.put_target(key, json.loads(json.dumps(choice)))
    progress.note(f"target: record {best} (highest mini-audit AUC {aucs[best]:.3f} of {len(pool)} candidates)")
    return spec.with_(target=best), choice
