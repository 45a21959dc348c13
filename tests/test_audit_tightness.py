"""The release-linear attack and the tightness benchmark on exact mechanisms."""
from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import numpy as np
import pytest

from dpcheck.audit.attacks import run_attack
from dpcheck.audit.featurizers import LinearScore, model_for
from dpcheck.cli import main as cli_main

ROOT = Path(__file__).resolve().parents[1]


def test_linear_score_weights_the_shifted_coordinate() -> None:
    rng = np.random.default_rng(0)
    out = rng.laplace(0, 1, (400, 6))
    inn = rng.laplace(0, 1, (400, 6))
    inn[:, 4] += 1.0
    x = np.vstack([out, inn])
    y = np.r_[np.zeros(400), np.ones(400)]
    w = LinearScore().fit(x, y).weights
    assert np.argmax(np.abs(w)) == 4
    assert abs(w[4]) > 3 * np.max(np.abs(np.delete(w, 4)))
    assert isinstance(model_for("release-linear"), LinearScore)


def test_linear_score_needs_both_worlds() -> None:
    with pytest.raises(ValueError):
        LinearScore().fit(np.zeros((4, 2)), np.ones(4))


def test_release_linear_beats_nothing_on_independent_releases() -> None:
    rng = np.random.default_rng(1)
    feats = {0: rng.normal(size=(500, 5)), 1: rng.normal(size=(500, 5))}
    outcome = run_attack(feats, split=(0.1, 0.1, 0.8), seed=0, delta=1e-5, confidence=0.95, model=LinearScore())
    assert abs(outcome.auc - 0.5) < 0.08


def test_release_linear_is_refused_on_a_synthesizer(capsys) -> None:
    code = cli_main(["audit", "--impl", "ref-laplace", "--attack", "release-linear", "--runs", "5", "--no-progress"])
    assert code == 2
    assert "mechanism" in capsys.readouterr().err


def _benchmark():
    spec = importlib.util.spec_from_file_location("audit_tightness", ROOT / "benchmarks" / "audit_tightness.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["audit_tightness"] = module
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_tightness_benchmark_end_to_end(tmp_path: Path) -> None:
    bench = _benchmark()
    out = tmp_path / "tight"
    assert bench.main(["--runs", "400", "--anchor-runs", "0", "--seeds", "3", "--seed-runs", "100",
                       "--workers", "1", "--out", str(out)]) == 0
    report = json.loads(out.with_suffix(".json").read_text())
    rows = {r["target"]: r for r in report["rows"]}
    assert rows["reference:laplace-histogram"]["eps_cp"] > 0.2  # the attack finds the target's cell
    assert rows["reference:randomized-response"]["eps_cp"] > 0.3
    for fa in report["false_alarms"].values():
        assert fa["exceedances"] == 0
    assert out.with_suffix(".png").stat().st_size > 0
    assert "| reference:gaussian-marginals |" in out.with_suffix(".md").read_text()
