"""Every rule's prefilter (``applies_to``) is a necessary condition of its findings: with the gate
bypassed, no rule finds anything in a file its gate would have skipped. The corpus is every
rule's INVALID cases, the vendored implementations (buggy and fixed), the examples and fixtures."""
from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pytest

from dpcheck.codetext import code_only
from dpcheck.rule import run_rules
from dpcheck.rules import all_rules

ROOT = Path(__file__).resolve().parents[1]
RULES = all_rules()


def corpus() -> list[tuple[str, str]]:
    items = [(f"{rule.id} case {i}", case) for rule in RULES
             for i, case in enumerate(rule.INVALID)]
    for folder in ("vendored_impls", "examples", "tests/fixtures"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            items.append((str(path.relative_to(ROOT)), path.read_text(encoding="utf-8")))
    return items


CORPUS = corpus()


@pytest.mark.parametrize("name,source", CORPUS, ids=[n for n, _ in CORPUS])
def test_gate_is_necessary_for_every_finding(name, source):
    # no try/except: a rule or gate that raises on any file of the corpus fails this test
    findings = run_rules(source, RULES, name, prefiltered=True)
    by_rule: dict[str, int] = defaultdict(int)
    for f in findings:
        by_rule[f.rule] += 1
    skipped_but_found = [rid for rid in by_rule
                         if not next(r for r in RULES if r.id == rid).applies_to(source)]
    assert not skipped_but_found, f"{name}: gate of {skipped_but_found} would skip a file with findings"


def test_corpus_has_findings_for_every_rule():
    found = {f.rule for name, src in CORPUS if " case " not in name
             for f in run_rules(src, RULES, name, prefiltered=True)}
    assert {"DP101", "DP103", "DP105", "DP201"} <= found


def test_code_only_strips_comments_and_strings_but_keeps_lines():
    src = ('"""x^2 in a docstring"""\nimport numpy as np  # sigma ^ 2\n'
           's = "a # b"; t = \'c\'\ny = 10 ^ int(delta)\n\'\'\'two\nlines\'\'\'\n')
    out = code_only(src)
    assert "x^2" not in out and "sigma" not in out and "# b" not in out
    assert "y = 10 ^ int(delta)" in out
    assert out.count("\n") == src.count("\n")
