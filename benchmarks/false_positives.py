"""Precision guard: scan the installed, non-DP code of numpy, scipy, scikit-learn, pandas and torch.

None of these packages implements differential privacy, so every DP1xx–DP4xx finding in them is
a false positive. Prints lines scanned, findings per rule and findings per 100k lines (per rule
and overall) against the target of ≤ 1 per 100k lines.

    .venv/bin/python benchmarks/false_positives.py                   # all five packages
    .venv/bin/python benchmarks/false_positives.py --details         # + every finding: file:line rule code
    .venv/bin/python benchmarks/false_positives.py --packages numpy scipy -j 2

Packages are found without importing them; diagnostics (DP0xx: unparsable or oversized files)
are counted separately, they are not rule findings. The result cache is not used.
"""
from __future__ import annotations

import argparse
import importlib.util
import re
import sys
from collections import Counter
from pathlib import Path

from dpcheck.finding import Finding
from dpcheck.rules import all_rules
from dpcheck.scan.config import ScanConfig
from dpcheck.scan.engine import Engine

PACKAGES = ("numpy", "scipy", "sklearn", "pandas", "torch")
TARGET_PER_100K = 1.0
RULE_ID = re.compile(r"DP[1-4]\d\d")


def package_folder(name: str) -> Path | None:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def per_100k(count: int, lines: int) -> float:
    return 100_000 * count / lines if lines else 0.0


def source_line(root: Path, finding: Finding) -> str:
    if finding.snippet:
        return finding.snippet.strip().splitlines()[0]
    path = Path(finding.path) if Path(finding.path).is_absolute() else root / finding.path
    try:
        return path.read_text(encoding="utf-8", errors="replace").splitlines()[finding.line - 1].strip()
    except (OSError, IndexError):
        return ""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--packages", nargs="+", default=list(PACKAGES), metavar="NAME")
    parser.add_argument("--details", action="store_true", help="list every finding with its source line")
    parser.add_argument("-j", "--jobs", type=int, default=1, help="scan processes (default 1)")
    args = parser.parse_args(argv)

    rules = all_rules()
    total_lines = 0
    findings: list[Finding] = []
    roots: dict[int, Path] = {}
    diagnostics = 0
    print(f"{'package':<10} {'files':>7} {'lines':>10} {'findings':>9} {'per 100k':>9} {'seconds':>8}")
    for name in args.packages:
        folder = package_folder(name)
        if folder is None:
            print(f"{name:<10} not installed")
            continue
        result = Engine(ScanConfig(root=folder.parent), rules, use_cache=False, jobs=args.jobs).scan([folder])
        real = [f for f in result.findings if RULE_ID.fullmatch(f.rule)]
        diagnostics += len(result.findings) - len(real)
        findings.extend(real)
        roots.update((id(f), folder.parent) for f in real)
        total_lines += result.stats.lines
        print(f"{name:<10} {result.stats.files:>7} {result.stats.lines:>10} {len(real):>9} "
              f"{per_100k(len(real), result.stats.lines):>9.2f} {result.stats.seconds:>8.1f}")

    overall = per_100k(len(findings), total_lines)
    print(f"\nlines scanned: {total_lines}   rule findings: {len(findings)}   diagnostics: {diagnostics}")
    by_rule = Counter(f.rule for f in findings)
    if by_rule:
        print(f"\n{'rule':<7} {'findings':>9} {'per 100k lines':>15}")
        for rule, count in sorted(by_rule.items()):
            print(f"{rule:<7} {count:>9} {per_100k(count, total_lines):>15.2f}")
    verdict = "meets" if overall <= TARGET_PER_100K else "MISSES"
    print(f"\noverall: {overall:.2f} findings per 100k lines — {verdict} the target of ≤ {TARGET_PER_100K:g}")
    if args.details:
        print()
        for f in sorted(findings, key=lambda f: (f.rule, f.path, f.line)):
            print(f"{f.rule} {f.path}:{f.line}: {source_line(roots[id(f)], f)}\n        {f.message}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
