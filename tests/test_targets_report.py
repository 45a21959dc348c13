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
            "verdict": verdict, "certifiable_cp": 1.19, "bound_confidence": 0.99,
            **({"fp": 0, "fn": 1} if verdict == "violation" else {"fp": 10, "fn": 10}),
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
    leaky = next(ln for ln in text.splitlines() if ln.startswith("| `lib:Leaky` |"))
    assert "| lib 9.9 | main | add/remove (nothing) | worstcase-continuous (add/remove) | 50 |" in leaky
    assert "bounds read from the data" in text and "`lib/m.py:7`" in text and "DP202 lib/m.py:7" in text
    assert "confirms a documented leak" in text
    assert "| 0/2 |" in leaky  # failed runs per world
    # its own bound (1.4 > 1 at 0.99) is a violation, but 0/1 errors on 20 test runs per world do not survive
    # Holm over the two audits: not confirmed, with the fresh runs that would settle it
    assert "**not confirmed**" in leaky and entries[0]["report_verdict"] == "not_confirmed"
    assert entries[0]["settle_runs"] == 100 and "settles at R = 100 per world" in text
    assert "`other:Fine` (worstcase-continuous): pass at R = 50" in text
    assert text.count("2 audits: 0 violations of the library's own claim confirmed report-wide, 1 not confirmed") == 1


def _entry(target: str, dataset: str, fp: int, fn: int, n: int, verdict: str, bound_confidence: float = 0.99) -> dict:
    return {"target": target, "settings": {"dataset": dataset}, "epsilon": 1.0, "delta": 1e-5, "confidence": 0.95,
            "bound_confidence": bound_confidence, "runs": round(n / 0.4), "fp": fp, "fn": fn, "test_per_world": n,
            "verdict": verdict}


def test_verdicts_are_taken_under_the_claimed_relation_with_holm_over_the_report():
    gen = load_generator()
    entries = [
        # diffprivlib:GaussianNB claims replace-one: an add/remove leak is outside its claim, whatever its size
        _entry("diffprivlib:GaussianNB", "worstcase-classification", 0, 0, 400, "violation"),
        # ... and its replace-one audit is compared with ε itself
        _entry("diffprivlib:GaussianNB", "worstcase-classification+replace", 200, 200, 400, "pass"),
        # histogram claims add/remove: a replace-one pair may reach 2ε, so a bound of ~1.2 is no violation there
        _entry("diffprivlib:histogram", "worstcase-categorical+replace", 20, 250, 400, "violation"),
        # a clear add/remove violation of an add/remove claim survives Holm
        _entry("diffprivlib:KMeans-nobounds", "worstcase-continuous", 0, 0, 400, "violation"),
    ]
    family = gen.assess(entries)
    verdicts = [e["report_verdict"] for e in entries]
    assert verdicts == ["outside_claim", "pass", "pass", "violation"]
    assert family["members"] == 3 and family["outside"] == 1
    assert entries[0]["claimed_eps"] is None and entries[2]["claimed_eps"] == 2.0
    assert entries[3]["holm_rank"] == 1 and entries[3]["p_adjusted"] <= 0.05 / 3
    # Holm's level is used: the same errors with 30 more audits in the family would need a smaller p
    assert entries[3]["eps_holm"] < gen.bound(entries[3], 0.99, 1e-5)


def test_p_value_is_where_the_bound_crosses_epsilon():
    gen = load_generator()
    p = gen.p_value(0, 0, 20, 1.0, 1e-5)
    assert gen.bound({"fp": 0, "fn": 0, "test_per_world": 20}, 1 - p * 1.001, 1e-5) > 1.0
    assert gen.bound({"fp": 0, "fn": 0, "test_per_world": 20}, 1 - p * 0.999, 1e-5) <= 1.0
    assert gen.p_value(200, 200, 400, 1.0, 1e-5) == 1.0
