"""The dpcheck rule catalogue: one module per rule (``dpNNN_name.py``), each defining one Rule."""
from __future__ import annotations

import importlib
import pkgutil
from functools import lru_cache

from dpcheck.rule import Rule


@lru_cache(maxsize=1)
def all_rules() -> tuple[type[Rule], ...]:
    found: list[type[Rule]] = []
    for info in pkgutil.iter_modules(__path__):
        if not info.name.startswith("dp"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        found.extend(
            obj
            for obj in vars(module).values()
            if isinstance(obj, type) and issubclass(obj, Rule) and obj is not Rule
            and obj.__module__ == module.__name__
        )
    return tuple(sorted(found, key=lambda r: r.id))


def by_id(rule_id: str) -> type[Rule]:
    for rule in all_rules():
        if rule.id == rule_id.upper():
            return rule
    raise KeyError(rule_id)
