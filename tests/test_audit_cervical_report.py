"""benchmarks/audit_cervical.py and dpcheck.matrix.cervical on synthetic `dpcheck audit --json` files."""
from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest
from cervical_fixtures import SPEC, audit_file, choice
from dpcheck import impls
from dpcheck.matrix import cervical

_SPEC = importlib.util.spec_from_file_location(
    "audit_cervical_bench", Path(__file__).resolve().parents[1] / "benchmarks" / "audit_cervical.py")
assert _SPEC is not None and _SPEC.loader is not None
bench = importlib.util.module_from_spec(_SPEC)
sys.modules["audit_cervical_bench"] = bench
_SPEC.loader.exec_module(bench)

@pytest.fixture()
def folder(tmp_path: Path) -> Path:
    d = tmp_path / "audit_cervical"
    audit_file(d, "original", "target397", target=397, eps_cp=2.09, verdict="violation")
    # 397 is a candidate, two records beat it
    audit_file(d, "original", "selected", target=123, eps_cp=1.8, verdict="violation",
               selection=choice(123, {123: 0.97, 40: 0.91, 397: 0.88, 5: 0.6}))
    # 397 is not among the farthest records
    audit_file(d, "original-fixed", "selected", target=7, eps_cp=0.0, verdict="pass",
               selection=choice(7, {7: 0.62, 8: 0.55}))
    return d


def entry(summary: dict, impl: str, kind: str) -> dict:
    return next(e for e in summary["entries"] if e["impl"] == impl and e["target_kind"] == kind)


def test_aggregate_lists_every_implementation_and_target_kind(folder: Path) -> None:
    summary = cervical.aggregate(folder)
    assert [(e["impl"], e["target_kind"]) for e in summary["entries"]] == [
        (name, kind) for name in impls.NAMES for kind in cervical.KINDS]
    assert summary["audited"] == 3 and len(summary["missing"]) == 2 * len(impls.NAMES) - 3
    paper = entry(summary, "original", "target397")
    assert (paper["verdict"], paper["eps_cp"], paper["target"], paper["minutes"]) == ("violation", 2.09, 397, 1.5)
    assert paper["run_paths"] == {"fast": 200, "plain": 0, "fallback": 0} and paper["runs"] == 100


def test_missing_audits_are_listed_never_invented(folder: Path) -> None:
    summary = cervical.aggregate(folder)
    gone = entry(summary, "turing", "target397")
    assert gone["status"] == "missing" and "eps_cp" not in gone and "verdict" not in gone
    assert "turing (target397)" in summary["missing"] and "original (target397)" not in summary["missing"]
    md = bench.markdown(summary)
    assert "| turing | 397 (paper) | missing |" in md and "turing (target397)" in md


def test_selected_target_carries_the_selection_and_397s_rank(folder: Path) -> None:
    summary = cervical.aggregate(folder)
    sel = entry(summary, "original", "selected")["selection"]
    assert sel["chosen"] == 123 and sel["auc"] == 0.97 and sel["candidates"] == 4
    assert sel["rank_of_397"] == {"record": 397, "candidate": True, "rank": 3, "of": 4, "auc": 0.88, "tied_with": 0,
                                  "note": "record 397 ranks 3 of 4 candidates (mini-audit AUC 0.880)"}
    assert list(sel["aucs"]) == ["123", "40", "397", "5"]  # highest AUC first
    outside = entry(summary, "original-fixed", "selected")["selection"]["rank_of_397"]
    assert outside["candidate"] is False and outside["rank"] is None
    assert "not among the 2 farthest records" in outside["note"]
    md = bench.markdown(summary)
    assert "| original | 123 | 0.970 | 4 | 25 | rank 3 of 4 (AUC 0.880) |" in md
    assert "| original-fixed | 7 | 0.620 | 2 | 25 | not a candidate" in md


def test_rank_counts_ties() -> None:
    ranked = cervical.rank_of(397, {"1": 0.9, "397": 0.8, "2": 0.8, "3": 0.1})
    assert ranked["rank"] == 2 and ranked["tied_with"] == 1 and "tied with 1" in ranked["note"]


def test_script_writes_three_deterministic_files(folder: Path, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    argv = ["--folder", str(folder), "--out", str(out)]
    assert bench.main(argv) == 0
    first = (out / "audit_cervical.json").read_bytes()
    assert bench.main(argv) == 0
    assert (out / "audit_cervical.json").read_bytes() == first
    assert json.loads(first)["audited"] == 3
    assert (out / "audit_cervical.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "| original | 397 (paper) | violation | 2.09 |" in (out / "audit_cervical.md").read_text()
    assert "audited 3 of 24" in capsys.readouterr().out


@pytest.mark.parametrize("mutate, message", [
    (lambda d: (d / "notes.json").write_text("{}"), "unexpected file name"),
    (lambda d: (d / "original__target397.json").write_text("[1, 2"), "cannot read it as JSON"),
    (lambda d: (d / "original__target397.json").write_text('{"kind": "test", "results": []}'),
     "not a `dpcheck audit --json` file"),
    (lambda d: audit_file(d, "original", "target397", target=12, eps_cp=1.0, verdict="pass"),
     "named for target 397 but audits record 12"),
    (lambda d: audit_file(d, "updated", "selected", target=5, eps_cp=1.0, verdict="pass",
                          selection=choice(9, {9: 0.7, 5: 0.6})), "but its selection chose 9"),
    (lambda d: (d / "updated__target397.json").write_text(
        (d / "original__target397.json").read_text()), "expected one GroundHog result on cervical for 'updated'"),
])
def test_bad_files_are_named_in_a_clear_error(folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                              mutate, message: str) -> None:  # noqa: ANN001
    mutate(folder)
    with pytest.raises(cervical.CervicalReportError) as info:
        cervical.aggregate(folder)
    assert message in str(info.value)
    assert bench.main(["--folder", str(folder), "--out", str(tmp_path / "out")]) == 2
    assert message in capsys.readouterr().err and not (tmp_path / "out").exists()


def test_selected_file_without_its_selection_says_so(tmp_path: Path) -> None:
    folder = tmp_path / "audit_cervical"
    audit_file(folder, "updated", "selected", target=31, eps_cp=1.2, verdict="violation", omit_selection=True)
    without = entry(cervical.aggregate(folder), "updated", "selected")
    assert without["selection"] is None and "does not record" in without["selection_note"]


def test_matrix_summary_falls_back_to_the_per_audit_files(folder: Path, tmp_path: Path) -> None:
    reports = folder.parent
    from_files = cervical.by_impl(cervical.load(reports))
    assert set(from_files) == {"original", "original-fixed"}
    assert cervical.cell_text(from_files["original"]) == "V 2.09 (397) / V 1.80 (#123)"
    assert cervical.cell_text(from_files["original-fixed"]) == "— / P 0.00 (#7)"
    assert cervical.cell_text(None) == "—"
    bench.write(cervical.aggregate(folder), reports)
    assert cervical.load(reports)["source"].endswith("audit_cervical.json")
    (reports / "audit_cervical.json").write_text('{"kind": "audit"}')
    with pytest.raises(cervical.CervicalReportError, match="not a Cervical audit summary"):
        cervical.load(reports)
    assert cervical.load(tmp_path / "nothing") is None


def test_setting_is_the_common_one_and_names_the_files_that_differ(folder: Path) -> None:
    path = audit_file(folder, "borealis", "target397", target=397, eps_cp=1.2, verdict="violation")
    data = json.loads(path.read_text())
    data["results"][0]["spec"]["hyperparams"] = {**SPEC["hyperparams"], "conditional": True}
    path.write_text(json.dumps(data))
    setting = cervical.aggregate(folder)["setting"]
    assert setting["hyperparams"] == SPEC["hyperparams"] and setting["epsilon"] == 1.0
    assert setting["differs"] == [{"file": "borealis__target397.json",
                                   "hyperparams": {**SPEC["hyperparams"], "conditional": True}}]
    assert "Files whose setting differs: `borealis__target397.json`" in bench.markdown(cervical.aggregate(folder))
