"""Acknowledged findings are shown as notes and do not gate unless ``--strict`` (or
``strict = true``) is given."""
from __future__ import annotations

import io
import json
from contextlib import redirect_stderr, redirect_stdout

import libcst as cst
import pytest
from test_scan_support import TEST_RULES, project, write

from dpcheck.categories import ACKNOWLEDGED, CATEGORIES
from dpcheck.rule import Rule


class AckedFallback(Rule):
    """Reports calls to ``fallback()`` as acknowledged (as the analysis core does for a fallback
    right after a PrivacyLeakWarning), with the rule's own severity left at ``error``: the engine
    must still show it as a note."""

    id = "DP994"
    name = "acked-fallback"
    category = "metadata"
    severity = "error"
    summary = "test rule"
    TRIGGERS = ("fallback(",)

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Name) and node.func.value == "fallback":
            self.report(node, "bounds read from the data; the code warns about it", category=ACKNOWLEDGED)


@pytest.fixture
def run(tmp_path, monkeypatch):
    import dpcheck.rules
    from dpcheck.cli import main

    monkeypatch.setattr(dpcheck.rules, "all_rules", lambda: (*TEST_RULES, AckedFallback))
    project(tmp_path)
    monkeypatch.chdir(tmp_path)

    def go(*argv: str) -> tuple[int, str]:
        out, err = io.StringIO(), io.StringIO()
        with redirect_stdout(out), redirect_stderr(err):
            code = main(["scan", "--no-cache", *argv])
        return code, out.getvalue()

    return go


def test_acknowledged_is_a_category_but_not_a_table2_column():
    assert ACKNOWLEDGED not in CATEGORIES


def test_only_acknowledged_findings_do_not_gate(run, tmp_path):
    write(tmp_path, "a.py", "fallback(x)\nfallback(y)\n")
    code, out = run("a.py")
    assert code == 0
    assert out.splitlines()[0] == "a.py:1:1: DP994 bounds read from the data; the code warns about it [acknowledged]"
    assert out.splitlines()[-1].startswith("0 findings, 2 acknowledged (notes; --strict to gate) in 1 file")


def test_strict_flag_and_config_make_them_gate(run, tmp_path):
    write(tmp_path, "a.py", "fallback(x)\n")
    code, out = run("--strict", "a.py")
    assert code == 1 and out.splitlines()[-1].startswith("1 finding in 1 file")
    project(tmp_path, "strict = true\n")
    assert run("a.py")[0] == 1


def test_strict_must_be_a_boolean_in_the_config(run, tmp_path):
    write(tmp_path, "a.py", "fallback(x)\n")
    project(tmp_path, "strict = 'yes'\n")
    assert run("a.py")[0] == 2


def test_mixed_with_a_violation(run, tmp_path):
    write(tmp_path, "a.py", "fallback(x)\nleak(x)\n")
    code, out = run("a.py")
    assert code == 1
    assert out.splitlines()[-1].startswith("1 finding, 1 acknowledged (notes; --strict to gate) in 1 file")


def test_category_filter_keeps_notes_without_strict_and_drops_them_with_it(run, tmp_path):
    write(tmp_path, "a.py", "fallback(x)\nleak(x)\nnoisy = 1\n")
    code, out = run("--format", "json", "--category", "laplace_noise", "a.py")
    data = json.loads(out)
    assert code == 1
    assert [(f["rule"], f["category"], f["severity"]) for f in data["findings"]] == [
        ("DP994", "acknowledged", "note"), ("DP992", "laplace_noise", "warning"),
    ]
    assert data["summary"]["acknowledged"] == 1 and data["summary"]["gating"] == 1
    assert data["summary"]["strict"] is False
    code, out = run("--format", "json", "--category", "laplace_noise", "--strict", "a.py")
    assert [f["rule"] for f in json.loads(out)["findings"]] == ["DP992"]
    code, out = run("--category", "acknowledged", "--strict", "a.py")
    assert code == 1 and "DP994" in out and "DP991" not in out


def test_machine_formats_carry_level_note(run, tmp_path):
    write(tmp_path, "a.py", "fallback(x)\n")
    code, out = run("--format", "sarif", "a.py")
    result = json.loads(out)["runs"][0]["results"][0]
    assert code == 0 and result["level"] == "note" and result["properties"]["category"] == "acknowledged"
    code, out = run("--format", "github", "a.py")
    assert code == 0 and out.startswith("::notice file=a.py,line=1,")


def test_matrix_never_turns_acknowledged_into_a_cell():
    from dpcheck.finding import Finding
    from dpcheck.matrix.cells import make_cells, static_evidence

    acked = Finding("m.py", 3, 1, "DP202", ACKNOWLEDGED, "note", "bounds after a PrivacyLeakWarning")
    violation = Finding("m.py", 9, 1, "DP202", "metadata", "error", "bounds from the data")
    only_acked = make_cells(static_evidence([acked], ["DP202"], {"DP202": "metadata"}))
    assert ACKNOWLEDGED not in only_acked and only_acked["metadata"].status == "clean"
    both = make_cells(static_evidence([acked, violation], ["DP202"], {"DP202": "metadata"}))
    assert both["metadata"].status == "V"
