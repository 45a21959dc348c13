"""The mechanism audit: pair search on pilot outputs, then a confirmatory run on fresh outputs.

Stages draw from separate random streams and never share outputs: the pilot ranks candidate
pairs; the confirmatory run trains each classifier on its own outputs, picks the classifier and
the threshold on validation outputs, and counts the set's hits on test outputs, streamed in
blocks so that 10⁸ outputs per input need no more memory than one block.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field

import numpy as np

from dpcheck.mechaudit.attack import (MIN_MASS, Scorer, Threshold, TooManyOutputs, choose_threshold, eps_bound,
                                      fit_scorer)
from dpcheck.mechaudit.neighbours import candidate_pairs, check_pair
from dpcheck.mechaudit.target import MechanismTarget, probe

CONFIDENCES = (0.9, 0.95)
BLOCK = 1_000_000


@dataclass
class Budget:
    pilot: int = 150_000  # outputs per input per candidate pair (thirds: train, set choice, count)
    train: int = 100_000
    validation: int = 400_000
    test: int = 10_000_000
    # the confidence of the validation bound that ranks thresholds and classifiers: a higher one
    # penalises small sets, whose validation counts are noisier (the best-looking of thousands of
    # small sets is often best by luck and loses on fresh outputs); the reported bounds stay at 0.9, 0.95
    select_confidence: float = CONFIDENCES[0]
    # the smallest probability, under the numerator input, of a set the validation may choose
    # (DP-Sniper's c = 0.01); lower it only with a validation large enough to rank rare sets
    min_mass: float = MIN_MASS


@dataclass
class MechanismResult:
    target: str
    claimed: float
    delta: float
    pair: tuple[list[float], list[float]]
    classifier: str
    threshold: dict
    hits: tuple[int, int]  # test outputs in S from the numerator input, from the other
    test_per_input: int
    eps_lower: dict[str, float]  # confidence → bound
    eps_point: float
    verdict: str
    seconds: float
    pilot: list[dict] = field(default_factory=list)

    def to_dict(self) -> dict:
        return asdict(self)


def _score_blocks(target: MechanismTarget, scorer: Scorer, x: np.ndarray, n: int, rng: np.random.Generator,
                  threshold: Threshold | None = None) -> np.ndarray | int:
    """Scores of n fresh outputs (threshold None) or the number of them in the set."""
    scores, hits, left = [], 0, n
    while left > 0:
        size = min(BLOCK, left)
        s = scorer.score(target.sample(x, size, rng))
        if threshold is None:
            scores.append(s.astype(np.float64))
        else:
            hits += int(np.count_nonzero(threshold.member(s)))
        left -= size
    return np.concatenate(scores) if threshold is None else hits


def rank_pairs(target: MechanismTarget, pairs: list[tuple[np.ndarray, np.ndarray]], *, n: int, delta: float,
               rng: np.random.Generator, progress: Callable[[str], None]) -> list[dict]:
    """Each pair's bound on held-out pilot outputs: train, pick the set on one part, count on another."""
    rows = []
    for i, (a, b) in enumerate(pairs):
        third = max(n // 3, 100)
        scorer = fit_scorer("logistic", target.sample(a, third, rng), target.sample(b, third, rng),
                            target.sentinels, seed=i)
        threshold, _ = choose_threshold(scorer.score(target.sample(a, third, rng)),
                                        scorer.score(target.sample(b, third, rng)),
                                        delta=delta, confidence=CONFIDENCES[0])
        hits_a = int(np.count_nonzero(threshold.member(scorer.score(target.sample(a, third, rng)))))
        hits_b = int(np.count_nonzero(threshold.member(scorer.score(target.sample(b, third, rng)))))
        num, den = (hits_a, hits_b) if threshold.a_in_numerator else (hits_b, hits_a)
        bound = float(eps_bound(np.array([num]), third, np.array([den]), third, delta=delta,
                                confidence=CONFIDENCES[0])[0])
        rows.append({"a": a.tolist(), "b": b.tolist(), "pilot_bound": round(bound, 4)})
        progress(f"  pilot pair {i + 1}/{len(pairs)} {a.tolist()} vs {b.tolist()}: {bound:.3f}")
    return sorted(rows, key=lambda r: -r["pilot_bound"])


def audit(target: MechanismTarget, *, hood: str, length: int, pair: tuple[np.ndarray, np.ndarray] | None = None,
          delta: float = 0.0, budget: Budget | None = None, classifiers: tuple[str, ...] = ("logistic", "boosting", "table"),
          seed: int = 0, base_value: float = 1.0, integer: bool = False,
          progress: Callable[[str], None] = lambda _m: None) -> MechanismResult:
    budget = budget or Budget()
    start = time.perf_counter()
    pilot_rng, train_rng, val_rng, test_rng = (np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(4))
    pilot: list[dict] = []
    if pair is None:
        candidates = candidate_pairs(length, hood, pilot_rng, base_value=base_value, integer=integer)
        probe(target, candidates[0][0])
        progress(f"{target.name}: ranking {len(candidates)} candidate pairs on {budget.pilot} pilot outputs each")
        pilot = rank_pairs(target, candidates, n=budget.pilot, delta=delta, rng=pilot_rng, progress=progress)
        a, b = np.array(pilot[0]["a"]), np.array(pilot[0]["b"])
    else:
        a, b = (np.asarray(v, dtype=float) for v in pair)
        check_pair(a, b, hood)
        probe(target, a)
    progress(f"{target.name}: confirmatory run on {a.tolist()} vs {b.tolist()} (fresh outputs)")
    tr_a, tr_b = target.sample(a, budget.train, train_rng), target.sample(b, budget.train, train_rng)
    best: tuple[float, Scorer, Threshold] | None = None
    for k, name in enumerate(classifiers):
        try:
            scorer = fit_scorer(name, tr_a, tr_b, target.sentinels, seed=seed + k)
        except TooManyOutputs as exc:
            progress(f"  {name}: skipped, {exc}")
            continue
        va = _score_blocks(target, scorer, a, budget.validation, val_rng)
        vb = _score_blocks(target, scorer, b, budget.validation, val_rng)
        threshold, bound = choose_threshold(va, vb, delta=delta,  # type: ignore[arg-type]
                                            confidence=budget.select_confidence, min_mass=budget.min_mass)
        progress(f"  {name}: validation bound {bound:.4f} (at {budget.select_confidence:g})")
        if best is None or bound > best[0]:
            best = (bound, scorer, threshold)
    assert best is not None
    _, scorer, threshold = best
    hits_a = _score_blocks(target, scorer, a, budget.test, test_rng, threshold)
    hits_b = _score_blocks(target, scorer, b, budget.test, test_rng, threshold)
    num, den = (hits_a, hits_b) if threshold.a_in_numerator else (hits_b, hits_a)
    n = budget.test
    bounds = {f"{c:g}": float(eps_bound(np.array([num]), n, np.array([den]), n, delta=delta, confidence=c)[0])
              for c in CONFIDENCES}
    if num / n <= delta:
        point = 0.0
    elif den == 0:
        point = float("inf")
    else:
        point = max(float(np.log((num / n - delta) / (den / n))), 0.0)
    verdict = "violation" if bounds["0.95"] > target.claimed else "pass"
    return MechanismResult(
        target=target.name, claimed=target.claimed, delta=delta, pair=(a.tolist(), b.tolist()),
        classifier=scorer.name, threshold={"value": threshold.value, "above": threshold.above,
                                           "numerator": "a" if threshold.a_in_numerator else "b"},
        hits=(int(num), int(den)), test_per_input=n, eps_lower=bounds, eps_point=point, verdict=verdict,
        seconds=round(time.perf_counter() - start, 1), pilot=pilot)
