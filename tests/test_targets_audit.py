"""`dpcheck audit --impl LIBRARY:NAME` and `--data/--schema/--target` end to end (small R, in-process)."""
from __future__ import annotations

import json

import numpy as np
import pytest

from dpcheck.audit.attacks import attacks
from dpcheck.cli import main
from dpcheck.targets import registry
from dpcheck.targets.base import TargetInfo


def audit(tmp_path, *extra: str) -> tuple[int, dict]:
    out = tmp_path / "audit.json"
    code = main(["audit", *extra, "--workers", "1", "--no-progress", "--store", str(tmp_path / "s.sqlite"),
                 "--json", str(out)])
    return code, (json.loads(out.read_text()) if out.exists() else {})


def test_cli_audits_a_diffprivlib_model_end_to_end(tmp_path):
    code, data = audit(tmp_path, "--impl", "diffprivlib:GaussianNB", "--runs", "20")
    (result,) = data["results"]
    assert code == 0 and result["verdict"] != "violation"
    assert result["attack"] == "release" and result["dataset"] == "worstcase-classification"
    assert result["runs"] == 20 and result["fp"] + result["fn"] > 0
    info = result["target_info"]
    assert info["library"] == "diffprivlib" and info["version"] == "0.6.6" and info["warnings"] == []
    assert result["failed_runs"] == {"with_target": 0, "without_target": 0, "runs_per_world": 20}


def test_nobounds_fallback_is_caught_and_its_warning_recorded(tmp_path):
    code, data = audit(tmp_path, "--impl", "diffprivlib:StandardScaler-nobounds", "--runs", "20",
                       "--epsilon", "0.1")
    (result,) = data["results"]
    assert code == 1 and result["verdict"] == "violation" and result["eps_cp"] > 0.1
    assert any(w.startswith("PrivacyLeakWarning") for w in result["target_info"]["warnings"])


def test_runs_the_library_fails_are_counted_per_world_and_the_audit_goes_on(tmp_path):
    """PCA without data_norm raises on D′ (norm 0) and never on D: the failure itself distinguishes."""
    code, data = audit(tmp_path, "--impl", "diffprivlib:PCA-nobounds", "--runs", "50", "--epsilon", "0.1")
    (result,) = data["results"]
    assert result["failed_runs"] == {"with_target": 0, "without_target": 50, "runs_per_world": 50}
    assert code == 1 and result["verdict"] == "violation"


def test_user_data_with_schema_and_target(tmp_path):
    rows = np.zeros((6, 2))
    rows[5] = [1, 1]
    csv = tmp_path / "d.csv"
    csv.write_text("a,b\n" + "\n".join(f"{a:g},{b:g}" for a, b in rows) + "\n")
    schema = tmp_path / "s.json"
    schema.write_text(json.dumps({"columns": [{"name": "a", "kind": "continuous", "lower": 0, "upper": 1},
                                              {"name": "b", "kind": "continuous", "lower": 0, "upper": 1}]}))
    code, data = audit(tmp_path, "--impl", "diffprivlib:mean", "--data", str(csv), "--schema", str(schema),
                       "--target", "5", "--runs", "10")
    (result,) = data["results"]
    assert code == 0 and result["dataset"] == "csv" and result["target"] == 5
    assert result["spec"]["data"]["csv"] == str(csv.resolve())


def write(tmp_path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


GOOD_SCHEMA = json.dumps({"columns": [{"name": "a", "kind": "integer", "lower": 0, "upper": 1}]})


@pytest.mark.parametrize("csv, schema, target, message", [
    ("a\n0\n1\n", None, "0", "--data needs --schema"),
    ("a\n0\n1\n", GOOD_SCHEMA, None, "--data needs --schema FILE.json and --target"),
    ("a\n0\n1\n", "{not json", "0", "is not valid JSON"),
    ("a\n0\n1\n", json.dumps({"columns": [{"name": "a", "kind": "integer"}]}), "0", "needs public bounds"),
    ("b\n0\n1\n", GOOD_SCHEMA, "0", "disagree"),
    ("a\n0\n7\n", GOOD_SCHEMA, "0", "outside the public bounds"),
    ("a\n0\n1\n", GOOD_SCHEMA, "2", r"row index in \[0, 2\)"),
    ("a\n0\n", GOOD_SCHEMA, "0", "at least 2 rows"),
    ("a\n0\n\n1\nx\n", GOOD_SCHEMA, "0", "not numeric"),
])
def test_bad_user_data_is_refused_before_any_run(tmp_path, capsys, csv, schema, target, message):
    args = ["audit", "--impl", "diffprivlib:mean", "--runs", "10", "--workers", "1",
            "--store", str(tmp_path / "s.sqlite"), "--data", write(tmp_path, "d.csv", csv)]
    if schema is not None:
        args += ["--schema", write(tmp_path, "s.json", schema)]
    if target is not None:
        args += ["--target", target]
    assert main(args) == 2
    assert __import__("re").search(message, capsys.readouterr().err)
    assert not (tmp_path / "s.sqlite").exists() or (tmp_path / "s.sqlite").stat().st_size < 100_000


def test_missing_files_and_unknown_dataset_are_usage_errors(tmp_path, capsys):
    assert main(["audit", "--impl", "diffprivlib:mean", "--data", str(tmp_path / "none.csv"),
                 "--schema", write(tmp_path, "s.json", GOOD_SCHEMA), "--target", "0"]) == 2
    assert "none.csv" in capsys.readouterr().err
    assert main(["audit", "--impl", "diffprivlib:mean", "--dataset", "worstcase-fancy"]) == 2
    assert "unknown dataset" in capsys.readouterr().err


def test_target_whose_library_is_missing_names_the_install_command(monkeypatch, capsys):
    fake = TargetInfo(name="fakelib:Thing", library="fakelib", kind="mechanism", env="main",
                      factory="fakelib_h6:Thing", requires=("fakelib_h6_not_installed",))
    monkeypatch.setattr(registry, "all_targets", lambda: [fake])
    assert main(["audit", "--impl", "fakelib:Thing", "--runs", "10", "--workers", "1"]) == 2
    assert "pip install 'dpcheck[real]'" in capsys.readouterr().err


def test_release_attack_is_only_for_mechanisms(capsys):
    assert main(["audit", "--impl", "ref-laplace", "--attack", "release", "--runs", "10"]) == 2
    assert "not a mechanism target" in capsys.readouterr().err


def test_release_features_flag_failures_and_pad():
    np.testing.assert_array_equal(attacks.release_features(np.array([[2.0, np.nan]]), 3), [0, 2, 2, 0, 0])
    np.testing.assert_array_equal(attacks.release_features(np.empty((0, 0)), 2), [1, 0, 0, 0])


class AlwaysRaises:
    def release(self, data, *, schema, epsilon, delta, seed):
        raise RuntimeError("library bug on every input")


class WrongSizePerWorld:
    """Releases one value per row: the release length reveals the row count."""

    def release(self, data, *, schema, epsilon, delta, seed):
        return np.random.default_rng(seed).normal(size=len(data))


def fake_target(factory: str) -> TargetInfo:
    return TargetInfo(name=f"fake:{factory}", library="dpcheck", kind="mechanism", env="main",
                      factory=f"{__name__}:{factory}", dataset="worstcase-continuous")


def test_a_target_that_fails_every_run_stops_with_its_error(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(registry, "all_targets", lambda: [fake_target("AlwaysRaises")])
    code, _ = audit(tmp_path, "--impl", "fake:AlwaysRaises", "--runs", "10")
    assert code == 2
    assert "every shadow run failed" in capsys.readouterr().err


def test_a_release_whose_size_differs_between_worlds_is_reported(monkeypatch, tmp_path):
    monkeypatch.setattr(registry, "all_targets", lambda: [fake_target("WrongSizePerWorld")])
    code, data = audit(tmp_path, "--impl", "fake:WrongSizePerWorld", "--runs", "10")
    (result,) = data["results"]
    assert code == 1
    assert result["output_size"]["reveals_input_size"] is True
    assert result["output_size"]["release_sizes_with_target"] == [5]
    assert result["output_size"]["release_sizes_without_target"] == [4]
