"""Which rules run: ``select``/``ignore`` take rule ids or prefixes (``DP1`` = every DP1xx rule).

When both match a rule, the longer (more specific) code wins, so ``select = ["DP1"]`` with
``ignore = ["DP105"]`` runs every DP1xx rule but DP105, and ``ignore = ["DP1"]`` with
``select = ["DP105"]`` runs DP105 alone of the family. Engine diagnostics (DP0xx) are always
reported unless ignored explicitly.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from dpcheck.categories import ALL_CATEGORIES
from dpcheck.scan.config import ConfigError
from dpcheck.scan.diagnostics import DIAGNOSTICS

if TYPE_CHECKING:
    from dpcheck.rule import Rule


def _longest(rule_id: str, codes: Iterable[str]) -> int:
    return max((len(c) for c in codes if rule_id.startswith(c)), default=-1)


def is_enabled(rule_id: str, select: Sequence[str] | None, ignore: Sequence[str]) -> bool:
    ignored = _longest(rule_id, ignore)
    if rule_id in DIAGNOSTICS:
        return ignored < 0 or (select is not None and _longest(rule_id, select) > ignored)
    selected = 0 if select is None else _longest(rule_id, select)
    return selected >= 0 and selected > ignored


def check_codes(codes: Iterable[str], known: Iterable[str], what: str) -> None:
    known = list(known)
    bad = [c for c in codes if not any(k.startswith(c) for k in known)]
    if bad:
        raise ConfigError(f"{what}: no rule id starts with {', '.join(repr(b) for b in bad)}")


def select_rules(
    rules: Sequence[type[Rule]], select: Sequence[str] | None, ignore: Sequence[str]
) -> list[type[Rule]]:
    known = [r.id for r in rules] + list(DIAGNOSTICS)
    if select is not None:
        check_codes(select, known, "select")
    check_codes(ignore, known, "ignore")
    return [r for r in rules if is_enabled(r.id, select, ignore)]


def check_categories(categories: Iterable[str]) -> None:
    bad = [c for c in categories if c not in ALL_CATEGORIES]
    if bad:
        raise ConfigError(f"unknown categories {', '.join(map(repr, bad))}; known: {', '.join(ALL_CATEGORIES)}")
