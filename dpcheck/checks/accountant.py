"""moments_accountant: the implementation's moment updates equal the Theorem 5 oracle (as printed,
or with PATE 2017's validity condition on the data-dependent term, which the twins check).

Two drives: (1) where the adapter exposes ``accountant_update(n0, n1, *, lamda, num_moments)``,
Hypothesis generates vote counts, λ over several decades, k and L, and shrinks any mismatch to a
minimal counterexample; (2) always, the moment vectors the accountant reported through the probe
during real runs are compared with the oracle applied to the votes observed in the same step.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from dpcheck import impls
from dpcheck.checks.observe import standard, observe
from dpcheck.checks.pate import BUDGET_RUN, EPSILON
from dpcheck.checks.result import CheckResult
from dpcheck.reference import pategan_moment_increment
from dpcheck.reference.pategan import pategan_moments

CHECK_ID = "accountant.theorem5_differential"
RTOL = 1e-6
MAX_EXAMPLES = 200


def _relative_error(observed: np.ndarray, reference: np.ndarray) -> float:
    observed, reference = np.asarray(observed, float), np.asarray(reference, float)
    if observed.shape != reference.shape:
        return float("inf")
    denom = np.maximum(np.abs(reference), 1e-12)
    with np.errstate(invalid="ignore"):
        err = np.abs(observed - reference) / denom
    return float(np.nanmax(np.where(np.isnan(observed) != np.isnan(reference), np.inf, err)))


def _closest_reference(observed: np.ndarray, n0: Any, n1: Any, lamda: float, num_moments: int) -> np.ndarray:
    """Theorem 5 as printed, or with PATE 2017's validity condition on the data-dependent term
    (the sound reading the corrected twins implement, DP302): whichever ``observed`` is closer to."""
    printed = pategan_moment_increment(n0, n1, lamda, num_moments)
    checked = pategan_moments(n0, n1, lamda, num_moments, check_validity=True)
    return checked if _relative_error(observed, checked) < _relative_error(observed, printed) else printed


def _hypothesis_drive(adapter: Any) -> dict[str, Any] | None:
    """Shrunk counterexample where the adapter's update departs from the oracle, or None."""
    from hypothesis import HealthCheck, find, settings
    from hypothesis import strategies as st

    from dpcheck.testing import accountant_cases

    def departs(case: dict[str, Any]) -> bool:
        observed = adapter.accountant_update(case["n0"], case["n1"], lamda=case["lamda"], num_moments=case["num_moments"])
        reference = _closest_reference(observed, case["n0"], case["n1"], case["lamda"], case["num_moments"])
        return _relative_error(observed, reference) > RTOL

    try:
        case = find(
            accountant_cases(),
            departs,
            settings=settings(database=None, derandomize=True, max_examples=MAX_EXAMPLES, deadline=None,
                              suppress_health_check=list(HealthCheck)),
        )
    except Exception as exc:  # hypothesis.errors.NoSuchExample
        if type(exc).__name__ == "NoSuchExample":
            return None
        raise
    observed = np.asarray(adapter.accountant_update(case["n0"], case["n1"], lamda=case["lamda"],
                                                    num_moments=case["num_moments"]), float)
    reference = _closest_reference(observed, case["n0"], case["n1"], case["lamda"], case["num_moments"])
    worst = int(np.nanargmax(np.abs(observed - reference) / np.maximum(np.abs(reference), 1e-12)))
    return {
        "counterexample": {k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in case.items()},
        "order_l": worst + 1,
        "observed": float(observed[worst]),
        "reference": float(reference[worst]),
        "relative_error": _relative_error(observed, reference),
    }


def _probe_drive(impl: str) -> tuple[dict[str, Any] | None, int]:
    """Compare each accountant update seen through the probe with the oracle on the same votes."""
    compared = 0
    for obs, lamda in ((standard(impl), None), (observe(impl, epsilon=EPSILON, n_samples=0, **BUDGET_RUN), None)):
        lamda = obs.hyperparams["lamda"]
        previous: np.ndarray | None = None
        last_votes = None
        for event in obs.probe.events:
            if event.kind == "votes":
                last_votes = (np.asarray(event.args[0], float), np.asarray(event.args[1], float))
            elif event.kind == "accountant":
                moments = np.asarray(event.args[0], float)
                if last_votes is not None:
                    base = previous if previous is not None else np.zeros_like(moments)
                    observed = moments - base
                    reference = _closest_reference(observed, *last_votes, lamda, moments.size)
                    compared += 1
                    rel = _relative_error(observed, reference)
                    if rel > RTOL:
                        worst = int(np.nanargmax(np.abs(observed - reference)))
                        return {
                            "counterexample": {"n0": last_votes[0].tolist()[:20], "n1": last_votes[1].tolist()[:20],
                                               "lamda": lamda, "num_moments": int(moments.size),
                                               "iteration": event.kwargs.get("iteration")},
                            "order_l": worst + 1,
                            "observed": float(observed[worst]),
                            "reference": float(reference[worst]),
                            "relative_error": rel,
                        }, compared
                previous = moments
                last_votes = None
    return None, compared


def check(impl: str) -> CheckResult:
    adapter = impls.get(impl)
    hook = getattr(adapter, "accountant_update", None)
    evidence: dict[str, Any] = {"tolerance": RTOL}
    if callable(hook):
        found = _hypothesis_drive(adapter)
        evidence["hypothesis_examples"] = MAX_EXAMPLES
        if found:
            evidence.update(found)
            return CheckResult(impl, "moments_accountant", CHECK_ID, "fail", _describe(found), evidence)
    found, compared = _probe_drive(impl)
    evidence["probe_updates_compared"] = compared
    if found:
        evidence.update(found)
        return CheckResult(impl, "moments_accountant", CHECK_ID, "fail", _describe(found), evidence)
    if compared == 0 and not callable(hook):
        return CheckResult(impl, "moments_accountant", CHECK_ID, "not_applicable",
                           "no accountant observed (see the pate category)", evidence)
    return CheckResult(impl, "moments_accountant", CHECK_ID, "pass",
                       f"moment updates equal Theorem 5 ({compared} observed updates"
                       f"{', plus Hypothesis search' if callable(hook) else ''})", evidence)


def _describe(found: dict[str, Any]) -> str:
    ce = found["counterexample"]
    return (f"α({found['order_l']}) update is {found['observed']:.6g}, Theorem 5 gives {found['reference']:.6g} "
            f"(relative error {found['relative_error']:.3g}) for λ={ce['lamda']:g}, L={ce['num_moments']}")
