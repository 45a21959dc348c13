"""Shared assertion: a suite's verdict on an implementation equals its Table 2 cell."""
from __future__ import annotations

from dpcheck.checks import get_check
from dpcheck.table2 import expected_cells


def assert_matches_table2(impl: str, category: str) -> None:
    result = get_check(category)(impl)
    assert result.status != "error", f"{impl}/{category}: check could not run: {result.summary}"
    marked = category in expected_cells(impl)
    if marked:
        assert result.status == "fail", (
            f"{impl} is marked {category} in Table 2 but the check passed: {result.summary}\n{result.evidence}")
    else:
        assert result.status in ("pass", "not_applicable"), (
            f"{impl} has no {category} entry in Table 2 but the check failed: {result.summary}\n{result.evidence}")
