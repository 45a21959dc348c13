"""Cells: a check that does not apply is never a pass; numbers keep the digits that mean something."""
from __future__ import annotations

import json

from dpcheck.checks.result import CheckResult
from dpcheck.matrix.applicability import PATE_CATEGORIES, RULE_SCOPE, row_scopes, scope_of
from dpcheck.matrix.cells import make_cells, property_evidence, static_evidence
from dpcheck.matrix.model import Matrix, Row
from dpcheck.matrix.numbers import rounded
from dpcheck.matrix.render import to_json
from dpcheck.rules import all_rules


def _rules() -> tuple[list[str], dict[str, str]]:
    rules = list(all_rules())
    return [r.id for r in rules], {r.id: r.category for r in rules}


def test_scopes_of_the_rules() -> None:
    ids, categories = _rules()
    assert set(RULE_SCOPE) <= set(ids)
    scopes = {r: scope_of(r, categories[r]) for r in ids}
    assert all(scopes[r] == "pate" for r in ids if categories[r] in PATE_CATEGORIES)
    assert scopes["DP101"] == scopes["DP202"] == scopes["DP303"] == "any"
    assert scopes["DP105"] == scopes["DP302"] == "pate" and scopes["DP401"] == scopes["DP403"] == "synthesizer"


def test_pate_rules_do_not_apply_to_a_mechanism() -> None:
    ids, categories = _rules()
    cells = make_cells(static_evidence([], ids, categories, row_scopes("mechanism", "diffprivlib:GaussianNB")))
    assert cells["moments_accountant"].status == "not applicable"
    assert cells["data_partition"].status == "not applicable"
    assert cells["processing"].status == "not applicable"  # generator output: not a mechanism's
    assert cells["delta_scale"].status == "clean" and cells["metadata"].status == "clean"
    evidence = cells["moments_accountant"].evidence
    assert evidence and all(e.passed and not e.applicable for e in evidence)
    assert "not applicable" in evidence[0].message


def test_scopes_of_rows() -> None:
    assert row_scopes(None, "updated") == row_scopes("synthesizer", "smartnoise-synth:pategan")
    assert "pate" not in row_scopes("synthesizer", "smartnoise-synth:mwem")
    assert "synthesizer" in row_scopes("synthesizer", "smartnoise-synth:mwem")
    ids, categories = _rules()
    cells = make_cells(static_evidence([], ids, categories, row_scopes("synthesizer", "dpmm:mst")))
    assert cells["processing"].status == "clean" and cells["pate"].status == "not applicable"


def test_property_not_applicable_is_neither_pass_nor_failure() -> None:
    skipped = CheckResult("original", "moments_accountant", "accountant.moments", "not_applicable", "no accountant")
    cells = make_cells(property_evidence([skipped]))
    assert cells["moments_accountant"].status == "not applicable"
    passed = CheckResult("original", "moments_accountant", "accountant.other", "pass", "ok")
    assert make_cells(property_evidence([skipped, passed]))["moments_accountant"].status == "clean"
    failed = CheckResult("original", "moments_accountant", "accountant.other", "fail", "bad")
    assert make_cells(property_evidence([skipped, failed]))["moments_accountant"].status == "V"


def test_json_writes_applicable_only_when_false() -> None:
    skipped = CheckResult("original", "pate", "pate.x", "not_applicable", "does not apply")
    passed = CheckResult("original", "teachers", "teachers.x", "pass", "ok")
    row = Row("original", make_cells(property_evidence([skipped, passed])))
    data = json.loads(to_json(Matrix([row], True, "t")))["rows"][0]["cells"]
    assert data["pate"]["status"] == "not applicable" and data["pate"]["evidence"][0]["applicable"] is False
    assert "applicable" not in data["teachers"]["evidence"][0]


def test_last_digits_of_a_statistic_do_not_reach_the_report() -> None:
    """Two CPUs' sums in different order: 0.14860995950140027 vs 0.1486099595014007 (AVX-512)."""
    def report(p_value: float) -> str:
        result = CheckResult("smartnoise", "laplace_noise", "noise.ks", "pass", "ok",
                             {"p_value": p_value, "draws": 96, "scale": [1000.0, 2.247544724497493], "what": "x"})
        return to_json(Matrix([Row("smartnoise", make_cells(property_evidence([result])))], True, "t"))

    assert report(0.14860995950140027) == report(0.1486099595014007)
    assert '"p_value": 0.14861' in report(0.14860995950140027)
    assert '"scale": [\n' in report(0.1) and "2.24754" in report(0.1)


def test_rounded_keeps_types() -> None:
    assert rounded({"a": [1, 2.000000001, (3.14159265, "x")], "b": True, "c": float("inf")}) == {
        "a": [1, 2.0, (3.14159, "x")], "b": True, "c": float("inf")}
    assert rounded(1e-10) == 1e-10 and rounded(-231.01298252351882) == -231.013
