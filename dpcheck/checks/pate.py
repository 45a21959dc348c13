"""pate: the PATE framework is present — ≥ 2 teachers on their own data, noisy vote aggregation,
ε̂ tracked by an accountant, and training that stops once ε̂ reaches ε."""
from __future__ import annotations

import numpy as np

from dpcheck.checks.observe import STANDARD, observe
from dpcheck.checks.result import CheckResult

CHECK_ID = "pate.framework_present"
#: a large λ spends the budget within a few iterations, so a budget-driven loop must stop early
BUDGET_RUN = dict(STANDARD, lamda=0.1, max_iterations=30, num_moments=20)
EPSILON = 1.0


def check(impl: str) -> CheckResult:
    obs = observe(impl, epsilon=EPSILON, n_samples=0, **BUDGET_RUN)
    if obs.error:
        return CheckResult(impl, "pate", CHECK_ID, "error", f"fit failed: {obs.error}")
    probe = obs.probe
    votes, noise, acct, end = probe.of("votes"), probe.of("noise"), probe.of("accountant"), probe.of("training_end")
    teachers = {int(e.args[0]) for e in probe.of("teacher_data")}
    max_votes = max((float(np.max(np.asarray(e.args[0]) + np.asarray(e.args[1]))) for e in votes), default=0.0)
    eps_hats = [float(e.args[1]) for e in acct]
    evidence = {
        "teachers_observed": len(teachers),
        "vote_events": len(votes),
        "max_votes_per_sample": max_votes,
        "noise_on": sorted({str(e.kwargs.get("applied_to")) for e in noise}),
        "accountant_updates": len(acct),
        "eps_hat_last": eps_hats[-1] if eps_hats else None,
        "epsilon": EPSILON,
        "training_end": [dict(iterations=e.args[0], **e.kwargs) for e in end],
        "run": BUDGET_RUN,
    }
    missing = []
    if max_votes < 2:
        missing.append("no aggregation of ≥ 2 teacher votes")
    if "votes" not in evidence["noise_on"]:
        missing.append("no noise added to the vote counts")
    if not acct:
        missing.append("no privacy accountant (ε̂ never tracked)")
    if end and end[-1].kwargs.get("reason") != "budget" and eps_hats and max(eps_hats) >= EPSILON:
        missing.append(f"training went on after ε̂ reached ε (ε̂={max(eps_hats):.3g} ≥ {EPSILON:g}, "
                       f"stopped by {end[-1].kwargs.get('reason')})")
    if end and end[-1].kwargs.get("reason") == "fixed":
        missing.append("training length is fixed, not budget-driven")
    if missing:
        return CheckResult(impl, "pate", CHECK_ID, "fail", "PATE not implemented: " + "; ".join(missing), evidence)
    return CheckResult(impl, "pate", CHECK_ID, "pass",
                       f"{len(teachers)} teachers, noisy vote aggregation, accountant with budget stop", evidence)
