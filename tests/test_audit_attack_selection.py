"""``--attack auto``: the attack is chosen on the validation part only, then tested once."""
import json

import numpy as np
import pytest

from dpcheck.audit.attacks import selection
from dpcheck.audit.core.spec import AuditSpec, split_sizes
from dpcheck.audit.core.store import Store
from dpcheck.audit.runners.engine import run_audit
from dpcheck.audit.runners.executor import InlineExecutor
from dpcheck.cli import main

RUNS = 100
SPLIT = (0.4, 0.2, 0.4)
TRAIN, VAL, TEST = split_sizes(RUNS, SPLIT)


def _world_features(informative: slice, seed: int) -> dict[int, np.ndarray]:
    """Two worlds of 2-D features that differ only on the runs in ``informative``."""
    rng = np.random.default_rng(seed)
    out = {w: rng.normal(size=(RUNS, 2)) for w in (0, 1)}
    out[1][informative] += 4.0
    return out


def _candidates() -> dict[str, dict[int, np.ndarray]]:
    # "train-val" separates the worlds on the training and validation parts only; "test-only" only
    # on the test part; "none" nowhere
    return {"none": _world_features(slice(0, 0), 1),
            "test-only": _world_features(slice(TRAIN + VAL, RUNS), 2),
            "train-val": _world_features(slice(0, TRAIN + VAL), 3)}


def _select(features):
    return selection.select(features, split=SPLIT, seed=0, delta=1e-5, confidence=0.95)


def test_choice_uses_the_validation_part_and_is_recorded():
    out = _select(_candidates())
    s = out.selection
    assert s["chosen"] == "train-val" and s["candidates"] == ["none", "test-only", "train-val"]
    assert s["validation"]["train-val"]["eps_cp"] > 1.0 and s["validation"]["test-only"]["eps_cp"] == 0.0
    assert "validation" in s["rule"] and s["skipped"] == {}
    assert out.counts.fp + out.counts.fn > 0.3 * 2 * TEST  # the chosen attack tests at chance here
    json.dumps(s)


def _tamper_test_part(features, rng):
    """Shuffle the test runs across the two worlds (a permutation of the test labels)."""
    out = {}
    for name, f in features.items():
        stacked = np.vstack([f[0][TRAIN + VAL:], f[1][TRAIN + VAL:]])
        order = rng.permutation(len(stacked))
        g = {w: f[w].copy() for w in f}
        g[0][TRAIN + VAL:], g[1][TRAIN + VAL:] = stacked[order[:TEST]], stacked[order[TEST:]]
        out[name] = g
    return out


def test_permuting_the_test_labels_never_changes_the_choice():
    features = _candidates()
    base = _select(features)
    rng = np.random.default_rng(7)
    for _ in range(5):
        tampered = _select(_tamper_test_part(features, rng))
        assert tampered.selection == base.selection
        assert tampered.threshold == base.threshold
    # swapping the test parts of two candidates changes their test results but not the choice
    swapped = {n: {w: f[w].copy() for w in f} for n, f in features.items()}
    for w in (0, 1):
        swapped["train-val"][w][TRAIN + VAL:] = features["test-only"][w][TRAIN + VAL:]
    moved = _select(swapped)
    assert moved.selection == base.selection and moved.auc != base.auc and moved.auc > 0.95


def test_permuting_the_validation_labels_does_change_the_choice():
    """The check above can fail: the choice does depend on the validation part."""
    features = _candidates()
    for w in (0, 1):
        features["test-only"][w][TRAIN:TRAIN + VAL] += 4.0 * w
        features["train-val"][w][TRAIN:TRAIN + VAL] = features["none"][w][TRAIN:TRAIN + VAL]
    assert _select(features).selection["chosen"] == "test-only"


def test_ties_on_validation_go_to_the_auc_then_the_candidate_order():
    same = _world_features(slice(0, 0), 4)
    out = _select({"first": same, "second": {w: f.copy() for w, f in same.items()}})
    assert out.selection["chosen"] == "first"


@pytest.fixture
def store(tmp_path):
    with Store(tmp_path / "audit.sqlite") as s:
        yield s


def test_auto_audit_records_the_selection_and_reuses_the_runs(store):
    spec = AuditSpec("ref-broken", runs=100)
    plain = run_audit(spec, store=store, executor=InlineExecutor())
    auto = run_audit(spec.with_(attack="auto"), store=store, executor=InlineExecutor())
    assert auto.runs_executed == 0 and plain.attack_selection is None
    s = auto.to_dict()["attack_selection"]
    assert s["candidates"] == list(selection.CANDIDATES) and s["chosen"] in selection.CANDIDATES
    best = max(v["eps_cp"] for v in s["validation"].values())
    assert s["validation"][s["chosen"]]["eps_cp"] == best > 0.5
    assert auto.verdict == "violation"


def test_auto_skips_attacks_that_do_not_apply(store):
    spec = AuditSpec("ref-marginals", dataset="cervical", target=0, runs=20, synth_rows=200, attack="auto")
    result = run_audit(spec, store=store, executor=InlineExecutor())
    s = result.attack_selection
    assert "querybased" in s["skipped"] and "small integer domain" in s["skipped"]["querybased"]
    assert "querybased" not in s["candidates"] and s["chosen"] in s["candidates"]


def test_auto_on_a_mechanism_target_is_refused(tmp_path, capsys):
    code = main(["audit", "--impl", "diffprivlib:mean", "--attack", "auto", "--runs", "10",
                 "--store", str(tmp_path / "s.sqlite")])
    assert code == 2 and "mechanism target" in capsys.readouterr().err


@pytest.mark.slow
def test_every_new_attack_end_to_end_catches_ref_broken_and_passes_ref_laplace(tmp_path):
    from dpcheck.audit.attacks.featurizers import FEATURIZERS

    out = tmp_path / "r.json"
    args = ["audit", "--impl", "ref-broken", "--impl", "ref-laplace", "--runs", "150", "--workers", "1",
            "--dataset", "worstcase", "--store", str(tmp_path / "s.sqlite"), "--json", str(out), "--no-progress"]
    for attack in (*FEATURIZERS, "auto"):
        args += ["--attack", attack]
    code = main(args)
    results = json.loads(out.read_text())["results"]
    assert code == 1 and len(results) == 2 * (len(FEATURIZERS) + 1)
    for r in results:
        if r["impl"] == "ref-broken":
            assert r["auc"] > 0.8, r["attack"]
            if r["attack"] == "auto":
                assert r["verdict"] == "violation" and r["attack_selection"]["chosen"] in selection.CANDIDATES
        else:
            assert r["verdict"] != "violation" and r["eps_cp"] <= 1.0, r["attack"]
