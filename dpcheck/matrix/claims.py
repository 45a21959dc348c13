"""A real target's stored audit, judged under the neighbouring relation its library claims.

``reports/audit_real/LIBRARY__NAME.json`` holds the add/remove audit (dpcheck's game) and, for some
targets, ``LIBRARY__NAME__replace.json`` the replace-one one. The matrix shows the audit played
under the relation the library claims (``TargetInfo.neighbours``) when it exists; a leak found only
under a relation the library does not claim is a *leak outside the claim*, never a plain violation.
Where ``reports/audit_real.json`` (``benchmarks/audit_real.py report``) lists the file, its report
verdict is used — it also carries the Holm–Bonferroni correction over every audit of the report
(*not confirmed*) — and its explanation is kept with the audit.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from dpcheck.targets.base import audited_relation, claimed_guarantee

#: report verdicts (benchmarks/audit_real.py) -> the words the matrix shows
VERDICT_WORDS = {"violation": "violation", "pass": "pass", "not_confirmed": "not confirmed",
                 "outside_claim": "outside claim", "underpowered": "underpowered"}
#: the attacks whose result fills the audit column (synthesizers / released arrays)
AUDIT_ATTACKS = ("querybased", "release")
REPORT_NAME = "audit_real.json"


def audit_files(name: str, audit_dir: Path) -> dict[str, Path]:
    """relation -> the committed audit file of target ``name`` (':' becomes '__')."""
    stem = name.replace(":", "__")
    files = {"add/remove": audit_dir / "audit_real" / f"{stem}.json",
             "replace-one": audit_dir / "audit_real" / f"{stem}__replace.json"}
    return {relation: path for relation, path in files.items() if path.is_file()}


def _result(path: Path, name: str) -> dict[str, Any] | None:
    data = json.loads(path.read_text(encoding="utf-8"))
    if data.get("kind") != "audit":
        raise ValueError(f"{path}: not a `dpcheck audit --json` file")
    for result in data["results"]:
        if result.get("impl") == name and result.get("attack") in AUDIT_ATTACKS:
            return result
    return None


def report_entries(audit_dir: Path) -> dict[str, dict[str, Any]]:
    """file name -> its entry in ``audit_dir/audit_real.json`` (empty when there is no report)."""
    path = audit_dir / REPORT_NAME
    if not path.is_file():
        return {}
    data = json.loads(path.read_text(encoding="utf-8"))
    return {Path(str(e.get("source"))).name: e for e in data.get("entries", []) if e.get("source")}


def judged(result: dict[str, Any], claimed: str, entry: dict[str, Any] | None) -> str:
    """The verdict under the library's claim: the report's when it lists the audit, else a
    violation under a relation the claim gives no promise for is a leak outside the claim."""
    if entry and entry.get("report_verdict"):
        return VERDICT_WORDS.get(str(entry["report_verdict"]), str(entry["report_verdict"]))
    verdict = str(result.get("verdict"))
    relation = audited_relation(str(result.get("dataset") or ""))
    if verdict == "violation" and claimed_guarantee(result.get("epsilon", 1.0), result.get("delta", 0.0),
                                                    claimed, relation) is None:
        return "outside claim"
    return VERDICT_WORDS.get(verdict, verdict)


def target_audit(name: str, claimed: str, audit_dir: Path) -> dict[str, Any] | None:
    """The stored audit the matrix shows for real target ``name``, with ``verdict`` under the claim,
    the relations audited and claimed, the report's explanation, and the other relation's result."""
    found: dict[str, tuple[Path, dict[str, Any]]] = {}
    for relation, path in audit_files(name, audit_dir).items():
        try:
            result = _result(path, name)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"cannot read {path}: {exc}") from exc
        if result is not None:
            found[relation] = (path, result)
    if not found:
        return None
    report = report_entries(audit_dir)
    shown = claimed if claimed in found else ("add/remove" if "add/remove" in found else next(iter(found)))

    def summary(relation: str) -> dict[str, Any]:
        path, result = found[relation]
        entry = report.get(path.name)
        return {"neighbours_audited": relation, "verdict": judged(result, claimed, entry),
                "verdict_audit": result.get("verdict"), "eps_cp": result.get("eps_cp"), "runs": result.get("runs"),
                "source": path.as_posix(), "explanation": (entry or {}).get("explanation")}

    path, result = found[shown]
    main = summary(shown)
    return {"epsilon_emp": result.get("eps_cp"), **result, **main, "neighbours_claimed": claimed,
            "other_relations": [summary(r) for r in found if r != shown]}


def claim_facts(audit: dict[str, Any]) -> list[tuple[str, str]]:
    """(label, value) lines on the claim for the audit's evidence list (real targets only)."""
    claimed = audit.get("neighbours_claimed")
    if not claimed:
        return []
    facts = [("neighbours", f"the library claims {claimed}; this audit plays {audit.get('neighbours_audited')}")]
    verdict_audit = audit.get("verdict_audit")
    if verdict_audit and verdict_audit != audit.get("verdict"):
        facts.append(("verdict", f"{audit.get('verdict')} (the audit alone says {verdict_audit})"))
    explanation = audit.get("explanation")
    if isinstance(explanation, dict) and explanation.get("what"):
        facts.append(("what leaks", str(explanation["what"])))
    for other in audit.get("other_relations") or []:
        eps = other.get("eps_cp")
        value = f"{eps:.2f}" if isinstance(eps, (int, float)) else "—"
        facts.append((f"under {other['neighbours_audited']}", f"{value} ({other['verdict']}, R={other.get('runs')}) "
                                                              f"from {other['source']}"))
        what = (other.get("explanation") or {}).get("what") if isinstance(other.get("explanation"), dict) else None
        if what:
            facts.append((f"what leaks under {other['neighbours_audited']}", str(what)))
    return facts
