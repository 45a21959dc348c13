"""laplace_noise: the vote noise actually drawn follows Laplace(1/λ).

Goodness of fit: one-sample Kolmogorov–Smirnov test against Laplace(0, 1/λ) at level
``ALPHA`` on the pooled noise values of a fixed-seed run. Gaussian noise, or noise added to
0/1 labels instead of the vote counts, is the wrong mechanism whatever its scale.
"""
from __future__ import annotations

import numpy as np
from scipy import stats

from dpcheck.checks.observe import STANDARD, standard
from dpcheck.checks.result import CheckResult

CHECK_ID = "noise.laplace_inverse_lambda_ks"
ALPHA = 0.01
MIN_DRAWS = 20


def check(impl: str) -> CheckResult:
    obs = standard(impl)
    lamda = STANDARD["lamda"]
    events = obs.probe.of("noise")
    votes = obs.probe.of("votes")
    if obs.error and not events:
        return CheckResult(impl, "laplace_noise", CHECK_ID, "error", f"fit failed: {obs.error}")
    if not events:
        if votes:
            return CheckResult(impl, "laplace_noise", CHECK_ID, "fail",
                               "teacher votes were aggregated with no noise at all", {"vote_events": len(votes)})
        return CheckResult(impl, "laplace_noise", CHECK_ID, "not_applicable", "no noisy aggregation observed")
    families = sorted({str(e.kwargs.get("distribution")) for e in events})
    targets = sorted({str(e.kwargs.get("applied_to")) for e in events})
    scales = sorted({float(e.kwargs.get("scale")) for e in events})
    values = np.concatenate([np.asarray(e.args[0], dtype=float).ravel() for e in events])
    expected_scale = 1.0 / lamda
    ks = stats.kstest(values, "laplace", args=(0.0, expected_scale))
    evidence = {
        "lamda": lamda,
        "expected": f"Laplace(0, 1/λ = {expected_scale:g}) on vote counts",
        "observed_distribution": families,
        "observed_scale": scales,
        "applied_to": targets,
        "draws": int(values.size),
        "observed_std": float(values.std()),
        "reference_std": float(np.sqrt(2) * expected_scale),
        "ks_statistic": float(ks.statistic),
        "p_value": float(ks.pvalue),
        "level": ALPHA,
    }
    problems = []
    if families != ["laplace"]:
        problems.append(f"noise family is {'/'.join(families)}, not Laplace")
    if "labels" in targets:
        problems.append("noise is added to the 0/1 labels instead of the vote counts")
    if values.size >= MIN_DRAWS and ks.pvalue < ALPHA:
        problems.append(f"drawn noise rejects Laplace(0, {expected_scale:g}) (KS D={ks.statistic:.3f}, "
                        f"p={ks.pvalue:.2g} < {ALPHA}; std {values.std():.3g} vs {np.sqrt(2) * expected_scale:.3g})")
    if problems:
        return CheckResult(impl, "laplace_noise", CHECK_ID, "fail", "; ".join(problems), evidence)
    if values.size < MIN_DRAWS:
        return CheckResult(impl, "laplace_noise", CHECK_ID, "error",
                           f"only {values.size} noise draws observed, too few for a KS test", evidence)
    return CheckResult(impl, "laplace_noise", CHECK_ID, "pass",
                       f"{values.size} draws consistent with Laplace(0, 1/λ) (KS p={ks.pvalue:.2g} ≥ {ALPHA})", evidence)
