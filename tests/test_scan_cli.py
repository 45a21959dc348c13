"""``dpcheck scan|rules|explain``: exit codes, baselines, usage errors."""
from __future__ import annotations

import json

import pytest
from test_scan_support import cli, project, run_json, write  # noqa: F401 - fixture


@pytest.fixture
def tree(tmp_path, monkeypatch):
    project(tmp_path)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_exit_codes(tree, cli):
    write(tree, "clean.py", "x = 1\n")
    write(tree, "dirty.py", "leak(x)\n")
    write(tree, "crash.py", "boom()\n")
    assert cli("scan", "--no-cache", "clean.py")[0] == 0
    assert cli("scan", "--no-cache", "dirty.py")[0] == 1
    assert cli("scan", "--no-cache", "--exit-zero", "dirty.py")[0] == 0
    code, out, _ = cli("scan", "--no-cache", "crash.py", "dirty.py")
    assert code == 2 and "DP005" in out and "DP993" in out and "crash.py" in out
    assert cli("scan", "--no-cache", "--exit-zero", "crash.py")[0] == 2
    assert cli("scan", "--no-cache", "missing.py")[0] == 2
    code, _, err = cli("scan", "--no-cache", "--select", "DP7", "clean.py")
    assert code == 2 and "DP7" in err
    assert cli("scan", "--format", "xml", "clean.py")[0] == 2


def test_bad_pyproject_is_a_usage_error(tree, cli):
    project(tree, "nonsense = 1\n")
    write(tree, "a.py", "x = 1\n")
    code, _, err = cli("scan", "a.py")
    assert code == 2 and "nonsense" in err


def test_default_scan_uses_the_cache(tree, cli):
    write(tree, "a.py", "leak(x)\n")
    _, first = run_json(cli, ".")
    _, second = run_json(cli, ".")
    assert (first["summary"]["cache_hits"], second["summary"]["cache_hits"]) == (0, 1)
    assert first["findings"] == second["findings"]
    assert (tree / ".dpcheck" / "cache").is_dir()


def test_baseline_hides_known_findings_and_survives_line_shifts(tree, cli):
    path = write(tree, "m.py", "leak(a)\nleak(b)\nx = 1\n")
    code, out, err = cli("scan", "--no-cache", "--write-baseline", "base.json", ".")
    assert code == 0 and "wrote 2" in err
    base = json.loads((tree / "base.json").read_text())
    assert base["findings"][0] == {"rule": "DP991", "path": "m.py", "snippet": "leak(a)", "count": 1}
    assert cli("scan", "--no-cache", "--baseline", "base.json", ".")[0] == 0
    # unrelated edits shift the known findings down; one new finding appears
    path.write_text("import os\n\n\nleak(a)\nleak(b)\nleak(c)\nx = 1\n")
    code, data = run_json(cli, "--no-cache", "--baseline", "base.json", ".")
    assert code == 1
    assert [(f["span"]["start"]["line"], f["snippet"]) for f in data["findings"]] == [(6, "leak(c)")]
    assert data["summary"]["hidden_by_baseline"] == 2
    # a second copy of a known line is new: the baseline counts occurrences
    path.write_text("leak(a)\nleak(a)\nleak(b)\n")
    code, data = run_json(cli, "--no-cache", "--baseline", "base.json", ".")
    assert [f["snippet"] for f in data["findings"]] == ["leak(a)"]


def test_baseline_works_from_another_folder(tree, cli, monkeypatch):
    write(tree, "src/m.py", "leak(a)\n")
    cli("scan", "--no-cache", "--write-baseline", "ci/base.json", "src")
    monkeypatch.chdir(tree / "src")
    assert cli("scan", "--no-cache", "--baseline", "../ci/base.json", ".")[0] == 0


def test_bad_baseline_is_a_usage_error(tree, cli):
    write(tree, "a.py", "x = 1\n")
    (tree / "b.json").write_text("[]")
    code, _, err = cli("scan", "--baseline", "b.json", "a.py")
    assert code == 2 and "baseline" in err


def test_rules_lists_catalogue_and_diagnostics(cli):
    code, out, _ = cli("rules")
    assert code == 0
    rows = {line.split()[0]: line.split()[1:4] for line in out.splitlines() if line.startswith("DP")}
    assert rows["DP991"] == ["leak-call", "pate", "error"]
    assert rows["DP992"] == ["noisy-name", "laplace_noise", "warning"]
    assert {"DP000", "DP001", "DP002", "DP003", "DP004", "DP005"} <= set(rows)
    code, out, _ = cli("rules", "--format", "json")
    assert {"id": "DP991", "name": "leak-call", "category": "pate", "severity": "error",
            "summary": "Calls to leak() release raw data."} in json.loads(out)


def test_explain(cli):
    code, out, _ = cli("explain", "dp991")
    assert code == 0
    assert out.startswith("DP991 leak-call  (category: pate, severity: error)")
    assert "A test rule: every call" in out
    bad, good = out.index("Bad"), out.index("Good")
    assert bad < out.index("    leak(x)  # <-") < good < out.index("    safe(x)")
    code, out, _ = cli("explain", "DP003")
    assert code == 0 and "too-large" in out
    code, _, err = cli("explain", "DP999")
    assert code == 2 and "DP999" in err
