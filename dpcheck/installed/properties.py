"""The properties an installed function is held to, driven by Hypothesis, judged by the oracles.

* ``pategan-moments``: the returned ``α(1..L)`` for one batch of votes equals PATE-GAN Theorem 5
  (:func:`dpcheck.reference.pategan_moment_increment`, or the reading with PATE 2017's validity
  condition, whichever is closer — as ``dpcheck test``'s moments_accountant check). Any departure
  beyond ``rtol`` fails; the report says which way: **under-charging** (a moment below the bound,
  or NaN) makes ε̂ too small and is a privacy violation; over-charging is a conservative bug.
  Hypothesis first searches for under-charging, then for any departure.
* ``laplace-scale`` / ``gaussian-scale``: the returned scale is compared with the **minimal**
  scale that gives the requested privacy: ``Δ/(ε − 2·ln(1 − δ))`` for Laplace (its exact privacy
  profile ``δ(ε) = 1 − exp((ε − Δ/b)/2)``; ``Δ/ε`` at δ = 0) and the analytic Gaussian σ (Balle &
  Wang 2018) for Gaussian. A scale below it (beyond ``rtol``) is a **violation**; above it is
  looseness, reported as the ratio, never a failure. The relative error is reported against the
  formula the library promises (``pure`` Δ/ε, ``minimal``, ``classic``, ``analytic``; ``guarantee``
  = only the lower bound is promised, the error is against the analytic σ).
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from dpcheck.checks.accountant import _closest_reference, _relative_error
from dpcheck.checks.result import CheckResult
from dpcheck.installed.caller import Caller
from dpcheck.installed.mapping import SignatureMap, scale_from
from dpcheck.reference import analytic_delta, analytic_sigma, classic_sigma

CATEGORY = {"pategan-moments": "moments_accountant", "laplace-scale": "laplace_noise",
            "gaussian-scale": "delta_scale"}
DEFAULT_EXAMPLES = 200


class _CaseFailed(Exception):
    pass


def laplace_min_scale(epsilon: float, delta: float, sensitivity: float) -> float:
    """Smallest Laplace scale b for which ``Lap(b)`` at L1 sensitivity Δ is (ε, δ)-DP: solving the
    mechanism's privacy profile ``δ(ε) = 1 − exp((ε − Δ/b)/2)`` for b (``Δ/ε`` when δ = 0)."""
    return float(sensitivity) / (float(epsilon) - 2.0 * math.log1p(-float(delta)))


def _find(strategy: Any, predicate: Any, examples: int) -> Any | None:
    from hypothesis import HealthCheck, find, settings
    from hypothesis.errors import NoSuchExample

    try:
        return find(strategy, predicate, settings=settings(
            database=None, derandomize=True, max_examples=examples, deadline=None,
            suppress_health_check=list(HealthCheck)))
    except NoSuchExample:
        return None


def check_installed(function: str, caller: Caller, examples: int = DEFAULT_EXAMPLES) -> CheckResult:
    smap = caller.smap
    if smap.kind == "accountant":
        return _accountant(function, caller, smap, examples)
    return _noise(function, caller, smap, examples)


# --------------------------------------------------------------------------- accountant


def _accountant(function: str, caller: Caller, smap: SignatureMap, examples: int) -> CheckResult:
    from dpcheck.testing import accountant_cases

    stats: dict[str, Any] = {"max_relative_error": 0.0, "refused": 0, "first_refusal": None}

    def evaluate(case: dict[str, Any]) -> dict[str, Any]:
        answer = caller.one(case)
        if "error" in answer:
            stats["refused"] += 1
            stats["first_refusal"] = stats["first_refusal"] or answer["error"]
            raise _CaseFailed(answer["error"])
        observed = np.asarray(answer["value"], dtype=np.float64).ravel()
        reference = _closest_reference(observed, case["n0"], case["n1"], case["lamda"], case["num_moments"])
        rel = _relative_error(observed, reference)
        if math.isfinite(rel):
            stats["max_relative_error"] = max(stats["max_relative_error"], rel)
        under = bool(observed.shape == reference.shape and (
            np.any(np.isnan(observed))
            or np.any(observed < reference - smap.rtol * np.maximum(np.abs(reference), 1e-12))))
        return {"observed": observed, "reference": reference, "relative_error": rel, "under": under}

    def safe(case: dict[str, Any], key: str) -> bool:
        try:
            result = evaluate(case)
        except _CaseFailed:
            return False
        return bool(result["under"]) if key == "under" else result["relative_error"] > smap.rtol

    strategy = accountant_cases(lam_range=smap.lambda_range)
    found = _find(strategy, lambda c: safe(c, "under"), examples)
    searched = ["under-charging"]
    if found is None:
        found = _find(strategy, lambda c: safe(c, "any"), examples)
        searched.append("any departure")
    evidence: dict[str, Any] = {
        "property": smap.property, "map": smap.name or smap.property, "env": caller.env, "examples": caller.calls,
        "searched": searched, "lambda_range": list(smap.lambda_range), "tolerance": smap.rtol,
        "oracle": "PATE-GAN Theorem 5 (dpcheck.reference.pategan_moment_increment)",
        "refused": stats["refused"],
    }
    if stats["first_refusal"]:
        evidence["first_refusal"] = stats["first_refusal"]
    if found is None and stats["refused"] >= caller.calls:
        return CheckResult(function, CATEGORY[smap.property], "installed.pategan_moments", "error",
                           f"the function raised on every case: {stats['first_refusal']}", evidence)
    if found is None:
        evidence["max_relative_error"] = stats["max_relative_error"]
        return CheckResult(function, CATEGORY[smap.property], "installed.pategan_moments", "pass",
                           f"{caller.calls} examples: every α(l) equals Theorem 5 (max relative error "
                           f"{stats['max_relative_error']:.2g} ≤ {smap.rtol:g}; λ in "
                           f"[{smap.lambda_range[0]:g}, {smap.lambda_range[1]:g}])", evidence)
    result = evaluate(found)
    observed, reference = result["observed"], result["reference"]
    with np.errstate(invalid="ignore", divide="ignore"):
        gap = np.where(np.isnan(observed), np.inf, np.abs(observed - reference) / np.maximum(np.abs(reference), 1e-12))
    worst = int(np.nanargmax(gap)) if observed.shape == reference.shape else 0
    evidence.update({
        "counterexample": {"n0": np.asarray(found["n0"]).tolist(), "n1": np.asarray(found["n1"]).tolist(),
                           "lamda": found["lamda"], "num_moments": found["num_moments"],
                           "num_teachers": found["num_teachers"]},
        "violation": result["under"],
        "order_l": worst + 1,
        "observed": float(observed[worst]) if observed.size else None,
        "reference": float(reference[worst]),
        "relative_error": result["relative_error"],
        "max_relative_error": max(stats["max_relative_error"], result["relative_error"]),
    })
    how = ("UNDER-charges (a moment below the bound Theorem 5 proves, or NaN: the ε̂ it yields is not a "
           "proven bound, a privacy violation)"
           if result["under"] else "over-charges (conservative: a bug, not a privacy violation)")
    ce = evidence["counterexample"]
    return CheckResult(function, CATEGORY[smap.property], "installed.pategan_moments", "fail",
                       f"{how}: α({worst + 1}) = {evidence['observed']:.6g}, Theorem 5 gives "
                       f"{evidence['reference']:.6g} (relative error {result['relative_error']:.3g}) for "
                       f"n0={ce['n0']}, n1={ce['n1']}, λ={ce['lamda']:g}, L={ce['num_moments']}", evidence)


# --------------------------------------------------------------------------- noise scale


def _noise_strategy(smap: SignatureMap) -> Any:
    from hypothesis import strategies as st

    from dpcheck.testing import _log_uniform

    return st.fixed_dictionaries({
        "epsilon": _log_uniform(*smap.epsilon),
        "delta": _log_uniform(*smap.delta) if smap.delta else st.just(0.0),
        "sensitivity": _log_uniform(*smap.sensitivity),
    })


def delta_at(smap: SignatureMap, scale: float, epsilon: float, sensitivity: float) -> float:
    """The δ the returned scale actually gives at the requested ε (exact for both mechanisms)."""
    if not (math.isfinite(scale) and scale > 0):
        return 1.0
    if smap.property == "laplace-scale":
        return max(0.0, -math.expm1((epsilon - sensitivity / scale) / 2.0))
    return analytic_delta(epsilon, scale, sensitivity)


def minimal_scale(smap: SignatureMap, epsilon: float, delta: float, sensitivity: float) -> float:
    if smap.property == "laplace-scale":
        return laplace_min_scale(epsilon, delta, sensitivity)
    return analytic_sigma(epsilon, delta, sensitivity)


def promised_scale(smap: SignatureMap, epsilon: float, delta: float, sensitivity: float) -> float:
    formula = smap.effective_formula
    if formula == "pure":
        return sensitivity / epsilon
    if formula == "classic":
        return classic_sigma(epsilon, delta, sensitivity)
    return minimal_scale(smap, epsilon, delta, sensitivity)


def _noise(function: str, caller: Caller, smap: SignatureMap, examples: int) -> CheckResult:
    stats: dict[str, Any] = {"max_relative_error": 0.0, "looseness": [], "refused": 0, "first_refusal": None}

    def evaluate(case: dict[str, Any]) -> dict[str, Any]:
        answer = caller.one(case)
        if "error" in answer:
            stats["refused"] += 1
            stats["first_refusal"] = stats["first_refusal"] or answer["error"]
            raise _CaseFailed(answer["error"])
        scale = scale_from(answer["value"], smap)
        eps, delta, sens = case["epsilon"], case["delta"], case["sensitivity"]
        minimal = minimal_scale(smap, eps, delta, sens)
        promised = promised_scale(smap, eps, delta, sens)
        rel = abs(scale - promised) / promised if math.isfinite(scale) else math.inf
        ratio = scale / minimal if math.isfinite(scale) else math.nan
        if math.isfinite(rel):
            stats["max_relative_error"] = max(stats["max_relative_error"], rel)
            stats["looseness"].append(ratio)
        violation = not (math.isfinite(scale) and scale >= minimal * (1.0 - smap.rtol))
        return {"scale": scale, "minimal": minimal, "promised": promised, "relative_error": rel,
                "ratio": ratio, "violation": violation}

    def violates(case: dict[str, Any]) -> bool:
        try:
            return bool(evaluate(case)["violation"])
        except _CaseFailed:
            return False

    found = _find(_noise_strategy(smap), violates, examples)
    check_id = f"installed.{smap.property.replace('-', '_')}"
    category = CATEGORY[smap.property]
    oracle = ("Laplace privacy profile: b ≥ Δ/(ε − 2 ln(1 − δ))" if smap.property == "laplace-scale"
              else "analytic Gaussian σ (Balle & Wang 2018, dpcheck.reference.analytic_sigma)")
    loose = stats["looseness"]
    evidence: dict[str, Any] = {
        "property": smap.property, "map": smap.name or smap.property, "env": caller.env,
        "examples": caller.calls, "formula": smap.effective_formula, "oracle_minimal": oracle,
        "epsilon_range": list(smap.epsilon), "delta_range": list(smap.delta) if smap.delta else [0.0, 0.0],
        "sensitivity_range": list(smap.sensitivity), "tolerance": smap.rtol, "refused": stats["refused"],
        "looseness_min": min(loose) if loose else None, "looseness_max": max(loose) if loose else None,
    }
    if stats["first_refusal"]:
        evidence["first_refusal"] = stats["first_refusal"]
    if found is None and not loose:
        return CheckResult(function, category, check_id, "error",
                           f"the function raised on every case: {stats['first_refusal']}", evidence)
    if found is None:
        evidence["max_relative_error"] = stats["max_relative_error"]
        promise = {"pure": "Δ/ε", "minimal": "the minimal Laplace scale", "classic": "the classic σ",
                   "analytic": "the analytic σ", "guarantee": "the analytic σ"}[smap.effective_formula]
        return CheckResult(function, category, check_id, "pass",
                           f"{caller.calls} examples: scale never below the minimum for (ε, δ) "
                           f"(ratio to it {min(loose):.4g}–{max(loose):.4g}); max relative error vs {promise} "
                           f"{stats['max_relative_error']:.2g}"
                           + (f"; {stats['refused']} case(s) refused" if stats["refused"] else ""), evidence)
    result = evaluate(found)
    evidence.update({
        "counterexample": {k: found[k] for k in ("epsilon", "delta", "sensitivity")},
        "violation": True, "observed": result["scale"], "reference": result["minimal"],
        "promised": result["promised"], "ratio": result["ratio"],
        "delta_at_observed_scale": delta_at(smap, result["scale"], found["epsilon"], found["sensitivity"]),
        "relative_error": abs(result["scale"] - result["minimal"]) / result["minimal"]
        if math.isfinite(result["scale"]) else math.inf,
        "max_relative_error": max(stats["max_relative_error"], result["relative_error"]),
    })
    ce = evidence["counterexample"]
    return CheckResult(function, category, check_id, "fail",
                       f"scale {result['scale']:.6g} is below the minimal {result['minimal']:.6g} for "
                       f"ε={ce['epsilon']:g}, δ={ce['delta']:g}, Δ={ce['sensitivity']:g} (ratio "
                       f"{result['ratio']:.4g}, relative error {evidence['relative_error']:.3g}; its δ at this ε is "
                       f"{evidence['delta_at_observed_scale']:.4g}): less noise than the privacy claim needs", evidence)
