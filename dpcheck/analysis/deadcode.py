"""Functions a script defines but never runs: their only calls are commented out."""
from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import TypeVar

import libcst as cst

from dpcheck.analysis.syntax import walk


def _main_guarded(module: cst.Module) -> bool:
    """The module ends in ``if __name__ == "__main__":``: a script, run rather than imported."""
    for stmt in module.body:
        if isinstance(stmt, cst.If) and isinstance(stmt.test, cst.Comparison):
            sides = [stmt.test.left, *(c.comparator for c in stmt.test.comparisons)]
            if any(isinstance(s, cst.Name) and s.value == "__name__" for s in sides):
                return True
    return False


def _mentions(node: cst.CSTNode) -> dict[str, int]:
    """How often each name occurs (an attribute's name twice: as the attribute and as its ``Name``)."""
    counts: dict[str, int] = {}
    for sub in walk(node):
        if isinstance(sub, cst.Name):
            counts[sub.value] = counts.get(sub.value, 0) + 1
        elif isinstance(sub, cst.Attribute):
            counts[sub.attr.value] = counts.get(sub.attr.value, 0) + 1
    return counts


def commented_out_functions(module: cst.Module, source: str) -> frozenset[str]:
    """Top-level functions of a ``__main__``-guarded script whose name the code never mentions again while
    the text does (a call inside a string literal or a comment: code the script no longer runs), and the
    functions only those call."""
    if not _main_guarded(module):
        return frozenset()
    functions = {s.name.value: s for s in module.body if isinstance(s, cst.FunctionDef)}
    if not functions:
        return frozenset()
    total = _mentions(module)
    inside = {name: _mentions(fn) for name, fn in functions.items()}
    dead = {name for name in functions if total.get(name, 0) - inside[name].get(name, 0) == 0
            and len(re.findall(rf"\b{re.escape(name)}\s*\(", source)) > 1}
    changed = bool(dead)
    while changed:
        changed = False
        for name in functions:
            if name in dead:
                continue
            outside = total.get(name, 0) - inside[name].get(name, 0)
            from_dead = sum(inside[d].get(name, 0) for d in dead)
            if outside > 0 and outside == from_dead:
                dead.add(name)
                changed = True
    return frozenset(dead)


R = TypeVar("R")


def outside_dead_functions(reports: list[R], module: cst.Module, source: str,
                           ancestors: Callable[[cst.CSTNode], Iterable[cst.CSTNode]]) -> list[R]:
    """``reports`` (anything with a ``node``) less those inside ``commented_out_functions``."""
    if not reports:
        return reports
    dead = commented_out_functions(module, source)
    if not dead:
        return reports
    top = {id(s) for s in module.body if isinstance(s, cst.FunctionDef) and s.name.value in dead}
    return [r for r in reports if not any(id(a) in top for a in ancestors(r.node))]  # type: ignore[attr-defined]
