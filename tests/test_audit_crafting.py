"""Crafted canary records: built from the public domain only, added to D, chosen on their own runs."""
from __future__ import annotations

import json

import numpy as np
import pytest

from dpcheck.audit.core.spec import AuditSpec
from dpcheck.audit.core.store import Store
from dpcheck.audit.runners import crafting
from dpcheck.audit.runners.engine import run_audit
from dpcheck.audit.runners.executor import InlineExecutor
from dpcheck.audit.worlds import datasets
from dpcheck.cli import main


def test_candidates_are_corners_upper_then_lower_then_by_distance():
    pool = crafting.candidates(np.array([0.0, -2.0, 5.0]), np.array([1.0, 2.0, 9.0]), 8)
    assert pool[0].tolist() == [1.0, 2.0, 9.0] and pool[1].tolist() == [0.0, -2.0, 5.0]
    assert len({tuple(r) for r in pool}) == 8
    at_upper = (pool == np.array([1.0, 2.0, 9.0])).sum(axis=1)
    assert list(at_upper[2:]) == sorted(at_upper[2:], reverse=True)  # farther from the lower corner first
    assert crafting.candidates(np.zeros(3), np.ones(3), 3).shape == (3, 3)


def test_many_columns_sample_corners_deterministically_and_degenerate_columns_have_one_value():
    first = crafting.candidates(np.zeros(20), np.ones(20), 6)
    assert np.array_equal(first, crafting.candidates(np.zeros(20), np.ones(20), 6))
    assert first[0].sum() == 20 and first[1].sum() == 0 and set(np.unique(first)) == {0.0, 1.0}
    pool = crafting.candidates(np.array([0.0, 3.0]), np.array([1.0, 3.0]), 10)
    assert pool.tolist() == [[1.0, 3.0], [0.0, 3.0]]


def test_the_crafted_record_is_added_to_the_public_rows():
    crafted = datasets.load("worstcase-categorical", "craft:0")
    plain = datasets.load("worstcase-categorical")
    assert np.array_equal(crafted.without_target, plain.without_target)
    assert crafted.target.tolist() == [1.0, 1.0, 1.0] and crafted.target_index == len(plain.without_target)
    cervical = datasets.load("cervical", "craft:1")
    train = datasets.cervical_clean()[0]
    assert np.array_equal(cervical.without_target, train)  # every training row stays: the canary is extra
    assert np.array_equal(cervical.target, cervical.lower)


def _csv(path, rows):
    path.write_text("x,y\n" + "\n".join(f"{a},{b}" for a, b in rows) + "\n")
    return path


def test_the_canary_depends_on_the_public_schema_only(tmp_path):
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps({"columns": [{"name": "x", "kind": "integer", "lower": 0, "upper": 9},
                                              {"name": "y", "kind": "categorical", "categories": ["a", "b", "c"]}]}))
    targets = []
    for name, rows in (("one.csv", [(1, "a"), (2, "b"), (3, "a")]), ("two.csv", [(8, "c"), (0, "c")])):
        data = datasets.user_data_spec(_csv(tmp_path / name, rows), schema)
        crafted = datasets.load("csv", "craft:0", data)
        assert len(crafted.without_target) == len(rows)
        targets.append(crafted.target.tolist())
    assert targets[0] == targets[1] == [9.0, 2.0]  # upper bound; last category's code


def test_bad_crafted_targets_are_refused():
    with pytest.raises(ValueError, match="target must be a row index, 'craft' or 'craft:K'"):
        AuditSpec("ref-laplace", target="crafty")
    with pytest.raises(ValueError, match="has only 8 crafted candidates"):
        datasets.load("worstcase", "craft:8")
    with pytest.raises(ValueError, match="choose the crafted candidate first"):
        datasets.load("worstcase", "craft")
    with pytest.raises(ValueError, match="replace-one game"):
        datasets.load("worstcase-continuous+replace", "craft:0")


def test_cli_refuses_craft_without_add_remove_public_domain(tmp_path, capsys):
    code = main(["audit", "--impl", "ref-marginals", "--dataset", "worstcase-continuous+replace", "--target", "craft",
                 "--attack", "groundhog", "--runs", "20", "--workers", "1", "--store", str(tmp_path / "s.sqlite")])
    err = capsys.readouterr().err
    assert code == 2 and "--target craft needs a dataset with a public domain" in err and "replace-one" in err
    assert not (tmp_path / "s.sqlite").exists()
    code = main(["audit", "--impl", "ref-marginals", "--target", "crafted", "--store", str(tmp_path / "s.sqlite")])
    assert code == 2 and "expected a row index, 'craft' or 'craft:K'" in capsys.readouterr().err


def test_gradient_canary_and_crafted_target_do_not_combine(tmp_path):
    spec = AuditSpec("ref-dpsgd", dataset="worstcase-classification", attack="gradient-canary", target="craft:0",
                     runs=20, hyperparams={"canary": "gradient"})
    with Store(tmp_path / "s.sqlite") as store, pytest.raises(ValueError, match="cannot be combined"):
        run_audit(spec, store=store, executor=InlineExecutor())


def _eps(tmp_path, impl: str, target, seed: int = 0) -> tuple[float, str]:
    spec = AuditSpec(impl, dataset="cervical", attack="groundhog", target=target, runs=100, seed=seed)
    with Store(tmp_path / "s.sqlite") as store:
        result = run_audit(spec, store=store, executor=InlineExecutor())
    return result.eps_cp, result.threat_model


def test_crafted_canary_beats_a_given_record_and_stays_below_epsilon_on_a_correct_mechanism(tmp_path):
    crafted, threat = _eps(tmp_path, "ref-leaky-bounds", "craft:0")
    given, _ = _eps(tmp_path, "ref-leaky-bounds", 0)
    assert crafted >= given and crafted > 1.0  # the crafted corner moves every column's data-derived range
    assert threat == "active: crafted canary (black-box attack)"
    for seed in (0, 1):
        assert _eps(tmp_path, "ref-marginals", "craft:0", seed)[0] <= 1.0


class NoRuns(InlineExecutor):
    def imap(self, tasks):
        tasks = list(tasks)
        if tasks:
            raise AssertionError(f"{len(tasks)} runs executed; the cached choice should need none")
        return iter(())


def test_mini_audits_choose_a_candidate_on_select_runs_and_cache_it(tmp_path):
    spec = AuditSpec("ref-leaky-bounds", dataset="worstcase-continuous", attack="groundhog", target="craft", runs=20)
    with Store(tmp_path / "s.sqlite") as store:
        chosen, choice = crafting.resolve_craft(spec, store=store, executor=InlineExecutor(), candidates_count=4,
                                                mini_runs=8)
        assert choice["selected_by"] == "mini-audits" and chosen.target == f"craft:{choice['candidate']}"
        assert choice["aucs"]["1"] < choice["auc"]  # the lower corner duplicates the background rows
        mini = spec.with_(target=chosen.target, runs=8, phase="select")
        assert store.done(mini.generation_hash()) and not store.done(chosen.generation_hash())
        again, cached = crafting.resolve_craft(spec, store=store, executor=NoRuns(), candidates_count=4, mini_runs=8)
        assert again == chosen and cached["candidate"] == choice["candidate"]


def test_cli_craft_end_to_end(tmp_path):
    out = tmp_path / "r.json"
    code = main(["audit", "--impl", "ref-leaky-bounds", "--dataset", "worstcase-continuous", "--attack", "groundhog",
                 "--target", "craft", "--candidates", "3", "--mini-runs", "6", "--runs", "40", "--workers", "1",
                 "--store", str(tmp_path / "s.sqlite"), "--json", str(out), "--no-progress"])
    result = json.loads(out.read_text())["results"][0]
    assert code in (0, 1)
    assert result["spec"]["target"].startswith("craft:") and result["target"] == 4
    assert result["target_selection"]["method"] == "crafted" and len(result["target_selection"]["aucs"]) == 3
    assert result["threat_model"] == "active: crafted canary (black-box attack)"
