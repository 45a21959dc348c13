"""Human-readable output: one line per finding, then a summary by rule and by category."""
from __future__ import annotations

from collections import Counter

from dpcheck.finding import Finding
from dpcheck.output.escape import one_line
from dpcheck.scan.engine import ScanResult


def format_finding(f: Finding) -> str:
    """One line: names and code from the scanned tree are escaped (a newline in a file name
    must not start a line of its own)."""
    line = f"{one_line(f.path)}:{f.line}:{f.col}: {f.rule} {one_line(f.message)} [{f.category}]"
    if f.related:
        line += " via " + ", ".join(f"{one_line(r.path)}:{r.line}" for r in f.related)
    return line


def render(result: ScanResult) -> str:
    lines = [format_finding(f) for f in result.findings]
    stats = result.stats
    if lines:
        lines.append("")
    by_rule = Counter((f.rule, f.name) for f in result.findings)
    by_category = Counter(f.category for f in result.findings)
    if by_rule:
        lines.append("Findings by rule:")
        lines.extend(f"  {rule:<6} {name:<34} {n:>5}" for (rule, name), n in sorted(by_rule.items()))
        lines.append("Findings by category:")
        lines.extend(f"  {cat:<41} {n:>5}" for cat, n in sorted(by_category.items()))
    total = len(result.gating())
    acknowledged = 0 if result.strict else result.acknowledged()
    summary = f"{total} finding{'s' if total != 1 else ''}"
    if acknowledged:
        summary += f", {acknowledged} acknowledged (notes; --strict to gate)"
    summary += (
        f" in {stats.files} file{'s' if stats.files != 1 else ''} "
        f"({stats.lines} lines, {stats.cache_hits} cached, {stats.seconds:.2f}s)"
    )
    if result.hidden_by_baseline:
        summary += f"; {result.hidden_by_baseline} hidden by the baseline"
    lines.append(summary)
    if result.crashed:
        lines.append("error: a rule crashed or a file killed its worker (DP005/DP008 above); results are incomplete")
    return "\n".join(lines) + "\n"
