"""One-run auditing (Steinke, Nasr & Jagielski 2023, "Privacy Auditing with One (1) Training Run").

The game: m canary records, each included independently with probability ½ (S_i = +1 in, −1 out),
ONE run of the mechanism on the background rows plus the included canaries, a score per canary
computed from the output alone, and guesses T_i ∈ {−1, 0, +1}: the k+ highest scores guessed "in",
the k− lowest "out", the rest abstained; r = k+ + k−, v = correct guesses.

Bound (the paper's main theorem, as we reconstruct it): if the mechanism is (ε, δ)-DP with respect
to each canary's inclusion, then for every v

    P[V ≥ v] ≤ f(v) + 2·m·δ·max_{1 ≤ i ≤ v} (f(v − i) − f(v)) / i,
    f(u) = P[Binomial(r, e^ε / (1 + e^ε)) ≥ u];

with δ = 0 this is "V is stochastically dominated by Binomial(r, e^ε/(1+e^ε))". The right-hand side
at the observed v is a p-value for "the mechanism is (ε, δ)-DP", and ε_lower is the smallest ε whose
p-value exceeds β = 1 − confidence: every ε below it is rejected at level β.

Validity needs: inclusions independent and uniform (drawn here from a seeded generator the
mechanism never sees); scores and the choice of which canaries to guess computed from the output
and public information only; r (k+, k−) fixed before the run; the (ε, δ) guarantee holding for
adding/removing one canary with every other record fixed. Canaries that share a released cell do
not break validity, only power: the dataset below gives each canary its own cell.
"""
from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Callable

import numpy as np
from scipy.stats import binom

#: the canary dataset (kind "onerun"): columns cell ∈ [0, C−1] and label ∈ {0, 1}, C = m + BACKGROUND_CELLS
BACKGROUND_CELLS = 8
BACKGROUND_ROWS = 100
MAX_CELLS = 4096  # what the histogram mechanisms accept (exact_targets.MAX_CELLS, mechanisms.MAX_CELLS)
MAX_CANARIES = MAX_CELLS // 2 - BACKGROUND_CELLS
DEFAULT_SYNTH_ROWS = 100_000
DEFAULT_GUESS_FRACTION = 0.5
EPS_MAX = 50.0
_GRID_STEP = 0.01


class OneRunRefused(ValueError):
    """The target cannot take the canary dataset (or the request is malformed)."""


class OneRunFailed(RuntimeError):
    """The user's adapter exited, was killed or hung in its worker process."""


# ---------------------------------------------------------------- the bound

def _accuracy(epsilon: float) -> float:
    """e^ε / (1 + e^ε): the accuracy of ε-DP randomized response."""
    return 1.0 / (1.0 + math.exp(-epsilon))


def p_value(m: int, r: int, v: int, epsilon: float, delta: float) -> float:
    """Upper bound on P[V ≥ v] for an (ε, δ)-DP mechanism with m canaries and r guesses."""
    if not 0 <= v <= r <= m:
        raise ValueError(f"need 0 <= v <= r <= m, got v={v}, r={r}, m={m}")
    if epsilon < 0 or not 0 <= delta <= 1:
        raise ValueError(f"need epsilon >= 0 and 0 <= delta <= 1, got {epsilon}, {delta}")
    q = _accuracy(epsilon)
    tail = float(binom.sf(v - 1, r, q))  # f(v)
    if delta == 0 or v == 0:
        return min(tail, 1.0)
    i = np.arange(1, v + 1)
    below = np.cumsum(binom.pmf(v - i, r, q))  # f(v − i) − f(v) = P[v − i ≤ W < v]
    return min(tail + 2.0 * m * delta * float(np.max(below / i)), 1.0)


def epsilon_lower_bound(m: int, r: int, v: int, *, delta: float, confidence: float) -> float:
    """The smallest ε ≥ 0 that the observed v does not reject at level 1 − confidence (0 if none is)."""
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    beta = 1.0 - confidence
    rejected = lambda e: p_value(m, r, v, e, delta) <= beta  # noqa: E731
    if r == 0 or not rejected(0.0):
        return 0.0
    if delta == 0:  # f(v) increases with ε: bisection finds the one crossing
        lo, hi = 0.0, 1.0
        while rejected(hi):
            lo, hi = hi, 2 * hi
            if hi > EPS_MAX:
                return EPS_MAX
    else:  # the δ term need not be monotone in ε: walk up a grid to the FIRST ε not rejected
        lo = 0.0
        while rejected(lo + _GRID_STEP):
            lo += _GRID_STEP
            if lo > EPS_MAX:
                return EPS_MAX
        hi = lo + _GRID_STEP
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if rejected(mid) else (lo, mid)
    return lo


def certifiable_max(m: int, r: int, *, delta: float, confidence: float) -> float:
    """ε_lower of a perfect guesser (v = r): the most r guesses can ever certify."""
    return epsilon_lower_bound(m, r, r, delta=delta, confidence=confidence)


# ---------------------------------------------------------------- guesses

def guess_counts(m: int, guesses: float | None) -> tuple[int, int]:
    """(k+, k−) from ``--guesses``: a count K ≥ 1 or a fraction in (0, 1] of m; split as evenly as possible."""
    if m < 2:
        raise OneRunRefused(f"one-run auditing needs at least 2 canaries, got {m}")
    g = DEFAULT_GUESS_FRACTION if guesses is None else float(guesses)
    if not g > 0:
        raise OneRunRefused(f"--guesses must be a positive count or a fraction in (0, 1], got {guesses}")
    total = int(round(g * m)) if g <= 1 else int(g)
    if g > 1 and g != int(g):
        raise OneRunRefused(f"--guesses above 1 is a count of guesses and must be an integer, got {guesses}")
    if total > m:
        raise OneRunRefused(f"--guesses {total} is more than the {m} canaries")
    total = max(total, 1)
    return (total + 1) // 2, total // 2


def guess(scores: np.ndarray, k_in: int, k_out: int, rng: np.random.Generator) -> np.ndarray:
    """T ∈ {−1, 0, +1}^m: +1 for the k_in highest scores, −1 for the k_out lowest, ties broken at random.

    ``scores`` may be (m,) or (m, c): columns are compared lexicographically, the first one first.
    """
    scores = np.asarray(scores, dtype=float)
    keys = scores.reshape(len(scores), -1)
    m = len(keys)
    if k_in + k_out > m:
        raise ValueError(f"{k_in} + {k_out} guesses for {m} canaries")
    order = np.lexsort((rng.random(m), *keys.T[::-1]))  # ascending; the first key column is the primary
    out = np.zeros(m, dtype=int)
    out[order[:k_out]] = -1
    if k_in:
        out[order[m - k_in:]] = 1
    return out


def score_guesses(guesses: np.ndarray, included: np.ndarray) -> tuple[int, int]:
    """(r, v): guesses made and guesses that were right."""
    s = np.where(np.asarray(included, dtype=bool), 1, -1)
    t = np.asarray(guesses, dtype=int)
    return int(np.sum(t != 0)), int(np.sum(t * s > 0))


# ---------------------------------------------------------------- the canary dataset

@dataclass(frozen=True)
class CanaryDataset:
    """Background rows plus m canaries over a public integer domain; canary i is (BACKGROUND_CELLS + i, 1)."""

    m: int
    background: np.ndarray  # (B, 2)
    canaries: np.ndarray  # (m, 2)

    @property
    def cells(self) -> int:
        return self.m + BACKGROUND_CELLS

    @property
    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        return np.array([0.0, 0.0]), np.array([float(self.cells - 1), 1.0])

    @property
    def columns(self) -> tuple[str, str]:
        return ("cell", "label")

    def schema(self) -> Any:
        from dpcheck.targets.base import Column, Schema

        return Schema((Column("cell", "integer", lower=0.0, upper=float(self.cells - 1)),
                       Column("label", "integer", lower=0.0, upper=1.0)))

    def data(self, included: np.ndarray) -> np.ndarray:
        return np.vstack([self.background, self.canaries[np.asarray(included, dtype=bool)]])


def canary_dataset(m: int, background_rows: int = BACKGROUND_ROWS) -> CanaryDataset:
    if not 2 <= m <= MAX_CANARIES:
        raise OneRunRefused(f"--one-run takes 2 to {MAX_CANARIES} canaries (each needs its own cell of a "
                            f"domain of at most {MAX_CELLS} cells), got {m}")
    j = np.arange(background_rows)
    background = np.column_stack([j % BACKGROUND_CELLS, j % 2]).astype(float)
    canaries = np.column_stack([BACKGROUND_CELLS + np.arange(m), np.ones(m)]).astype(float)
    return CanaryDataset(m, background, canaries)


# ---------------------------------------------------------------- scores

def release_scores(release: np.ndarray, ds: CanaryDataset) -> np.ndarray:
    """Mechanism output → per-canary score: the released value of the canary's own cell.

    A release of one value per cell of the (cell, label) domain (histograms, randomized response)
    is read at the canary's cell; one value per cell of each 1-way marginal (cell marginal, then
    label marginal) is read at the canary's ``cell`` value, which no other canary shares.
    """
    release = np.asarray(release, dtype=float).ravel()
    cell = ds.canaries[:, 0].astype(int)
    if release.size == 2 * ds.cells:
        return release[cell * 2 + 1]
    if release.size == ds.cells + 2:
        return release[cell]
    raise OneRunRefused(f"cannot score a release of {release.size} values: expected one per cell of the "
                        f"(cell, label) domain ({2 * ds.cells}) or of its 1-way marginals ({ds.cells + 2})")


def synthetic_scores(synth: np.ndarray, ds: CanaryDataset) -> np.ndarray:
    """Synthetic rows → (m, 2) scores: rows equal to the canary after rounding, then closeness 1 − DCR.

    DCR is the distance from the canary to the closest synthetic row, each coordinate scaled by the
    public bounds, divided by √2 (so it lies in [0, 1] inside the domain).
    """
    synth = np.asarray(synth, dtype=float).reshape(-1, 2)
    synth = synth[np.isfinite(synth).all(axis=1)]
    m = ds.m
    if not len(synth):
        return np.zeros((m, 2))
    cell = np.rint(synth[:, 0]).astype(np.int64)
    label = np.rint(synth[:, 1]).astype(np.int64)
    exact = np.zeros(m)
    hit = (label == 1) & (cell >= BACKGROUND_CELLS) & (cell < ds.cells)
    np.add.at(exact, cell[hit] - BACKGROUND_CELLS, 1.0)
    lower, upper = ds.bounds
    span = np.where(upper > lower, upper - lower, 1.0)
    scaled = (synth - lower) / span
    canaries = (ds.canaries - lower) / span
    order = np.argsort(scaled[:, 0])
    xs, ys = scaled[order, 0], scaled[order, 1]
    dcr = np.empty(m)
    for i, (cx, cy) in enumerate(canaries):  # nearest rows in the cell coordinate; a window suffices
        pos = np.searchsorted(xs, cx)
        lo, hi = max(0, pos - 64), min(len(xs), pos + 64)
        dcr[i] = np.min(np.hypot(xs[lo:hi] - cx, ys[lo:hi] - cy)) / math.sqrt(2)
    return np.column_stack([exact, 1.0 - np.minimum(dcr, 1.0)])


# ---------------------------------------------------------------- the game

@dataclass
class OneRunResult:
    impl: str
    canaries: int
    included: int
    k_in: int
    k_out: int
    r: int
    v: int
    epsilon: float
    delta: float
    confidence: float
    eps_lower: float
    certifiable: float
    verdict: str  # violation | pass | underpowered
    score: str  # what each canary's score is
    run_seconds: float  # the one fit/release (and sampling)
    seconds: float  # everything: data, run, scoring, bound
    seed: int
    synth_rows: int | None = None
    hyperparams: dict[str, Any] = field(default_factory=dict)
    dataset: str = "onerun"
    validity: str = ("valid at the stated confidence for a mechanism that is (ε, δ)-DP per canary; canaries "
                     "included independently with probability 1/2; guesses fixed in number before the run")

    @property
    def violation(self) -> bool:
        return self.verdict == "violation"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def seeds_for(seed: int) -> tuple[np.random.Generator, int, np.random.Generator]:
    """(inclusion generator, mechanism seed, tie-break generator): independent streams of ``seed``."""
    a, b, c = np.random.SeedSequence([int(seed), 0x1E1]).spawn(3)
    return (np.random.default_rng(a), int(b.generate_state(1, dtype=np.uint32)[0] & 0x7FFFFFFF),
            np.random.default_rng(c))


def play(run: Callable[[np.ndarray, int], np.ndarray], m: int, *, guesses: float | None, epsilon: float,
         delta: float, confidence: float, seed: int, impl: str = "custom", score: str = "custom") -> OneRunResult:
    """The game around ``run(included, mechanism_seed) → scores`` (shape (m,) or (m, c), higher = "in")."""
    started = time.perf_counter()
    k_in, k_out = guess_counts(m, guesses)
    inclusion_rng, mech_seed, tie_rng = seeds_for(seed)
    included = inclusion_rng.random(m) < 0.5
    run_started = time.perf_counter()
    scores = np.asarray(run(included.copy(), mech_seed), dtype=float)
    run_seconds = time.perf_counter() - run_started
    if scores.shape[0] != m:
        raise ValueError(f"{impl}: {scores.shape[0]} scores for {m} canaries")
    r, v = score_guesses(guess(scores, k_in, k_out, tie_rng), included)
    eps_lower = epsilon_lower_bound(m, r, v, delta=delta, confidence=confidence)
    cert = certifiable_max(m, r, delta=delta, confidence=confidence)
    verdict = "violation" if eps_lower > epsilon else ("underpowered" if cert <= epsilon else "pass")
    return OneRunResult(impl=impl, canaries=m, included=int(included.sum()), k_in=k_in, k_out=k_out, r=r, v=v,
                        epsilon=epsilon, delta=delta, confidence=confidence, eps_lower=eps_lower, certifiable=cert,
                        verdict=verdict, score=score, run_seconds=run_seconds,
                        seconds=time.perf_counter() - started, seed=seed)


# ---------------------------------------------------------------- targets

def target_kind(name: str) -> str:
    """"release" (a main-env mechanism target read per cell) or "synthetic" (an adapter's synthetic rows).

    Raises :class:`OneRunRefused` naming what the target lacks.
    """
    from dpcheck.audit.reference.mechanisms import known_names
    from dpcheck.audit.runners.engine import check_impl_name, is_target

    if name in known_names():
        return "synthetic"
    if is_target(name):
        from dpcheck.targets import registry
        from dpcheck.audit.worlds.datasets import split_background

        info = registry.get(name)
        base, _ = split_background(info.dataset)
        why = None
        if info.kind != "mechanism":
            why = (f"it is a synthesizer run in the {info.env!r} virtualenv; the one-run game fits its target "
                   "once in this process and reads per-cell releases")
        elif info.env != "main":
            why = f"it runs in the {info.env!r} virtualenv, and the one-run game runs targets in this process"
        elif base != "worstcase-categorical":
            why = (f"its documented use needs a {base} dataset (continuous features or labels), not many canary "
                   "records in the cells of an integer domain")
        if why:
            raise OneRunRefused(f"{name} cannot take the one-run canary dataset: {why}. One-run auditing "
                                "takes the reference:* mechanisms, the built-in implementations and "
                                "package.module:Factory adapters (docs/onerun.md)")
        check_impl_name(name)
        return "release"
    try:
        check_impl_name(name)
    except Exception as exc:  # noqa: BLE001 - any failure to resolve the name is a refusal
        raise OneRunRefused(str(exc)) from None
    return "synthetic"


def default_hyperparams(name: str) -> dict[str, Any]:
    """The worst-case knobs for the built-in PATE-GANs (2 teachers, ≤ 100 iterations, λ = 10⁻³);
    ``turing`` describes only the label as a finite column."""
    from dpcheck.audit.core.settings import paper_hyperparams

    hp = paper_hyperparams(name, "worstcase")
    if "categorical_columns" in hp:
        hp["categorical_columns"] = (1,)
    return hp


def _release_runner(name: str, ds: CanaryDataset, epsilon: float, delta: float,
                    hyper: dict[str, Any]) -> Callable[[np.ndarray, int], np.ndarray]:
    from dpcheck.targets import registry
    from dpcheck.targets.base import shadow_release

    info = registry.get(name)
    schema = ds.schema()

    def run(included: np.ndarray, seed: int) -> np.ndarray:
        frame = schema.decode(ds.data(included))
        return release_scores(shadow_release(info, frame, schema, epsilon, delta, seed, 1, hyper), ds)

    return run


def _synthetic_runner(impl: Any, ds: CanaryDataset, epsilon: float, delta: float, hyper: dict[str, Any],
                      synth_rows: int) -> Callable[[np.ndarray, int], np.ndarray]:
    def run(included: np.ndarray, seed: int) -> np.ndarray:
        impl.fit(ds.data(included), epsilon=epsilon, delta=delta, seed=seed, bounds=ds.bounds, **hyper)
        synth = np.asarray(impl.sample(synth_rows), dtype=float)
        release = getattr(impl, "release", None)
        if callable(release):  # output left in a scaled space: back to input units as its users must
            synth = np.asarray(release(synth), dtype=float)
        return synthetic_scores(synth, ds)

    return run


def audit_one_run(impl: str | Any, m: int, *, guesses: float | None = None, epsilon: float = 1.0,
                  delta: float = 1e-5, confidence: float = 0.95, seed: int = 0,
                  hyperparams: dict[str, Any] | None = None, synth_rows: int | None = None,
                  background_rows: int = BACKGROUND_ROWS) -> OneRunResult:
    """One-run audit of a named target/implementation, or of an adapter object with fit/sample."""
    ds = canary_dataset(m, background_rows)
    guess_counts(m, guesses)  # refuse bad --guesses before the run
    if not (epsilon > 0 and 0 <= delta < 1 and 0 < confidence < 1):
        raise OneRunRefused(f"need epsilon > 0, 0 <= delta < 1, 0 < confidence < 1; got {epsilon}, {delta}, "
                            f"{confidence}")
    if isinstance(impl, str):
        name, kind = impl, target_kind(impl)
        hyper = {**default_hyperparams(name), **(hyperparams or {})}
    else:
        name, kind, hyper = getattr(impl, "name", type(impl).__name__), "synthetic", dict(hyperparams or {})
    rows = None
    if kind == "release":
        runner = _release_runner(name, ds, epsilon, delta, hyper)
        score = "released value of the canary's own cell"
    else:
        from dpcheck.audit.reference.mechanisms import get_impl

        rows = int(synth_rows or DEFAULT_SYNTH_ROWS)
        adapter = get_impl(impl) if isinstance(impl, str) else impl
        runner = _synthetic_runner(adapter, ds, epsilon, delta, hyper, rows)
        score = "synthetic rows equal to the canary (after rounding), ties by closeness 1 - DCR"
    result = play(runner, m, guesses=guesses, epsilon=epsilon, delta=delta, confidence=confidence, seed=seed,
                  impl=name, score=score)
    result.synth_rows, result.hyperparams = rows, hyper
    return result


# ---------------------------------------------------------------- command line

def parse_guesses(text: str | None) -> float | None:
    """``--guesses``: a count (``200``), a fraction (``0.25``) or a percentage (``25%``)."""
    if text is None:
        return None
    try:
        value = float(text[:-1]) / 100 if text.endswith("%") else float(text)
    except ValueError:
        raise OneRunRefused(f"--guesses expects a count, a fraction in (0, 1] or a percentage, got {text!r}") from None
    return value


def table_lines(results: list[OneRunResult]) -> list[str]:
    lines = []
    for r in results:
        lines.append(f"{r.impl}: one-run audit, {r.canaries} canaries ({r.included} included), "
                     f"{r.r} guesses ({r.k_in} in / {r.k_out} out), {r.v} correct")
        lines.append(f"  ε_lower = {r.eps_lower:.3f} at confidence {r.confidence} (δ = {r.delta:g}; claimed ε = "
                     f"{r.epsilon:g}); certifiable max with {r.r} guesses {r.certifiable:.3f}; verdict {r.verdict}")
        lines.append(f"  cost: 1 run, {r.run_seconds:.2f} s (total {r.seconds:.2f} s); score: {r.score}")
    return lines


def _audit_job(job: tuple[str, int, dict[str, Any]]) -> Any:
    name, m, options = job
    return audit_one_run(name, m, **options)


def _audit_isolated(name: str, m: int, options: dict[str, Any], timeout: float | None) -> Any:
    """:func:`audit_one_run`; for the user's adapter in a worker process, where an exit, a kill or a
    hang is an error naming it (dpcheck.audit.core.workers)."""
    from dpcheck.audit.runners.executor import users_code

    if not users_code(name):
        return audit_one_run(name, m, **options)
    from dpcheck.audit.core.workers import Failure, WorkerPool

    pool = WorkerPool(1)
    try:
        ((_, result),) = list(pool.map_unordered(_audit_job, [(name, m, options)], lambda _: timeout))
    finally:
        pool.close()
    if isinstance(result, Failure):
        raise OneRunFailed(f"one-run audit of {name} failed: {result.message}")
    return result


def run_cli(args: Any) -> int:
    """``dpcheck audit --impl NAME --one-run M [--guesses K]``."""
    import json

    from dpcheck import impls
    from dpcheck.audit.core.hyperparams import parse_hyperparams
    from dpcheck.exitcodes import EXIT_FINDINGS, EXIT_OK, UsageError

    for flag, given in (("--dataset", args.dataset), ("--data", getattr(args, "data", None)),
                        ("--attack", args.attack), ("--until-verdict", args.until_verdict)):
        if given:
            raise UsageError(f"--one-run plays its own game on its canary dataset; {flag} does not apply "
                             "(docs/onerun.md)")
    try:
        guesses = parse_guesses(getattr(args, "guesses", None))
        names = impls.resolve(args.impl)
        for name in names:  # every refusal before any run
            target_kind(name)
        hyper = parse_hyperparams(args.hp)
        options = dict(guesses=guesses, epsilon=args.epsilon, delta=args.delta, confidence=args.confidence,
                       seed=args.seed, hyperparams=hyper, synth_rows=args.synth_rows)
        results = [_audit_isolated(name, int(args.one_run), options, getattr(args, "run_timeout", None) or None)
                   for name in names]
    except (OneRunRefused, OneRunFailed) as exc:
        raise UsageError(str(exc)) from None
    except Exception as exc:  # noqa: BLE001 - an implementation that fails is an error, never "no violation"
        raise UsageError(f"one-run audit failed: {type(exc).__name__}: {exc}") from None
    print("\n".join(table_lines(results)))
    if args.json_out:
        from dpcheck.audit.core.files import os_error_text, write_text_atomic

        try:
            write_text_atomic(args.json_out, json.dumps({"kind": "audit-one-run",
                                                         "results": [r.to_dict() for r in results]}, indent=2) + "\n")
        except OSError as exc:
            raise UsageError(f"cannot write --json {args.json_out}: {os_error_text(exc)}") from None
    return EXIT_FINDINGS if any(r.violation for r in results) else EXIT_OK
