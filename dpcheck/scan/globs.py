"""Path globs for excludes and per-file-ignores.

``*`` and ``?`` stay inside one path component, ``**`` spans any number of them. A pattern
without ``/`` matches any single component (``build``, ``*_pb2.py``); one with ``/`` matches
the path relative to the project root from its start (``tests/fixtures/**``).
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache


@lru_cache(maxsize=512)
def _compile(pattern: str) -> re.Pattern[str]:
    pat = pattern.strip().replace("\\", "/").removeprefix("./").rstrip("/")
    out: list[str] = []
    i = 0
    while i < len(pat):
        if pat.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pat.startswith("**", i):
            out.append(".*")
            i += 2
        elif pat[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pat[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(pat[i]))
            i += 1
    # a pattern naming a folder also covers everything below it
    return re.compile("".join(out) + "(?:/.*)?")


def matches(rel_path: str, pattern: str) -> bool:
    """Whether the posix path ``rel_path`` (relative to the project root) matches ``pattern``."""
    rel = rel_path.removeprefix("./")
    regex = _compile(pattern)
    if "/" in pattern.strip().rstrip("/"):
        return regex.fullmatch(rel) is not None
    parts = rel.split("/")
    return any(regex.fullmatch(part) for part in parts)


def matches_any(rel_path: str, patterns: Iterable[str]) -> bool:
    return any(matches(rel_path, p) for p in patterns)
