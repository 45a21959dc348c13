"""Analysing stored runs with one attack, or choosing the attack on the validation part (``auto``).

``--attack auto`` trains every candidate on the training part and scores it on the validation
part only: the validation Clopper–Pearson ε_emp at the candidate's own validation-chosen
threshold, ties broken by the validation AUC, then by the fixed order of ``CANDIDATES``. The test
part never enters the choice, so the chosen attack's test-part bound is as valid as that of an
attack fixed in advance; the result records the candidates, their validation scores and the choice.
"""
from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np

from dpcheck.audit.attacks import attacks, featurizers
from dpcheck.audit.core.errors import AuditRunError
from dpcheck.audit.core.spec import RELEASE_ATTACKS, WHITEBOX_ATTACKS, WORLDS, AuditSpec
from dpcheck.audit.core.store import RunRecord
from dpcheck.audit.worlds.datasets import AuditDataset

AUTO = "auto"
CANDIDATES = ("querybased", "querybased-subsets", "groundhog", "groundhog-histogram", "groundhog-correlation",
              "groundhog-ensemble", "dcr", "mc-density", "tvd")
RULE = ("highest validation CP ε_emp, then validation AUC, then candidate order; "
        "the test part is used once, for the chosen attack")


def analyse(spec: Any, records: list, dataset: AuditDataset, runs: int, *,
            bound_confidence: float) -> attacks.AttackOutcome:
    """The attack outcome of ``spec`` on the first ``runs`` stored runs per world."""
    kwargs = dict(split=spec.split, seed=spec.seed, delta=spec.delta, confidence=bound_confidence)
    if spec.attack != AUTO:
        from dpcheck.audit.attacks import dpsgd

        from dpcheck.audit.attacks import release_query

        model = (dpsgd.model_for(spec) or release_query.model_for(spec, dataset)
                 or featurizers.model_for(spec.attack))
        return attacks.run_attack(features_of(spec, records, dataset, runs), model=model,
                                  **kwargs)
    features: dict[str, dict[int, np.ndarray]] = {}
    skipped: dict[str, str] = {}
    for name in CANDIDATES:
        try:
            features[name] = features_of(spec.with_(attack=name), records, dataset, runs)
        except ValueError as exc:  # e.g. querybased on a large domain
            skipped[name] = str(exc)
    return select(features, skipped=skipped, **kwargs)


def features_of(spec: AuditSpec, records: list[RunRecord], dataset: AuditDataset,
                runs: int) -> dict[int, np.ndarray]:
    if spec.attack in RELEASE_ATTACKS:
        return release_features_of(records, runs)
    if spec.attack in WHITEBOX_ATTACKS:
        from dpcheck.audit.attacks import whitebox

        return whitebox.features_of(spec.attack, records, runs)
    feats: dict[int, list[np.ndarray]] = {w: [] for w in WORLDS}
    for r in records:
        if r.index < runs:
            feats[r.world].append(attacks.featurize(spec.attack, r.synth[: r.rows_requested], dataset))
    for w in WORLDS:
        if len(feats[w]) != runs:
            raise AuditRunError(f"expected {runs} stored runs in world {w}, found {len(feats[w])}")
    return {w: np.vstack(f) for w, f in feats.items()}


def release_features_of(records: list[RunRecord], runs: int) -> dict[int, np.ndarray]:
    """Release attack: per run, [failed?, release length, released values zero-padded to the longest]."""
    chosen = [r for r in records if r.index < runs]
    width = max((int(r.synth.size) for r in chosen), default=0)
    feats: dict[int, list[np.ndarray]] = {w: [] for w in WORLDS}
    for r in sorted(chosen, key=lambda r: r.index):
        feats[r.world].append(attacks.release_features(r.synth, width))
    for w in WORLDS:
        if len(feats[w]) != runs:
            raise AuditRunError(f"expected {runs} stored runs in world {w}, found {len(feats[w])}")
    return {w: np.vstack(f) for w, f in feats.items()}


def select(features: dict[str, dict[int, np.ndarray]], *, split: tuple[float, float, float], seed: int,
           delta: float, confidence: float, skipped: dict[str, str] | None = None) -> attacks.AttackOutcome:
    """Run every candidate, choose on validation numbers only, return the chosen outcome."""
    if not features:
        raise ValueError("--attack auto: no candidate attack applies to this dataset: "
                         + "; ".join(f"{k}: {v}" for k, v in (skipped or {}).items()))
    outcomes = {name: attacks.run_attack(f, split=split, seed=seed, delta=delta, confidence=confidence,
                                         model=featurizers.model_for(name))
                for name, f in features.items()}
    order = list(features)

    def key(name: str) -> tuple[float, float, int]:
        o = outcomes[name]
        auc = o.validation_auc if not math.isnan(o.validation_auc) else -1.0
        return (o.validation_eps, auc, -order.index(name))

    chosen = max(order, key=key)
    selection = {
        "method": "validation", "rule": RULE, "candidates": order, "chosen": chosen,
        "validation": {n: {"eps_cp": outcomes[n].validation_eps, "auc": outcomes[n].validation_auc} for n in order},
        "skipped": dict(skipped or {}),
    }
    return dataclasses.replace(outcomes[chosen], selection=selection)
