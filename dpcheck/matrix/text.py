"""The words and symbols every matrix renderer shares (terminal, Markdown, HTML)."""
from __future__ import annotations

from typing import Any

from dpcheck.matrix.claims import claim_facts
from dpcheck.matrix.model import Cell, Row

#: cell status -> the symbol shown in the table
SYMBOL = {"V": "V", "B": "B", "F": "F", "clean": "·", "not applicable": "n/a", "not checked": "?"}
#: cell status -> what the symbol means, in a few words
MEANING = {"V": "privacy violation", "B": "other bug", "F": "finding outside Table 2",
           "clean": "checked and passed", "not applicable": "checks ran, none applies to this code",
           "not checked": "no check ran"}
LEGEND = ", ".join(f"{SYMBOL[s]} = {MEANING[s]}" for s in SYMBOL)
CERVICAL_HEADER = "audit: Cervical GroundHog"
#: audit verdict -> its short form (compact tables); "outside claim": a leak under a relation the
#: library does not claim; "not confirmed": not significant after the report's Holm correction
AUDIT_LETTER = {"violation": "V", "pass": "P", "underpowered": "U", "not confirmed": "NC", "outside claim": "OC"}


def cell_text(cell: Cell) -> str:
    return SYMBOL[cell.status]


def audit_text(audit: dict | None) -> str:
    if not audit:
        return "—"
    if audit.get("epsilon_emp") is None:
        return f"({audit.get('verdict', 'no result')})"
    runs = f", R={audit['runs']}" if audit.get("runs") else ""
    return f"{audit.get('epsilon_emp', float('nan')):.2f} ({audit.get('verdict', '')}{runs})"


def audit_short(audit: dict | None) -> str:
    """``V 1.19`` / ``P 0.00``: the verdict's letter and ε_emp (compact tables)."""
    if not audit:
        return "—"
    verdict = str(audit.get("verdict", "?"))
    letter = AUDIT_LETTER.get(verdict, verdict)
    eps = audit.get("epsilon_emp")
    return f"{letter} {eps:.2f}" if isinstance(eps, (int, float)) else f"{letter} —"


def audit_facts(audit: dict) -> list[tuple[str, str]]:
    """The audit's settings and statistics, as (label, value) lines for the evidence lists."""
    def num(key: str) -> str:
        value = audit.get(key)
        return f"{value:.3g}" if isinstance(value, (int, float)) else "—"

    facts = [("attack", f"{audit.get('attack', '?')} on {audit.get('dataset', '?')}"),
             ("ε claimed", f"{num('epsilon')} (δ = {num('delta')})"),
             ("ε_emp", f"{num('eps_cp')} (Clopper–Pearson, {num('confidence')} confidence); Bayesian {num('eps_bayes')}"),
             ("AUC", num("auc")),
             ("runs per world", str(audit.get("runs", "—"))),
             ("certifiable max", num("certifiable_cp"))]
    failed = audit.get("failed_runs") or {}
    if failed.get("with_target") or failed.get("without_target"):
        facts.append(("failed runs", f"{failed.get('with_target', 0)} with target, "
                                     f"{failed.get('without_target', 0)} without"))
    if audit.get("source"):
        facts.append(("from", str(audit["source"])))
    return facts + claim_facts(audit)


def target_line(row: Row) -> str:
    t: dict[str, Any] = row.target or {}
    return f"{t.get('library')} {t.get('version')}, {t.get('env')} env"


def header_words(column: str) -> str:
    """``data_partition`` -> ``data partition``: a header that wraps between words only."""
    return column.replace("_", " ")
