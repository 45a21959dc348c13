"""Black-box ε audits: shadow runs on neighbouring datasets, a membership attack, and an
empirical lower bound ε_emp on the privacy loss (Clopper–Pearson and Bayesian).

Sub-packages, one per layer of docs/architecture.md, each importing only from its own layer or a
lower one: ``core`` (spec, store, statistics, settings, progress, workers), ``worlds`` (D and D′),
``reference`` (reference mechanisms with known privacy), ``attacks`` (featurizers, the attack game,
release and white-box attacks) and ``runners`` (executor, fast path, engine, target selection,
search, one-run audits, calibration, reports).
"""
from __future__ import annotations

import importlib
from types import ModuleType

#: where each module of the former flat layout lives; ``from dpcheck.audit import engine`` still
#: finds it (except ``attacks``, now the sub-package: ``dpcheck.audit.attacks.attacks``)
_MOVED = {name: package for package, names in {
    "core": "spec store stats gdp ceiling settings progress files usercode workers errors canary seeds released "
            "hyperparams",
    "worlds": "datasets",
    "reference": "mechanisms refdpsgd",
    "attacks": "featurizers release_query whitebox dpsgd selection",
    "runners": "executor fastpath engine targets crafting search onerun calibration equivalence report",
}.items() for name in names.split()}


def __getattr__(name: str) -> ModuleType:
    if name in _MOVED:
        return importlib.import_module(f"{__name__}.{_MOVED[name]}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
