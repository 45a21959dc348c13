"""Turn evidence into cells: marked when any check fails, clean only when one ran and passed."""
from __future__ import annotations

from collections.abc import Iterable

from dpcheck.categories import CATEGORIES, GENERAL
from dpcheck.checks.result import CheckResult
from dpcheck.finding import Finding
from dpcheck.matrix.model import COLUMNS, Cell, Evidence


def static_evidence(findings: Iterable[Finding], rules_run: Iterable[str], category_of: dict[str, str]) -> dict[str, list[Evidence]]:
    """Findings become failed evidence; a rule that ran and found nothing is passed evidence."""
    by_cat: dict[str, list[Evidence]] = {c: [] for c in COLUMNS}
    fired: set[tuple[str, str]] = set()
    for f in findings:
        if f.category not in by_cat:
            continue
        fired.add((f.rule, f.category))
        by_cat[f.category].append(Evidence("static", False, f"{f.rule} {f.path}:{f.line}", f.message,
                                           {"rule": f.rule, "path": f.path, "line": f.line, "col": f.col}))
    for rule_id in rules_run:
        category = category_of[rule_id]
        if category in by_cat and not any(r == rule_id for r, _ in fired):
            by_cat[category].append(Evidence("static", True, rule_id, f"{rule_id} ran on the source: no finding"))
    return by_cat


def property_evidence(results: Iterable[CheckResult]) -> dict[str, list[Evidence]]:
    by_cat: dict[str, list[Evidence]] = {c: [] for c in COLUMNS}
    for r in results:
        if r.status in ("pass", "fail") and r.category in by_cat:
            by_cat[r.category].append(Evidence("property", r.status == "pass", r.check, r.summary, r.evidence))
    return by_cat


def make_cells(*sources: dict[str, list[Evidence]]) -> dict[str, Cell]:
    cells: dict[str, Cell] = {}
    for column in COLUMNS:
        evidence = [e for source in sources for e in source.get(column, [])]
        failed = [e for e in evidence if not e.passed]
        if failed:
            status = CATEGORIES[column] if column != GENERAL else "F"
        elif evidence:
            status = "clean"
        else:
            status = "not checked"
        # failing evidence first: it is what a reviewer opens
        cells[column] = Cell(column, status, failed + [e for e in evidence if e.passed])
    return cells
