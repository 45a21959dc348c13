"""Baselines: accept today's findings, report only new ones.

A baseline records, per (rule, path, snippet), how many findings there were. ``snippet`` is
the stripped source line, so a finding keeps matching when unrelated edits move it to another
line; a second copy of the same bad line is new (the counter). Paths are stored relative to
the baseline file's folder, so the file can be committed.
"""
from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from dpcheck import __version__
from dpcheck.finding import Finding
from dpcheck.scan.config import ConfigError

FORMAT = 1
Key = tuple[str, str, str]


def _key(finding: Finding, base: Path) -> Key:
    rel = Path(os.path.relpath(os.path.abspath(finding.path), base)).as_posix()
    return finding.rule, rel, finding.snippet or finding.message


def write_baseline(path: Path, findings: Iterable[Finding]) -> int:
    base = path.resolve().parent
    counts = Counter(_key(f, base) for f in findings)
    entries = [
        {"rule": rule, "path": rel, "snippet": snippet, "count": n}
        for (rule, rel, snippet), n in sorted(counts.items())
    ]
    payload = {"format": FORMAT, "tool": "dpcheck", "version": __version__, "findings": entries}
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(payload, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    tmp.replace(path)
    return sum(counts.values())


def load_baseline(path: Path) -> Counter[Key]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("format") != FORMAT:
            raise ValueError(f"unsupported baseline format {data.get('format')!r}")
        return Counter({(e["rule"], e["path"], e["snippet"]): int(e["count"]) for e in data["findings"]})
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ConfigError(f"cannot read baseline {path}: {exc}") from exc


def filter_baseline(findings: list[Finding], baseline: Counter[Key], path: Path) -> tuple[list[Finding], int]:
    """Findings not covered by the baseline, and how many were hidden."""
    base = path.resolve().parent
    budget = Counter(baseline)
    kept: list[Finding] = []
    hidden = 0
    for finding in sorted(findings):
        key = _key(finding, base)
        if budget[key] > 0:
            budget[key] -= 1
            hidden += 1
        else:
            kept.append(finding)
    return kept, hidden
