"""The release-linear attack and the tightness benchmark on exact mechanisms."""
from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import numpy as np
import pytest

from dpcheck.audit.attacks.attacks import run_attack
from dpcheck.audit.attacks.featurizers import LinearScore, model_for
from dpcheck.audit.core import gdp, stats
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


def test_linear_score_drops_coordinates_without_evidence() -> None:
    rng = np.random.default_rng(2)
    out, inn = rng.normal(0, 1, (300, 8)), rng.normal(0, 1, (300, 8))
    inn[:, 2] += 1.0  # 12 standard errors: kept; the rest are pure noise
    x, y = np.vstack([out, inn]), np.r_[np.zeros(300), np.ones(300)]
    sparse = LinearScore().fit(x, y).weights
    dense = LinearScore(min_z=0.0).fit(x, y).weights
    m1, m0 = x[y == 1].mean(axis=0), x[y == 0].mean(axis=0)
    pooled = (x[y == 1].var(axis=0) + x[y == 0].var(axis=0)) / 2
    z = np.abs(m1 - m0) / np.sqrt(pooled * (2 / 300))
    assert z[2] > 10 and (z < LinearScore.MIN_Z).sum() >= 3
    assert np.all(sparse[z < LinearScore.MIN_Z] == 0.0)
    assert np.allclose(sparse[z >= LinearScore.MIN_Z], dense[z >= LinearScore.MIN_Z])


def test_linear_score_keeps_all_coordinates_when_none_passes() -> None:
    rng = np.random.default_rng(4)
    x = rng.normal(0, 1, (40, 3))
    y = np.r_[np.ones(20), np.zeros(20)]
    w = LinearScore(min_z=1e9).fit(x, y).weights
    assert np.all(w != 0.0)
    assert np.allclose(w, LinearScore(min_z=0.0).fit(x, y).weights)
    with pytest.raises(ValueError, match="min_z"):
        LinearScore(min_z=-1.0)


def test_linear_score_gdp_threshold_is_the_equal_error_point() -> None:
    rng = np.random.default_rng(6)
    mu, n = 1.0, 2000
    x = np.vstack([rng.normal(0, 1, (n, 1)), rng.normal(mu, 1, (n, 1))]) + 5.0
    y = np.r_[np.zeros(n), np.ones(n)]
    model = LinearScore().fit(x, y)
    fresh_out, fresh_in = rng.normal(0, 1, (n, 1)) + 5.0, rng.normal(mu, 1, (n, 1)) + 5.0
    t = model.gdp_threshold
    fpr = np.mean(model.predict_proba(fresh_out)[:, 1] >= t)
    fnr = np.mean(model.predict_proba(fresh_in)[:, 1] < t)
    assert abs(fpr - fnr) < 0.04
    assert abs(fpr - 0.3085) < 0.04  # Φ(−μ/2): the α = β point of N(0,1) vs N(1,1)


def test_run_attack_takes_the_gdp_threshold_from_the_linear_score() -> None:
    rng = np.random.default_rng(8)
    feats = {0: rng.normal(0, 1, (400, 2)), 1: rng.normal(0, 1, (400, 2)) + [0.8, 0.0]}
    model = LinearScore()
    outcome = run_attack(feats, split=(0.3, 0.05, 0.65), seed=0, delta=1e-5, confidence=0.95, model=model)
    train = 120
    fitted = LinearScore().fit(np.vstack([feats[0][:train], feats[1][:train]]), np.r_[np.zeros(train), np.ones(train)])
    test_x = np.vstack([feats[0][140:], feats[1][140:]])
    test_y = np.r_[np.zeros(260), np.ones(260)]
    expected = stats.counts_at(test_x @ fitted.weights, test_y, fitted.gdp_threshold)
    assert outcome.gdp_counts == expected


def _headline_mu(c: stats.Counts, confidence: float = 0.95) -> float:
    each = 1.0 - (1.0 - confidence) / len(gdp.METHODS)
    return max(gdp.mu_lower_bound(m, c.fp, c.negatives, c.fn, c.positives, confidence=each) for m in gdp.METHODS)


def test_linear_gdp_bound_is_calibrated_on_exact_gaussian_scores() -> None:
    # exact Gaussian-mechanism scores, one coordinate, so the learned test is close to optimal and
    # the bound close to μ: coverage is then a real check of the headline at 95 %
    mu, runs, seeds = 1.0, 600, 40
    values = []
    for s in range(seeds):
        rng = np.random.default_rng(100 + s)
        feats = {0: rng.normal(0, 1, (runs, 1)), 1: rng.normal(mu, 1, (runs, 1))}
        out = run_attack(feats, split=(0.3, 0.05, 0.65), seed=s, delta=1e-5, confidence=0.95, model=LinearScore())
        values.append(_headline_mu(out.gdp_counts))
    # ≤ 5 % nominal: allow the binomial(seeds, 0.05) 95th percentile plus one
    assert sum(v > mu for v in values) <= 5  # binomial(40, 0.05) 95th percentile is 4
    assert np.median(values) > 0.75 * mu


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
                       "--tight-seeds", "2", "--decomposition-seeds", "2", "--workers", "1", "--out", str(out)]) == 0
    report = json.loads(out.with_suffix(".json").read_text())
    rows = {r["target"]: r for r in report["rows"]}
    assert rows["reference:laplace-histogram"]["eps_cp"] > 0.2  # the attack finds the target's cell
    assert rows["reference:randomized-response"]["eps_cp"] > 0.3
    for fa in report["false_alarms"].values():
        assert fa["exceedances"] == 0
    assert {sp["target"] for sp in report["spread"]} == set(rows)
    assert all(len(sp["values"]) == 2 for sp in report["spread"])
    stages = report["decomposition"][0]["stages"]
    # the oracle (known direction and threshold, all runs as test) is the yardstick the audit chases
    now = next(v for k, v in stages.items() if "dpcheck now" in k)
    assert stages["oracle, all R as test"]["mean"] >= now["mean"] - 0.05
    assert out.with_suffix(".png").stat().st_size > 0
    assert "| reference:gaussian-marginals |" in out.with_suffix(".md").read_text()
    # --reuse keeps the audits and recomputes only the cheap parts
    again = tmp_path / "again"
    assert bench.main(["--reuse", str(out.with_suffix(".json")), "--runs", "400", "--anchor-runs", "0",
                       "--decomposition-seeds", "0", "--out", str(again)]) == 0
    reused = json.loads(again.with_suffix(".json").read_text())
    assert reused["rows"] == report["rows"] and reused["false_alarms"] == report["false_alarms"]
    assert reused["decomposition"] == [] and "(audits), then" in reused["command"]
