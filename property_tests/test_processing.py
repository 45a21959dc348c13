"""Suite 'processing': fails on exactly the Table 2 cells of the buggy implementations, passes on twins."""
from __future__ import annotations

from ._verdict import assert_matches_table2

CATEGORY = "processing"


def test_processing(impl: str) -> None:
    assert_matches_table2(impl, CATEGORY)
