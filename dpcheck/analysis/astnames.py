"""Names of CPython ``ast`` nodes, shared by ``astfacts`` and ``astcontext`` (below both, so neither imports the other)."""
from __future__ import annotations

import ast


def dotted(node: ast.AST | None) -> str | None:
    """``a.b.c`` for a Name/Attribute chain, else None (as ``dpcheck.analysis.syntax.dotted``)."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None
