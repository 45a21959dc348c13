"""Slow: the fast path's equivalence test itself, at small R under DPCHECK_SMALL=1 (R = 200 otherwise,
as in reports/fast_path_equivalence.json), for every implementation the fast path covers."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from dpcheck.audit import equivalence, fastpath

RUNS = 30 if os.environ.get("DPCHECK_SMALL") else 200


@pytest.mark.slow
@pytest.mark.parametrize("impl", sorted(fastpath.COVERED))
def test_fast_path_is_equivalent_to_the_plain_path(impl: str) -> None:
    result, plain, fast = equivalence.equivalence(impl, RUNS, alpha=0.05)
    # the seeds are fixed: this is one deterministic draw of the test, not a flaky one
    assert result.tests == 2 * plain.features[0].shape[1] + 2
    assert result.equivalent, f"{impl}: fast and plain paths differ: {result.rejected}"
    assert fast.features[1].shape == plain.features[1].shape == (RUNS, plain.features[0].shape[1])


@pytest.mark.slow
def test_benchmark_script_writes_the_report(tmp_path: Path) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
    from fast_path_equivalence import main

    out = tmp_path / "eq.json"
    assert main(["--impl", "turing-fixed", "--runs", "10", "--no-power", "--json", str(out)]) in (0, 1)
    import json

    entry = json.loads(out.read_text())["implementations"][0]
    assert entry["impl"] == "turing-fixed" and entry["runs_per_world"] == 10
    assert entry["tests"] == 2 * (8 + 15) + 2 and "power_check" not in entry
