"""Branches behind a switch that is off by default and that the module's own calls leave off.

``def load(name, norm=False): ... if norm: data = scale(data)`` with ``load("ckd", norm=False)`` as
the module's only call: the scaling never runs as the code is configured, so what it computes is
not part of any release.
"""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.syntax import target_names, walk
from dpcheck.analysis.view import CoreView


def _off(value: cst.BaseExpression | None) -> bool:
    if isinstance(value, cst.Name):
        return value.value in {"False", "None"}
    return isinstance(value, cst.Integer) and value.value == "0"


def _switch(fn: cst.FunctionDef, name: str) -> int | None:
    """Position of parameter ``name`` when it defaults to an off value (``-1`` keyword-only), else None."""
    positional = [*fn.params.posonly_params, *fn.params.params]
    for i, p in enumerate(positional):
        if p.name.value == name:
            return i if _off(p.default) else None
    for p in fn.params.kwonly_params:
        if p.name.value == name:
            return -1 if _off(p.default) else None
    return None


def _reassigned(fn: cst.FunctionDef, name: str) -> bool:
    for node in walk(fn.body, into_scopes=False):
        if isinstance(node, cst.AssignTarget) and name in target_names(node.target):
            return True
        if isinstance(node, (cst.AugAssign, cst.AnnAssign)) and name in target_names(node.target):
            return True
    return False


def _left_off(call: cst.Call, name: str, position: int, method: bool) -> bool:
    for arg in call.args:
        if arg.star:
            return False
        if arg.keyword is not None and arg.keyword.value == name:
            return _off(arg.value)
    positional = [a for a in call.args if a.keyword is None]
    index = position - 1 if method else position
    if position >= 0 and index < len(positional):
        return _off(positional[index].value)
    return True


def _calls_leave_off(fn: cst.FunctionDef, name: str, position: int, index: CoreView) -> bool:
    """At least one call of ``fn`` in the module, and every one leaves the switch off."""
    method = index.enclosing_class(fn) is not None
    fname = fn.name.value
    calls = []
    for call in index.calls:
        func = call.func
        if isinstance(func, cst.Name) and func.value == fname and not method:
            calls.append(call)
        elif isinstance(func, cst.Attribute) and func.attr.value == fname:
            calls.append(call)
    return bool(calls) and all(_left_off(c, name, position, method) for c in calls)


def _switched_arm(anc: cst.CSTNode, child: cst.CSTNode) -> str | None:
    """The flag whose being on runs ``child``, an arm of ``anc``: the body of ``if flag:`` or of
    ``a if flag else b``, or the other arm under ``not flag``."""
    if isinstance(anc, cst.If):
        on, off = anc.body, anc.orelse
    elif isinstance(anc, cst.IfExp):
        on, off = anc.body, anc.orelse
    else:
        return None
    test = anc.test
    if isinstance(test, cst.Name) and child is on:
        return test.value
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not) \
            and isinstance(test.expression, cst.Name) and child is off and off is not None:
        return test.expression.value  # (R3 b65) ``clip = 1 if not clip_max else np.max(x)``
    return None


def behind_off_switch(node: cst.CSTNode, index: CoreView) -> bool:
    """Is ``node`` in the arm of ``if flag:`` / ``a if flag else b`` (or the other arm under ``not flag``)
    that runs when ``flag`` is on, where ``flag`` is a parameter of the enclosing function
    that defaults to off (False/None/0), is never reassigned, and every call of that function in
    this module (one at least) leaves it off?"""
    fn = index.enclosing_function(node)
    if fn is None:
        return False
    child: cst.CSTNode = node
    for anc in index.ancestors(node):
        if anc is fn:
            return False
        name = _switched_arm(anc, child)
        if name is not None:
            position = _switch(fn, name)
            if position is not None and not _reassigned(fn, name) and _calls_leave_off(fn, name, position, index):
                return True
        child = anc
    return False


# ---- the same on the stdlib ``ast`` (the project flow's summaries) --------------------------------

def _ast_off(value: ast.expr | None) -> bool:
    return isinstance(value, ast.Constant) and value.value in (False, None, 0) and not isinstance(value.value, float)


def _ast_switches(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, int]:
    """Parameters defaulting to off, by position (``-1`` keyword-only)."""
    out: dict[str, int] = {}
    positional = [*fn.args.posonlyargs, *fn.args.args]
    defaults = [None] * (len(positional) - len(fn.args.defaults)) + list(fn.args.defaults)
    for i, (arg, default) in enumerate(zip(positional, defaults)):
        if default is not None and _ast_off(default):
            out[arg.arg] = i
    for arg, kw_default in zip(fn.args.kwonlyargs, fn.args.kw_defaults):
        if kw_default is not None and _ast_off(kw_default):
            out[arg.arg] = -1
    for node in ast.walk(fn):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            out.pop(node.id, None)
    return out


def _ast_left_off(call: ast.Call, name: str, position: int, method: bool) -> bool:
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return False
    for kw in call.keywords:
        if kw.arg == name:
            return _ast_off(kw.value)
    index = position - 1 if method else position
    if position >= 0 and index < len(call.args):
        return _ast_off(call.args[index])
    return True


def off_switch_nodes(tree: ast.Module) -> set[int]:
    """``id``s of the nodes in the body of ``if flag:`` where ``flag`` is a parameter of the enclosing
    function defaulting to off, never reassigned, and every call of that function in the module (one
    at least) leaves it off; and of the module's functions called (in the module) only from there."""
    calls: dict[str, list[ast.Call]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            fname = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
            if fname is not None:
                calls.setdefault(fname, []).append(node)
    methods = {id(f) for c in ast.walk(tree) if isinstance(c, ast.ClassDef) for f in c.body}
    out: set[int] = set()
    for fn in ast.walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        switches = _ast_switches(fn)
        if not switches:
            continue
        method = id(fn) in methods
        sites = [c for c in calls.get(fn.name, []) if method or isinstance(c.func, ast.Name)]
        for node in ast.walk(fn):
            if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id in switches:
                name = node.test.id
                if sites and all(_ast_left_off(c, name, switches[name], method) for c in sites):
                    out.update(id(n) for stmt in node.body for n in ast.walk(stmt))
    # a module-level helper called only from switched-off branches is switched off too
    helpers = [f for f in tree.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))]
    changed = bool(out)
    while changed:
        changed = False
        for fn in helpers:
            if id(fn) in out:
                continue
            sites = [c for c in calls.get(fn.name, []) if isinstance(c.func, ast.Name)]
            if sites and all(id(c) in out for c in sites):
                out.update(id(n) for n in ast.walk(fn))
                changed = True
    return out
