"""``dpcheck test --accountant/--noise`` on small in-repo functions (tests/installed_fakes.py):
correct versions pass, known bugs fail with a shrunk counterexample, bad input exits 2."""
from __future__ import annotations

import json
import math
import os
from pathlib import Path

import numpy as np
import pytest
from scipy import integrate

from dpcheck.cli import main
from dpcheck.installed import mapping
from dpcheck.installed.caller import CallerError, LocalCaller, RemoteCaller
from dpcheck.installed.mapping import BUILTIN, MappingError, SignatureMap
from dpcheck.installed.properties import check_installed, laplace_min_scale
from dpcheck.reference import analytic_sigma

TESTS = Path(__file__).resolve().parent
FAKES = "installed_fakes"
EXAMPLES = 60


def run(function: str, smap: SignatureMap, examples: int = EXAMPLES):
    return check_installed(function, LocalCaller(function, smap), examples)


# --------------------------------------------------------------------------- accountant


def test_correct_accountant_passes_against_theorem_5() -> None:
    result = run(f"{FAKES}:moments_ok", BUILTIN["pategan-moments"])
    assert result.status == "pass", result.summary
    assert result.evidence["examples"] == 2 * EXAMPLES  # searched for under-charging, then any departure
    assert result.evidence["max_relative_error"] < 1e-9


def test_missing_log_over_charges_with_a_shrunk_counterexample() -> None:
    result = run(f"{FAKES}:moments_missing_log", BUILTIN["pategan-moments"])
    assert result.status == "fail"
    assert result.evidence["violation"] is False  # t > log t: conservative, still a departure
    ce = result.evidence["counterexample"]
    assert len(ce["n0"]) == 1 and ce["num_moments"] <= 10
    assert result.evidence["observed"] > result.evidence["reference"]
    assert result.evidence["relative_error"] > 1e-6
    assert "over-charges" in result.summary


def test_halved_data_independent_term_under_charges() -> None:
    result = run(f"{FAKES}:moments_half_bound", BUILTIN["pategan-moments"])
    assert result.status == "fail" and result.evidence["violation"] is True
    assert result.evidence["observed"] < result.evidence["reference"]
    assert math.isclose(result.evidence["relative_error"], 0.5, rel_tol=1e-6)
    assert result.evidence["searched"] == ["under-charging"]


# --------------------------------------------------------------------------- noise scale


def test_laplace_inverse_scale_pass_and_inverted_fail() -> None:
    ok = run(f"{FAKES}:laplace_ok", BUILTIN["laplace-scale"])
    assert ok.status == "pass" and ok.evidence["max_relative_error"] < 1e-12
    bad = run(f"{FAKES}:laplace_inverted", BUILTIN["laplace-scale"])
    assert bad.status == "fail" and bad.evidence["violation"]
    ce = bad.evidence["counterexample"]
    assert bad.evidence["observed"] == pytest.approx(ce["epsilon"] / ce["sensitivity"])
    assert bad.evidence["observed"] < bad.evidence["reference"]
    assert bad.evidence["delta_at_observed_scale"] > 0  # the scale does not give pure ε-DP


def test_classic_gaussian_beyond_epsilon_one_is_a_violation() -> None:
    result = run(f"{FAKES}:gaussian_classic_unguarded", BUILTIN["gaussian-scale"])
    assert result.status == "fail"
    ce = result.evidence["counterexample"]
    assert ce["epsilon"] > 1.0  # the classic σ is only proven for ε < 1
    assert result.evidence["observed"] < analytic_sigma(ce["epsilon"], ce["delta"], ce["sensitivity"])
    assert result.evidence["delta_at_observed_scale"] > ce["delta"]


def test_forgotten_sensitivity_fails_and_loose_scale_passes_with_its_ratio() -> None:
    bad = run(f"{FAKES}:gaussian_no_sensitivity", BUILTIN["gaussian-scale"])
    assert bad.status == "fail" and bad.evidence["counterexample"]["sensitivity"] > 1.0
    loose = run(f"{FAKES}:gaussian_twice", BUILTIN["gaussian-scale"])
    assert loose.status == "pass"
    assert loose.evidence["looseness_min"] > 2.0  # larger than needed: reported, not failed


def test_mapping_reads_a_mechanism_objects_variance() -> None:
    smap = BUILTIN["laplace-scale"].with_(result=({"call": "variance", "args": [0]},), reads="variance")
    result = run(f"{FAKES}:LaplaceMechanism", smap)
    assert result.status == "pass" and result.evidence["max_relative_error"] < 1e-12
    wrong = BUILTIN["laplace-scale"].with_(result=({"call": "variance", "args": [0]},), reads="scale")
    assert run(f"{FAKES}:LaplaceMechanism", wrong).status == "fail"  # a variance misread as the scale


def test_function_that_refuses_everything_is_an_error() -> None:
    result = run(f"{FAKES}:raises", BUILTIN["laplace-scale"], examples=10)
    assert result.status == "error" and "refuses every input" in result.summary


def test_laplace_minimal_scale_matches_the_privacy_profile_integral() -> None:
    for eps, delta, sens in ((0.4, 1e-3, 1.0), (2.0, 0.05, 3.0), (1.0, 0.0, 0.5)):
        b = laplace_min_scale(eps, delta, sens)
        p = lambda x: np.exp(-abs(x) / b) / (2 * b)  # noqa: E731
        q = lambda x: np.exp(-abs(x - sens) / b) / (2 * b)  # noqa: E731
        hockey = integrate.quad(lambda x: max(0.0, p(x) - math.exp(eps) * q(x)), -80 * b, 80 * b,
                                points=[0.0, sens], limit=400)[0]
        assert hockey == pytest.approx(delta, abs=1e-9)


# --------------------------------------------------------------------------- mapping and boundary


def test_mapping_validation() -> None:
    with pytest.raises(MappingError, match="unknown property"):
        SignatureMap("laplace")
    with pytest.raises(MappingError, match="no quantity 'lamda'"):
        SignatureMap("laplace-scale", kwargs={"epsilon": "lamda"})
    with pytest.raises(MappingError, match="does not apply"):
        SignatureMap("laplace-scale", formula="classic")
    with pytest.raises(MappingError, match="unknown mapping field"):
        SignatureMap.from_dict({"property": "laplace-scale", "scale": 1})
    assert mapping.env_for("snsynth.pytorch.nn.privacy_utils:moments_acc") == "smartnoise"
    assert mapping.env_for("synthcity.plugins:x") == "synthcity"
    assert mapping.env_for("diffprivlib.mechanisms:Laplace") == "main"


def test_unknown_function_is_a_clear_error() -> None:
    with pytest.raises(CallerError, match="No module named 'no_such_module'"):
        LocalCaller("no_such_module:fn", BUILTIN["laplace-scale"])
    with pytest.raises(CallerError, match="has no attribute 'nope'"):
        LocalCaller(f"{FAKES}:nope", BUILTIN["laplace-scale"])


def test_remote_worker_gives_the_same_verdict_with_one_process(monkeypatch: pytest.MonkeyPatch) -> None:
    from dpcheck.targets import remote

    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")]))
    remote.shutdown_workers()
    numpy_map = BUILTIN["pategan-moments"].with_(  # the fakes take arrays: no torch import in the worker
        args=("num_teachers", {"from": "votes", "as": "numpy", "dtype": "float64", "column": True}, "lamda",
              {"from": "orders", "as": "list"}))
    caller = RemoteCaller(f"{FAKES}:moments_missing_log", numpy_map, "main")
    pid = remote.worker_for("main").proc.pid
    result = check_installed(f"{FAKES}:moments_missing_log", caller, 30)
    assert remote.worker_for("main").proc.pid == pid  # one worker for the whole run
    assert caller.calls > 30
    local = check_installed(f"{FAKES}:moments_missing_log", LocalCaller(f"{FAKES}:moments_missing_log", numpy_map), 30)
    assert result.status == local.status == "fail"
    assert result.evidence["counterexample"] == local.evidence["counterexample"]
    assert result.evidence["observed"] == local.evidence["observed"]
    with pytest.raises(CallerError, match="has no attribute 'nope'"):
        RemoteCaller(f"{FAKES}:nope", BUILTIN["laplace-scale"], "main")
    with pytest.raises(CallerError, match="dpcheck env create no-such-env"):
        RemoteCaller(f"{FAKES}:laplace_ok", BUILTIN["laplace-scale"], "no-such-env")
    remote.shutdown_workers()


# --------------------------------------------------------------------------- command line


def test_cli_exit_codes_json_and_map_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "r.json"
    assert main(["test", "--noise", f"{FAKES}:laplace_ok", "--map", "laplace-scale", "--examples", "20",
                 "--json", str(out)]) == 0
    payload = json.loads(out.read_text())
    assert payload["results"][0]["status"] == "pass" and payload["results"][0]["evidence"]["examples"] == 20
    assert main(["test", "--accountant", f"{FAKES}:moments_missing_log", "--examples", "30"]) == 1
    text = capsys.readouterr().out
    assert "shrunk counterexample" in text and "max relative error" in text
    spec = tmp_path / "map.json"
    spec.write_text(json.dumps({"base": "laplace-scale", "result": [{"call": "variance", "args": [0]}],
                                "reads": "variance"}))
    assert main(["test", "--noise", f"{FAKES}:LaplaceMechanism", "--map", str(spec), "--examples", "20"]) == 0
    assert main(["test", "--noise", "no_such_module:fn", "--map", "laplace-scale"]) == 2
    assert main(["test", "--noise", f"{FAKES}:laplace_ok"]) == 2  # no mapping known for it
    assert main(["test", "--accountant", f"{FAKES}:moments_ok", "--map", "laplace-scale"]) == 2
    assert main(["test", "--noise", f"{FAKES}:laplace_ok", "--map", str(tmp_path / "missing.json")]) == 2
