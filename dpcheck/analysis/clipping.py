"""Helpers shared by the hand-written DP-SGD, noise and accounting rules (DP107–DP110, DP305–DP306)."""
from __future__ import annotations

import libcst as cst

from dpcheck.analysis.syntax import call_name, dotted, last_name, number, walk, words

#: calls that bound a ratio (``min(1, c / n)``, ``.clamp(max=1.0)``, ``np.maximum(1, n / c)``)
GUARD_CALLS = frozenset({
    "min", "max", "minimum", "maximum", "clamp", "clamp_", "clip", "clamp_max", "clamp_min", "clip_by_value",
    "where", "fmin", "fmax", "clip_by_norm", "clip_by_global_norm",
})
#: calls that compute a vector norm
NORM_CALLS = frozenset({"norm", "vector_norm", "l2_norm", "global_norm", "matrix_norm", "frobenius_norm"})
#: names of random draws used as noise
LAPLACE_DRAWS = frozenset({"laplace", "Laplace", "laplace_noise"})
GAUSS_DRAWS = frozenset({"normal", "gauss", "normalvariate", "Normal", "gaussian", "random_normal", "gaussian_noise"})


def ident(expr: cst.CSTNode | None) -> str | None:
    """The identifier an expression names: ``x``, ``self.x`` -> ``x``, ``cfg["x"]`` -> ``x``."""
    return last_name(expr) if expr is not None else None


def strip_small_add(expr: cst.BaseExpression) -> cst.BaseExpression:
    """``norm + 1e-6`` -> ``norm`` (a stabiliser does not change what the value is)."""
    while isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Add):
        right = number(expr.right)
        left = number(expr.left)
        if right is not None and abs(right) < 1e-2:
            expr = expr.left
        elif left is not None and abs(left) < 1e-2:
            expr = expr.right
        else:
            break
    return expr


def is_clip_bound(expr: cst.BaseExpression) -> bool:
    """A clipping bound: ``clip``, ``clip_norm``, ``l2_norm_clip``, ``max_grad_norm``, ``C``."""
    name = ident(expr)
    if name is None:
        return False
    pieces = words(name)
    if pieces & {"clip", "clipping", "clipnorm"}:
        return True
    return name in ("C", "max_norm", "maxnorm") or ("norm" in pieces and bool(pieces & {"max", "bound"}))


def is_norm_value(expr: cst.BaseExpression) -> bool:
    """A gradient's norm: a norm call, or a name with ``norm``/``norms`` that is not a bound."""
    expr = strip_small_add(expr)
    if isinstance(expr, cst.Call):
        if call_name(expr) in NORM_CALLS:
            return True
        if call_name(expr) == "sqrt" and expr.args:
            return any(isinstance(n, cst.Call) and call_name(n) == "sum" for n in walk(expr.args[0].value))
        return False
    if is_clip_bound(expr):
        return False
    name = ident(expr)
    if name is None:
        return False
    pieces = words(name)
    return bool(pieces & {"norm", "norms", "l2norm", "l2norms"}) and not pieces & {"max", "bound", "threshold", "limit"}


def guarded(node: cst.CSTNode, parents: dict[cst.CSTNode, cst.CSTNode]) -> bool:
    """Is ``node`` bounded inside its statement (an argument or receiver of a ``GUARD_CALLS`` call,
    a branch of a conditional expression)?"""
    cur = parents.get(node)
    while cur is not None and not isinstance(cur, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
        if isinstance(cur, cst.Call) and call_name(cur) in GUARD_CALLS:
            return True
        if isinstance(cur, cst.IfExp):
            return True
        cur = parents.get(cur)
    return False


def under_comparison(node: cst.CSTNode, parents: dict[cst.CSTNode, cst.CSTNode]) -> bool:
    """Is ``node`` inside the body of an ``if``/``while`` whose test compares something?"""
    cur = parents.get(node)
    while cur is not None and not isinstance(cur, (cst.FunctionDef, cst.Module)):
        if isinstance(cur, (cst.If, cst.While)) and any(isinstance(n, cst.Comparison) for n in walk(cur.test)):
            return True
        cur = parents.get(cur)
    return False


def assigned_name(node: cst.CSTNode, parents: dict[cst.CSTNode, cst.CSTNode]) -> str | None:
    """The plain name (or ``self.x`` attribute name) ``node`` is the whole value of, if any."""
    parent = parents.get(node)
    if isinstance(parent, cst.Assign) and parent.value is node and len(parent.targets) == 1:
        target = parent.targets[0].target
        if isinstance(target, (cst.Name, cst.Attribute)):
            return ident(target)
    if isinstance(parent, cst.AnnAssign) and parent.value is node:
        return ident(parent.target)
    return None


def name_uses(scope: cst.CSTNode, name: str) -> list[cst.CSTNode]:
    """Reads of ``name`` (a plain name or the attribute ``x.name``) in ``scope``."""
    out: list[cst.CSTNode] = []
    for node in walk(scope):
        if isinstance(node, cst.Name) and node.value == name:
            out.append(node)
    return out


def dotted_or_last(expr: cst.CSTNode) -> str:
    return dotted(expr) or ident(expr) or ""
