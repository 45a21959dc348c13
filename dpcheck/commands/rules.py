"""``dpcheck rules``: the rule catalogue and the engine diagnostics."""
from __future__ import annotations

import argparse
import json

NAME = "rules"
HELP = "List the lint rules (id, name, category, severity) and the engine diagnostics."
ORDER = 11


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--format", choices=("text", "json"), default="text")


def catalogue() -> list[dict[str, str]]:
    from dpcheck.categories import DIAGNOSTIC
    from dpcheck.rules import all_rules
    from dpcheck.scan.diagnostics import DIAGNOSTICS

    entries = [
        {"id": r.id, "name": r.name, "category": r.category, "severity": r.severity, "summary": r.summary}
        for r in all_rules()
    ]
    entries += [
        {"id": d.id, "name": d.name, "category": DIAGNOSTIC, "severity": d.severity, "summary": d.summary}
        for d in DIAGNOSTICS.values()
    ]
    return entries


def run(args: argparse.Namespace) -> int:
    entries = catalogue()
    if args.format == "json":
        print(json.dumps(entries, indent=2, ensure_ascii=False))
        return 0
    rules = [e for e in entries if e["category"] != "diagnostic"]
    diags = [e for e in entries if e["category"] == "diagnostic"]
    header = f"{'ID':<6} {'NAME':<34} {'CATEGORY':<20} {'SEVERITY':<8} SUMMARY"
    for title, group in (("Rules", rules), ("Engine diagnostics", diags)):
        print(f"{title} ({len(group)}):")
        print(header)
        for e in group:
            print(f"{e['id']:<6} {e['name']:<34} {e['category']:<20} {e['severity']:<8} {e['summary']}")
        print()
    print("Details: dpcheck explain ID")
    return 0
