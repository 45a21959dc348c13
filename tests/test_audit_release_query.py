"""--attack release-query: the released counts in the target's own cells."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from dpcheck.audit.attacks.attacks import run_attack
from dpcheck.audit.attacks.release_query import QueryScore, check_supported, table_size, target_cells
from dpcheck.audit.core.spec import AuditSpec
from dpcheck.audit.core.store import Store
from dpcheck.audit.runners.engine import run_audit
from dpcheck.audit.runners.executor import InlineExecutor
from dpcheck.audit.worlds import datasets
from dpcheck.cli import main as cli_main


def test_cells_of_the_worst_case_target() -> None:
    ds = datasets.load("worstcase-categorical")  # three columns with categories (0, 1), target (1, 1, 1)
    assert list(target_cells("histogram", ds)) == [7] and table_size("histogram", ds) == 8
    assert list(target_cells("marginals", ds)) == [1, 3, 5] and table_size("marginals", ds) == 6
    with pytest.raises(ValueError, match="unknown release layout"):
        target_cells("cube", ds)


def test_cells_match_the_released_table() -> None:
    """With no noise to speak of, the cells named are exactly those the target adds one to."""
    from dpcheck.targets.exact_targets import GaussianMarginals, LaplaceHistogram

    ds = datasets.load("worstcase-categorical")
    schema = ds.get_schema()
    for mech, layout, knobs in ((GaussianMarginals(), "marginals", {"mu": 1e9}), (LaplaceHistogram(), "histogram", {})):
        eps = 1e9 if layout == "histogram" else 1.0
        rel = {w: mech.release(schema.decode(data), schema=schema, epsilon=eps, delta=1e-5, seed=0, **knobs)
               for w, data in ((1, ds.with_target), (0, ds.without_target))}
        moved = np.flatnonzero(np.abs(rel[1] - rel[0]) > 0.5)
        assert list(moved) == list(target_cells(layout, ds))


def test_query_score_sums_the_cells_and_takes_the_midpoint() -> None:
    x = np.array([[0, 4, 1, 2, 3, 4], [0, 4, 3, 2, 5, 4], [0, 4, 0, 0, 0, 0], [0, 4, 2, 0, 0, 0]], dtype=float)
    y = np.array([1, 1, 0, 0])
    q = QueryScore(np.array([0, 2]), 4).fit(x, y)
    assert list(q.predict_proba(x)[:, 1]) == [4.0, 8.0, 0.0, 2.0]
    assert q.gdp_threshold == pytest.approx((6.0 + 1.0) / 2)
    with pytest.raises(ValueError, match="both worlds"):
        q.fit(x, np.ones(4))
    with pytest.raises(ValueError, match="released"):  # a run whose release has another length
        q.predict_proba(np.array([[0, 3, 1, 1, 1, 0]], dtype=float))


def test_query_score_separates_a_shift_and_nothing_else() -> None:
    rng = np.random.default_rng(3)
    prefix = np.tile([0.0, 6.0], (600, 1))
    out, inn = rng.normal(0, 1, (600, 6)), rng.normal(0, 1, (600, 6))
    inn[:, [1, 3, 5]] += 1.0
    cells = np.array([1, 3, 5])
    leaky = run_attack({0: np.hstack([prefix, out]), 1: np.hstack([prefix, inn])}, split=(0.05, 0.05, 0.9), seed=0,
                       delta=1e-5, confidence=0.95, model=QueryScore(cells, 6))
    assert leaky.auc > 0.85
    same = run_attack({0: np.hstack([prefix, out]), 1: np.hstack([prefix, rng.normal(0, 1, (600, 6))])},
                      split=(0.05, 0.05, 0.9), seed=0, delta=1e-5, confidence=0.95, model=QueryScore(cells, 6))
    assert abs(same.auc - 0.5) < 0.06


def test_refused_where_no_layout_is_declared() -> None:
    with pytest.raises(ValueError, match="declares none"):
        check_supported("ref-laplace", "release-query")
    check_supported("reference:gaussian-marginals", "release-query")  # declares "marginals"
    check_supported("ref-laplace", "querybased")  # other attacks are not this module's business


def test_cli_refuses_before_any_run(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    store = tmp_path / "s.sqlite"
    code = cli_main(["audit", "--impl", "reference:laplace-histogram", "--attack", "release-query", "--runs", "5",
                     "--no-progress", "--store", str(store)])
    assert code != 2  # a target that declares its layout runs
    capsys.readouterr()
    code = cli_main(["audit", "--impl", "diffprivlib:mean", "--attack", "release-query", "--runs", "5",
                     "--no-progress", "--store", str(tmp_path / "refused.sqlite")])
    assert code == 2
    assert "declares none" in capsys.readouterr().err
    assert not (tmp_path / "refused.sqlite").exists()


def test_gaussian_marginals_end_to_end_below_the_claim(tmp_path: Path) -> None:
    """On the exact Gaussian mechanism the bound is positive, and below the claimed μ."""
    mu = 1.5
    spec = AuditSpec("reference:gaussian-marginals", dataset="worstcase-categorical", attack="release-query",
                     epsilon=1.0, delta=1e-5, runs=300, seed=2, hyperparams={"mu": mu}, split=(0.05, 0.05, 0.9))
    with Store(tmp_path / "s.sqlite") as store:
        result = run_audit(spec, store=store, executor=InlineExecutor())
    assert result.auc > 0.7
    assert result.gdp is not None and 0.3 * mu < result.gdp["mu_emp"] <= mu
    assert json.loads(json.dumps(result.to_dict()))["spec"]["attack"] == "release-query"
