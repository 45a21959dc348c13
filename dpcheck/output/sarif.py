"""SARIF 2.1.0 output (validated in tests against the official OASIS schema).

Paths are relative URIs against ``%SRCROOT%`` (the current folder), which is what code-scanning
uploaders expect. Every result carries the rule's category in ``properties.category`` and a
``partialFingerprints`` entry built from rule, path and snippet (stable across line shifts).
"""
from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from dpcheck import __version__
from dpcheck.categories import DIAGNOSTIC
from dpcheck.finding import Finding
from dpcheck.output.escape import unicode_safe, uri_path
from dpcheck.scan.diagnostics import DIAGNOSTICS
from dpcheck.scan.engine import ScanResult

SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
_LEVEL = {"error": "error", "warning": "warning", "note": "note"}


def _rule_descriptors(result: ScanResult) -> list[dict[str, Any]]:
    descriptors = []
    for rule in sorted(result.rules, key=lambda r: r.id):
        help_text = rule.rationale or rule.summary
        descriptors.append({
            "id": rule.id,
            "name": rule.name,
            "shortDescription": {"text": rule.summary},
            "fullDescription": {"text": help_text},
            "help": {"text": help_text},
            "defaultConfiguration": {"level": _LEVEL.get(rule.severity, "error")},
            "properties": {"category": rule.category, "tags": [rule.category]},
        })
    used = {f.rule for f in result.findings}
    for d in DIAGNOSTICS.values():
        if d.id in used:
            descriptors.append({
                "id": d.id,
                "name": d.name,
                "shortDescription": {"text": d.summary},
                "defaultConfiguration": {"level": _LEVEL[d.severity]},
                "properties": {"category": DIAGNOSTIC, "tags": [DIAGNOSTIC]},
            })
    known = {d["id"] for d in descriptors}
    for rule_id in sorted(used - known):  # e.g. cached findings of a rule no longer selected
        descriptors.append({"id": rule_id, "shortDescription": {"text": rule_id}})
    return descriptors


def _uri(path: str) -> dict[str, str]:
    if os.path.isabs(path):
        return {"uri": Path(path).as_uri()}
    return {"uri": uri_path(path), "uriBaseId": "%SRCROOT%"}


def _related(f: Finding) -> list[dict[str, Any]]:
    out = []
    for i, r in enumerate(f.related, 1):
        location: dict[str, Any] = {
            "id": i,
            "physicalLocation": {
                "artifactLocation": _uri(r.path),
                "region": {"startLine": max(r.line, 1), "startColumn": max(r.col, 1)},
            },
        }
        if r.message:
            location["message"] = {"text": unicode_safe(r.message)}
        out.append(location)
    return out


def _result(f: Finding, index: dict[str, int]) -> dict[str, Any]:
    region: dict[str, Any] = {"startLine": f.line, "startColumn": f.col}
    if f.end_line >= f.line:
        region["endLine"] = f.end_line
        if f.end_col >= 1 and (f.end_line > f.line or f.end_col >= f.col):
            region["endColumn"] = f.end_col
    if f.snippet:
        region["snippet"] = {"text": unicode_safe(f.snippet)}
    key = unicode_safe(f"{f.rule}\0{f.path}\0{f.snippet or f.message}")
    fingerprint = hashlib.sha256(key.encode()).hexdigest()
    result: dict[str, Any] = {
        "ruleId": f.rule,
        "ruleIndex": index[f.rule],
        "level": _LEVEL.get(f.severity, "error"),
        "message": {"text": unicode_safe(f.message)},
        "locations": [{"physicalLocation": {"artifactLocation": _uri(f.path), "region": region}}],
        "partialFingerprints": {"dpcheckFingerprint/v1": fingerprint},
        "properties": {"category": f.category},
    }
    if f.related:
        # the message links each related location ("[text](id)"), as SARIF viewers expect
        links = ", ".join(f"[{unicode_safe(r.path)}:{r.line}]({i})" for i, r in enumerate(f.related, 1))
        result["message"] = {"text": unicode_safe(f"{f.message} (via {links})")}
        result["relatedLocations"] = _related(f)
    return result


def payload(result: ScanResult) -> dict[str, Any]:
    rules = _rule_descriptors(result)
    index = {d["id"]: i for i, d in enumerate(rules)}
    invocation: dict[str, Any] = {"executionSuccessful": not result.crashed}
    if result.crashed:
        invocation["toolExecutionNotifications"] = [
            {"level": "error", "message": {"text": unicode_safe(f"{f.path}: {f.message}")}}
            for f in result.findings if f.rule in ("DP005", "DP008")
        ]
    return {
        "$schema": SCHEMA_URI,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "dpcheck",
                "version": __version__,
                "semanticVersion": __version__,
                "rules": rules,
            }},
            "originalUriBaseIds": {"%SRCROOT%": {"uri": Path.cwd().as_uri() + "/"}},
            "invocations": [invocation],
            "results": [_result(f, index) for f in result.findings],
        }],
    }


def render(result: ScanResult) -> str:
    return json.dumps(payload(result), indent=2, ensure_ascii=False) + "\n"
