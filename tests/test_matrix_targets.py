"""Real-library targets as matrix rows: static scan of the installed package, stored audits."""
from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest

from dpcheck.cli import main
from dpcheck.commands.matrix import DEFAULT_REAL, _read_audits, resolve_names
from dpcheck.matrix.targets import build_target_row, locate
from dpcheck.targets import registry
from dpcheck.targets.base import TargetError, TargetInfo

ROOT = Path(__file__).resolve().parents[1]
REPORTS = ROOT / "reports"


@pytest.fixture()
def in_root():  # noqa: ANN201
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        yield ROOT
    finally:
        os.chdir(cwd)


def _committed(name: str) -> dict:
    """The committed audit under the relation the library claims (``__replace`` for replace-one)."""
    suffix = "__replace" if registry.get(name).neighbours == "replace-one" else ""
    data = json.loads((REPORTS / "audit_real" / (name.replace(":", "__") + suffix + ".json")).read_text())
    return data["results"][0]


def test_real_names_are_targets_not_byo_factories() -> None:
    assert resolve_names(["diffprivlib:GaussianNB", "updated", "examples.tiny_pate.model:TinyPate"]) == [
        "diffprivlib:GaussianNB", "updated", "examples.tiny_pate.model:TinyPate"]
    assert resolve_names(["real"]) == [t.name for t in registry.all_targets() if t.library != "dpcheck"]
    assert resolve_names(None)[-len(DEFAULT_REAL):] == list(DEFAULT_REAL)
    assert main(["matrix", "--quick", "--no-write", "--impl", "nonsense"]) == 2


def test_diffprivlib_row_quick_reads_the_committed_audit(tmp_path: Path, in_root: Path) -> None:
    name = "diffprivlib:GaussianNB-nobounds"
    code = main(["matrix", "--quick", "--impl", name, "--out", str(tmp_path)])
    assert code == 1  # GaussianNB's label set from the private y (DP204); the rest acknowledged
    row = json.loads((tmp_path / "violation_matrix.json").read_text())["rows"][0]
    target = row["target"]
    assert (target["library"], target["version"], target["env"]) == ("diffprivlib", "0.6.6", "main")
    assert target["files_scanned"] > 50 and not target["location"].startswith("/work")
    # the PrivacyLeakWarning fallback of GaussianNB is found, and acknowledged: never a V cell
    assert any(a["ref"].startswith("DP202 diffprivlib/models/naive_bayes.py:") for a in target["acknowledged"])
    # rules that look for PATE or generator code do not apply to a classifier: n/a, never a pass
    status = {c: cell["status"] for c, cell in row["cells"].items()}
    assert {c for c, s in status.items() if s == "not applicable"} == {
        "pate", "data_partition", "moments_accountant", "labels_distribution", "teachers",
        "processing"}, status
    # DP114 (a Laplace scale growing with the budget) reads any Laplace draw, and GaussianNB draws them
    assert {status[c] for c in ("delta_scale", "laplace_noise")} == {"clean"}
    # the row scans the whole package: its general findings are DP134 on KMeans' exact empty-cluster
    # test and DP124 on the two NaN pass-throughs (a NaN in the data released as an exact NaN, GH 80;
    # real bugs, labelled TP in benchmarks/real_code_labels.json), outside Table 2
    general = [e["ref"] for e in row["cells"]["general"]["evidence"] if not e["passed"]]
    assert {r.split(":")[0] for r in general} == {
        "DP134 diffprivlib/models/k_means.py", "DP124 diffprivlib/tools/quantiles.py",
        "DP124 diffprivlib/mechanisms/laplace.py"}, general
    # metadata: GaussianNB's label set read from the private y (DP204, real-bugs B2-046) is among the
    # failed checks; every failed check is DP204's
    failed = [e["ref"] for e in row["cells"]["metadata"]["evidence"] if not e["passed"]]
    assert any(r.startswith("DP204 diffprivlib/models/naive_bayes.py:") for r in failed), failed
    assert all(r.startswith("DP204 ") for r in failed), failed
    assert all(e["kind"] == "static" for cell in row["cells"].values() for e in cell["evidence"])
    committed = _committed(name)
    # judged under the relation diffprivlib claims (replace-one: the row count is public): a violation
    # there; the add/remove leak (the exact row count) is a leak outside the claim, never a violation
    assert row["audit"]["eps_cp"] == committed["eps_cp"] and row["audit"]["verdict"] == "violation"
    assert row["audit"]["source"] == "reports/audit_real/diffprivlib__GaussianNB-nobounds__replace.json"
    assert (row["audit"]["neighbours_audited"], row["audit"]["neighbours_claimed"]) == ("replace-one", "replace-one")
    [other] = row["audit"]["other_relations"]
    assert (other["neighbours_audited"], other["verdict"], other["verdict_audit"]) == (
        "add/remove", "outside claim", "violation")
    md = (tmp_path / "violation_matrix.md").read_text()
    assert f"| {name} | diffprivlib 0.6.6 | main" in md
    assert f"| replace-one | {committed['eps_cp']:.2f} (violation, R={committed['runs']}) | add/remove: " in md
    assert "(outside claim, R=" in md
    assert "acknowledged (not counted) `DP202 diffprivlib/models/naive_bayes.py:" in md


def test_separate_env_row_scans_the_env_site_packages(in_root: Path) -> None:
    name = "smartnoise-synth:pategan"
    source = locate(registry.get(name))
    assert source.version == "1.0.8" and source.env == "smartnoise"
    assert "envs" in str(source.location) and source.location.name == "site-packages"
    assert "snsynth/pytorch/nn/pategan.py" in {c.display for c in source.candidates}
    row = build_target_row(name, root=ROOT, audit=None)
    # the moments accountant of smartnoise-synth clamps the moment term without its log
    evidence = row.cells["moments_accountant"].evidence
    assert row.cells["moments_accountant"].status == "V"
    assert any(e.ref.startswith("DP103 snsynth/pytorch/nn/privacy_utils.py:") for e in evidence if not e.passed)
    assert row.target["env"] == "smartnoise" and row.audit is None and not row.errors


def test_missing_env_or_library_is_exit_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("DPCHECK_ENV_DIR", str(tmp_path / "no-envs"))
    assert main(["matrix", "--quick", "--no-write", "--impl", "synthcity:pategan"]) == 2
    assert "dpcheck env create synthcity" in capsys.readouterr().err
    (tmp_path / "no-envs" / "dpmm" / "lib" / "python3.11" / "site-packages").mkdir(parents=True)
    with pytest.raises(TargetError, match=r"dpcheck env create dpmm --force"):
        locate(registry.get("dpmm:privbayes"))
    missing = TargetInfo(name="nolib:x", library="no-such-dp-library", kind="mechanism", env="main",
                         factory="nolib:X")
    with pytest.raises(TargetError, match=r"pip install 'dpcheck\[real\]'"):
        locate(missing)


def test_stored_results_prefer_add_remove_over_replace_one() -> None:
    files = [str(REPORTS / "audit_real" / f) for f in ("diffprivlib__GaussianNB.json",
                                                        "diffprivlib__GaussianNB__replace.json")]
    for order in (files, files[::-1]):
        result = _read_audits(order)["diffprivlib:GaussianNB"]
        assert result["dataset"] == "worstcase-classification" and result["attack"] == "release"


def _digest(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def test_main_job_keeps_the_committed_audit_results(tmp_path: Path, in_root: Path) -> None:
    """The README main job writes violation_matrix.* into reports/ and reads, never rewrites, the
    audit results next to them (here: a copy of reports/ without the matrix files)."""
    from dpcheck.checks.result import CheckResult
    from dpcheck.commands.test import write_json

    reports = tmp_path / "reports"
    shutil.copytree(REPORTS, reports, ignore=shutil.ignore_patterns("violation_matrix.*"))
    before = _digest(reports)
    assert {"audit_real.json", "audit_real.md", "calibration_real.json", "vendored_vs_real.md",
            "audit_real/diffprivlib__GaussianNB.json"} <= set(before)
    tests = tmp_path / "tests.json"
    write_json([CheckResult("updated", "pate", "pate.framework_present", "pass", "planted pass")], tests)
    code = main(["matrix", "--quick", "--exit-zero", "--impl", "updated", "diffprivlib:GaussianNB",
                 "--test-results", str(tests), "--audit-dir", str(reports), "--out", str(reports)])
    assert code == 0
    after = _digest(reports)
    assert {k: v for k, v in after.items() if not k.startswith("violation_matrix.")} == before
    assert {k for k in after if k.startswith("violation_matrix.")} == {
        f"violation_matrix.{s}" for s in ("md", "json", "html", "sarif")}
    rows = {r["impl"]: r for r in json.loads((reports / "violation_matrix.json").read_text())["rows"]}
    worstcase = {r["impl"]: r for r in json.loads((REPORTS / "audit_worstcase.json").read_text())["results"]}
    # with --quick and no --audit-results, the stored audits of --audit-dir fill the audit column
    assert rows["updated"]["audit"]["eps_cp"] == worstcase["updated"]["eps_cp"]
    assert rows["diffprivlib:GaussianNB"]["audit"]["eps_cp"] == _committed("diffprivlib:GaussianNB")["eps_cp"]
    html = (reports / "violation_matrix.html").read_text()
    assert "diffprivlib 0.6.6, main env" in html and "data:image/png;base64," in html


def test_full_matrix_audits_a_real_target(tmp_path: Path, in_root: Path) -> None:
    """Without --quick a real target is audited by `dpcheck audit` (release attack for a mechanism)."""
    out = tmp_path / "r"
    argv = ["matrix", "--impl", "diffprivlib:mean", "--runs", "10", "--store", str(tmp_path / "a.sqlite"),
            "--workers", "1", "--exit-zero", "--out", str(out)]
    assert main(argv) == 0
    audit = json.loads((out / "violation_matrix.json").read_text())["rows"][0]["audit"]
    assert audit["impl"] == "diffprivlib:mean" and audit["attack"] == "release"
    assert audit["runs"] == 10 and audit["source"] == "dpcheck audit (this run)"
    assert audit["epsilon_emp"] == audit["eps_cp"] <= audit["certifiable_cp"]
