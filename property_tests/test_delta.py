"""Suite 'delta_scale': fails on exactly the Table 2 cells of the buggy implementations, passes on twins."""
from __future__ import annotations

from ._verdict import assert_matches_table2

CATEGORY = "delta_scale"


def test_delta(impl: str) -> None:
    assert_matches_table2(impl, CATEGORY)
