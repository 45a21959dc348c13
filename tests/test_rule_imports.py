"""Rule modules import siblings through the installed package, never through the source tree's ``rules``.

``rules/`` is mapped to ``dpcheck.rules`` only by the package layout; ``import rules.x`` works only
when the current directory happens to be the repository root, so an installed ``dpcheck`` run from
anywhere else would fail to load the whole catalogue.
"""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

RULES = Path(__file__).resolve().parent.parent / "rules"
BARE = re.compile(r"^\s*(from|import)\s+rules(\.|\s|$)", re.MULTILINE)


def test_no_rule_imports_the_bare_rules_package() -> None:
    offenders = [p.name for p in sorted(RULES.glob("*.py")) if BARE.search(p.read_text(encoding="utf-8"))]
    assert offenders == []


def test_catalogue_loads_outside_the_repository(tmp_path: Path) -> None:
    code = "from dpcheck.rules import all_rules; print(len(all_rules()))"
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert int(out.stdout.strip()) > 100
