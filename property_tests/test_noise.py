"""Suite 'laplace_noise': fails on exactly the Table 2 cells of the buggy implementations, passes on twins."""
from __future__ import annotations

from ._verdict import assert_matches_table2

CATEGORY = "laplace_noise"


def test_noise(impl: str) -> None:
    assert_matches_table2(impl, CATEGORY)
