"""Passive white-box attacks (``logan``, ``model-params``): the released model, its runs, its refusals."""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np
import pytest

from dpcheck.audit.attacks import selection, whitebox
from dpcheck.audit.core.settings import paper_hyperparams
from dpcheck.audit.core.spec import WHITEBOX_ATTACKS, WORLD_IN, WORLD_OUT, AuditSpec
from dpcheck.audit.core.store import Store
from dpcheck.audit.reference.mechanisms import get_impl
from dpcheck.audit.runners.engine import run_audit
from dpcheck.audit.runners.executor import InlineExecutor, Task, group_tasks, run_one
from dpcheck.cli import UsageError

SMALL = bool(os.environ.get("DPCHECK_SMALL"))
# an adapter without release_model(): the bring-your-own example (examples/ is not installed)
NO_RELEASE = "examples.tiny_pate.model:TinyPate"
if str(Path(__file__).resolve().parents[1]) not in sys.path:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def _audit(tmp_path, impl: str, attack: str, runs: int, seed: int = 0, **hyper):
    store = Store(tmp_path / f"{impl}-{attack}-{seed}.sqlite")
    try:
        return run_audit(AuditSpec(impl, attack=attack, runs=runs, seed=seed, hyperparams=hyper), store=store,
                         executor=InlineExecutor())
    finally:
        store.close()


# ------------------------------------------------------------------ threat model and generation

def test_threat_model_is_named_per_attack():
    assert whitebox.threat_model_of(AuditSpec("ref-laplace", attack="logan")) == "white-box (passive)"
    assert whitebox.threat_model_of(AuditSpec("ref-laplace", attack="model-params")) == "white-box (passive)"
    for attack in ("querybased", "groundhog", "auto", "dcr"):
        assert whitebox.threat_model_of(AuditSpec("ref-laplace", attack=attack)) == "black-box"


def test_white_box_runs_have_their_own_generation_and_black_box_hashes_are_unchanged():
    black = {a: AuditSpec("ref-laplace", attack=a) for a in ("querybased", "groundhog", "auto")}
    white = {a: AuditSpec("ref-laplace", attack=a) for a in WHITEBOX_ATTACKS}
    assert all("release" not in s.generation() for s in black.values())
    assert len({s.generation_hash() for s in black.values()}) == 1  # attacks still share synthetic-data runs
    assert len({s.generation_hash() for s in white.values()}) == 1  # both white-box attacks share their runs
    assert white["logan"].generation() == {**black["auto"].generation(), "release": "model"}
    assert white["logan"].generation_hash() != black["auto"].generation_hash()


def test_auto_stays_black_box():
    assert not set(selection.CANDIDATES) & set(WHITEBOX_ATTACKS)


def test_white_box_runs_take_the_plain_path_even_when_fast_is_forced():
    gen = AuditSpec("borealis", attack="logan", runs=5).generation()
    tasks = [Task(gen, WORLD_IN, i) for i in range(4)]
    assert [len(g) for g in group_tasks(tasks, "fast", 32)] == [1, 1, 1, 1]
    black = AuditSpec("borealis", runs=5).generation()
    assert [len(g) for g in group_tasks([Task(black, WORLD_IN, i) for i in range(4)], "fast", 32)] == [4]


# ------------------------------------------------------------------ the released model

def test_reference_release_model_measurements_and_critic():
    from dpcheck.audit.worlds import datasets

    data = datasets.worst_case()
    impl = get_impl("ref-laplace").fit(data.with_target, epsilon=1.0, delta=1e-5, seed=3, bounds=data.bounds)
    released = whitebox.as_released(impl.release_model())
    assert released.params.shape == (8,)  # the noisy count of each cell of {0,1}³
    p = np.clip(released.params, 0, None) / np.clip(released.params, 0, None).sum()
    cells = np.array([[0, 0, 0], [1, 1, 1], [0, 1, 1]], dtype=float)
    np.testing.assert_allclose(released.critic(cells), p[[0, 7, 3]])
    row = whitebox.model_features(impl, data.target)
    assert row.shape == (1, 9) and row[0, 0] == pytest.approx(p[7])


def test_mapping_release_and_missing_critic():
    class ParamsOnly:
        def release_model(self):
            return {"params": {"w": np.ones((2, 2)), "b": np.array([np.inf, np.nan])}}

    row = whitebox.model_features(ParamsOnly(), np.zeros(3))
    assert np.isnan(row[0, 0]) and row.shape == (1, 7)
    assert row[0, 5] == whitebox.LIMIT and row[0, 6] == 0.0  # inf clipped, NaN zeroed

    class Record:
        def __init__(self, world, index):
            self.world, self.index, self.synth = world, index, row

    records = [Record(w, i) for w in (WORLD_OUT, WORLD_IN) for i in range(5)]
    assert whitebox.features_of("model-params", records, 5)[WORLD_IN].shape == (5, 7)
    with pytest.raises(ValueError, match="needs a critic"):
        whitebox.features_of("logan", records, 5)
    with pytest.raises(TypeError, match="ReleasedModel or a mapping"):
        whitebox.as_released([1, 2, 3])


def test_logan_direction_is_read_off_the_training_part():
    scorer = whitebox.OrientedScore().fit(np.array([[3.0], [2.0], [-1.0], [-2.0]]), np.array([0, 0, 1, 1]))
    assert scorer.sign == -1.0
    member = scorer.predict_proba(np.array([[-5.0], [5.0]]))[:, 1]
    assert member[0] > member[1]


# ------------------------------------------------------------------ separation

@pytest.mark.parametrize("attack", WHITEBOX_ATTACKS)
@pytest.mark.parametrize("impl", ["ref-broken", "ref-leaky-bounds"])
def test_white_box_attacks_catch_leaky_mechanisms(tmp_path, impl, attack):
    result = _audit(tmp_path, impl, attack, runs=150)
    assert result.verdict == "violation" and result.eps_cp > 1.0
    assert result.threat_model == "white-box (passive)"
    assert result.run_paths == {"fast": 0, "plain": 300, "fallback": 0}


@pytest.mark.parametrize("attack", WHITEBOX_ATTACKS)
@pytest.mark.parametrize("impl", ["ref-laplace", "ref-marginals"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_white_box_attacks_do_not_separate_correct_mechanisms(tmp_path, impl, attack, seed):
    result = _audit(tmp_path, impl, attack, runs=150, seed=seed)
    assert result.certifiable_cp > 2.0  # enough test runs that a violation could be shown
    assert result.eps_cp <= 1.0 and result.verdict != "violation"


# ------------------------------------------------------------------ bad input

class _NoRuns:
    description = "must not run"

    def imap(self, tasks):
        raise AssertionError("a run was started")


@pytest.mark.parametrize("impl, lacks", [(NO_RELEASE, "has no release_model()"),
                                         ("diffprivlib:GaussianNB", "real-library target")])
def test_white_box_attack_without_a_released_model_is_refused_before_any_run(tmp_path, impl, lacks):
    store = Store(tmp_path / "s.sqlite")
    with pytest.raises(ValueError, match=lacks) as info:
        run_audit(AuditSpec(impl, attack="logan", runs=10), store=store, executor=_NoRuns())
    assert impl in str(info.value) and "white-box" in str(info.value)
    store.close()


def test_cli_refuses_before_target_selection():
    from dpcheck.commands.audit import build_specs

    args = argparse.Namespace(impl=[NO_RELEASE], hp=[], attack=["model-params"], dataset="cervical", target=None,
                              epsilon=1.0, delta=1e-5, runs=10, synth_rows=None, seed=0, split="40/20/40",
                              confidence=0.95, data=None, schema=None)
    with pytest.raises(UsageError, match="TinyPate.*has no release_model"):
        build_specs(args)


def test_real_library_white_box_task_fails_instead_of_storing_synthetic_data():
    gen = AuditSpec("diffprivlib:GaussianNB", dataset="worstcase-classification", attack="logan", runs=5).generation()
    out = run_one(Task(gen, WORLD_IN, 0))
    assert out.synth is None and "releases no model" in out.error


# ------------------------------------------------------------------ the vendored PATE-GANs

def test_borealis_critic_is_the_trained_student():
    import torch

    from dpcheck.audit.worlds import datasets

    data = datasets.worst_case()
    hyper = {**paper_hyperparams("borealis", "worstcase"), "max_iterations": 3}
    impl = get_impl("borealis").fit(data.with_target, epsilon=1.0, delta=1e-5, seed=1, bounds=data.bounds, **hyper)
    released = whitebox.as_released(impl.release_model())
    x = np.array([[1.0, 1.0, 1.0], [0.0, 1.0, 0.0]])
    inputs = torch.tensor([[1.0, 1.0, 1.0], [0.0, 1.0, 0.0]])  # scaled features (min 0, max 1) + class index
    with torch.no_grad():
        expected = impl._model.student_disc(inputs).numpy().ravel()
    np.testing.assert_allclose(released.critic(x), expected, rtol=1e-6)
    n_student = sum(p.numel() for p in impl._model.student_disc.parameters())
    n_generator = sum(p.numel() for p in impl._model.generator.parameters())
    # + the two feature columns' scaling (min, max), the classes and their ratios
    assert released.params.size == n_generator + n_student + 2 + 2 + 2 + 2


@pytest.mark.slow
@pytest.mark.parametrize("impl", ["borealis", "borealis-fixed"])
def test_logan_on_a_vendored_pate_gan_and_its_twin(tmp_path, impl):
    runs = 8 if SMALL else 30
    result = _audit(tmp_path, impl, "logan", runs=runs, **paper_hyperparams(impl, "worstcase"))
    assert result.threat_model == "white-box (passive)"
    assert result.run_paths["plain"] == 2 * runs and result.run_paths["fast"] == 0
    assert 0.0 <= result.eps_cp <= result.certifiable_cp
    # the buggy version releases class ratios read from the data: D′ has one class, D two
    leaks_size = (result.output_size or {}).get("reveals_input_size", False)
    assert leaks_size == (impl == "borealis")


@pytest.mark.slow
def test_updated_critic_sees_the_target_through_data_bounds():
    """updated scales with min/max read from the data: in D′ (four (0,0,0) rows) the target (1,1,1)
    lands at 1e8 in the critic's input space, so its score is far outside anything seen in D."""
    hyper = {**paper_hyperparams("updated", "worstcase"), "max_iterations": 3}
    gen = AuditSpec("updated", attack="logan", runs=5, hyperparams=hyper).generation()
    scores = {w: [run_one(Task(gen, w, i)).synth[0, 0] for i in range(2)] for w in (WORLD_OUT, WORLD_IN)}
    assert max(abs(s) for s in scores[WORLD_IN]) < 1.0
    assert min(abs(s) for s in scores[WORLD_OUT]) > 100.0


@pytest.mark.slow
@pytest.mark.parametrize("impl", ["updated", "updated-fixed", "original", "original-fixed", "turing",
                                  "turing-fixed"])
def test_tensorflow_release_model_reads_the_critic_variables(impl):
    from dpcheck.audit.worlds import datasets

    data = datasets.worst_case()
    hyper = {**paper_hyperparams(impl, "worstcase"), "max_iterations": 2}
    adapter = get_impl(impl).fit(data.with_target, epsilon=1.0, delta=1e-5, seed=2, bounds=data.bounds, **hyper)
    raw = adapter.release_model()
    scores = whitebox.as_released(raw).critic(np.array([[0.0, 0.0, 0.0], [1.0, 1.0, 1.0], [0.0, 1.0, 1.0]]))
    assert scores.shape == (3,) and np.isfinite(scores).all()
    critic = [v for k, v in raw.params.items() if k.startswith("critic")]
    # input: the record's 3 values (turing: one-hot, 2 per {0,1} column); one score out
    assert critic[0].shape[0] == (6 if impl.startswith("turing") else 3) and critic[-2].shape[-1] == 1
    if impl.startswith("updated"):  # its student (WGAN critic) is clipped to [-0.01, 0.01] after every step
        assert max(np.abs(v).max() for v in critic) <= 0.01 + 1e-7
        assert max(np.abs(v).max() for k, v in raw.params.items() if k.startswith("generator")) > 0.01
