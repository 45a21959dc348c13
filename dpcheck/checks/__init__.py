"""Dynamic checks: drive an implementation through the probes and compare with reference oracles.

One module per matrix category that can be tested at run time. Each exposes
``check(impl_name) -> CheckResult``; ``CHECKS`` maps category -> check function.
Used by ``property_tests/`` (pytest) and ``dpcheck test``.
"""
from __future__ import annotations

from collections.abc import Callable

from dpcheck.checks.result import CheckResult

CHECK_MODULES: dict[str, str] = {
    "moments_accountant": "dpcheck.checks.accountant",
    "laplace_noise": "dpcheck.checks.noise",
    "delta_scale": "dpcheck.checks.delta",
    "data_partition": "dpcheck.checks.partition",
    "labels_distribution": "dpcheck.checks.labels",
    "pate": "dpcheck.checks.pate",
    "processing": "dpcheck.checks.processing",
}


def get_check(category: str) -> Callable[[str], CheckResult]:
    import importlib

    return importlib.import_module(CHECK_MODULES[category]).check


__all__ = ["CHECK_MODULES", "CheckResult", "get_check"]
