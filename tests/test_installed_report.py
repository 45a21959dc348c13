"""benchmarks/audit_real.py adds the installed-function tests and the runs/min to reports/audit_real.md."""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def load_generator():
    spec = importlib.util.spec_from_file_location("audit_real_installed", ROOT / "benchmarks" / "audit_real.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _result(function: str, status: str, violation: bool | None) -> dict:
    evidence = {"property": "gaussian-scale", "map": "m", "env": "main", "examples": 7,
                "max_relative_error": 0.25, "looseness_min": 1.0, "looseness_max": 1.25}
    if violation is not None:
        evidence.update(counterexample={"epsilon": 10.0, "delta": 1e-10, "sensitivity": 1.0}, violation=violation,
                        observed=0.5, reference=0.6, relative_error=0.1667, delta_at_observed_scale=2e-10)
    return {"impl": function, "category": "delta_scale", "check": "installed.gaussian_scale", "status": status,
            "summary": f"{function} summary", "evidence": evidence, "seconds": 1.0}


def test_installed_section_and_speed_table(tmp_path, monkeypatch):
    gen = load_generator()
    installed = tmp_path / "installed"
    installed.mkdir()
    rows = [("a_pass", _result("lib.mod:ok", "pass", None)),
            ("b_violation", _result("lib.mod:bad", "fail", True)),
            ("c_conservative", _result("lib.mod:loose", "fail", False))]
    for stem, res in rows:
        (installed / f"{stem}.json").write_text(json.dumps(
            {"schema": 1, "results": [res], "stem": stem, "library": "lib", "version": "1.0", "env": "main",
             "command": f"dpcheck test --noise {res['impl']}"}))
    speed = tmp_path / "speed.json"
    speed.write_text(json.dumps({"kind": "speed", "rows": [
        {"target": "lib:slow", "dataset": "worstcase", "sample": 2, "runs_failed": 0, "warm_up_seconds": 3.0,
         "seconds_per_run": 20.0, "runs_per_min": 3.0, "runs_to_verdict": 50, "projected_minutes": 16.7,
         "committed_minutes": None, "within_target": "no"}], "notes": ["0 of 1 targets reach their verdict"]}))
    monkeypatch.setattr(gen, "INSTALLED_DIR", installed)
    monkeypatch.setattr(gen, "SPEED_FILE", speed)
    loaded = gen.load_installed()
    assert [r["stem"] for r in loaded] == ["a_pass", "b_violation", "c_conservative"]
    text = "\n".join(gen.installed_markdown(loaded) + gen.speed_markdown())
    lines = {r: next(ln for ln in text.splitlines() if ln.startswith(f"| `lib.mod:{r}`")) for r in ("ok", "bad", "loose")}
    assert "| pass |" in lines["ok"] and "1–1.25" in lines["ok"]
    assert "**violation**" in lines["bad"] and '"epsilon": 10.0' in lines["bad"] and "0.167" in lines["bad"]
    assert "**fail** (conservative)" in lines["loose"]
    assert "dpcheck test --noise lib.mod:bad" in text
    slow = next(ln for ln in text.splitlines() if ln.startswith("| `lib:slow`"))
    assert "16.7 min" in slow and "not audited" in slow and slow.rstrip().endswith("| no |")
    assert "0 of 1 targets reach their verdict" in text


def test_committed_installed_results_are_in_the_report():
    gen = load_generator()
    loaded = {r["stem"]: r for r in gen.load_installed()}
    assert {stem for stem, _, _ in gen.INSTALLED_RUNS} <= set(loaded)
    report = (ROOT / "reports" / "audit_real.md").read_text()
    for row in loaded.values():
        assert row["command"] and f"`{row['stem']}`" in report
