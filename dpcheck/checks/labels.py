"""labels_distribution: generation consumes no training labels or label statistics."""
from __future__ import annotations

from dpcheck.checks.observe import standard
from dpcheck.checks.result import CheckResult

CHECK_ID = "labels.no_training_labels_at_generation"


def check(impl: str) -> CheckResult:
    obs = standard(impl)
    if obs.error:
        return CheckResult(impl, "labels_distribution", CHECK_ID, "error", f"fit/sample failed: {obs.error}")
    events = obs.probe.of("generation_labels")
    leaking = [e for e in events if e.kwargs.get("source") == "training"]
    evidence = {"generation_label_events": [
        {"source": e.kwargs.get("source"), "size": int(getattr(e.args[0], "size", 1))} for e in events[:5]]}
    if leaking:
        values = leaking[0].args[0]
        return CheckResult(
            impl, "labels_distribution", CHECK_ID, "fail",
            f"sampling consumed {getattr(values, 'size', 1)} label value(s) taken from the training data "
            "without noise; sample labels from a DP estimate or a public ratio",
            evidence,
        )
    return CheckResult(impl, "labels_distribution", CHECK_ID, "pass",
                       "no training labels or label statistics reached generation", evidence)
