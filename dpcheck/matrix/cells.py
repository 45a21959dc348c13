"""Turn evidence into cells: marked when any check fails, clean only when one that applies ran and passed."""
from __future__ import annotations

from collections.abc import Iterable

from dpcheck.categories import CATEGORIES, GENERAL
from dpcheck.checks.result import CheckResult
from dpcheck.finding import Finding
from dpcheck.matrix.applicability import ALL_SCOPES, applies, scope_text
from dpcheck.matrix.model import COLUMNS, Cell, Evidence
from dpcheck.matrix.numbers import rounded


def static_evidence(findings: Iterable[Finding], rules_run: Iterable[str], category_of: dict[str, str],
                    scopes: frozenset[str] = ALL_SCOPES) -> dict[str, list[Evidence]]:
    """Findings become failed evidence; a rule that ran and found nothing is passed evidence when
    it applies to the row (``scopes``, see :mod:`dpcheck.matrix.applicability`), else not applicable."""
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
        if category not in by_cat or any(r == rule_id for r, _ in fired):
            continue
        if applies(rule_id, category, scopes):
            by_cat[category].append(Evidence("static", True, rule_id, f"{rule_id} ran on the source: no finding"))
        else:
            by_cat[category].append(Evidence("static", True, rule_id,
                                             f"{rule_id} ran, no finding — not applicable: it looks for "
                                             f"{scope_text(rule_id, category)}", applicable=False))
    return by_cat


def property_evidence(results: Iterable[CheckResult]) -> dict[str, list[Evidence]]:
    by_cat: dict[str, list[Evidence]] = {c: [] for c in COLUMNS}
    for r in results:
        if r.status in ("pass", "fail", "not_applicable") and r.category in by_cat:
            by_cat[r.category].append(Evidence("property", r.status != "fail", r.check, r.summary,
                                               rounded(r.evidence), applicable=r.status != "not_applicable"))
    return by_cat


def make_cells(*sources: dict[str, list[Evidence]]) -> dict[str, Cell]:
    cells: dict[str, Cell] = {}
    for column in COLUMNS:
        evidence = [e for source in sources for e in source.get(column, [])]
        failed = [e for e in evidence if not e.passed]
        passed = [e for e in evidence if e.passed and e.applicable]
        if failed:
            status = CATEGORIES[column] if column != GENERAL else "F"
        elif passed:
            status = "clean"
        elif evidence:
            status = "not applicable"
        else:
            status = "not checked"
        # failing evidence first: it is what a reviewer opens; then passes, then what did not apply
        cells[column] = Cell(column, status, failed + passed + [e for e in evidence if e.passed and not e.applicable])
    return cells
