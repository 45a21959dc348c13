"""Key sets that only partition the records: ``for k in df[c].unique(): rows = df[df[c] == k]``.

Iterating over the observed keys of a column and selecting each key's rows visits the records
group by group; what such a loop computes comes from the rows, not from the key set. The key
set is then not the alphabet, bins or range of a release (DP204's concern), provided nothing
else reads it (a count of the keys, ``len(keys)``, is the only other use allowed).
"""
from __future__ import annotations

import ast

_KEY_READS = frozenset({"unique", "drop_duplicates"})
_MAX_DEPTH = 2


def _column(expr: ast.AST) -> str | None:
    """``X['c']`` -> ``'c'``."""
    if isinstance(expr, ast.Subscript) and isinstance(expr.slice, ast.Constant) and isinstance(expr.slice.value, str):
        return expr.slice.value
    return None


def key_column(value: ast.AST) -> str | None:
    """The column whose observed keys ``value`` reads: ``X[c].unique()``, ``np.unique(X[c])``, ``set(X[c])``."""
    if not isinstance(value, ast.Call):
        return None
    func = value.func
    if isinstance(func, ast.Attribute) and func.attr in _KEY_READS and not value.args:
        return _column(func.value)
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
    if name in {"unique", "set", "list"} and len(value.args) == 1:
        return _column(value.args[0])
    return None


def _parents(root: ast.AST) -> dict[ast.AST, ast.AST]:
    return {child: node for node in ast.walk(root) for child in ast.iter_child_nodes(node)}


def _selects_rows(compare: ast.AST, name: str, column: str) -> bool:
    """``X[column] == name`` (either side)."""
    if not (isinstance(compare, ast.Compare) and len(compare.ops) == 1 and isinstance(compare.ops[0], ast.Eq)):
        return False
    sides = [compare.left, compare.comparators[0]]
    return any(isinstance(s, ast.Name) and s.id == name for s in sides) and any(_column(s) == column for s in sides)


def _loop_selects(loop: ast.For, column: str) -> bool:
    """Every read of the loop variable in the body selects the rows of its key."""
    if not isinstance(loop.target, ast.Name):
        return False
    var = loop.target.id
    parents = _parents(loop)
    uses = [n for stmt in loop.body for n in ast.walk(stmt) if isinstance(n, ast.Name) and n.id == var]
    return bool(uses) and all(_selects_rows(parents.get(u), var, column) for u in uses)


def _functions(tree: ast.Module) -> dict[str, ast.FunctionDef]:
    return {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}


def _only_partitions(scope: ast.AST, name: str, column: str, tree: ast.Module, depth: int) -> bool:
    """Every read of ``name`` in ``scope`` is a loop over it whose variable selects rows, ``len(name)``,
    or an argument of a module function whose parameter is read the same way; at least one loop."""
    parents = _parents(scope)
    loops = 0
    functions = _functions(tree)
    for use in (n for n in ast.walk(scope) if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)):
        parent = parents.get(use)
        if isinstance(parent, ast.For) and parent.iter is use:
            if not _loop_selects(parent, column):
                return False
            loops += 1
        elif isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name) and use in parent.args:
            if parent.func.id == "len" and len(parent.args) == 1:
                continue
            callee = functions.get(parent.func.id)
            index = parent.args.index(use)
            if callee is None or depth >= _MAX_DEPTH or index >= len(callee.args.args):
                return False
            if not _only_partitions(callee, callee.args.args[index].arg, column, tree, depth + 1):
                return False
            loops += 1
        else:
            return False
    return loops > 0


def partition_keys(tree: ast.Module, line: int) -> bool:
    """The key set read on ``line`` (``keys = df[c].unique()``) only drives loops that select each
    key's rows (in its function, or in a module function it is handed to), or is counted."""
    scopes: list[ast.AST] = [tree, *(n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)))]
    for scope in reversed(scopes):  # the innermost scope holding the line
        body = scope.body
        for stmt in (s for s in ast.walk(scope) if isinstance(s, ast.Assign) and s.lineno == line):
            column = key_column(stmt.value)
            if column is None or len(stmt.targets) != 1 or not isinstance(stmt.targets[0], ast.Name):
                return False
            if not any(stmt in ast.walk(b) for b in body):
                continue
            return _only_partitions(scope, stmt.targets[0].id, column, tree, 0)
    return False
