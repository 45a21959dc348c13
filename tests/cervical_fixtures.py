"""Synthetic Cervical GroundHog audit files, in the shape `dpcheck audit --json` writes them."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from dpcheck.matrix import cervical

SPEC = {"attack": "groundhog", "confidence": 0.95, "data": None, "dataset": "cervical", "delta": 1e-05,
        "epsilon": 1.0, "hyperparams": {"lamda": 0.001, "max_iterations": 1000, "num_teachers": 5},
        "impl": "", "phase": "audit", "runs": 1000, "seed": 0, "split": [0.4, 0.2, 0.4], "synth_rows": None,
        "target": None}


def audit_file(folder: Path, impl: str, kind: str, *, target: int, eps_cp: float, verdict: str,
               selection: dict[str, Any] | None = None, omit_selection: bool = False) -> Path:
    """A file in the shape `dpcheck audit --json` writes (one GroundHog result on cervical)."""
    result = {"impl": impl, "attack": "groundhog", "dataset": "cervical", "target": target, "runs": 100,
              "runs_planned": 1000, "epsilon": 1.0, "delta": 1e-05, "confidence": 0.95, "bound_confidence": 0.99,
              "eps_cp": eps_cp, "eps_bayes": eps_cp + 0.3, "auc": 0.9, "fp": 1, "fn": 3, "test_per_world": 40,
              "threshold": 0.5, "certifiable_cp": 1.95, "certifiable_bayes": 2.8, "verdict": verdict,
              "until_verdict": True, "synth_rows": 685, "runs_executed": 200, "runs_reused": 0,
              "run_seconds_mean": 0.3, "seconds": 90.0, "executor": "local process pool, 2 worker(s)",
              "spec": {**SPEC, "impl": impl, "target": target}, "run_paths": {"fast": 200, "plain": 0, "fallback": 0}}
    if not omit_selection:
        result["target_selection"] = selection
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / cervical.file_name(impl, kind)
    path.write_text(json.dumps({"schema": 1, "dpcheck": "0.1.0", "kind": "audit", "results": [result],
                                "command": f"dpcheck audit --impl {impl} --attack groundhog"}))
    return path


def choice(target: int, aucs: dict[int, float]) -> dict[str, Any]:
    return {"method": "vulnerable-record", "target": target, "auc": aucs[target], "candidates": len(aucs),
            "mini_runs": 25, "design": "one set of runs on D shared by all candidates; 5-fold CV AUC",
            "pool": list(aucs), "aucs": {str(k): v for k, v in aucs.items()}}
