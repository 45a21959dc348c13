"""Worst-case settings search (``dpcheck audit --search``): a pilot chooses the hyperparameters,
fresh confirmatory runs give the bound.

A DP guarantee must hold for every hyperparameter a user may choose, so the auditor may choose
them. The search runs a **pilot** of ``pilot_runs`` runs per world for every point of a declared
grid (phase ``"pilot"``, its own seed), ranks the points by the 5-fold cross-validated AUC of the
audit's attack features over *all* pilot runs of the point (ties by grid order; the test-part
Clopper–Pearson ε_emp and AUC are reported, not used: a pilot of P runs per world certifies too
little for its ε_emp to rank anything), and then runs the **confirmatory**
audit with the chosen setting fixed, on runs of phase ``"audit"``. The phase is part of the
generation hash, so the store keeps pilot runs apart and the confirmatory bound never reads one
(``run_audit`` refuses any other phase); the choice therefore cannot bias the bound.

A grid names hyperparameters passed to ``fit()`` plus ``synth_rows`` (the released rows per run,
a spec field). Names the implementation does not accept are refused before any run.
"""
from __future__ import annotations

import inspect
import itertools
import json
import sys
import time
from pathlib import Path
from typing import Any

from dpcheck.audit.core.progress import NullProgress
from dpcheck.audit.core.spec import AuditSpec
from dpcheck.audit.runners import engine

#: grid keys that set a spec field instead of a fit() hyperparameter
SPEC_KEYS = ("synth_rows",)
#: fit() parameters that are part of the game, never a searchable knob
RESERVED = ("self", "data", "epsilon", "delta", "seed", "probe", "bounds")
DEFAULT_PILOT_RUNS = 50
#: added to the spec's seed for the pilot, so pilot runs never share seeds with confirmatory ones
PILOT_SEED_OFFSET = 1_000_003
MAX_POINTS = 256
RULE = ("highest 5-fold cross-validated AUC of the attack's features over all pilot runs of the point "
        "(targets.cv_auc: random forest, out-of-fold scores; for --attack auto the best candidate attack), "
        "ties by grid order; the confirmatory audit uses fresh runs (phase 'audit', another seed) with that "
        "setting fixed")
STATEMENT = ("pilot runs are stored under phase 'pilot' (their own generation hash and seed) and are never "
             "used in the bound; the bound comes from the confirmatory runs only")

#: built-in grids over the knobs each vendored PATE-GAN's fit() accepts; the paper's settings
#: (dpcheck.audit.core.settings) are the base every point overrides. At most 4 teachers: D' of the
#: worst case has 4 rows and the implementations need a row per teacher.
DEFAULT_GRIDS: dict[str, dict[str, list[Any]]] = {
    # reprosyn's PATEGAN: a single discriminator (num_teachers = its inner steps and GP weight),
    # Adam learning rate and training length; batch_size is inert on 5 rows (every batch is the data)
    "turing": {"learning_rate": [1e-4, 1e-3, 1e-2], "max_iterations": [100, 1000], "num_teachers": [1, 4]},
    # smartnoise: λ is the vote-noise multiplier; its accountant (clamp of t, not log t) stops charging
    # for one teacher at λ ∈ [0.5, 0.65] (docs/search.md), so training runs to max_iterations with
    # Laplace(1/λ) vote noise
    "smartnoise": {"lamda": [0.001, 0.5, 0.6], "num_teachers": [1, 4], "lr": [1e-4, 1e-2],
                   "max_iterations": [100, 300]},
    "original": {"max_iterations": [100, 1000], "num_teachers": [1, 4]},
    "updated": {"max_iterations": [100, 1000], "num_teachers": [1, 4]},
    "synthcity": {"max_iterations": [100, 1000], "num_teachers": [1, 4]},
    "borealis": {"max_iterations": [100, 1000], "num_teachers": [1, 4]},
}


class SearchGridError(ValueError):
    """A grid that cannot be searched (bad syntax, unknown hyperparameter, empty or too large)."""


def parse_value(text: str) -> Any:
    """A number where the text is one, else the text (``true``/``false``/``none`` too)."""
    text = text.strip()
    lowered = text.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    if lowered in ("none", "null"):
        return None
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def parse_items(items: list[str]) -> dict[str, list[Any]]:
    """``["lamda=0.001,1", "lr=1e-4"]`` → ``{"lamda": [0.001, 1], "lr": [0.0001]}``."""
    grid: dict[str, list[Any]] = {}
    for item in items:
        key, sep, values = item.partition("=")
        key = key.strip()
        if not sep or not key or not values.strip():
            raise SearchGridError(f"--search expects KEY=V1,V2,…, got {item!r}")
        if key in grid:
            raise SearchGridError(f"--search names {key!r} twice")
        grid[key] = [parse_value(v) for v in values.split(",") if v.strip()]
    return grid


def load_grid_file(path: str | Path) -> dict[str, list[Any]] | list[dict[str, Any]]:
    """A JSON grid: ``{"KEY": [values…], …}`` (every combination) or ``{"points": [{…}, …]}``."""
    try:
        raw = json.loads(Path(path).read_text())
    except OSError as exc:
        raise SearchGridError(f"cannot read --search-grid {path}: {exc.strerror}") from None
    except json.JSONDecodeError as exc:
        raise SearchGridError(f"--search-grid {path} is not JSON: {exc}") from None
    if isinstance(raw, dict) and set(raw) == {"points"}:
        points = raw["points"]
        if not isinstance(points, list) or not all(isinstance(p, dict) for p in points):
            raise SearchGridError(f"--search-grid {path}: \"points\" must be a list of objects")
        return [dict(p) for p in points]
    if not isinstance(raw, dict) or not all(isinstance(v, list) for v in raw.values()):
        raise SearchGridError(f"--search-grid {path}: expected {{\"KEY\": [values, …], …}} or "
                              "{\"points\": [{\"KEY\": value, …}, …]}")
    return {str(k): list(v) for k, v in raw.items()}


def expand(grid: dict[str, list[Any]] | list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Grid points in a fixed order (the last key varies fastest)."""
    if isinstance(grid, list):
        points = [dict(p) for p in grid]
    else:
        for key, values in grid.items():
            if not values:
                raise SearchGridError(f"search grid: {key!r} has no values")
        points = [dict(zip(grid, combo)) for combo in itertools.product(*grid.values())]
    if not points or points == [{}]:
        raise SearchGridError("search grid is empty")
    if len(points) > MAX_POINTS:
        raise SearchGridError(f"search grid has {len(points)} points, more than {MAX_POINTS}")
    unique = {json.dumps(p, sort_keys=True, default=str) for p in points}
    if len(unique) != len(points):
        raise SearchGridError("search grid lists the same point twice")
    return points


def default_grid(impl: str) -> dict[str, list[Any]]:
    family = impl.removesuffix("-fixed")
    if family not in DEFAULT_GRIDS:
        raise SearchGridError(f"no built-in search grid for {impl!r} (built-in grids: "
                              f"{', '.join(sorted(DEFAULT_GRIDS))} and their -fixed twins); "
                              "give one with --search KEY=V1,V2 or --search-grid FILE.json")
    return {k: list(v) for k, v in DEFAULT_GRIDS[family].items()}


def accepted_keys(impl: str) -> tuple[str, ...]:
    """The knobs a grid may name for ``impl``: those its adapter declares (a ``hyperparameters``
    attribute, or the defaults dict its ``fit()`` merges and checks names against), its ``fit()``
    keyword parameters, and ``synth_rows``. Constructing the adapter trains nothing."""
    from dpcheck.audit.reference.mechanisms import REFERENCE, get_impl
    from dpcheck.impls import BUDGET_KNOBS

    if engine.is_target(impl):
        raise SearchGridError(f"--search does not support real-library targets ({impl}): their knobs are "
                              "not declared to dpcheck")
    adapter = get_impl(impl)
    keys = set(SPEC_KEYS)
    declared = getattr(adapter, "hyperparameters", None)
    if declared is None:
        declared = getattr(adapter, "_defaults", None) or getattr(sys.modules.get(type(adapter).__module__),
                                                                   "DEFAULTS", None)
    if isinstance(declared, dict):
        keys |= set(declared)
    elif declared is not None:
        keys |= set(declared)
    params = inspect.signature(adapter.fit).parameters.values()
    keys |= {p.name for p in params if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)}
    if impl in REFERENCE:  # documented to accept and ignore the PATE-GAN budget knobs
        keys |= set(BUDGET_KNOBS)
    return tuple(sorted(keys - set(RESERVED)))


def check_grid(impl: str, points: list[dict[str, Any]]) -> None:
    """Refuse, before any run, a grid naming a knob ``impl`` does not accept."""
    accepted = accepted_keys(impl)
    named = sorted({k for p in points for k in p})
    if "bounds" in named:
        raise SearchGridError("bounds are the dataset's public domain and are passed by the audit; "
                              "they cannot be searched")
    unknown = [k for k in named if k not in accepted]
    if unknown:
        raise SearchGridError(f"{impl}: the search grid names unknown hyperparameter(s) {', '.join(unknown)}; "
                              f"accepted: {', '.join(accepted)}")
    for p in points:
        rows = p.get("synth_rows")
        if "synth_rows" in p and (not isinstance(rows, int) or isinstance(rows, bool) or rows < 1):
            raise SearchGridError(f"synth_rows must be a positive integer, got {rows!r}")


def apply_point(spec: AuditSpec, point: dict[str, Any]) -> AuditSpec:
    """``spec`` with the grid point's knobs over its hyperparameters (and spec fields)."""
    hyper = {**spec.hyperparams, **{k: v for k, v in point.items() if k not in SPEC_KEYS}}
    fields = {k: v for k, v in point.items() if k in SPEC_KEYS}
    return spec.with_(hyperparams=hyper, **fields)


def pilot_spec(spec: AuditSpec, point: dict[str, Any], pilot_runs: int) -> AuditSpec:
    return apply_point(spec, point).with_(runs=pilot_runs, phase="pilot", seed=spec.seed + PILOT_SEED_OFFSET)


def run_search(spec: AuditSpec, points: list[dict[str, Any]], *, store: Any, executor: Any, progress: Any = None,
               pilot_runs: int = DEFAULT_PILOT_RUNS, until_verdict: bool = False,
               checkpoints: tuple[int, ...] | list[int] | None = None) -> engine.AuditResult:
    """Pilot every grid point, fix the most distinguishing one, and audit it on fresh runs."""
    if spec.phase != "audit":
        raise ValueError("run_search takes the confirmatory (phase 'audit') spec")
    check_grid(spec.impl, points)
    progress = progress or NullProgress()
    started = time.perf_counter()
    progress.note(f"search {spec.impl}: {len(points)} grid point(s) × {pilot_runs} pilot runs per world = "
                  f"{2 * len(points) * pilot_runs} pilot runs, then the confirmatory audit on fresh runs")
    pilot: list[dict[str, Any]] = []
    for n, point in enumerate(points, 1):
        mini = pilot_spec(spec, point, pilot_runs)
        entry: dict[str, Any] = {"point": point, "spec_hash": mini.generation_hash()}
        try:
            engine.execute_runs(mini, pilot_runs, store=store, executor=executor, progress=progress,
                                label=f"search pilot {n}/{len(points)} {_describe(point)}")
            records = store.load(mini.generation_hash(), pilot_runs)
            outcome, eps_cp, _, cert_cp, _ = engine.evaluate(mini, records, pilot_runs,
                                                             bound_confidence=spec.confidence)
        except engine.AuditRunError as exc:  # a setting the implementation cannot run is no candidate
            entry.update(failed=str(exc).splitlines()[0])
            progress.note(f"pilot {_describe(point)}: failed ({entry['failed']})")
        else:
            cv, cv_attack = pilot_cv_auc(mini, records, pilot_runs)
            entry.update(cv_auc=cv, cv_attack=cv_attack, eps_cp=eps_cp, auc=outcome.auc, fp=outcome.counts.fp,
                         fn=outcome.counts.fn, test_per_world=outcome.test, certifiable_cp=cert_cp)
            progress.note(f"pilot {_describe(point)}: CV AUC {cv:.3f} (test part: ε_emp(CP) {eps_cp:.3f}, "
                          f"AUC {outcome.auc:.3f})")
        pilot.append(entry)
    if all("failed" in e for e in pilot):
        raise engine.AuditRunError(f"{spec.impl}: every grid point of the search failed, e.g. {pilot[0]['failed']}")
    best = choose(pilot)
    chosen = points[best]
    progress.note(f"search {spec.impl}: chose {_describe(chosen)} (pilot CV AUC {pilot[best]['cv_auc']:.3f}); "
                  "confirmatory audit on fresh runs")
    confirm = apply_point(spec, chosen)
    result = engine.run_audit(confirm, store=store, executor=executor, progress=progress,
                              until_verdict=until_verdict, checkpoints=checkpoints)
    result.search = {
        "grid": points, "pilot_runs": pilot_runs, "pilot_seed": spec.seed + PILOT_SEED_OFFSET,
        "pilot": pilot, "chosen": chosen, "chosen_index": best, "rule": RULE, "statement": STATEMENT,
        "confirmatory_spec_hash": confirm.generation_hash(),
        "seconds_total": time.perf_counter() - started,
    }
    return result


def choose(pilot: list[dict[str, Any]]) -> int:
    """Index of the pilot entry with the highest CV AUC; failed points are no candidates, ties go to
    the earlier grid point."""
    candidates = [i for i, e in enumerate(pilot) if "failed" not in e]
    if not candidates:
        raise ValueError("no grid point to choose from")
    return max(candidates, key=lambda i: (_auc_key(pilot[i]["cv_auc"]), -i))


def pilot_cv_auc(mini: AuditSpec, records: list[Any], runs: int) -> tuple[float, str]:
    """The 5-fold CV AUC of the attack's features over all ``runs`` pilot runs per world, and the
    attack it belongs to (for ``auto``: the candidate with the highest)."""
    from dpcheck.audit.attacks import selection
    from dpcheck.audit.core.spec import WORLD_IN, WORLD_OUT
    from dpcheck.audit.runners.targets import cv_auc
    from dpcheck.audit.worlds import datasets

    dataset = datasets.load(mini.dataset, mini.target, mini.data)
    names = list(selection.CANDIDATES) if mini.attack == selection.AUTO else [mini.attack]
    scores: dict[str, float] = {}
    for name in names:
        try:
            feats = engine.features_of(mini.with_(attack=name), records, dataset, runs)
        except ValueError:  # an auto candidate that does not apply to this dataset
            continue
        scores[name] = cv_auc(feats[WORLD_IN], feats[WORLD_OUT], mini.seed)
    if not scores:
        raise engine.AuditRunError(f"{mini.impl}: no attack applies to the pilot runs")
    best = max(scores, key=lambda n: _auc_key(scores[n]))  # the first of equals
    return scores[best], best


def _auc_key(auc: float) -> float:
    return auc if auc == auc else -1.0  # NaN sorts last


def _describe(point: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in point.items()) or "(base setting)"
