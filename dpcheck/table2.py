"""Table 2 of the PATE-GAN reproducibility audit: the cells dpcheck must reproduce."""
from __future__ import annotations

from typing import Final

from dpcheck.categories import CATEGORIES

#: implementation -> the categories marked in its Table 2 row
TABLE2: Final[dict[str, frozenset[str]]] = {
    "original": frozenset({"pate", "data_partition", "metadata", "laplace_noise", "delta_scale", "labels_distribution"}),
    "updated": frozenset({"data_partition", "metadata", "laplace_noise", "teachers", "processing"}),
    "synthcity": frozenset({"data_partition", "moments_accountant", "metadata", "teachers"}),
    "turing": frozenset({"pate", "data_partition", "laplace_noise", "delta_scale", "processing"}),
    "borealis": frozenset({"moments_accountant", "metadata", "processing"}),
    "smartnoise": frozenset({"moments_accountant"}),
}


def expected_cells(impl: str) -> frozenset[str]:
    """Marked categories for a built-in name; twins (``*-fixed``) have none."""
    if impl.endswith("-fixed"):
        return frozenset()
    return TABLE2[impl]


def totals() -> tuple[int, int]:
    """(violations, bugs) over the six rows: (19, 5)."""
    v = sum(1 for cells in TABLE2.values() for c in cells if CATEGORIES[c] == "V")
    b = sum(1 for cells in TABLE2.values() for c in cells if CATEGORIES[c] == "B")
    return v, b
