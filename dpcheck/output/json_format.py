"""Machine-readable output; the schema is documented in docs/scan.md and versioned."""
from __future__ import annotations

import json
from collections import Counter
from typing import Any

from dpcheck import __version__
from dpcheck.finding import Finding
from dpcheck.output.escape import unicode_safe
from dpcheck.scan.engine import ScanResult

SCHEMA_VERSION = 1


def finding_dict(f: Finding) -> dict[str, Any]:
    return {
        "rule": f.rule,
        "name": f.name,
        "category": f.category,
        "severity": f.severity,
        "path": unicode_safe(f.path),
        "span": {
            "start": {"line": f.line, "column": f.col},
            "end": {"line": f.end_line or f.line, "column": f.end_col or f.col},
        },
        "message": unicode_safe(f.message),
        "snippet": unicode_safe(f.snippet),
        "related": [{"path": unicode_safe(r.path), "line": r.line, "column": r.col, "message": unicode_safe(r.message)}
                    for r in f.related],
    }


def payload(result: ScanResult) -> dict[str, Any]:
    s = result.stats
    return {
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": "dpcheck", "version": __version__},
        "summary": {
            "files": s.files,
            "lines": s.lines,
            "findings": len(result.findings),
            "gating": len(result.gating()),
            "acknowledged": result.acknowledged(),
            "strict": result.strict,
            "hidden_by_baseline": result.hidden_by_baseline,
            "cache_hits": s.cache_hits,
            "parsed": s.parsed,
            "seconds": round(s.seconds, 3),
            "internal_error": result.crashed,
            "by_rule": dict(sorted(Counter(f.rule for f in result.findings).items())),
            "by_category": dict(sorted(Counter(f.category for f in result.findings).items())),
        },
        "findings": [finding_dict(f) for f in result.findings],
    }


def render(result: ScanResult) -> str:
    return json.dumps(payload(result), indent=2, ensure_ascii=False) + "\n"
