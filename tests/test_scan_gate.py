"""The second prefilter (``Rule.may_report`` on CPython's ``ast``) never loses a finding.

Two checks. (1) Per rule: with every prefilter bypassed, a rule that reports anything on a file
must pass its ``may_report`` gate there; the files are every rule's VALID and INVALID cases (all
rules run on each), the vendored implementations, the examples and the fixtures. (2) End to
end: scanning ``vendored_impls/``, the examples and the fixtures gives the same findings with the
gate on and off (``DPCHECK_AST_GATE``), the cross-module phase included. The same comparison on
the real-code corpus is ``benchmarks/real_code.py --gate-check``.
"""
from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import libcst as cst
import pytest

from dpcheck.analysis import FileAnalysis
from dpcheck.analysis.astfacts import AstFacts, gate_enabled
from dpcheck.rule import run_rules
from dpcheck.rules import all_rules
from dpcheck.scan.config import ScanConfig
from dpcheck.scan.engine import Engine, analyse_source, applicable

ROOT = Path(__file__).resolve().parents[1]
RULES = all_rules()
FOLDERS = ("vendored_impls", "examples", "tests/fixtures")


def corpus() -> list[tuple[str, str]]:
    items = [(f"{rule.id} {kind} {i}", case) for rule in RULES
             for kind, cases in (("valid", rule.VALID), ("invalid", rule.INVALID))
             for i, case in enumerate(cases)]
    for folder in FOLDERS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            items.append((str(path.relative_to(ROOT)), path.read_text(encoding="utf-8")))
    return items


CORPUS = corpus()


def _gated_out(source: str) -> set[str]:
    facts = AstFacts(ast.parse(source), source)
    return {rule.id for rule in RULES if not rule.admits(facts)}


@pytest.mark.parametrize("name,source", CORPUS, ids=[n for n, _ in CORPUS])
def test_gate_passes_every_finding(name, source):
    # no try/except: a rule or gate that raises on any file of the corpus fails this test
    tree = ast.parse(source)
    module = cst.parse_module(source)
    findings = run_rules(source, RULES, name, module=module, prefiltered=True)
    by_rule: dict[str, list[int]] = defaultdict(list)
    for f in findings:
        by_rule[f.rule].append(f.line)
    lost = {rid: lines for rid, lines in by_rule.items() if rid in _gated_out(source)}
    assert not lost, f"the gate rejects {name} but the rule reports there: {lost}"
    # the DP-context part of the gate is a superset of the core's own test
    if FileAnalysis(module, source).has_dp_code():
        assert AstFacts(tree, source).may_have_dp_context, f"{name} has DP context but the gate says it cannot"


def test_gate_rejects_files_without_the_shapes():
    """The gate does prune: files that pass the text prefilters but lack the reported shape."""
    cases = {
        "DP101": "mask = flags ^ other\n",
        "DP105": "import numpy as np\nnoise = np.random.laplace(0, scale, n)\n",
        "DP106": "import numpy as np\nz = np.random.normal(0, 1, n)\nlabels = model(z)\n",
        "DP303": "def spend(self, eps):\n    self.budget -= eps\n",
        "DP402": "def fit(self, X):\n    self.k = int(X.max())\n",
        "DP203": "def sample(self, n):\n    return self.generator(n)\n",
    }
    for rule_id, source in cases.items():
        assert rule_id in _gated_out(source), f"{rule_id} gate let through:\n{source}"
    # and each INVALID case of those rules passes its own gate
    for rule in RULES:
        for case in rule.INVALID:
            assert rule.id not in _gated_out(case), f"{rule.id} gate rejects its INVALID case:\n{case}"


def test_later_general_rules_gates_prune():
    """DP644-DP678's gates: code that passes the text prefilter but lacks the shape the rule reports (a draw
    bound to a name, a handler that carries on, a ceil count, a remap of the drawn name, a coin comparison)."""
    cases = {
        "DP644": ("import numpy as np\ndef release(xs, eps):\n"
                  "    return [x + np.random.laplace(0, 1 / eps) for x in xs]\n"),
        "DP656": ("def run(engine, model, epochs):\n    try:\n        model = engine.make_private(model)\n"
                  "    except ValueError:\n        raise\n    train(model, epochs)\n"),
        "DP661": ("n_batches = n // batch_size\nfor i in range(n_batches):\n    step(i)\n"
                  "eps = compute_epsilon(n_batches)\n"),
        "DP675": ("import numpy as np\ndef pick(d, v):\n    j = np.random.randint(0, d - 1)\n    if j == v:\n"
                  "        print(j)\n    return j\n"),
        "DP677": ("import random\ndef keep(row, epsilon):\n    if row < epsilon:\n        return row\n"
                  "    return random.random()\n"),
    }
    for rule_id, source in cases.items():
        assert next(r for r in RULES if r.id == rule_id).applies_to(source), f"{rule_id}: text prefilter skips it"
        assert rule_id in _gated_out(source), f"{rule_id} gate let through:\n{source}"


def _scan(paths: list[Path], monkeypatch: pytest.MonkeyPatch, gate: str) -> list[tuple]:
    monkeypatch.setenv("DPCHECK_AST_GATE", gate)
    assert gate_enabled() is (gate == "1")
    result = Engine(ScanConfig(root=ROOT), RULES, use_cache=False, jobs=1).scan(paths)
    return [(f.path, f.line, f.col, f.rule, f.category, f.message, tuple(map(str, f.related))) for f in result.findings]


def test_scan_same_findings_with_and_without_gate(monkeypatch):
    paths = [ROOT / folder for folder in FOLDERS if (ROOT / folder).exists()]
    with_gate = _scan(paths, monkeypatch, "1")
    without = _scan(paths, monkeypatch, "0")
    assert with_gate == without
    assert with_gate, "the vendored implementations must have findings"


def test_analyse_source_gate_argument():
    """``gate=False`` parses with libcst whatever the gate would say; both give the same result."""
    source = (
        "def update(self, votes, epsilon):\n"
        "    self.spent += epsilon\n"
        "    if votes > 3:\n"
        "        print(votes)\n"
        "    return self.spent\n"
    )
    rules = [r for r in RULES if r.applies_to(source)]
    assert "DP303" in [r.id for r in rules], "the text prefilter admits the file; the gate must reject it"
    on = analyse_source(source, "x.py", rules, gate=True)
    off = analyse_source(source, "x.py", rules, gate=False)
    assert on.findings == off.findings == []
    assert off.parsed and not on.parsed


@pytest.mark.parametrize("rule", [r for r in RULES if r.TEXT_AFTER_GATE], ids=lambda r: r.id)
def test_deferred_text_prefilter_implies_triggers(rule):
    """A rule whose text prefilter runs after the gate is first admitted on its triggers alone:
    that is exact only if ``applies_to`` implies ``triggered``."""
    checked = 0
    for name, source in CORPUS:
        if rule.applies_to(source):
            checked += 1
            assert rule.triggered(source), f"{rule.id}: applies_to admits {name} without a trigger"
    assert checked, f"no file of the corpus passes {rule.id}'s prefilter"


def test_engine_completes_the_deferred_text_prefilter(monkeypatch):
    """With the gate on, a TEXT_AFTER_GATE rule admitted on its triggers alone is still held to
    its full ``applies_to`` before libcst runs it."""
    monkeypatch.setenv("DPCHECK_AST_GATE", "1")
    source = "def f(x):\n    # epsilon\n    return x\n"  # DP202's trigger, nothing it could flag
    rule = next(r for r in RULES if r.id == "DP202")
    assert rule.TEXT_AFTER_GATE and rule.triggered(source) and not rule.applies_to(source)
    assert applicable([rule], source, "x.py") == [0]
    assert applicable([rule], source, "x.py", gate=False) == []
    # even a gate that lets everything through leaves the text prefilter in charge
    monkeypatch.setattr(rule, "admits", classmethod(lambda cls, facts: True))
    analysis = analyse_source(source, "x.py", [rule])
    assert not analysis.parsed and analysis.findings == []
