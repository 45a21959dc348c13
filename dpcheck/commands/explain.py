"""``dpcheck explain DP105``: what a rule finds, why it matters, a bad and a good example."""
from __future__ import annotations

import argparse
import textwrap

from dpcheck.cli import UsageError

NAME = "explain"
HELP = "Explain one rule (summary, rationale, a bad and a good example) or diagnostic."
ORDER = 12


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("rule", metavar="ID", help="rule id, e.g. DP105")


def _indent(code: str) -> str:
    return textwrap.indent(textwrap.dedent(code).strip("\n"), "    ")


def explain(rule_id: str) -> str:
    from dpcheck.categories import DIAGNOSTIC
    from dpcheck.rules import all_rules
    from dpcheck.scan.diagnostics import DIAGNOSTICS

    wanted = rule_id.strip().upper()
    if wanted in DIAGNOSTICS:
        d = DIAGNOSTICS[wanted]
        return (f"{d.id} {d.name}  (category: {DIAGNOSTIC}, severity: {d.severity})\n\n{d.summary}\n"
                "Engine diagnostics cannot be suppressed inline; ignore them with --ignore or per-file-ignores.\n")
    for rule in all_rules():
        if rule.id == wanted:
            parts = [f"{rule.id} {rule.name}  (category: {rule.category}, severity: {rule.severity})", "", rule.summary]
            if rule.rationale:
                parts += ["", textwrap.dedent(rule.rationale).strip()]
            if rule.INVALID:
                parts += ["", "Bad (lines marked '# <-' are reported):", _indent(rule.INVALID[0])]
            if rule.VALID:
                parts += ["", "Good:", _indent(rule.VALID[0])]
            parts += ["", f"Suppress one line with: # dpcheck: ignore[{rule.id}]"]
            return "\n".join(parts) + "\n"
    known = ", ".join(r.id for r in all_rules())
    raise UsageError(f"unknown rule {rule_id!r}; known rules: {known or 'none'} (and DP000-DP006)")


def run(args: argparse.Namespace) -> int:
    print(explain(args.rule), end="")
    return 0
