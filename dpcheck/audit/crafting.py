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

import functools
import itertools
import json
import re
from typing import Any

import numpy as np

CRAFT = "craft"
MAX_COLUMNS_ALL = 12  # 2^12 corners: every one is a candidate up to here
SAMPLE_SEED = 20240514
_PATTERN = re.compile(r"^craft(?::(\d+))?$")


def is_craft(target: Any) -> bool:
    return isinstance(target, str) and _PATTERN.match(target) is not None


def check_target(target: Any) -> None:
    """ValueError unless ``target`` is a row index, None, ``"craft"`` or ``"craft:K"``."""
    if target is None or isinstance(target, (int, np.integer)) and not isinstance(target, bool):
        return
    if not is_craft(target):
        raise ValueError(f"target must be a row index, {CRAFT!r} or '{CRAFT}:K' (crafted candidate K), got {target!r}")


def candidate_index(target: str) -> int | None:
    """K of ``"craft:K"``; None for ``"craft"`` (not chosen yet)."""
    match = _PATTERN.match(target)
    if match is None:
        raise ValueError(f"not a crafted target: {target!r}")
    return None if match.group(1) is None else int(match.group(1))


def candidates(lower: np.ndarray, upper: np.ndarray, count: int) -> np.ndarray:
    """The first ``count`` crafted candidates (rows) for the public box [lower, upper]."""
    lower, upper = np.asarray(lower, dtype=float), np.asarray(upper, dtype=float)
    d = len(lower)
    if count < 1:
        raise ValueError(f"need at least one crafted candidate, got {count}")
    if d <= MAX_COLUMNS_ALL:
        bits = np.array(list(itertools.product((1, 0), repeat=d)), dtype=float)
    else:
        rng = np.random.default_rng(SAMPLE_SEED)
        drawn = rng.integers(0, 2, size=(4 * count, d)).astype(float)
        bits = np.unique(np.vstack([np.ones((1, d)), np.zeros((1, d)), drawn]), axis=0)
    degenerate = upper <= lower  # a single public value: both corners coincide
    bits[:, degenerate] = 1.0
    bits = np.unique(bits, axis=0)
    # distance from the lower corner in min-max scaled units = √(columns at their upper bound)
    order = sorted(range(len(bits)), key=lambda i: (-bits[i].sum(), tuple(-bits[i])))
    order.insert(1, order.pop())  # the lower corner (fewest upper bounds) second
    chosen = bits[order[:count]]
    return lower + chosen * (upper - lower)


def has_public_domain(name: str) -> str | None:
    """None when ``name`` can take a crafted canary, else why not."""
    from dpcheck.audit import datasets

    if name.endswith(datasets.REPLACE_SUFFIX):
        return (f"dataset {name!r} plays the replace-one game; a crafted canary is added to D (add/remove "
                "neighbours): drop the '+replace' suffix")
    base, _ = datasets.split_background(name)
    if base not in (*datasets.DATASETS, "csv"):
        return f"dataset {name!r} has no public domain dpcheck knows"
    return None


def check_craftable(name: str) -> None:
    problem = has_public_domain(name)
    if problem:
        raise ValueError(f"--target craft needs a dataset with a public domain: {problem}")


def _public_rows(name: str, data: dict | None) -> tuple[np.ndarray, Any]:
    """(D′ rows, a dataset giving columns, bounds, schema and the default synthetic row count)."""
    from dpcheck.audit import datasets

    if name == "csv":
        if data is None:
            raise ValueError("the csv dataset needs its files")
        like = datasets.user_csv(data["csv"], data["schema"], 0, data.get("sha256", ""))
        return like.with_target, like  # every row of the CSV
    if name == "cervical":
        like = datasets.cervical(0)
        return like.with_target, like  # the whole training split
    like = datasets.load(name)
    return like.without_target, like


def crafted_dataset(name: str, target: str, data: dict | None = None) -> Any:
    """The audit dataset with crafted candidate K of ``target = "craft:K"`` added to D."""
    check_craftable(name)
    index = candidate_index(target)
    if index is None:
        raise ValueError("choose the crafted candidate first (dpcheck.audit.crafting.resolve_craft), "
                         "or give 'craft:K'")
    files = (data["csv"], data["schema"], data.get("sha256", "")) if name == "csv" and data else None
    return _crafted(name, index, files)


@functools.lru_cache(maxsize=16)
def _crafted(name: str, index: int, files: tuple[str, str, str] | None) -> Any:
    from dpcheck.audit import datasets

    data = dict(zip(("csv", "schema", "sha256"), files)) if files else None
    rows, like = _public_rows(name, data)
    pool = candidates(like.lower, like.upper, index + 1)
    if index >= len(pool):
        raise ValueError(f"craft:{index}: the public domain of {name} has only {len(pool)} crafted candidates")
    default_rows = len(rows) if name in ("csv", "cervical") else like.default_synth_rows
    return datasets.AuditDataset(name, np.vstack([rows, pool[index][None, :]]), rows, len(rows), like.columns,
                                 like.lower, like.upper, default_synth_rows=default_rows, schema=like.schema)


def _key(spec: Any, count: int, mini_runs: int, attack: str) -> str:
    from dpcheck.audit.spec import spec_hash

    return spec_hash({"craft": spec.with_(target=CRAFT).generation(), "candidates": count,
                      "mini_runs": mini_runs, "attack": attack, "design": "shared D', 5-fold CV AUC"})


def _selection_attack(spec: Any) -> str:
    from dpcheck.audit.engine import is_target
    from dpcheck.audit.spec import RELEASE_ATTACKS

    if spec.attack in RELEASE_ATTACKS:
        return "release"
    if is_target(spec.impl):
        from dpcheck.targets import registry

        return "release" if registry.get(spec.impl).kind == "mechanism" else "groundhog"
    return "groundhog"


def resolve_craft(spec: Any, *, store: Any, executor: Any, progress: Any = None, candidates_count: int = 8,
                  mini_runs: int = 25) -> tuple[Any, dict[str, Any]]:
    """The spec with its crafted candidate fixed (``"craft:K"``), and how it was chosen."""
    from dpcheck.audit.progress import NullProgress
    from dpcheck.audit.spec import WORLD_OUT
    from dpcheck.audit.targets import shared_mini_audits

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
