"""Suite 'data_partition': fails on exactly the Table 2 cells of the buggy implementations, passes on twins."""
from __future__ import annotations

from ._verdict import assert_matches_table2

CATEGORY = "data_partition"


def test_partition(impl: str) -> None:
    assert_matches_table2(impl, CATEGORY)
