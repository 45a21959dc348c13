"""The distinguishing game: shadow runs → stored synthetic data → attack → ε_emp → AuditResult."""
from __future__ import annotations

import math
import time
import uuid
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from dpcheck.audit.attacks import attacks
from dpcheck.audit.attacks.selection import features_of, release_features_of  # noqa: F401 - re-exported
from dpcheck.audit.core import stats
from dpcheck.audit.core.errors import AuditRunError
from dpcheck.audit.core.progress import NullProgress
from dpcheck.audit.core.spec import (DEFAULT_CHECKPOINTS, RELEASE_ATTACKS, WHITEBOX_ATTACKS, WORLD_IN, WORLD_OUT, WORLDS,
                                     AuditSpec)
from dpcheck.audit.core.store import RunRecord, Store
from dpcheck.audit.runners.executor import Task
from dpcheck.audit.worlds import datasets


@dataclass
class CheckpointResult:
    runs: int
    eps_cp: float
    eps_bayes: float
    auc: float
    certifiable_cp: float
    violation: bool


@dataclass
class AuditResult:
    impl: str
    attack: str
    dataset: str
    target: int
    runs: int  # per world, used for the final numbers
    runs_planned: int
    epsilon: float
    delta: float
    confidence: float  # joint confidence the user asked for
    bound_confidence: float  # confidence of each reported bound (after the Bonferroni split)
    eps_cp: float
    eps_bayes: float
    auc: float
    fp: int
    fn: int
    test_per_world: int
    threshold: float
    certifiable_cp: float
    certifiable_bayes: float
    verdict: str  # violation | pass | underpowered
    until_verdict: bool
    checkpoints: list[CheckpointResult] = field(default_factory=list)
    output_size: dict[str, Any] | None = None  # separate finding when the row count leaks
    spec_hash: str = ""
    synth_rows: int = 0
    runs_executed: int = 0  # by this invocation
    runs_reused: int = 0
    run_seconds_mean: float = 0.0
    seconds: float = 0.0
    executor: str = ""
    spec: dict[str, Any] = field(default_factory=dict)
    #: real-library targets: runs in which the library raised, per world (evidence when they differ)
    failed_runs: dict[str, Any] | None = None
    #: real-library targets: TargetInfo, installed version, documented warnings of one fit
    target_info: dict[str, Any] | None = None
    #: how the analysed runs were computed: {"fast": n, "plain": n, "fallback": n} (dpcheck.audit.runners.fastpath)
    run_paths: dict[str, int] = field(default_factory=dict)
    #: --attack auto: candidates, their validation scores and the chosen attack (dpcheck.audit.attacks.selection)
    attack_selection: dict[str, Any] | None = None
    #: μ-GDP lower bounds (dpcheck.audit.core.gdp) at their own validation-chosen threshold; valid as a
    #: bound on μ only for mechanisms whose guarantee is μ-GDP — never used for the (ε, δ) verdict
    gdp: dict[str, Any] | None = None
    #: --search: the pilot over the hyperparameter grid that fixed this audit's setting (dpcheck.audit.runners.search)
    search: dict[str, Any] | None = None
    #: what the adversary sees: "black-box" (released synthetic data or array) or "white-box (passive)"
    #: (also the model release_model() returns); dpcheck.audit.attacks.whitebox.threat_model_of
    threat_model: str = "black-box"
    #: cervical without --target: how dpcheck.audit.runners.targets chose the target (candidates' mini-audit AUCs)
    target_selection: dict[str, Any] | None = None

    @property
    def violation(self) -> bool:
        return self.verdict == "violation"

    def to_dict(self) -> dict[str, Any]:
        return _json_safe(asdict(self))


def _json_safe(value: Any) -> Any:
    """NaN → None and ±inf → "inf"/"-inf", so the JSON is strict."""
    if isinstance(value, dict):
        return {k: _json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_safe(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None if math.isnan(value) else str(value)
    return value


def check_impl_name(name: str) -> None:
    """Fail early (in the parent) on names no worker could resolve."""
    from dpcheck.audit.reference.mechanisms import known_names

    if name in known_names():
        return
    if ":" in name and is_target(name):
        from dpcheck.targets import registry

        registry.check_available(registry.get(name))
        return
    from dpcheck.targets import registry

    if ":" in name:
        try:
            registry.check_name(name)  # a misspelt LIBRARY:NAME, not a package.module:Factory
        except KeyError as exc:
            raise ValueError(exc.args[0]) from None
        from dpcheck.audit.core.usercode import describe, is_ours, where
        from dpcheck.impls import load_factory

        try:
            load_factory(name)
        except ValueError:
            raise
        except BaseException as exc:  # noqa: BLE001 - the user's module ran at import: any error is theirs
            if is_ours(exc):
                raise
            module = name.partition(":")[0]
            raise ValueError(f"your module {module!r} (implementation {name!r}) failed while being imported: "
                             f"{describe(exc)}{'' if isinstance(exc, SyntaxError) else where(exc)}") from None
        return
    raise ValueError(f"unknown implementation {name!r};{registry.suggestion(name)} "
                     "Or pass package.module:Factory.")


def is_target(name: str) -> bool:
    """A built-in real-library target ("LIBRARY:NAME" in :mod:`dpcheck.targets.registry`)."""
    if ":" not in name:
        return False
    from dpcheck.targets import registry

    return registry.is_target(name)


def run_name(spec: AuditSpec, world: int, index: int) -> str:
    """"shadow run 3 of world 1 (D, with the target record 4)": which run, in words."""
    target = f" {spec.target}" if isinstance(spec.target, int) else ""
    which = f"D, with the target record{target}" if world == WORLD_IN else f"D′, without the target record{target}"
    return f"shadow run {index} of world {world} ({which})"


def execute_runs(spec: AuditSpec, runs: int, *, store: Store, executor: Any, progress: Any = None,
                 session: str = "", label: str = "", worlds: tuple[int, ...] = WORLDS) -> tuple[int, int]:
    """Make sure runs 0..runs-1 of ``worlds`` are stored; returns (executed now, reused)."""
    progress = progress or NullProgress()
    generation = spec.generation()
    spec_hash = spec.generation_hash()
    store.register(spec_hash, generation)
    done = {(w, i) for w, i in store.done(spec_hash, runs) if w in worlds}
    todo = [Task(generation, w, i) for i in range(runs) for w in worlds if (w, i) not in done]
    progress.begin(label or f"{spec.impl} {spec.attack}", len(worlds) * runs, len(done))
    executed = 0
    failures: list[str] = []
    if todo:
        outcomes = executor.imap(todo)
        try:
            for out in outcomes:
                if out.failed is not None:
                    failures.append(f"world {out.world}, index {out.index}: {out.failed}")
                if out.error is not None or out.synth is None:
                    raise AuditRunError(f"{spec.impl}: {run_name(spec, out.world, out.index)}, seed {out.seed}, "
                                        f"failed: {out.error}")
                if store.put(spec_hash, out.world, out.index, seed=out.seed, rows_requested=out.rows_requested,
                             synth=out.synth, seconds=out.seconds, worker=out.worker, session=session):
                    executed += 1
                progress.advance()
        finally:
            close = getattr(outcomes, "close", None)
            if close:
                close()
    progress.end()
    if failures and len(failures) == len(todo) == len(worlds) * runs:
        raise AuditRunError(f"{spec.impl}: every shadow run failed, e.g. {failures[0]}")
    return executed, len(done)


def output_size_finding(records: list[RunRecord], requested: int) -> dict[str, Any] | None:
    sizes = {w: sorted({int(r.synth.shape[0]) for r in records if r.world == w}) for w in WORLDS}
    if sizes[WORLD_IN] == sizes[WORLD_OUT] and sizes[WORLD_IN] == [requested]:
        return None
    reveals = sizes[WORLD_IN] != sizes[WORLD_OUT]
    message = (f"asked for {requested} synthetic rows in both worlds; got {sizes[WORLD_IN]} with the target "
               f"and {sizes[WORLD_OUT]} without")
    if reveals:
        message += ": the output size reveals the input size (membership leaks through the row count)"
    return {"category": "general", "reveals_input_size": reveals, "requested": requested,
            "rows_with_target": sizes[WORLD_IN], "rows_without_target": sizes[WORLD_OUT], "message": message}


def failed_runs(records: list[RunRecord], runs: int) -> dict[str, Any]:
    """Runs whose output is empty (the library raised), per world, among the first ``runs``."""
    counts = {w: sum(1 for r in records if r.world == w and r.index < runs and r.synth.size == 0) for w in WORLDS}
    return {"with_target": counts[WORLD_IN], "without_target": counts[WORLD_OUT], "runs_per_world": runs}


def release_size_finding(records: list[RunRecord]) -> dict[str, Any] | None:
    """Mechanism targets: a release whose length differs between runs or worlds."""
    sizes = {w: sorted({int(r.synth.size) for r in records if r.world == w and r.synth.size}) for w in WORLDS}
    if len(set(sizes[WORLD_IN]) | set(sizes[WORLD_OUT])) <= 1:
        return None
    reveals = sizes[WORLD_IN] != sizes[WORLD_OUT]
    message = (f"released arrays have {sizes[WORLD_IN]} values with the target and {sizes[WORLD_OUT]} without")
    if reveals:
        message += ": the size of the release reveals membership"
    return {"category": "general", "reveals_input_size": reveals, "release_sizes_with_target": sizes[WORLD_IN],
            "release_sizes_without_target": sizes[WORLD_OUT], "message": message}


def evaluate(spec: AuditSpec, records: list[RunRecord], runs: int, *,
             bound_confidence: float) -> tuple[attacks.AttackOutcome, float, float, float, float]:
    """(attack outcome, ε_CP, ε_Bayes, certifiable CP, certifiable Bayes) on the first ``runs``."""
    dataset = datasets.load(spec.dataset, spec.target, spec.data)
    from dpcheck.audit.attacks import selection

    outcome = selection.analyse(spec, records, dataset, runs, bound_confidence=bound_confidence)
    c = outcome.counts
    eps_cp = stats.eps_clopper_pearson(c.fp, c.negatives, c.fn, c.positives, delta=spec.delta,
                                       confidence=bound_confidence)
    eps_bayes = stats.eps_bayesian(c.fp, c.negatives, c.fn, c.positives, delta=spec.delta,
                                   confidence=bound_confidence)
    cert_cp, cert_bayes = stats.certifiable_max(c.negatives, c.positives, delta=spec.delta,
                                                confidence=bound_confidence)
    return outcome, eps_cp, eps_bayes, cert_cp, cert_bayes


def checkpoint_plan(runs: int, checkpoints: tuple[int, ...] | list[int] | None) -> list[int]:
    """Checkpoints fixed before any run: those below ``runs``, then ``runs`` itself."""
    return sorted({c for c in (checkpoints or ()) if 5 <= c < runs} | {runs})


def run_audit(spec: AuditSpec, *, store: Store, executor: Any, progress: Any = None,
              until_verdict: bool = False, checkpoints: tuple[int, ...] | list[int] | None = None) -> AuditResult:
    """Run (or resume) the audit described by ``spec`` and analyse it.

    With ``until_verdict`` the analysis runs at each fixed checkpoint with the error probability
    split evenly across them (Bonferroni), and stops at the first checkpoint whose bound proves
    ε_emp > ε; the reported bounds hold jointly over all checkpoints at ``spec.confidence``.
    """
    if spec.target is None and spec.dataset in ("cervical", "csv"):
        raise ValueError("resolve the target first (dpcheck.audit.runners.targets.resolve_target)")
    if spec.phase != "audit":  # pilot and target-selection runs choose settings; they never enter a bound
        raise ValueError(f"a {spec.phase!r} spec cannot be audited: only phase 'audit' runs enter a bound")
    from dpcheck.audit.attacks import whitebox

    whitebox.check_supported(spec.impl, spec.attack)
    from dpcheck.audit.attacks import release_query

    release_query.check_supported(spec.impl, spec.attack)
    from dpcheck.audit.attacks.dpsgd import check_gradient_canary

    check_gradient_canary(spec)
    progress = progress or NullProgress()
    started = time.perf_counter()
    session = uuid.uuid4().hex[:12]
    plan = checkpoint_plan(spec.runs, (checkpoints or DEFAULT_CHECKPOINTS) if until_verdict else None)
    bound_confidence = 1.0 - (1.0 - spec.confidence) / len(plan)
    executed = 0
    history: list[CheckpointResult] = []
    for runs in plan:
        now, _ = execute_runs(spec, runs, store=store, executor=executor, progress=progress, session=session,
                                   label=f"{spec.impl} · {spec.dataset} · R={runs}")
        executed += now
        records = store.load(spec.generation_hash(), runs)
        outcome, eps_cp, eps_bayes, cert_cp, cert_bayes = evaluate(spec, records, runs,
                                                                    bound_confidence=bound_confidence)
        history.append(CheckpointResult(runs, eps_cp, eps_bayes, outcome.auc, cert_cp, eps_cp > spec.epsilon))
        if until_verdict and len(plan) > 1:
            progress.note(f"checkpoint R={runs}: ε_emp(CP) = {eps_cp:.3f} at confidence {bound_confidence:.4f}"
                          f" (Bonferroni over {len(plan)} checkpoints), AUC {outcome.auc:.3f}")
        if eps_cp > spec.epsilon:
            break
    if eps_cp > spec.epsilon:
        verdict = "violation"
    elif cert_cp <= spec.epsilon:
        verdict = "underpowered"
    else:
        verdict = "pass"
    requested = records[0].rows_requested if records else 0
    target = is_target(spec.impl)
    released_array = spec.attack in RELEASE_ATTACKS + WHITEBOX_ATTACKS  # not synthetic rows
    size_finding = release_size_finding(records) if released_array else None
    return AuditResult(
        impl=spec.impl, attack=spec.attack, dataset=spec.dataset,
        target=datasets.load(spec.dataset, spec.target, spec.data).target_index, runs=runs, runs_planned=spec.runs,
        epsilon=spec.epsilon, delta=spec.delta, confidence=spec.confidence, bound_confidence=bound_confidence,
        eps_cp=eps_cp, eps_bayes=eps_bayes, auc=outcome.auc, fp=outcome.counts.fp, fn=outcome.counts.fn,
        test_per_world=outcome.test, threshold=outcome.threshold, certifiable_cp=cert_cp,
        certifiable_bayes=cert_bayes, verdict=verdict, until_verdict=until_verdict, checkpoints=history,
        output_size=size_finding if released_array else output_size_finding(
            [r for r in records if not (target and r.synth.size == 0)] or records, requested), spec_hash=spec.generation_hash(),
        synth_rows=requested, runs_executed=executed, runs_reused=2 * runs - executed,
        run_seconds_mean=float(np.mean([r.seconds for r in records])) if records else 0.0,
        seconds=time.perf_counter() - started, executor=getattr(executor, "description", ""),
        spec=spec.to_dict(), failed_runs=failed_runs(records, runs) if target else None,
        target_info=target_details(spec) if target else None, run_paths=run_paths_of(records),
        attack_selection=outcome.selection, gdp=gdp_bounds(outcome, bound_confidence),
        threat_model=whitebox.threat_model_of(spec))


def gdp_bounds(outcome: attacks.AttackOutcome, confidence: float) -> dict[str, Any] | None:
    """μ_emp by each method of :data:`gdp.METHODS`, fixed in advance, the confidence split across
    them so that the headline (their maximum) holds at ``confidence``."""
    from dpcheck.audit.core import gdp

    c = outcome.gdp_counts
    if c is None or c.negatives == 0 or c.positives == 0:
        return None
    each = 1.0 - (1.0 - confidence) / len(gdp.METHODS)
    mu = {m: gdp.mu_lower_bound(m, c.fp, c.negatives, c.fn, c.positives, confidence=each) for m in gdp.METHODS}
    return {"mu_emp": max(mu.values()), "by_method": mu, "confidence_each": each, "fp": c.fp, "fn": c.fn,
            "test_per_world": c.negatives,
            "validity": "a lower bound on μ for μ-GDP mechanisms (Gaussian noise, DP-SGD-style accounting) only"}


def run_paths_of(records: list[RunRecord]) -> dict[str, int]:
    """How many of ``records`` ran on the fast path, the plain path, or the plain path after a
    failed fast batch."""
    from dpcheck.audit.runners.executor import run_path_of

    counts = {"fast": 0, "plain": 0, "fallback": 0}
    for r in records:
        counts[run_path_of(r.worker)] += 1
    return counts


def target_details(spec: AuditSpec) -> dict[str, Any]:
    """TargetInfo, installed version, and the warnings + time of one fit on D (in this process,
    main-env targets only; not one of the audit's runs)."""
    import warnings

    from dpcheck.targets import registry
    from dpcheck.targets.base import shadow_release

    info = registry.get(spec.impl)
    details: dict[str, Any] = {**info.to_dict(), "version": registry.library_version(info)}
    if info.env != "main":
        return details
    data = datasets.load(spec.dataset, spec.target, spec.data)
    schema = data.get_schema()
    rows = 1 if info.kind == "mechanism" else int(spec.synth_rows or data.default_synth_rows)
    frame = schema.decode(data.with_target)
    timings = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(2):  # the first fit also imports the library: the second one is timed
            started = time.perf_counter()
            try:
                shadow_release(info, frame, schema, spec.epsilon, spec.delta, spec.seed, rows, dict(spec.hyperparams))
            except Exception as exc:  # noqa: BLE001 - informational: the audit itself already ran
                details["one_fit_error"] = f"{type(exc).__name__}: {exc}"
            timings.append(time.perf_counter() - started)
    details["one_fit_seconds"] = timings[-1]
    details["warnings"] = sorted({f"{w.category.__name__}: {w.message}" for w in caught})
    return details
