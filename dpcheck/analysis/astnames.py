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


_FIELDS: dict[type, tuple[str, ...]] = {}


def child_fields(kind: type) -> tuple[str, ...]:
    """``kind._fields``, looked up once per class."""
    fields = _FIELDS.get(kind)
    if fields is None:
        fields = _FIELDS[kind] = tuple(kind._fields)  # type: ignore[attr-defined]
    return fields


def walk(node: ast.AST) -> list[ast.AST]:
    """The nodes ``ast.walk(node)`` yields, in its (breadth-first) order, as one list."""
    out = [node]
    add, extend, AST = out.append, out.extend, ast.AST
    i = 0
    while i < len(out):
        cur = out[i]
        i += 1
        for name in child_fields(type(cur)):
            value = getattr(cur, name, None)
            if isinstance(value, AST):
                add(value)
            elif isinstance(value, list):
                extend([item for item in value if isinstance(item, AST)])
    return out
