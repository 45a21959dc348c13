"""Numbers as the reports write them: to the digits that mean something, the same on every CPU.

A property check's statistics (a KS p-value, an observed standard deviation) come from sums whose
order the BLAS/MKL code path picks, so their last digits differ between CPUs. The reports keep
:data:`DIGITS` significant digits, which no such difference reaches.
"""
from __future__ import annotations

import math
from typing import Any

DIGITS = 6


def rounded(value: Any, digits: int = DIGITS) -> Any:
    """``value`` with every finite float (also inside dicts, lists and tuples) rounded to ``digits``
    significant digits; everything else unchanged."""
    if isinstance(value, bool) or isinstance(value, int):
        return value
    if isinstance(value, float):
        return float(f"{value:.{digits}g}") if math.isfinite(value) else value
    if isinstance(value, dict):
        return {k: rounded(v, digits) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(rounded(v, digits) for v in value)
    return value
