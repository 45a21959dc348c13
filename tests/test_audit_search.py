"""Worst-case settings search: grid parsing and checking, the pilot's choice, and the separation of
pilot and confirmatory runs (only phase 'audit' runs ever enter a bound)."""
import json
import os
import sqlite3

import numpy as np
import pytest

from dpcheck.audit.core.spec import AuditSpec
from dpcheck.audit.core.store import Store
from dpcheck.audit.runners import search
from dpcheck.audit.runners.engine import run_audit
from dpcheck.audit.runners.executor import InlineExecutor
from dpcheck.cli import main

from dpcheck.vendored_impls._common import as_numeric_array


class KnobLeak:
    """Releases only (0, 0, 0) rows — no information — except with ``mode="c"``, where it releases
    its input rows, so the target (1, 1, 1) shows up in every run of the world that holds it."""

    name = "knob-leak"
    framework = "numpy"
    upstream = "test"

    def fit(self, data, *, epsilon, delta, seed, probe=None, bounds=None, mode="a"):
        if mode not in ("a", "b", "c"):
            raise ValueError(f"mode must be a, b or c, got {mode!r}")
        self._x, _ = as_numeric_array(data)
        self._mode = mode
        self._rng = np.random.default_rng(seed)
        return self

    def sample(self, n):
        if self._mode != "c":
            return np.zeros((n, self._x.shape[1]))
        return self._x[self._rng.integers(0, len(self._x), size=n)]


LEAK = "test_audit_search:KnobLeak"


class PartialLeak(KnobLeak):
    """Like KnobLeak, but with ``mode="c"`` a run releases its input rows only with probability ½
    (drawn from the run's seed): a leak the pilot's CV AUC sees (about 0.75) long before a pilot's
    test-part ε_emp can certify anything."""

    name = "partial-leak"

    def sample(self, n):
        if self._mode == "c" and self._rng.random() < 0.5:
            return self._x[self._rng.integers(0, len(self._x), size=n)]
        return np.zeros((n, self._x.shape[1]))


PARTIAL = "test_audit_search:PartialLeak"


def stored_generations(path):
    with sqlite3.connect(path) as db:
        specs = {h: json.loads(g) for h, g in db.execute("SELECT hash, generation FROM specs")}
        runs = db.execute("SELECT spec_hash, session FROM runs").fetchall()
    return specs, runs


def test_parse_items_reads_numbers_and_strings():
    grid = search.parse_items(["lamda=0.001,1", "max_iterations=100,1000", "mode=a,b", "flag=true"])
    assert grid == {"lamda": [0.001, 1], "max_iterations": [100, 1000], "mode": ["a", "b"], "flag": [True]}
    assert isinstance(grid["max_iterations"][0], int)
    points = search.expand(grid)
    assert len(points) == 8 and points[0] == {"lamda": 0.001, "max_iterations": 100, "mode": "a", "flag": True}
    assert points[1]["mode"] == "b"  # the last key varies fastest
    for bad in (["lamda"], ["=1,2"], ["lamda="], ["a=1", "a=2"]):
        with pytest.raises(search.SearchGridError):
            search.parse_items(bad)
    with pytest.raises(search.SearchGridError, match="twice"):
        search.expand([{"a": 1}, {"a": 1}])


def test_grid_file_both_forms_and_bad_files(tmp_path):
    product = tmp_path / "g.json"
    product.write_text(json.dumps({"mode": ["a", "c"], "synth_rows": [10, 20]}))
    assert len(search.expand(search.load_grid_file(product))) == 4
    points = tmp_path / "p.json"
    points.write_text(json.dumps({"points": [{"mode": "a"}, {"mode": "c", "synth_rows": 30}]}))
    assert search.expand(search.load_grid_file(points)) == [{"mode": "a"}, {"mode": "c", "synth_rows": 30}]
    broken = tmp_path / "b.json"
    broken.write_text("{not json")
    with pytest.raises(search.SearchGridError, match="not JSON"):
        search.load_grid_file(broken)
    broken.write_text(json.dumps({"mode": "a"}))
    with pytest.raises(search.SearchGridError, match="expected"):
        search.load_grid_file(broken)
    with pytest.raises(search.SearchGridError, match="no values"):
        search.expand({"mode": []})


def test_accepted_keys_follow_the_adapters_declared_knobs():
    turing = search.accepted_keys("turing")
    assert {"max_iterations", "num_teachers", "batch_size", "learning_rate", "synth_rows"} <= set(turing)
    assert "bounds" not in turing and "seed" not in turing
    assert {"lr", "lamda", "teacher_iters"} <= set(search.accepted_keys("smartnoise"))
    assert {"label_ratio"} <= set(search.accepted_keys("original-fixed"))
    assert set(search.accepted_keys(LEAK)) == {"mode", "synth_rows"}
    # reference mechanisms document that they accept and ignore the PATE-GAN budget knobs
    assert {"delay", "max_iterations", "num_teachers"} <= set(search.accepted_keys("ref-laplace"))
    for impl in ("turing", "turing-fixed", "smartnoise", "smartnoise-fixed", "original", "borealis-fixed"):
        search.check_grid(impl, search.expand(search.default_grid(impl)))


def test_unknown_hyperparameter_is_refused_before_any_run(tmp_path):
    with pytest.raises(search.SearchGridError, match=r"unknown hyperparameter\(s\) learnig_rate; accepted: .*max_iterations"):
        search.check_grid("turing", [{"learnig_rate": 1e-3}])
    with pytest.raises(search.SearchGridError, match="bounds"):
        search.check_grid("ref-laplace", [{"bounds": [0, 1]}])
    with pytest.raises(search.SearchGridError, match="synth_rows"):
        search.check_grid("ref-laplace", [{"synth_rows": 0}])
    with pytest.raises(search.SearchGridError, match="no built-in search grid"):
        search.default_grid("ref-laplace")
    store_path = tmp_path / "s.sqlite"
    with Store(store_path) as store:
        with pytest.raises(search.SearchGridError, match="typo"):
            search.run_search(AuditSpec(LEAK, runs=20), [{"mode": "a"}, {"typo": 1}], store=store,
                              executor=InlineExecutor(), pilot_runs=10)
    assert stored_generations(store_path) == ({}, [])


def test_cli_refuses_unknown_key_and_bad_combinations(tmp_path, capsys):
    store = str(tmp_path / "s.sqlite")
    code = main(["audit", "--impl", "smartnoise", "--search", "lamda=0.001,1", "learnin_rate=0.1",
                 "--runs", "20", "--workers", "1", "--store", store])
    err = capsys.readouterr().err
    assert code == 2 and "learnin_rate" in err and "accepted:" in err and "lr" in err
    assert not os.path.exists(store)  # refused before the store is even opened
    code = main(["audit", "--impl", "ref-laplace", "--search", "--runs", "20", "--workers", "1", "--store", store])
    assert code == 2 and "no built-in search grid" in capsys.readouterr().err
    grid = tmp_path / "g.json"
    grid.write_text(json.dumps({"delay": [0]}))
    code = main(["audit", "--impl", "ref-laplace", "--search", "delay=0", "--search-grid", str(grid),
                 "--store", store])
    assert code == 2 and "either" in capsys.readouterr().err
    code = main(["audit", "--impl", "ref-laplace", "--search", "delay=0", "--one-run", "100", "--store", store])
    assert code == 2 and "--one-run" in capsys.readouterr().err


def test_search_chooses_the_leaky_setting_and_the_confirmatory_audit_proves_it(tmp_path):
    store_path = tmp_path / "s.sqlite"
    points = search.expand({"mode": ["a", "b", "c"]})
    spec = AuditSpec(LEAK, runs=60, seed=3)
    with Store(store_path) as store:
        result = search.run_search(spec, points, store=store, executor=InlineExecutor(), pilot_runs=20)
    found = result.search
    assert found["chosen"] == {"mode": "c"} and found["chosen_index"] == 2
    pilot = found["pilot"]
    assert [p["eps_cp"] for p in pilot[:2]] == [0.0, 0.0] and pilot[2]["eps_cp"] > 0 and pilot[2]["auc"] == 1.0
    assert [p["cv_auc"] for p in pilot] == [0.5, 0.5, 1.0] and pilot[2]["cv_attack"] == "querybased"
    assert result.verdict == "violation" and result.eps_cp > spec.epsilon
    assert result.spec["hyperparams"] == {"mode": "c"} and result.spec["phase"] == "audit"
    assert "never used in the bound" in found["statement"]
    assert found["pilot_seed"] != spec.seed

    # the store keeps the phases apart: the bound was computed from fresh confirmatory runs only
    specs, runs = stored_generations(store_path)
    pilot_hashes = {p["spec_hash"] for p in pilot}
    assert result.spec_hash == found["confirmatory_spec_hash"] and result.spec_hash not in pilot_hashes
    assert {h for h, g in specs.items() if g["phase"] == "pilot"} == pilot_hashes
    assert specs[result.spec_hash]["phase"] == "audit" and specs[result.spec_hash]["seed"] == spec.seed
    assert all(specs[h]["seed"] == found["pilot_seed"] for h in pilot_hashes)
    confirm_sessions = {s for h, s in runs if h == result.spec_hash}
    pilot_sessions = {s for h, s in runs if h in pilot_hashes}
    assert sum(h == result.spec_hash for h, _ in runs) == 2 * result.runs
    assert confirm_sessions and pilot_sessions and not confirm_sessions & pilot_sessions
    assert result.runs_reused == 0 and result.runs_executed == 2 * result.runs


def test_pilot_runs_can_never_enter_a_bound(tmp_path):
    spec = AuditSpec(LEAK, runs=20, hyperparams={"mode": "c"})
    pilot = search.pilot_spec(spec, {}, 20)
    assert pilot.phase == "pilot" and pilot.generation_hash() != spec.generation_hash()
    # even with the confirmatory seed, the phase alone separates the stored runs
    assert spec.with_(phase="pilot").generation_hash() != spec.generation_hash()
    with Store(tmp_path / "s.sqlite") as store:
        with pytest.raises(ValueError, match="only phase 'audit'"):
            run_audit(pilot, store=store, executor=InlineExecutor())
        with pytest.raises(ValueError, match="confirmatory"):
            search.run_search(pilot, [{"mode": "a"}], store=store, executor=InlineExecutor(), pilot_runs=10)
    with pytest.raises(ValueError, match="unknown phase"):
        AuditSpec(LEAK, phase="pilot-and-audit")


def test_a_correct_mechanism_stays_within_epsilon_after_the_search(tmp_path):
    # ref-laplace is exactly 1-DP whatever the grid sets (delay and max_iterations change nothing,
    # synth_rows only how many rows of its ε-DP histogram are released); fixed seed, confidence 0.95
    grid = search.expand({"max_iterations": [1, 1000], "synth_rows": [20, 400]})
    with Store(tmp_path / "s.sqlite") as store:
        result = search.run_search(AuditSpec("ref-laplace", runs=200, seed=5), grid, store=store,
                                   executor=InlineExecutor(), pilot_runs=40)
    assert result.eps_cp <= 1.0 and result.verdict != "violation"
    assert result.search["chosen"] in grid and result.certifiable_cp > 1.0


def test_failed_grid_points_are_reported_and_skipped(tmp_path):
    # a setting the implementation refuses is reported and is no candidate
    grid = [{"mode": "z"}, {"mode": "a"}]
    with Store(tmp_path / "s.sqlite") as store:
        result = search.run_search(AuditSpec(LEAK, runs=10), grid, store=store, executor=InlineExecutor(),
                                   pilot_runs=5)
        assert "mode must be" in result.search["pilot"][0]["failed"] and result.search["chosen_index"] == 1
        assert result.spec["hyperparams"] == {"mode": "a"}
        with pytest.raises(Exception, match="every grid point of the search failed"):
            search.run_search(AuditSpec(LEAK, runs=10), [{"mode": "z"}], store=store, executor=InlineExecutor(),
                              pilot_runs=5)


@pytest.mark.slow
def test_search_end_to_end_on_a_twin(tmp_path, capsys):
    small = os.environ.get("DPCHECK_SMALL") == "1"
    out = tmp_path / "r.json"
    code = main(["audit", "--impl", "turing-fixed", "--search", "max_iterations=5,20", "--pilot-runs",
                 "10" if small else "20", "--runs", "30" if small else "60", "--workers", "1",
                 "--store", str(tmp_path / "s.sqlite"), "--json", str(out), "--no-progress"])
    captured = capsys.readouterr()
    result = json.loads(out.read_text())["results"][0]
    assert code == 0 and result["eps_cp"] <= 1.0
    found = result["search"]
    assert [p["point"] for p in found["pilot"]] == [{"max_iterations": 5}, {"max_iterations": 20}]
    assert found["chosen"] in ({"max_iterations": 5}, {"max_iterations": 20})
    assert result["spec"]["hyperparams"]["max_iterations"] == found["chosen"]["max_iterations"]
    assert "2 grid point(s)" in captured.err and "search turing-fixed: chose" in captured.out


def test_ties_go_to_the_first_grid_point(tmp_path):
    # modes a and b release the same constant data: equal pilot ε_emp and AUC, so grid order decides
    with Store(tmp_path / "s.sqlite") as store:
        result = search.run_search(AuditSpec(LEAK, runs=10), [{"mode": "b"}, {"mode": "a"}], store=store,
                                   executor=InlineExecutor(), pilot_runs=10)
    pilot = result.search["pilot"]
    assert (pilot[0]["eps_cp"], pilot[0]["auc"]) == (pilot[1]["eps_cp"], pilot[1]["auc"])
    assert result.search["chosen"] == {"mode": "b"}


def test_cv_auc_rule_picks_the_leaking_point_a_small_pilot_cannot_certify(tmp_path):
    # 20 pilot runs per world: the test part certifies too little for ε_emp to rank the points, the
    # CV AUC over all 40 pilot runs of a point still finds the one that leaks (in about half its runs)
    store_path = tmp_path / "s.sqlite"
    points = search.expand({"mode": ["a", "c", "b"]})
    spec = AuditSpec(PARTIAL, runs=200, seed=11)
    with Store(store_path) as store:
        result = search.run_search(spec, points, store=store, executor=InlineExecutor(), pilot_runs=20)
    pilot = result.search["pilot"]
    assert all(p["certifiable_cp"] < 2.0 for p in pilot)
    assert result.search["chosen"] == {"mode": "c"} and pilot[1]["cv_auc"] > 0.6
    assert pilot[0]["cv_auc"] == pilot[2]["cv_auc"] == 0.5
    assert "cross-validated AUC" in result.search["rule"]
    # the bound comes from the confirmatory runs alone: none of them is a pilot run
    specs, runs = stored_generations(store_path)
    pilot_hashes = {p["spec_hash"] for p in pilot}
    assert all(specs[h]["phase"] == "pilot" for h in pilot_hashes) and specs[result.spec_hash]["phase"] == "audit"
    assert sum(h == result.spec_hash for h, _ in runs) == 2 * result.runs == result.runs_executed
    assert result.verdict == "violation"


def test_choose_skips_failed_points_and_breaks_ties_by_grid_order():
    pilot = [{"failed": "boom"}, {"cv_auc": 0.7}, {"cv_auc": 0.9}, {"cv_auc": 0.9}, {"cv_auc": float("nan")}]
    assert search.choose(pilot) == 2
    assert search.choose([{"cv_auc": float("nan")}, {"cv_auc": 0.1}]) == 1
    with pytest.raises(ValueError):
        search.choose([{"failed": "boom"}])


def test_turing_and_its_twin_take_a_learning_rate():
    from dpcheck.vendored_impls.turing import adapter

    data = np.array([[0, 0, 0]] * 4 + [[1, 1, 1]], dtype=float)
    bounds = (np.zeros(3), np.ones(3))
    bounds = {"bounds": bounds, "num_teachers": 2}
    hp, _, _ = adapter.prepare("turing", data, {"learning_rate": 1e-2, **bounds})
    assert adapter.Upstream()._extra(hp) == {"learning_rate": 1e-2}
    hp, _, _ = adapter.prepare("turing-fixed", data, {"learning_rate": 1e-2, **bounds})
    assert adapter.Fixed()._extra(hp)["learning_rate"] == 1e-2


def test_twin_learning_rate_reaches_both_paths():
    """The twin's plain and fast paths train with the learning rate given."""
    impl = "turing-fixed"
    from dpcheck.audit.reference.mechanisms import get_impl
    from dpcheck.audit.runners import fastpath

    data = np.array([[0, 0, 0]] * 4 + [[1, 1, 1]], dtype=float)
    bounds = (np.zeros(3), np.ones(3))
    hp = {"max_iterations": 20, "num_teachers": 1}
    fast = {lr: fastpath.fit_sample_batch(impl, data, [3], 40, epsilon=1.0, delta=1e-5, bounds=bounds,
                                          hyperparams={**hp, "learning_rate": lr})[0]
            for lr in (1e-4, 1e-1)}
    assert not np.array_equal(fast[1e-4], fast[1e-1])
    plain = {lr: get_impl(impl).fit(data, epsilon=1.0, delta=1e-5, seed=3, bounds=bounds, **hp,
                                    learning_rate=lr).sample(40) for lr in (1e-4, 1e-1)}
    assert plain[1e-4].shape == plain[1e-1].shape == fast[1e-1].shape
    assert not np.array_equal(plain[1e-4], plain[1e-1])


def test_turing_fast_path_uses_the_learning_rate():
    from dpcheck.audit.runners import fastpath

    data = np.array([[0, 0, 0]] * 4 + [[1, 1, 1]], dtype=float)
    hp = {"max_iterations": 30, "num_teachers": 1, "categorical_columns": (0, 1, 2)}
    outs = {lr: fastpath.fit_sample_batch("turing", data, [1, 2], 50, epsilon=1.0, delta=1e-5,
                                          bounds=(np.zeros(3), np.ones(3)), hyperparams={**hp, "learning_rate": lr})
            for lr in (1e-4, 1e-1)}
    assert not all(np.array_equal(a, b) for a, b in zip(outs[1e-4], outs[1e-1]))
