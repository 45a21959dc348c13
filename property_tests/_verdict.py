"""Shared assertion: a suite's verdict on an implementation equals its Table 2 cell.

Three outcomes, each asserted exactly: a marked cell must ``fail``; an unmarked cell must ``pass``;
and the few (implementation, category) pairs whose check has nothing to look at — listed in
:data:`NOT_APPLICABLE`, with the reason — must say ``not_applicable``. A check that stops observing
what it checks therefore fails its test instead of passing quietly, and a test that checks nothing
says so in its id (``[original-not_applicable]``, see conftest.py).
"""
from __future__ import annotations

from typing import Final

from dpcheck.checks import get_check
from dpcheck.table2 import expected_cells

#: (implementation, category) -> why the check observes nothing there
NOT_APPLICABLE: Final[dict[tuple[str, str], str]] = {
    ("original", "moments_accountant"): "the upstream code has no moments accountant: it trains for a fixed "
                                         "number of iterations, lamda/num_moments are inert (its budget bugs are "
                                         "in the pate category)",
    ("turing", "moments_accountant"): "the upstream code has no moments accountant: it trains for a fixed n_iters "
                                       "(its budget bugs are in the pate category)",
}


def expected_status(impl: str, category: str) -> str:
    if category in expected_cells(impl):
        return "fail"
    if (impl, category) in NOT_APPLICABLE:
        return "not_applicable"
    return "pass"


def assert_matches_table2(impl: str, category: str) -> None:
    result = get_check(category)(impl)
    assert result.status != "error", f"{impl}/{category}: check could not run: {result.summary}"
    expected = expected_status(impl, category)
    why = "marked in Table 2" if expected == "fail" else NOT_APPLICABLE.get((impl, category), "not marked in Table 2")
    assert result.status == expected, (
        f"{impl}/{category}: expected {expected} ({why}), the check says {result.status}: "
        f"{result.summary}\n{result.evidence}")
