"""Every rule's VALID cases stay silent; every INVALID case fires exactly on its marked lines."""
from __future__ import annotations

import pytest

from dpcheck.rule import expected_lines, run_rules
from dpcheck.rules import all_rules

CASES = [
    pytest.param(rule, kind, i, case, id=f"{rule.id}-{kind}-{i}")
    for rule in all_rules()
    for kind, cases in (("valid", rule.VALID), ("invalid", rule.INVALID))
    for i, case in enumerate(cases)
]


@pytest.mark.parametrize(("rule", "kind", "index", "case"), CASES)
def test_rule_case(rule, kind, index, case):
    found = {f.line for f in run_rules(case, [rule]) if f.rule == rule.id}
    if kind == "valid":
        assert not found, f"{rule.id} fired on VALID case {index} at lines {sorted(found)}:\n{case}"
    else:
        expected = expected_lines(case)
        assert expected, f"INVALID case {index} of {rule.id} has no '# <-' marker"
        assert found == expected, f"{rule.id} INVALID case {index}: expected lines {sorted(expected)}, got {sorted(found)}:\n{case}"


@pytest.mark.parametrize("rule", all_rules(), ids=lambda r: r.id)
def test_rule_metadata(rule):
    from dpcheck.categories import ALL_CATEGORIES, SEVERITIES

    assert rule.id.startswith("DP") and len(rule.id) == 5
    assert rule.category in ALL_CATEGORIES and rule.severity in SEVERITIES
    assert rule.name and rule.summary and rule.rationale
    assert len(rule.VALID) >= 4 and len(rule.INVALID) >= 4, "every rule ships >= 4 VALID and >= 4 INVALID cases"
