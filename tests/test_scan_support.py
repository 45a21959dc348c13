"""Helpers shared by the scan tests: throwaway rules, a tree builder and CLI runners.

The rules here exist only for tests (ids DP99x), so the engine is tested independently of the
real catalogue.
"""
from __future__ import annotations

import io
import json
import textwrap
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import libcst as cst
import pytest

from dpcheck.rule import Rule
from dpcheck.scan.config import ScanConfig, load_config
from dpcheck.scan.engine import Engine, ScanResult


def _callee(node: cst.Call) -> str:
    return node.func.value if isinstance(node.func, cst.Name) else ""


class LeakCall(Rule):
    id = "DP991"
    name = "leak-call"
    category = "pate"
    severity = "error"
    summary = "Calls to leak() release raw data."
    rationale = "A test rule: every call to a function named leak is reported."
    VALID = ("safe(x)\n",)
    INVALID = ("leak(x)  # <-\n",)
    TRIGGERS = ("leak(",)

    def visit_Call(self, node: cst.Call) -> None:
        if _callee(node) == "leak":
            self.report(node, "leak() releases raw data; add noise first")


class NoisyName(Rule):
    id = "DP992"
    name = "noisy-name"
    category = "laplace_noise"
    severity = "warning"
    summary = "Assignments to a variable named noisy."
    rationale = "A test rule in another category and family."
    VALID = ("quiet = 1\n",)
    INVALID = ("noisy = 1  # <-\n",)
    TRIGGERS = ("noisy",)

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        if isinstance(node.target, cst.Name) and node.target.value == "noisy":
            self.report(node, "noisy assigned")


class Explodes(Rule):
    id = "DP993"
    name = "explodes"
    category = "general"
    severity = "error"
    summary = "Crashes on calls to boom()."
    rationale = "A test rule that raises, to test crash isolation."
    TRIGGERS = ("boom(",)

    def visit_Call(self, node: cst.Call) -> None:
        if _callee(node) == "boom":
            raise ZeroDivisionError("kaboom")


class FamilyMember(Rule):
    id = "DP101"
    name = "family-member"
    category = "delta_scale"
    summary = "Stands in for a DP1xx rule to test prefix selection."
    TRIGGERS = ("family",)

    def visit_Name(self, node: cst.Name) -> None:
        if node.value == "family":
            self.report(node, "family used")


TEST_RULES: tuple[type[Rule], ...] = (FamilyMember, LeakCall, NoisyName, Explodes)


def write(root: Path, rel: str, text: str | bytes) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def project(root: Path, dpcheck_table: str = "") -> Path:
    """A folder with a pyproject.toml (so config and cache stay inside ``root``)."""
    write(root, "pyproject.toml", "[project]\nname = 'demo'\n\n[tool.dpcheck]\n" + textwrap.dedent(dpcheck_table))
    return root


def scan(
    root: Path,
    paths: list[str] | None = None,
    *,
    rules: tuple[type[Rule], ...] = TEST_RULES,
    jobs: int = 1,
    use_cache: bool = False,
    **overrides,
) -> ScanResult:
    config: ScanConfig = load_config(root).with_overrides(**overrides)
    return Engine(config, list(rules), use_cache=use_cache, jobs=jobs).scan(paths or [str(root)])


def triples(result: ScanResult) -> list[tuple[str, int, str]]:
    return [(Path(f.path).name, f.line, f.rule) for f in result.findings]


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch):
    """Run ``dpcheck`` in-process with TEST_RULES as the catalogue; returns (code, stdout, stderr)."""
    import dpcheck.rules
    from dpcheck.cli import main

    monkeypatch.setattr(dpcheck.rules, "all_rules", lambda: TEST_RULES)

    def run(*argv: str) -> tuple[int, str, str]:
        out, err = io.StringIO(), io.StringIO()
        with redirect_stdout(out), redirect_stderr(err):
            code = main(list(argv))
        return code, out.getvalue(), err.getvalue()

    return run


def run_json(cli_run, *argv: str) -> tuple[int, dict]:
    code, out, err = cli_run("scan", "--format", "json", *argv)
    assert out, err
    return code, json.loads(out)


def join_project(root, files: dict) -> list:
    """Write ``files`` under ``root``, summarize each and run the cross-module join (``project.join``)."""
    from dpcheck.analysis import project

    root.mkdir(parents=True, exist_ok=True)
    summaries, display = {}, {}
    for name, text in files.items():
        path = root / name
        path.write_text(text)
        summary = project.summarize(text, str(path))
        if summary is not None:
            summaries[str(path)] = summary
            display[str(path)] = name
    return project.join(summaries, display)
