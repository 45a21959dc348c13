"""Crafted canary records: an active adversary adds a worst-case record built from the public domain.

The target is not one of the data's records but a record the adversary writes, from the public
bounds and categories only (never from the private rows). World D′ is the dataset's rows without
any target (for the worst-case kinds the background, for cervical the whole training split, for
``--data`` every row of the CSV); world D is D′ plus the crafted record.

Candidates are corners of the public domain (every column at its lower or upper bound; for a
categorical column its first or last category), min-max scaled and ordered by their distance from
the public reference point, the domain's lower corner: candidate 0 is the upper corner, candidate 1
the lower corner, then further corners (all of them up to ``MAX_COLUMNS_ALL`` columns, a fixed
random sample above) by distance, ties in a fixed order.

A spec's target names the choice: ``"craft:K"`` is candidate K; ``"craft"`` asks
:func:`resolve_craft` to pick one by short mini-audits on their own runs (phase ``"select"``,
never in the bound): one set of runs on D′ shared by every candidate, ``mini_runs`` runs on each
candidate's D, and the candidate with the highest 5-fold cross-validated AUC (GroundHog features for
synthetic data, the released array for mechanism targets) is kept. The choice is cached in the store.
"""
from __future__ import annotations

import json
from typing import Any

from dpcheck.audit.core.canary import (  # noqa: F401 - re-exported: the crafted canary's names and candidates
    _PATTERN, CRAFT, MAX_COLUMNS_ALL, SAMPLE_SEED, candidate_index, candidates, check_target, is_craft,
)
from dpcheck.audit.worlds.datasets import (  # noqa: F401 - re-exported: D = D′ + the crafted canary
    _crafted, check_craftable, crafted_dataset, has_public_domain,
)
from dpcheck.audit.worlds.datasets import public_rows as _public_rows


def _key(spec: Any, count: int, mini_runs: int, attack: str) -> str:
    from dpcheck.audit.core.spec import spec_hash

    return spec_hash({"craft": spec.with_(target=CRAFT).generation(), "candidates": count,
                      "mini_runs": mini_runs, "attack": attack, "design": "shared D', 5-fold CV AUC"})


def _selection_attack(spec: Any) -> str:
    from dpcheck.audit.core.spec import RELEASE_ATTACKS
    from dpcheck.audit.runners.engine import is_target

    if spec.attack in RELEASE_ATTACKS:
        return "release"
    if is_target(spec.impl):
        from dpcheck.targets import registry

        return "release" if registry.get(spec.impl).kind == "mechanism" else "groundhog"
    return "groundhog"


def resolve_craft(spec: Any, *, store: Any, executor: Any, progress: Any = None, candidates_count: int = 8,
                  mini_runs: int = 25) -> tuple[Any, dict[str, Any]]:
    """The spec with its crafted candidate fixed (``"craft:K"``), and how it was chosen."""
    from dpcheck.audit.core.progress import NullProgress
    from dpcheck.audit.core.spec import WORLD_OUT
    from dpcheck.audit.runners.targets import shared_mini_audits

    if not is_craft(spec.target):
        return spec, {"method": "given" if spec.target is not None else "fixed"}
    check_craftable(spec.dataset)
    rows, like = _public_rows(spec.dataset, spec.data)
    index = candidate_index(spec.target)
    if index is not None:
        record = candidates(like.lower, like.upper, index + 1)[index]
        return spec, {"method": "crafted", "candidate": index, "record": record.tolist(), "selected_by": "given"}
    if candidates_count < 1 or mini_runs < 5:
        raise ValueError(f"crafting needs --candidates ≥ 1 and --mini-runs ≥ 5, got {candidates_count}, {mini_runs}")
    pool = candidates(like.lower, like.upper, candidates_count)
    if len(pool) == 1:
        return spec.with_(target=f"{CRAFT}:0"), {"method": "crafted", "candidate": 0, "record": pool[0].tolist(),
                                                 "selected_by": "only candidate"}
    progress = progress or NullProgress()
    attack = _selection_attack(spec)
    key = _key(spec, len(pool), mini_runs, attack)
    cached = store.get_target(key)
    if cached is not None:
        progress.note(f"crafted target: candidate {cached['candidate']} (cached selection, AUC {cached['auc']:.3f})")
        return spec.with_(target=f"{CRAFT}:{cached['candidate']}"), cached

    minis = {k: spec.with_(target=f"{CRAFT}:{k}", runs=mini_runs, attack=attack, phase="select")
             for k in range(len(pool))}
    # D′ holds no candidate, so one set of runs on it stands for all of them
    aucs = shared_mini_audits(minis, WORLD_OUT, mini_runs, store=store, executor=executor, progress=progress,
                              seed=spec.seed, label="crafting")
    best = max(range(len(pool)), key=lambda k: (aucs[k], -k))
    choice = {"method": "crafted", "candidate": best, "record": pool[best].tolist(), "auc": aucs[best],
              "selected_by": "mini-audits", "attack": attack, "candidates": len(pool), "mini_runs": mini_runs,
              "aucs": {str(k): v for k, v in aucs.items()}}
    store.put_target(key, json.loads(json.dumps(choice)))
    progress.note(f"crafted target: candidate {best} {pool[best].tolist()} (highest mini-audit AUC {aucs[best]:.3f})")
    return spec.with_(target=f"{CRAFT}:{best}"), choice
