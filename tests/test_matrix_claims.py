"""A real target's audit in the matrix is judged under the neighbouring relation its library claims."""
from __future__ import annotations

import json
from pathlib import Path

from dpcheck.matrix.claims import claim_facts, target_audit
from dpcheck.matrix.text import audit_short, audit_text


def _audit(folder: Path, name: str, *, replace: bool, verdict: str, eps: float) -> Path:
    stem = name.replace(":", "__") + ("__replace" if replace else "")
    dataset = "worstcase-classification" + ("+replace" if replace else "")
    result = {"impl": name, "attack": "release", "dataset": dataset, "verdict": verdict, "eps_cp": eps,
              "epsilon": 1.0, "delta": 0.0, "runs": 100}
    path = folder / "audit_real" / f"{stem}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"kind": "audit", "results": [result]}))
    return path


def test_a_leak_only_under_add_remove_is_outside_a_replace_one_claim(tmp_path: Path) -> None:
    _audit(tmp_path, "lib:M", replace=False, verdict="violation", eps=1.24)
    audit = target_audit("lib:M", "replace-one", tmp_path)
    assert audit["verdict"] == "outside claim" and audit["verdict_audit"] == "violation"
    assert audit_text(audit) == "1.24 (outside claim, R=100)" and audit_short(audit) == "OC 1.24"
    assert ("neighbours", "the library claims replace-one; this audit plays add/remove") in claim_facts(audit)


def test_the_audit_under_the_claimed_relation_is_shown_and_the_other_listed(tmp_path: Path) -> None:
    _audit(tmp_path, "lib:M", replace=False, verdict="violation", eps=1.24)
    _audit(tmp_path, "lib:M", replace=True, verdict="pass", eps=0.0)
    audit = target_audit("lib:M", "replace-one", tmp_path)
    assert (audit["verdict"], audit["neighbours_audited"], audit["eps_cp"]) == ("pass", "replace-one", 0.0)
    [other] = audit["other_relations"]
    assert (other["neighbours_audited"], other["verdict"]) == ("add/remove", "outside claim")
    assert ("under add/remove", "1.24 (outside claim, R=100) from " + other["source"]) in claim_facts(audit)
    # a library claiming add/remove is judged on the add/remove audit: a violation stays one
    audit = target_audit("lib:M", "add/remove", tmp_path)
    assert (audit["verdict"], audit["neighbours_audited"]) == ("violation", "add/remove")


def test_the_report_verdict_wins(tmp_path: Path) -> None:
    path = _audit(tmp_path, "lib:M", replace=False, verdict="violation", eps=1.6)
    report = {"entries": [{"target": "lib:M", "source": f"reports/audit_real/{path.name}",
                           "report_verdict": "not_confirmed", "explanation": {"what": "the row count"}}]}
    (tmp_path / "audit_real.json").write_text(json.dumps(report))
    audit = target_audit("lib:M", "add/remove", tmp_path)
    assert audit["verdict"] == "not confirmed" and audit_short(audit) == "NC 1.60"
    assert ("what leaks", "the row count") in claim_facts(audit)
    # the explanation of a leak under the other relation is listed with it
    _audit(tmp_path, "lib:M", replace=True, verdict="pass", eps=0.0)
    audit = target_audit("lib:M", "replace-one", tmp_path)
    assert ("what leaks under add/remove", "the row count") in claim_facts(audit)


def test_no_stored_audit_is_none(tmp_path: Path) -> None:
    assert target_audit("lib:M", "add/remove", tmp_path) is None
