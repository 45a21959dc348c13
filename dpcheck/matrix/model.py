"""Matrix data model and its JSON form (schema documented in docs/matrix.md)."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from dpcheck.categories import CATEGORIES, GENERAL

COLUMNS: tuple[str, ...] = (*CATEGORIES, GENERAL)
SCHEMA_VERSION = 1

Kind = Literal["static", "property", "audit"]
#: F = finding outside Table 2 (general column); "not applicable" = checks ran, none of them applies to the row
Status = Literal["V", "B", "F", "clean", "not applicable", "not checked"]


@dataclass
class Evidence:
    kind: Kind
    passed: bool
    ref: str  # rule id + file:line, check id, or audit attack
    message: str
    details: dict[str, Any] = field(default_factory=dict)
    #: False for a check that ran but does not apply to the row (never a pass, never a failure)
    applicable: bool = True

    def to_dict(self) -> dict[str, Any]:
        """``applicable`` is written only when False, so the common case stays short."""
        out = asdict(self)
        if self.applicable:
            del out["applicable"]
        return out


@dataclass
class Cell:
    category: str
    status: Status
    evidence: list[Evidence] = field(default_factory=list)

    @property
    def marked(self) -> bool:
        return self.status in ("V", "B")

    def to_dict(self) -> dict[str, Any]:
        return {"category": self.category, "status": self.status, "evidence": [e.to_dict() for e in self.evidence]}


@dataclass
class Row:
    impl: str
    cells: dict[str, Cell]
    audit: dict[str, Any] | None = None
    errors: list[str] = field(default_factory=list)
    #: the static findings behind the row (for the SARIF report; not part of the JSON)
    findings: list[Any] = field(default_factory=list, repr=False)
    #: real-library targets: library, version, env, files scanned, acknowledged findings
    target: dict[str, Any] | None = None
    #: built-ins: the Cervical GroundHog audits (dpcheck.matrix.cervical.by_impl), None when not audited
    cervical: dict[str, Any] | None = None

    def marked(self) -> frozenset[str]:
        return frozenset(c for c, cell in self.cells.items() if cell.marked and c in CATEGORIES)


@dataclass
class Matrix:
    rows: list[Row]
    quick: bool
    generated_by: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA_VERSION,
            "generated_by": self.generated_by,
            "quick": self.quick,
            "columns": list(COLUMNS),
            "rows": [
                {
                    "impl": r.impl,
                    "cells": {c: cell.to_dict() for c, cell in r.cells.items()},
                    "audit": r.audit,
                    "errors": r.errors,
                    "target": r.target,
                    "audit_cervical": r.cervical,
                }
                for r in self.rows
            ],
            "totals": self.totals(),
        }

    def totals(self) -> dict[str, int]:
        out = {"V": 0, "B": 0}
        for row in self.rows:
            for cell in row.cells.values():
                if cell.status in out:
                    out[cell.status] += 1
        return out
