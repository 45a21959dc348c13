"""benchmarks/audit_real.py merges every reports/audit_real/*.json, whoever wrote it."""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def load_generator():
    spec = importlib.util.spec_from_file_location("audit_real_report", ROOT / "benchmarks" / "audit_real.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def result(impl: str, verdict: str, eps_cp: float, warnings: list[str], env: str = "main") -> dict:
    return {"impl": impl, "attack": "release", "dataset": "worstcase-continuous", "runs": 50, "runs_planned": 1000,
            "epsilon": 1.0, "delta": 1e-5, "eps_cp": eps_cp, "eps_bayes": eps_cp + 0.5, "auc": 0.9,
            "verdict": verdict, "certifiable_cp": 1.19, "bound_confidence": 0.99, "fp": 0, "fn": 1,
            "test_per_world": 20, "synth_rows": 1, "seconds": 3.0, "run_seconds_mean": 0.01,
            "failed_runs": {"with_target": 0, "without_target": 2, "runs_per_world": 50}, "spec": {"hyperparams": {}},
            "target_info": {"library": impl.split(":")[0], "version": "9.9", "env": env, "kind": "mechanism",
                            "doc": "doc", "note": "", "settings": {"k": 1}, "warnings": warnings,
                            "one_fit_seconds": 0.02}}


def test_report_merges_all_result_files_and_explains_violations(tmp_path, monkeypatch):
    gen = load_generator()
    monkeypatch.setattr(gen, "RESULTS_DIR", tmp_path)
    (tmp_path / "a.json").write_text(json.dumps({
        "kind": "audit", "command": "dpcheck audit --impl lib:Leaky",
        "results": [result("lib:Leaky", "violation", 1.4, ["PrivacyLeakWarning: bounds from data"])],
        "explanations": {"lib:Leaky": {"what": "bounds read from the data", "where": "lib/m.py", "lines": [7],
                                       "static": ["DP202 lib/m.py:7"]}}}))
    (tmp_path / "b.json").write_text(json.dumps({
        "kind": "audit", "command": "dpcheck audit --impl other:Fine",
        "results": [result("other:Fine", "pass", 0.0, [], env="synthcity")]}))
    (tmp_path / "not_audit.json").write_text(json.dumps({"kind": "something-else"}))
    entries, explanations = gen.load_entries()
    assert [e["target"] for e in entries] == ["lib:Leaky", "other:Fine"]
    assert entries[1]["env"] == "synthcity" and entries[0]["command"] == "dpcheck audit --impl lib:Leaky"
    text = gen.markdown(entries, explanations)
    assert "| `lib:Leaky` | lib 9.9 | main | worstcase-continuous (add/remove) | 50 |" in text
    assert "bounds read from the data" in text and "`lib/m.py:7`" in text and "DP202 lib/m.py:7" in text
    assert "confirms a documented leak" in text
    assert "| 0/2 |" in text  # failed runs per world
    assert "`other:Fine` (worstcase-continuous): pass at R = 50" in text
    assert "2 audits, 1 violations. Per library: lib 1/1; other 0/1." in text
