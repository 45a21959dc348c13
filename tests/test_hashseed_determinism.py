"""Findings must not depend on Python's string-hash seed: a rule that picks "any" element of a set
of names can report a line in one process and not in the next (DP201 did, on a held-out batch), and
a CI gate would flap. Every rule case, and a scan of the vendored implementations, are run under two
seeds in fresh interpreters and compared."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

_CASES = """
import json, sys
from dpcheck.rule import run_rules
from dpcheck.rules import all_rules
out = []
for rule in all_rules():
    for kind, cases in (("valid", rule.VALID), ("invalid", rule.INVALID)):
        for i, case in enumerate(cases):
            found = sorted((f.rule, f.line, f.message) for f in run_rules(case, [rule]))
            out.append([rule.id, kind, i, found])
json.dump(out, sys.stdout)
"""


def _run(seed: int, *args: str) -> str:
    env = dict(os.environ, PYTHONHASHSEED=str(seed))
    done = subprocess.run([sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode in (0, 1), done.stderr[-2000:]
    return done.stdout


@pytest.mark.slow
def test_rule_cases_give_the_same_findings_under_two_hash_seeds() -> None:
    first, second = (json.loads(_run(seed, "-c", _CASES)) for seed in (1, 2))
    differ = [a[:3] for a, b in zip(first, second) if a != b]
    assert len(first) == len(second) and not differ, f"findings depend on PYTHONHASHSEED: {differ[:10]}"


@pytest.mark.slow
def test_a_scan_gives_the_same_findings_under_two_hash_seeds() -> None:
    def findings(seed: int) -> list[tuple]:
        report = json.loads(_run(seed, "-m", "dpcheck", "scan", "vendored_impls", "--no-cache", "--format", "json",
                                 "--exit-zero", "--jobs", "1"))
        return sorted((f["path"], f["span"]["start"]["line"], f["rule"], f["message"]) for f in report["findings"])

    first, second = findings(1), findings(2)
    assert first, "the vendored implementations have findings"
    assert first == second, sorted(set(first) ^ set(second))[:10]
