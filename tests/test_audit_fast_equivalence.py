"""The fast path's equivalence test itself: slow at small R under DPCHECK_SMALL=1 (R = 200 otherwise, as in
reports/fast_path_equivalence.json) for every implementation the fast path covers; the script's exit code
and its report, including a "DIFFERENT" verdict, in the fast suite."""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import numpy as np
import pytest

from dpcheck.audit.runners import equivalence, fastpath

RUNS = 30 if os.environ.get("DPCHECK_SMALL") else 200
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))


@pytest.mark.slow
@pytest.mark.parametrize("impl", sorted(fastpath.COVERED))
def test_fast_path_is_equivalent_to_the_plain_path(impl: str) -> None:
    result, plain, fast = equivalence.equivalence(impl, RUNS, alpha=0.05)
    # the seeds are fixed: this is one deterministic draw of the test, not a flaky one
    assert result.tests == 2 * plain.features[0].shape[1] + 2
    assert result.equivalent, f"{impl}: fast and plain paths differ: {result.rejected}"
    assert fast.features[1].shape == plain.features[1].shape == (RUNS, plain.features[0].shape[1])
    # what "equivalent" is worth at this R: the shift of one feature the KS test sees with 80 % power
    assert result.detectable_shift_sd == equivalence.detectable_shift(RUNS, result.tests, 0.05)


@pytest.mark.slow
def test_benchmark_script_writes_the_report(tmp_path: Path) -> None:
    from fast_path_equivalence import main

    out = tmp_path / "eq.json"
    assert main(["--impl", "turing-fixed", "--runs", "10", "--no-power", "--json", str(out)]) == 0
    entry = json.loads(out.read_text())["implementations"][0]
    assert entry["impl"] == "turing-fixed" and entry["runs_per_world"] == 10 and entry["equivalent"]
    assert entry["tests"] == 2 * (8 + 15) + 2 and "power_check" not in entry
    assert entry["command"].startswith("python benchmarks/fast_path_equivalence.py --impl turing-fixed")
    assert entry["detectable_shift_sd"] > 2  # R = 10 detects only large shifts


def _features(path: str, shift: float, seed: int) -> equivalence.PathRuns:
    rng = np.random.default_rng(seed)
    return equivalence.PathRuns(path, seed,
                                {w: rng.normal(shift, 1.0, size=(60, 3)) for w in (0, 1)}, 1.0)


@pytest.mark.parametrize("shift, code, word", [(0.0, 0, "equivalent"), (1.5, 1, "DIFFERENT")])
def test_script_exit_code_follows_the_verdict(shift: float, code: int, word: str, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture) -> None:
    """A "DIFFERENT" verdict is exit 1 (CI fails on it), "equivalent" exit 0; features stand in for runs."""
    import fast_path_equivalence

    def fake(impl: str, runs: int, **kw: object) -> tuple:
        plain, fast = _features("plain", 0.0, 1), _features("fast", shift, 2)
        return equivalence.compare(impl, plain, fast), plain, fast

    monkeypatch.setattr(equivalence, "equivalence", fake)
    out = tmp_path / "eq.json"
    assert fast_path_equivalence.main(["--impl", "original", "--no-power", "--json", str(out)]) == code
    assert word in capsys.readouterr().out
    entry = json.loads(out.read_text())["implementations"][0]
    assert entry["equivalent"] == (code == 0) and bool(entry["rejected"]) == (code == 1)


def test_detectable_shift_matches_the_ks_threshold() -> None:
    # exact two-sample KS at R = 200, level 0.05/48: distance 0.195; a 0.49 sd shift is seen 80 % of the time
    assert equivalence.ks_critical_distance(200, 0.05 / 48) == pytest.approx(0.195)
    assert equivalence.detectable_shift(200, 48) == pytest.approx(0.49, abs=0.011)
    assert equivalence.detectable_shift(30, 48) == pytest.approx(1.31, abs=0.011)
    # more runs, smaller detectable shift; fewer tests (a laxer Holm threshold), smaller too
    assert equivalence.detectable_shift(120, 10) < equivalence.detectable_shift(120, 48)


def test_power_only_adds_the_power_check_to_an_existing_entry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """--power-only recomputes the fast runs alone; a tenth of the iterations that shifts the features is seen."""
    import fast_path_equivalence

    def fake_runs(spec, runs: int, path: str, **kw: object) -> equivalence.PathRuns:
        tenth = spec.hyperparams["max_iterations"] == 10
        return _features(path, 1.5 if tenth else 0.0, 3 + tenth)

    monkeypatch.setattr(equivalence, "path_runs", fake_runs)
    out = tmp_path / "eq.json"
    assert fast_path_equivalence.main(["--power-only", "--impl", "original", "--json", str(out)]) == 2  # no entry
    entry = {"impl": "original", "runs_per_world": 60, "alpha": 0.05, "tests": 8, "command": "python x"}
    out.write_text(json.dumps({"implementations": [entry]}))
    assert fast_path_equivalence.main(["--power-only", "--impl", "original", "--json", str(out)]) == 0
    got = json.loads(out.read_text())["implementations"][0]
    assert got["command"] == "python x" and got["power_command"].endswith("--power-only --impl original --json "
                                                                        + str(out))
    assert got["power_check"]["change"] == "max_iterations 100 -> 10" and got["power_check"]["detected"]
    assert got["detectable_shift_sd"] == equivalence.detectable_shift(60, 8)
