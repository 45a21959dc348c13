"""The distinguishing game end to end on the reference mechanisms (small R, in seconds)."""
import numpy as np
import pytest

from dpcheck.audit.core.spec import AuditSpec
from dpcheck.audit.core.store import Store
from dpcheck.audit.runners.engine import AuditRunError, checkpoint_plan, run_audit
from dpcheck.audit.runners.executor import InlineExecutor, ProcessExecutor
from dpcheck.audit.runners.targets import resolve_target


class RowPerRecord:
    """Releases one synthetic row per input row whatever n is asked for (like `original`)."""

    name, framework, upstream = "row-per-record", "numpy", "test"

    def fit(self, data, *, epsilon, delta, seed, probe=None, **hp):
        self.rows = len(data)
        return self

    def sample(self, n):
        return np.zeros((self.rows, 3))


class Exploding:
    name, framework, upstream = "exploding", "numpy", "test"

    def fit(self, data, **kw):
        raise ValueError("cannot train on this")

    def sample(self, n):
        raise AssertionError


@pytest.fixture
def store(tmp_path):
    with Store(tmp_path / "audit.sqlite") as s:
        yield s


def test_correct_mechanism_passes_and_broken_one_is_caught(store):
    good = run_audit(AuditSpec("ref-laplace", runs=150), store=store, executor=InlineExecutor())
    bad = run_audit(AuditSpec("ref-broken", runs=150), store=store, executor=InlineExecutor())
    assert good.verdict == "pass" and good.eps_cp <= 1.0
    assert bad.verdict == "violation" and bad.eps_cp > 1.0 and bad.auc > 0.85
    assert good.certifiable_cp == bad.certifiable_cp > 2.5
    assert good.test_per_world == 60 and good.output_size is None


def test_rerun_reuses_every_stored_run_and_gives_the_same_result(store):
    spec = AuditSpec("ref-broken", runs=60)
    first = run_audit(spec, store=store, executor=InlineExecutor())
    again = run_audit(spec, store=store, executor=InlineExecutor())
    assert (first.runs_executed, again.runs_executed, again.runs_reused) == (120, 0, 120)
    assert (again.eps_cp, again.eps_bayes, again.auc) == (first.eps_cp, first.eps_bayes, first.auc)


def test_second_attack_reuses_runs_of_the_same_spec(store):
    spec = AuditSpec("ref-laplace", runs=40)
    run_audit(spec, store=store, executor=InlineExecutor())
    other = run_audit(spec.with_(attack="groundhog"), store=store, executor=InlineExecutor())
    assert other.runs_executed == 0 and other.attack == "groundhog"


def test_process_pool_gives_the_same_runs_as_inline(tmp_path):
    spec = AuditSpec("ref-broken", runs=30, hyperparams={"delay": 0.02})  # slow enough for both workers to help
    with Store(tmp_path / "a.sqlite") as a, Store(tmp_path / "b.sqlite") as b:
        inline = run_audit(spec, store=a, executor=InlineExecutor())
        pool = ProcessExecutor(2)
        try:
            parallel = run_audit(spec, store=b, executor=pool)
        finally:
            pool.close()
        runs_a, runs_b = a.load(spec.generation_hash(), 30), b.load(spec.generation_hash(), 30)
    assert [(r.world, r.index, r.seed) for r in runs_a] == [(r.world, r.index, r.seed) for r in runs_b]
    assert all(np.array_equal(x.synth, y.synth) for x, y in zip(runs_a, runs_b))
    assert len({r.worker for r in runs_b}) == 2
    assert (inline.eps_cp, inline.auc, inline.fp, inline.fn) == (parallel.eps_cp, parallel.auc, parallel.fp, parallel.fn)


def test_until_verdict_stops_at_the_first_proving_checkpoint(store):
    res = run_audit(AuditSpec("ref-broken", runs=400), store=store, executor=InlineExecutor(),
                    until_verdict=True, checkpoints=[100, 200, 300])
    assert res.verdict == "violation" and res.runs < 400
    assert res.bound_confidence == pytest.approx(1 - 0.05 / 4)
    assert [c.runs for c in res.checkpoints] == [100, 200, 300, 400][: len(res.checkpoints)]
    assert res.runs_executed == 2 * res.runs  # nothing beyond the deciding checkpoint ran


def test_checkpoint_plan_is_fixed_by_runs_only():
    assert checkpoint_plan(1000, [100, 250, 500, 1000]) == [100, 250, 500, 1000]
    assert checkpoint_plan(300, [100, 250, 500, 1000]) == [100, 250, 300]
    assert checkpoint_plan(300, None) == [300]


def test_output_size_that_reveals_input_size_is_a_separate_finding(store):
    res = run_audit(AuditSpec("test_audit_engine:RowPerRecord", runs=20), store=store, executor=InlineExecutor())
    assert res.output_size is not None and res.output_size["reveals_input_size"]
    assert res.output_size["rows_with_target"] == [5] and res.output_size["rows_without_target"] == [4]


def test_failing_implementation_stops_the_audit_with_its_error(store):
    with pytest.raises(AuditRunError, match="cannot train on this"):
        run_audit(AuditSpec("test_audit_engine:Exploding", runs=10), store=store, executor=InlineExecutor())
    assert store.done(AuditSpec("test_audit_engine:Exploding", runs=10).generation_hash()) == set()


def test_vulnerable_target_is_selected_once_and_cached(store):
    spec = AuditSpec("ref-marginals", dataset="cervical", attack="groundhog", runs=20, synth_rows=50,
                     hyperparams={})
    chosen, info = resolve_target(spec, store=store, executor=InlineExecutor(), candidates=3, mini_runs=10)
    assert info["method"] == "vulnerable-record" and len(info["aucs"]) == 3
    assert chosen.target == info["target"] and str(chosen.target) in info["aucs"]
    assert info["auc"] == max(info["aucs"].values())
    again, cached = resolve_target(spec, store=store, executor=InlineExecutor(), candidates=3, mini_runs=10)
    assert again.target == chosen.target and cached == info
    res = run_audit(chosen, store=store, executor=InlineExecutor())
    assert res.target == chosen.target and res.runs_executed == 40  # fresh runs, not the mini-audit's


def test_target_selection_shares_the_runs_on_d_and_runs_each_candidate_once_on_d_prime(store):
    spec = AuditSpec("ref-marginals", dataset="cervical", attack="groundhog", runs=20, synth_rows=50)
    chosen, info = resolve_target(spec, store=store, executor=InlineExecutor(), candidates=4, mini_runs=6)
    pool = [int(i) for i in info["pool"]]
    assert len(pool) == 4 and chosen.target in pool
    shared = spec.with_(target=pool[0], runs=6, phase="select")
    assert store.done(shared.generation_hash()) == {(w, i) for w in (0, 1) for i in range(6)}
    for index in pool[1:]:  # D′ runs only: D is shared
        assert store.done(spec.with_(target=index, runs=6, phase="select").generation_hash()) == {(0, i) for i in range(6)}
    assert all(0.0 <= v <= 1.0 for v in info["aucs"].values())
    assert info["runs"] == 5 * 6 and info["seconds"] > 0


def test_cv_auc_separates_shifted_features_and_not_identical_ones():
    from dpcheck.audit.runners.targets import cv_auc

    rng = np.random.default_rng(3)
    same = cv_auc(rng.normal(size=(20, 4)), rng.normal(size=(20, 4)), seed=0)
    shifted = cv_auc(rng.normal(size=(20, 4)) + 3.0, rng.normal(size=(20, 4)), seed=0)
    assert shifted > 0.95 and same < 0.8


def test_target_selection_refuses_too_few_mini_runs(store):
    spec = AuditSpec("ref-marginals", dataset="cervical", attack="groundhog", runs=20, synth_rows=50)
    with pytest.raises(ValueError, match="mini-runs"):
        resolve_target(spec, store=store, executor=InlineExecutor(), candidates=4, mini_runs=1)
