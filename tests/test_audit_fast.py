"""The fast path of shadow runs: registry, purity (a run depends on its seed only), the plain
path's draws, path choice and fallback, what the audit records, and the equivalence statistics."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

from dpcheck.audit.core.settings import paper_hyperparams
from dpcheck.audit.core.spec import AuditSpec
from dpcheck.audit.core.store import Store
from dpcheck.audit.runners import equivalence, fastpath
from dpcheck.audit.runners.engine import run_audit
from dpcheck.audit.runners.executor import InlineExecutor, Task, group_tasks, run_group, run_path_of
from dpcheck.audit.worlds import datasets

ROOT = Path(__file__).resolve().parent.parent
REPORT = ROOT / "reports" / "fast_path_equivalence.json"
CONFIRMATION = ROOT / "reports" / "fast_path_confirmation.json"
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


def _fast_verdicts_that_matter() -> set[tuple[str, int]]:
    """(report, index) of every committed audit result computed on a fast path that is not exact and
    whose verdict matters: a violation, or a corrected twin's pass."""
    found = set()
    for path in sorted(ROOT.glob("reports/**/*.json")):
        data = json.loads(path.read_text())
        results = data.get("results") if isinstance(data, dict) else None
        for i, r in enumerate(results if isinstance(results, list) else []):
            impl = r.get("impl") or r.get("spec", {}).get("impl")
            if not (r.get("run_paths") or {}).get("fast") or impl in fastpath.EXACT:
                continue
            if r["verdict"] == "violation" or (impl.endswith("-fixed") and r["verdict"] == "pass"):
                found.add((str(path.relative_to(ROOT)), i))
    return found


def test_every_covered_impl_is_exact_or_tested_and_its_verdicts_rechecked() -> None:
    """A covered fast path is exact (replay test below) or passed the committed two-sample test, whose
    power (detectable shift) is recomputed here; and every verdict that matters computed on a non-exact
    fast path is re-run on the plain path (benchmarks/fast_path_confirm.py) or listed as not re-run."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import fast_path_confirm

    assert fastpath.EXACT <= fastpath.COVERED <= set(fastpath.FAST_FUNCTIONS)
    report = {e["impl"]: e for e in json.loads(REPORT.read_text())["implementations"]}
    for impl in fastpath.COVERED:
        entry = report[impl]
        assert entry["equivalent"] and not entry["rejected"]
        assert entry["runs_per_world"] >= 200 and entry["alpha"] == 0.05
        assert entry["command"].startswith("python benchmarks/fast_path_equivalence.py")
        assert entry["power_check"]["change"].endswith("-> 10")
        assert entry["detectable_shift_sd"] == equivalence.detectable_shift(entry["runs_per_world"], entry["tests"])
    listed = {(rep, i) for rep, i, _ in fast_path_confirm.CONFIRMATIONS.values()}
    skipped = {(rep, i) for rep, i in (k.rsplit("#", 1) for k in fast_path_confirm.UNCONFIRMED)}
    skipped = {(rep, int(i)) for rep, i in skipped}
    assert _fast_verdicts_that_matter() <= listed | skipped
    confirmed = {e["label"]: e for e in json.loads(CONFIRMATION.read_text())["confirmations"]}
    assert set(confirmed) == set(fast_path_confirm.CONFIRMATIONS)
    for label, entry in confirmed.items():
        plain = entry["plain"]
        assert entry["confirmed"], label
        assert plain["run_paths"] == {"fast": 0, "plain": 2 * plain["runs"], "fallback": 0}
        assert (plain["verdict"] == "violation") == (entry["fast"]["verdict"] == "violation")
        assert entry["command"].startswith("python benchmarks/fast_path_confirm.py")


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


#: per-element tolerance of the replay, relative and absolute: 4 float32 ulps of 1 (4.8e-7). The two paths
#: run the same float32 operations, but a batched matmul and a single one may be blocked and fused
#: differently by MKL/oneDNN, and the kernel chosen depends on the CPU (AVX2, AVX-512, AMX): a sum of
#: products can then round one float32 step apart (5.96e-08 observed on an AVX-512/AMX Xeon). The
#: released values lie in the public bounds [0, 1]; any different draw moves them by far more (checked).
REPLAY_TOL = 4 * float(np.finfo(np.float32).eps)


@pytest.mark.parametrize("impl", sorted(fastpath.EXACT))
@pytest.mark.parametrize("world", [0, 1])
def test_torch_fast_paths_replay_the_plain_path(impl: str, world: int) -> None:
    """Same initial weights, same draws, same arithmetic per model: the released data agrees element by
    element to float32 rounding. Compared before integer rounding (``integer_columns=()``), which
    is the same ``np.rint`` on both paths and would hide a difference (or turn a 1-ulp one into 1)."""
    from dpcheck import impls

    data = datasets.worst_case()
    hp = {**tiny_hp(impl), "integer_columns": ()}
    fast = fastpath.fit_sample_batch(impl, data.world(world), [21, 22], 30, epsilon=1.0, delta=1e-5,
                                     bounds=data.bounds, hyperparams=hp)
    for seed, out in zip([21, 22], fast):
        plain = impls.get(impl)
        plain.fit(data.world(world).copy(), epsilon=1.0, delta=1e-5, seed=seed, bounds=data.bounds, **hp)
        released = plain.sample(30)
        assert np.count_nonzero(released != np.round(released)) > 10  # continuous: the check can see rounding
        np.testing.assert_allclose(out, released, rtol=REPLAY_TOL, atol=REPLAY_TOL)
    # the tolerance is far below what a different draw changes: the two seeds' releases differ by more
    assert np.max(np.abs(fast[0] - fast[1])) > 1e4 * REPLAY_TOL


def test_replay_tolerance_allows_float32_rounding_not_a_different_value() -> None:
    x = np.linspace(0.0, 1.0, 11, dtype=np.float32)
    four_steps = x.copy()
    for _ in range(4):
        four_steps = np.nextafter(four_steps, np.float32(2))
    np.testing.assert_allclose(four_steps.astype(np.float64), x.astype(np.float64), rtol=REPLAY_TOL, atol=REPLAY_TOL)
    with pytest.raises(AssertionError):
        np.testing.assert_allclose(x.astype(np.float64) + 1e-3, x.astype(np.float64), rtol=REPLAY_TOL, atol=REPLAY_TOL)


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
    from dpcheck.audit.runners.engine import AuditRunError

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
