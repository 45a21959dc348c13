"""Every committed markdown report with a JSON source is what its committed writer makes of that JSON.

Each writer's render step is run on the committed JSON and compared with the committed markdown byte
for byte; nothing is re-run (no audit, no scan). A hand edit of a report, or a writer change without a
regenerated report, fails here.
"""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
REPORTS = ROOT / "reports"


def writer(script: str):
    spec = importlib.util.spec_from_file_location(f"writer_{script}", ROOT / "benchmarks" / f"{script}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def committed(name: str) -> str:
    return (REPORTS / name).read_text(encoding="utf-8")


#: (writer script, its render function, JSON source, markdown report)
JSON_REPORTS = [
    ("audit_real", "render", "audit_real.json", "audit_real.md"),
    ("audit_cervical", "markdown", "audit_cervical.json", "audit_cervical.md"),
    ("onerun_compare", "markdown", "audit_onerun.json", "audit_onerun.md"),
    ("audit_search", "markdown", "audit_search.json", "audit_search.md"),
    ("audit_tightness", "markdown", "audit_tightness.json", "audit_tightness.md"),
    ("audit_speed", "markdown", "audit_speed.json", "audit_speed.md"),
]


@pytest.mark.parametrize("script,function,source,report", JSON_REPORTS, ids=[r[3] for r in JSON_REPORTS])
def test_markdown_is_regenerated_byte_for_byte(script, function, source, report):
    data = json.loads(committed(source))
    text = getattr(writer(script), function)(data)
    assert text == committed(report), f"reports/{report} differs from `{script}.{function}` of reports/{source}"


def test_vendored_vs_real_is_regenerated_byte_for_byte():
    # sources: the four committed audit files of the two pairs and reports/audit_real.json
    assert writer("vendored_vs_real").build() == committed("vendored_vs_real.md")


def test_audit_real_verdicts_follow_from_the_committed_audit_files():
    """reports/audit_real.json's verdicts (claim, Holm rank, p-value, report verdict) are what
    `assess` computes from the per-audit files and confirmatory looks committed next to it."""
    gen = writer("audit_real")
    entries, _ = gen.load_entries()
    family = gen.assess(entries, gen.load_confirmations())
    stored = json.loads(committed("audit_real.json"))
    assert family == stored["family"]
    keys = ("target", "neighbours_audited", "claimed_eps", "p_adjusted", "holm_rank", "eps_holm", "report_verdict",
            "settle_runs")
    assert [{k: e[k] for k in keys} for e in entries] == [{k: e[k] for k in keys} for e in stored["entries"]]
