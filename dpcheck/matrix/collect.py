"""Run the three evidence producers for one implementation."""
from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dpcheck import impls
from dpcheck.checks import CHECK_MODULES
from dpcheck.finding import Finding
from dpcheck.matrix.cells import make_cells, property_evidence, static_evidence
from dpcheck.matrix.model import Row

Progress = Callable[[str], None]


def scan_sources(paths: list[Path], root: Path) -> tuple[list[Finding], list[str], dict[str, str]]:
    """Static findings for ``paths`` with every rule; paths shown relative to ``root``."""
    from dpcheck.rules import all_rules
    from dpcheck.scan.config import ScanConfig
    from dpcheck.scan.engine import Engine

    rules = list(all_rules())
    engine = Engine(ScanConfig(root=root), rules, use_cache=False, jobs=1)
    result = engine.scan([str(p) for p in paths])
    if result.crashed:
        crashed = [f for f in result.findings if f.category == "diagnostic"]
        raise RuntimeError(f"a rule crashed while scanning {paths}: {crashed[:1]}")
    findings = [_relative(f, root) for f in result.findings]
    return findings, [r.id for r in rules], {r.id: r.category for r in rules}


def _relative(f: Finding, root: Path) -> Finding:
    try:
        rel = os.path.relpath(f.path, root)
    except ValueError:
        return f
    return Finding(**{**f.to_dict(), "path": rel if not rel.startswith("..") else f.path})


def build_row(name: str, *, root: Path, property_results: list | None = None, audit: dict[str, Any] | None = None,
              progress: Progress | None = None) -> Row:
    errors: list[str] = []
    adapter = impls.get(name)
    sources = impls.source_files(adapter)
    if progress:
        progress(f"{name}: static scan of {len(sources)} file(s)")
    findings, rules_run, category_of = scan_sources(sources, root)
    diag = [f for f in findings if f.category == "diagnostic"]
    errors.extend(f"{f.rule} {f.path}: {f.message}" for f in diag)
    static = static_evidence(findings, rules_run, category_of)
    if property_results is None:
        from dpcheck.checks.runner import run_checks

        if progress:
            progress(f"{name}: property checks")
        property_results = run_checks([name], list(CHECK_MODULES), progress=False)
    errors.extend(f"{r.category}: {r.summary}" for r in property_results if r.status == "error")
    cells = make_cells(static, property_evidence(property_results))
    return Row(name, cells, audit, errors, findings)
