"""`dpcheck scan` on the vendored implementations yields exactly the statically decidable
Table 2 cells of each row, at the lines where the bugs sit; the corrected twins come out clean."""
from __future__ import annotations

from pathlib import Path

import pytest

from dpcheck import impls
from dpcheck.categories import CATEGORIES
from dpcheck.matrix.collect import scan_sources
from dpcheck.table2 import expected_cells

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("name", impls.NAMES)
def test_static_cells_match_table2(name: str) -> None:
    findings, _, _ = scan_sources(impls.source_files(impls.get(name)), ROOT)
    assert not [f for f in findings if f.category == "diagnostic"], findings
    found = {f.category for f in findings if f.category in CATEGORIES}
    assert found == set(expected_cells(name)), (
        f"{name}: static categories {sorted(found)} != Table 2 {sorted(expected_cells(name))}\n"
        + "\n".join(f"{f.path}:{f.line} {f.rule} {f.category}: {f.message}" for f in findings))


@pytest.mark.parametrize("name", impls.BUGGY)
def test_findings_point_at_code(name: str) -> None:
    findings, _, _ = scan_sources(impls.source_files(impls.get(name)), ROOT)
    for f in findings:
        line = (ROOT / f.path).read_text().splitlines()[f.line - 1]
        assert line.strip() and not line.strip().startswith("#"), f"{f.rule} points at a blank/comment line {f.path}:{f.line}"
