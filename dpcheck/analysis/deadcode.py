"""Functions a script defines but never runs: their only calls are commented out."""
from __future__ import annotations

import re

import libcst as cst


def _main_guarded(module: cst.Module) -> bool:
    """The module ends in ``if __name__ == "__main__":``: a script, run rather than imported."""
    for stmt in module.body:
        if isinstance(stmt, cst.If) and isinstance(stmt.test, cst.Comparison):
            sides = [stmt.test.left, *(c.comparator for c in stmt.test.comparisons)]
            if any(isinstance(s, cst.Name) and s.value == "__name__" for s in sides):
                return True
    return False


class _Names(cst.CSTVisitor):
    def __init__(self) -> None:
        self.names: list[str] = []

    def visit_Name(self, node: cst.Name) -> None:
        self.names.append(node.value)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self.names.append(node.attr.value)


def _mentions(node: cst.CSTNode) -> dict[str, int]:
    visitor = _Names()
    node.visit(visitor)
    counts: dict[str, int] = {}
    for name in visitor.names:
        counts[name] = counts.get(name, 0) + 1
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
