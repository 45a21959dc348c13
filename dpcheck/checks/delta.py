"""delta_scale: the noise scale, as a function of δ, decreases as δ grows and equals the
Gaussian-mechanism σ(ε, δ) = √(2 ln(1.25/δ))/ε wherever Gaussian noise is used."""
from __future__ import annotations

import math

from dpcheck.checks.observe import STANDARD, observe
from dpcheck.checks.result import CheckResult

CHECK_ID = "delta.noise_scale_calibration"
DELTAS = (1e-7, 1e-5, 1e-3, 1e-1)
EPSILON = 1.0
RTOL = 1e-6


def gaussian_sigma(epsilon: float, delta: float) -> float:
    return math.sqrt(2.0 * math.log(1.25 / delta)) / epsilon


def check(impl: str) -> CheckResult:
    params = dict(STANDARD, max_iterations=1)
    rows = []
    for delta in DELTAS:
        obs = observe(impl, epsilon=EPSILON, delta=delta, n_samples=0, **params)
        events = obs.probe.of("noise")
        if not events:
            if obs.error:
                return CheckResult(impl, "delta_scale", CHECK_ID, "error", f"fit failed at δ={delta:g}: {obs.error}")
            return CheckResult(impl, "delta_scale", CHECK_ID, "not_applicable", "no noise observed")
        rows.append({
            "delta": delta,
            "scale": float(events[0].kwargs["scale"]),
            "distribution": str(events[0].kwargs.get("distribution")),
        })
    evidence: dict = {"epsilon": EPSILON, "observed": rows}
    problems = []
    for a, b in zip(rows, rows[1:]):
        if b["scale"] > a["scale"] * (1 + RTOL):
            problems.append(f"noise scale grows from {a['scale']:.6g} to {b['scale']:.6g} as δ grows "
                            f"from {a['delta']:g} to {b['delta']:g}")
            evidence["counterexample"] = {"delta_small": a["delta"], "delta_large": b["delta"],
                                          "scale_small": a["scale"], "scale_large": b["scale"]}
            break
    for row in rows:
        if row["distribution"] == "gaussian":
            ref = gaussian_sigma(EPSILON, row["delta"])
            row["reference"] = ref
            rel = abs(row["scale"] - ref) / ref
            row["relative_error"] = rel
            if rel > RTOL and "reference_mismatch" not in evidence:
                evidence["reference_mismatch"] = row
                problems.append(f"Gaussian σ at ε={EPSILON:g}, δ={row['delta']:g} is {row['scale']:.6g}, "
                                f"reference √(2 ln(1.25/δ))/ε = {ref:.6g} (relative error {rel:.2g})")
    if problems:
        return CheckResult(impl, "delta_scale", CHECK_ID, "fail", "; ".join(problems), evidence)
    return CheckResult(impl, "delta_scale", CHECK_ID, "pass",
                       "noise scale is non-increasing in δ and matches σ(ε, δ) where Gaussian", evidence)
