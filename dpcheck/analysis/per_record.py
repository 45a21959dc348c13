"""Functions applied to one record at a time.

``for f in files: rec = load(f); x = build(rec); xs.append(x)`` then ``np.stack(xs)``: ``build``
sees a single record (one patient's series, one user's rows), so a statistic it computes of its
input (a median fill within the series) depends on no other record and is no cross-record leak.
"""
from __future__ import annotations

import libcst as cst

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
