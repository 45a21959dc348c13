"""The fast path of shadow runs: registry, purity (a run depends on its seed only), the plain
path's draws, path choice and fallback, what the audit records, and the equivalence statistics."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from dpcheck.audit import datasets, equivalence, fastpath
from dpcheck.audit.engine import run_audit
from dpcheck.audit.executor import InlineExecutor, Task, group_tasks, run_group, run_path_of
from dpcheck.audit.settings import paper_hyperparams
from dpcheck.audit.spec import AuditSpec
from dpcheck.audit.store import Store

REPORT = Path(__file__).resolve().parent.parent / "reports" / "fast_path_equivalence.json"
#: a few iterations keep every run here cheap; the equivalence test runs the paper's settings
TINY = {"max_iterations": 3}


def tiny_hp(impl: str) -> dict:
    return {**paper_hyperparams(impl, "worstcase"), **TINY}


def batch(impl: str, seeds: list[int], world: int = 1, rows: int = 20) -> list[np.ndarray]:
    data = datasets.worst_case()
    return fastpath.fit_sample_batch(impl, data.world(world), seeds, rows, epsilon=1.0, delta=1e-5,
                                     bounds=data.bounds, hyperparams=tiny_hp(impl))


def test_registry_is_consistent() -> None:
    assert fastpath.COVERED <= set(fastpath.FAST_FUNCTIONS)
    for impl in fastpath.FAST_FUNCTIONS:
        assert callable(fastpath.batch_function(impl))


def test_every_covered_impl_passed_the_committed_equivalence_test() -> None:
    report = {e["impl"]: e for e in json.loads(REPORT.read_text())["implementations"]}
    for impl in fastpath.COVERED:
        assert impl in report, f"{impl} is covered but not in {REPORT.name}"
        entry = report[impl]
        assert entry["equivalent"] and not entry["rejected"]
        assert entry["runs_per_world"] >= 200 and entry["alpha"] == 0.05


@pytest.mark.parametrize("impl", sorted(fastpath.FAST_FUNCTIONS))
def test_a_run_depends_on_its_seed_only(impl: str) -> None:
    together = batch(impl, [11, 12, 13])
    other_mates = batch(impl, [97, 13, 98])  # the same batch size: one graph per implementation
    again = batch(impl, [11, 12, 13])
    assert together[2].shape == (20, 3)
    np.testing.assert_allclose(together[2], other_mates[1], atol=1e-5)
    for a, b in zip(together, again):
        np.testing.assert_array_equal(a, b)
    assert not np.array_equal(together[0], together[1]) or impl.startswith("turing")


def test_original_fixed_replays_the_plain_paths_draws() -> None:
    """The generation labels are drawn by numpy only: the fast path draws exactly the plain path's."""
    from dpcheck import impls

    data = datasets.worst_case()
    fast = batch("original-fixed", [5, 6], rows=50)
    for seed, out in zip([5, 6], fast):
        plain = impls.get("original-fixed")
        plain.fit(data.with_target.copy(), epsilon=1.0, delta=1e-5, seed=seed, bounds=data.bounds,
                  **tiny_hp("original-fixed"))
        np.testing.assert_array_equal(plain.sample(50)[:, 2], out[:, 2])


@pytest.mark.parametrize("impl", ["borealis", "borealis-fixed", "smartnoise", "smartnoise-fixed"])
@pytest.mark.parametrize("world", [0, 1])
def test_torch_fast_paths_replay_the_plain_path_exactly(impl: str, world: int) -> None:
    """Same initial weights, same draws, same arithmetic per model: the released data is identical."""
    from dpcheck import impls

    data = datasets.worst_case()
    fast = batch(impl, [21, 22], world=world, rows=30)
    for seed, out in zip([21, 22], fast):
        plain = impls.get(impl)
        plain.fit(data.world(world).copy(), epsilon=1.0, delta=1e-5, seed=seed, bounds=data.bounds, **tiny_hp(impl))
        np.testing.assert_array_equal(plain.sample(30), out)


def test_original_releases_the_training_labels_like_the_plain_path() -> None:
    from dpcheck import impls

    data = datasets.worst_case()
    plain = impls.get("original")
    plain.fit(data.with_target.copy(), epsilon=1.0, delta=1e-5, seed=3, bounds=data.bounds, **tiny_hp("original"))
    np.testing.assert_array_equal(plain.sample(20)[:, 2], batch("original", [3])[0][:, 2])


def test_path_choice() -> None:
    assert fastpath.chosen_path("original", "auto") == ("fast" if "original" in fastpath.COVERED else "plain")
    assert fastpath.chosen_path("original", "plain") == "plain"
    assert fastpath.chosen_path("ref-laplace", "fast") == "plain"  # no fast path: plain even when forced
    with pytest.raises(ValueError, match="unknown run path"):
        fastpath.check_path("quick")


def test_group_tasks_batches_one_world_and_keeps_plain_tasks_single() -> None:
    gen = AuditSpec("original", runs=5, hyperparams=tiny_hp("original")).generation()
    tasks = [Task(gen, w, i) for i in range(5) for w in (0, 1)]
    groups = group_tasks(tasks, "fast", 3)
    assert sorted(len(g) for g in groups) == [2, 2, 3, 3]
    assert all(len({t.world for t in g}) == 1 for g in groups)
    assert len(group_tasks(tasks, "plain", 3)) == 10


def test_audit_records_the_path(tmp_path: Path) -> None:
    spec = AuditSpec("original", runs=5, hyperparams=tiny_hp("original"))
    with Store(tmp_path / "s.sqlite") as store:
        res = run_audit(spec, store=store, executor=InlineExecutor("fast"))
    assert res.run_paths == {"fast": 10, "plain": 0, "fallback": 0}
    assert res.to_dict()["run_paths"]["fast"] == 10
    with Store(tmp_path / "p.sqlite") as store:
        plain = run_audit(spec, store=store, executor=InlineExecutor("plain"))
    assert plain.run_paths == {"fast": 0, "plain": 10, "fallback": 0}


def _broken(*args: object, **kwargs: object) -> list:
    raise RuntimeError("boom")


def test_covered_fast_path_failure_falls_back(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fastpath, "COVERED", frozenset({"original"}))
    monkeypatch.setattr(fastpath, "batch_function", lambda impl: _broken)
    gen = AuditSpec("original", runs=5, hyperparams=tiny_hp("original")).generation()
    outs = run_group([Task(gen, 1, 0), Task(gen, 1, 1)], "fast")
    assert [run_path_of(o.worker) for o in outs] == ["fallback", "fallback"]
    assert all(o.error is None and o.synth.shape == (100, 3) for o in outs)


def test_uncovered_fast_path_failure_is_a_failed_run(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from dpcheck.audit.engine import AuditRunError

    monkeypatch.setattr(fastpath, "COVERED", frozenset())
    monkeypatch.setattr(fastpath, "batch_function", lambda impl: _broken)
    spec = AuditSpec("original", runs=5, hyperparams=tiny_hp("original"))
    outs = run_group([Task(spec.generation(), 0, 0)], "fast")
    assert outs[0].synth is None and "no fallback" in outs[0].error and "boom" in outs[0].error
    with Store(tmp_path / "s.sqlite") as store, pytest.raises(AuditRunError, match="boom"):
        run_audit(spec, store=store, executor=InlineExecutor("fast"))


def test_holm() -> None:
    assert equivalence.holm([0.001, 0.04, 0.5], 0.05) == [True, False, False]
    assert equivalence.holm([0.01, 0.02, 0.03], 0.05) == [True, True, True]
    assert equivalence.holm([0.2, 0.3], 0.05) == [False, False]


def _runs(path: str, rng: np.random.Generator, shift: float) -> equivalence.PathRuns:
    return equivalence.PathRuns(path, 0, {w: rng.normal(shift, 1.0, size=(120, 4)) for w in (0, 1)}, 1.0)


def test_compare_keeps_equal_distributions_and_rejects_different_ones() -> None:
    rng = np.random.default_rng(0)
    same = equivalence.compare("x", _runs("plain", rng, 0.0), _runs("fast", rng, 0.0))
    assert same.equivalent and same.tests == 2 * 4 + 2
    shifted = equivalence.compare("x", _runs("plain", rng, 0.0), _runs("fast", rng, 0.6))
    assert not shifted.equivalent and shifted.rejected


def test_cli_path_flags(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    from dpcheck.cli import main

    assert main(["audit", "--impl", "original", "--fast", "--plain"]) == 2
    assert "not allowed with argument --fast" in capsys.readouterr().err
    code = main(["audit", "--impl", "original", "--plain", "--runs", "5", "--hp", "max_iterations=2", "--workers",
                 "1", "--store", str(tmp_path / "s.sqlite"), "--no-progress", "--json", str(tmp_path / "a.json")])
    assert code in (0, 1)
    entry = json.loads((tmp_path / "a.json").read_text())["results"][0]
    assert entry["run_paths"] == {"fast": 0, "plain": 10, "fallback": 0}
