"""The warm path: a re-scan answered by the cache imports neither libcst nor the rules, the
rule ids are memoised per rule-source fingerprint, and the cross-module result is cached too."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_project_flow import ENCODER, MODEL, RULES, make, rel_findings
from test_scan_support import scan

from dpcheck.analysis import project
from dpcheck.scan import engine
from dpcheck.scan.catalog import RuleCatalog
from dpcheck.scan.config import ConfigError

#: runs the CLI in a fresh interpreter and reports which heavy modules the scan imported
PROBE = """
import json, sys
from dpcheck.cli import main
code = main(sys.argv[1:])
print(json.dumps({"code": code, "libcst": "libcst" in sys.modules, "numpy": "numpy" in sys.modules,
                  "rules": "dpcheck.rules" in sys.modules}), file=sys.stderr)
"""


def _age(folder: Path) -> None:
    old = time.time() - 60
    for path in folder.rglob("*.py"):
        os.utime(path, (old, old))


def _probe(cwd: Path, *args: str) -> tuple[dict, dict]:
    proc = subprocess.run([sys.executable, "-c", PROBE, "scan", "--format", "json", *args],
                          cwd=cwd, capture_output=True, text=True, timeout=300)
    return json.loads(proc.stdout), json.loads(proc.stderr.strip().splitlines()[-1])


def _tree(tmp_path: Path) -> Path:
    root = make(tmp_path, {"gen/__init__.py": "", "gen/preprocess.py": ENCODER, "gen/model.py": MODEL,
                           "gen/plain.py": "def f(x):\n    return x + 1\n"})
    _age(root / "gen")
    return root


def test_warm_rescan_imports_neither_libcst_nor_the_rules_and_repeats_the_report(tmp_path):
    root = _tree(tmp_path)
    cold, cold_mods = _probe(root, "--select", "DP202", "gen")
    warm, warm_mods = _probe(root, "--select", "DP202", "gen")
    assert cold_mods["libcst"] and cold_mods["rules"], "the cold scan analyses with the rules"
    assert not warm_mods["libcst"] and not warm_mods["rules"] and not warm_mods["numpy"]
    assert cold["summary"]["cache_hits"] == 0 and warm["summary"]["cache_hits"] == 4
    assert warm["findings"] == cold["findings"] and cold_mods["code"] == warm_mods["code"] == 1
    assert any(f["related"] for f in warm["findings"]), "the cross-module finding comes back from the cache"


def test_a_changed_file_loads_the_rules_again(tmp_path):
    root = _tree(tmp_path)
    _probe(root, "--select", "DP202", "gen")
    model = root / "gen" / "model.py"
    model.write_text(MODEL.replace("self.encoder.fit(data)", "pass"), encoding="utf-8")
    _age(root / "gen")
    report, mods = _probe(root, "--select", "DP202", "gen")
    assert mods["libcst"] and report["summary"]["cache_hits"] == 3
    assert not [f for f in report["findings"] if f["rule"] == "DP202"], "the dependent finding is gone"


def test_scan_without_cache_never_imports_the_audit_stack(tmp_path):
    root = _tree(tmp_path)
    _, mods = _probe(root, "--no-cache", "--select", "DP202", "gen")
    assert mods["libcst"] and not mods["numpy"]


def test_catalog_memoises_ids_and_still_validates_codes(tmp_path):
    fresh = RuleCatalog(["DP2"], ["DP203"], tmp_path)
    memo = list(tmp_path.glob("rules-*.json"))
    assert len(memo) == 1 and "DP101" in json.loads(memo[0].read_text())["ids"]
    again = RuleCatalog(["DP2"], ["DP203"], tmp_path)
    assert again.ids == fresh.ids and "DP203" not in again.ids and all(i.startswith("DP2") for i in again.ids)
    assert not again.loaded, "ids come from the memo, no rule imported"
    assert [r.id for r in again] == again.ids and again.loaded
    for catalog_dir in (tmp_path, None):
        with pytest.raises(ConfigError):
            RuleCatalog(["DP9X"], [], catalog_dir)


def test_a_stale_memo_is_not_used(tmp_path):
    catalog = RuleCatalog(None, [], tmp_path)
    memo = next(tmp_path.glob("rules-*.json"))
    memo.write_text(json.dumps({"ids": ["DP101"]}))
    assert len(RuleCatalog(None, [], tmp_path).ids) > 1, "an unsigned memo (not written by dpcheck) is ignored"
    catalog._memoise(tmp_path, ["DP101"])
    assert RuleCatalog(None, [], tmp_path).ids == ["DP101"], "the memo is what is read"
    catalog.files = [*catalog.files, str(tmp_path / "new_rule.py")]
    (tmp_path / "new_rule.py").write_text("x = 1\n")
    assert catalog._memoised(tmp_path) is None, "another rule source fingerprint, another memo"


def test_flow_rule_id_is_the_project_phase_id():
    assert engine.FLOW_RULE_ID == project.RULE_ID


def test_flow_result_is_cached_and_keyed_by_the_files(tmp_path):
    root = _tree(tmp_path)
    first = scan(root, [str(root / "gen")], rules=RULES, use_cache=True)
    index = next((root / ".dpcheck" / "cache").glob("index-*.json"))
    flows = json.loads(index.read_text())["flows"]
    assert len(flows) == 1
    second = scan(root, [str(root / "gen")], rules=RULES, use_cache=True)
    assert rel_findings(second, root) == rel_findings(first, root) != []
    (root / "gen" / "extra.py").write_text("import numpy as np\nepsilon = 1\nv = np.zeros(3).max()\n")
    _age(root / "gen")
    third = scan(root, [str(root / "gen")], rules=RULES, use_cache=True)
    assert rel_findings(third, root) == rel_findings(first, root)
    assert len(json.loads(index.read_text())["flows"]) == 2, "a new file set is joined afresh"


def test_scan_restores_the_collector_settings(tmp_path, monkeypatch):
    import gc

    root = _tree(tmp_path)
    before = gc.get_threshold()
    scan(root, [str(root / "gen")], rules=RULES)
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0

    def boom(*_a, **_k):
        raise RuntimeError("stop")

    monkeypatch.setattr(engine, "discover", boom)
    with pytest.raises(RuntimeError):
        scan(root, [str(root / "gen")], rules=RULES)
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0


def test_cli_loads_only_the_command_asked_for_but_help_lists_all(capsys):
    from dpcheck.cli import _commands, main

    assert [m.NAME for m in _commands("scan")] == ["scan"]
    everything = {m.NAME for m in _commands()}
    assert {"scan", "audit", "rules"} <= everything
    assert [m.NAME for m in _commands("no-such")] == [m.NAME for m in _commands()]
    assert main(["--help"]) == 0
    listed = capsys.readouterr().out
    assert all(name in listed for name in everything)
    assert main(["no-such-command"]) == 2
