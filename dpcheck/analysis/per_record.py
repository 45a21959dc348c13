"""Functions applied to one record at a time.

``for f in files: rec = load(f); x = build(rec); xs.append(x)`` then ``np.stack(xs)``: ``build``
sees a single record (one patient's series, one user's rows), so a statistic it computes of its
input (a median fill within the series) depends on no other record and is no cross-record leak.
"""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astnames import dotted as ast_dotted
from dpcheck.analysis.syntax import call_name, dotted, target_names, value_refs, walk
from dpcheck.analysis.view import CoreView

_STACKERS = {"stack", "vstack", "hstack", "concatenate", "concat", "cat", "array", "asarray", "DataFrame"}


def _loop_of(call: cst.Call, fn: cst.FunctionDef | None, index: CoreView) -> cst.For | None:
    for anc in index.ancestors(call):
        if anc is fn or isinstance(anc, (cst.FunctionDef, cst.ClassDef)):
            return None
        if isinstance(anc, cst.For):
            return anc
    return None


def _bound_in(loop: cst.For, name: str) -> bool:
    """Is ``name`` the loop target or assigned in the loop body (a per-iteration value)?"""
    if name in target_names(loop.target):
        return True
    for node in walk(loop.body, into_scopes=False):
        if isinstance(node, cst.AssignTarget) and name in target_names(node.target):
            return True
    return False


def _assigned(call: cst.Call, index: CoreView) -> set[str]:
    parent = index.parents.get(call)
    if isinstance(parent, cst.Assign):
        out: set[str] = set()
        for t in parent.targets:
            out |= target_names(t.target)
        return out
    return set()


def _appended_to(loop: cst.For, names: set[str]) -> set[str]:
    lists: set[str] = set()
    for node in walk(loop.body, into_scopes=False):
        if isinstance(node, cst.Call) and call_name(node) == "append" and isinstance(node.func, cst.Attribute) \
                and node.args and dotted(node.args[0].value) in names:
            owner = dotted(node.func.value)
            if owner is not None:
                lists.add(owner)
    return lists


def _appended_directly(call: cst.Call, index: CoreView) -> set[str]:
    """``xs.append(build(rec))``: the list ``xs``."""
    arg = index.parents.get(call)
    outer = index.parents.get(arg) if isinstance(arg, cst.Arg) else None
    if isinstance(outer, cst.Call) and call_name(outer) == "append" and isinstance(outer.func, cst.Attribute):
        owner = dotted(outer.func.value)
        return {owner} if owner is not None else set()
    return set()


def _stacked(lists: set[str], scope: cst.CSTNode) -> bool:
    for node in walk(scope, into_scopes=False):
        if isinstance(node, cst.Call) and call_name(node) in _STACKERS and node.args \
                and dotted(node.args[0].value) in lists:
            return True
    return False


def per_record_function(fn: cst.FunctionDef, index: CoreView) -> bool:
    """Is ``fn`` only ever called (in this module) once per record: inside a ``for`` loop, on a
    first argument bound in that iteration, its result appended to a list later stacked into the
    dataset? At least one such call is required."""
    name = fn.name.value
    calls = [c for c in index.calls if isinstance(c.func, cst.Name) and c.func.value == name]
    if not calls:
        return False
    for call in calls:
        caller = index.enclosing_function(call)
        loop = _loop_of(call, caller, index)
        if loop is None or not call.args or call.args[0].keyword is not None:
            return False
        first = dotted(call.args[0].value)
        if first is None or not _bound_in(loop, first.split(".")[0]):
            return False
        lists = _appended_to(loop, _assigned(call, index)) | _appended_directly(call, index)
        if not lists or not _stacked(lists, caller if caller is not None else index.module):
            return False
    return True


def from_first_parameter(fn: cst.FunctionDef, name: str) -> bool:
    """Is ``name`` ``fn``'s first parameter or assigned (transitively) from it inside ``fn``?"""
    params = [*fn.params.posonly_params, *fn.params.params]
    if not params:
        return False
    derived = {params[0].name.value}
    assigns = [n for n in walk(fn.body, into_scopes=False) if isinstance(n, cst.Assign)]
    changed = True
    while changed:
        changed = False
        for node in assigns:
            if not value_refs(node.value) & derived:
                continue
            for t in node.targets:
                new = target_names(t.target) - derived
                if new:
                    derived |= new
                    changed = True
    return name in derived


# ---- the same on the stdlib ``ast`` (the project flow's summaries) --------------------------------

def _ast_stores(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


def _ast_per_record_call(call: ast.Call, loop: ast.For, stmt: ast.stmt, caller: ast.AST) -> bool:
    if not call.args or isinstance(call.args[0], ast.Starred):
        return False
    first = ast_dotted(call.args[0])
    if first is None:
        return False
    root = first.split(".")[0]
    if root not in _ast_stores(loop.target) | {s for b in loop.body for s in _ast_stores(b)}:
        return False
    results = _ast_stores(stmt) if isinstance(stmt, ast.Assign) and stmt.value is call else set()
    lists: set[str] = set()
    for node in ast.walk(loop):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "append" \
                and node.args and (node.args[0] is call or ast_dotted(node.args[0]) in results):
            owner = ast_dotted(node.func.value)
            if owner is not None:
                lists.add(owner)
    return bool(lists) and any(
        isinstance(n, ast.Call) and (ast_dotted(n.func) or "").split(".")[-1] in _STACKERS and n.args
        and ast_dotted(n.args[0]) in lists for n in ast.walk(caller))


def ast_per_record_functions(tree: ast.Module) -> set[str]:
    """Module-level functions only ever called (in the module, once at least) once per record: in a
    ``for`` loop on a first argument bound in that iteration, the result appended to a list that is
    then stacked (``per_record_function`` on ``ast``)."""
    names = {f.name for f in tree.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))}
    ok: dict[str, bool] = {}

    def visit(node: ast.AST, caller: ast.AST, loop: ast.For | None, stmt: ast.stmt | None) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                visit(child, child, None, None)
                continue
            here_loop = child if isinstance(child, ast.For) else loop
            here_stmt = child if isinstance(child, ast.stmt) else stmt
            if isinstance(child, ast.Call) and isinstance(child.func, ast.Name) and child.func.id in names:
                good = loop is not None and stmt is not None and _ast_per_record_call(child, loop, stmt, caller)
                ok[child.func.id] = ok.get(child.func.id, True) and good
            visit(child, caller, here_loop, here_stmt)

    visit(tree, tree, None, None)
    return {n for n, good in ok.items() if good}


def ast_from_first_parameter(fn: ast.FunctionDef | ast.AsyncFunctionDef, name: str) -> bool:
    """``from_first_parameter`` on ``ast``."""
    params = [*fn.args.posonlyargs, *fn.args.args]
    if not params:
        return False
    derived = {params[0].arg}
    assigns = [n for n in ast.walk(fn) if isinstance(n, ast.Assign)]
    changed = True
    while changed:
        changed = False
        for node in assigns:
            reads = {n.id for n in ast.walk(node.value) if isinstance(n, ast.Name)}
            if reads & derived:
                new = {s for t in node.targets for s in _ast_stores(t)} - derived
                if new:
                    derived |= new
                    changed = True
    return name in derived
