"""Calibration: repeat an audit over independent seeds and count how often it alarms.

For an implementation that really is ε-DP the Clopper–Pearson ε_emp exceeds ε with probability
at most 1 − confidence (5 % by default); the observed false-alarm rate must stay at or below it.
"""
from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dpcheck.audit.core.settings import paper_hyperparams
from dpcheck.audit.core.spec import AuditSpec
from dpcheck.audit.core.store import Store
from dpcheck.audit.runners.engine import AuditResult, run_audit



@dataclass
class Calibration:
    impl: str
    results: list[AuditResult]

    @property
    def alarms(self) -> int:
        return sum(r.eps_cp > r.epsilon for r in self.results)

    @property
    def rate(self) -> float:
        return self.alarms / len(self.results) if self.results else 0.0

    def summary(self) -> str:
        eps = [r.eps_cp for r in self.results]
        return (f"{self.impl}: {self.alarms}/{len(self.results)} seeds with ε_emp(CP) > ε "
                f"(rate {self.rate:.1%}); ε_emp max {max(eps):.3f}, mean {sum(eps) / len(eps):.3f}; "
                f"R={self.results[0].runs}, certifiable max {self.results[0].certifiable_cp:.2f}")


def calibrate(impl: str, *, seeds: int, runs: int, hyperparams: dict[str, Any] | None = None,
              executor: Any, store_path: str | Path | None = None, attack: str = "querybased",
              dataset: str = "worstcase", epsilon: float = 1.0, delta: float = 1e-5,
              first_seed: int = 1000, split: tuple[float, float, float] | None = None) -> Calibration:
    hyper = dict(paper_hyperparams(impl, dataset) if hyperparams is None else hyperparams)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(store_path) if store_path else Path(tmp) / "calibration.sqlite"
        with Store(path) as store:
            results = [run_audit(AuditSpec(impl, dataset=dataset, attack=attack, epsilon=epsilon, delta=delta,
                                           runs=runs, seed=first_seed + s, hyperparams=hyper,
                                           **({"split": split} if split else {})),
                                 store=store, executor=executor)
                       for s in range(seeds)]
    return Calibration(impl, results)
