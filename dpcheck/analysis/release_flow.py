"""Does a value computed in a scope ever leave it as a release, or is it only evaluated?

A value (and every name derived from it by assignment, transformation, appending or iteration) is
*released* when it is returned or yielded, stored outside itself (``self.x = …``, ``d[k] = …``), handed to a
writing call (``df.to_csv(…)``, ``save(…)``, ``pickle.dump(…)``) or to a call of unknown effect whose result
is discarded. It is *evaluated* when it only reaches arguments of metric, score, evaluation, plot or
comparison calls (``SynthEval(real).evaluate(syn)``, ``distribution_metrics(synthetic=…)``), whose result is
a number about it, not the value itself.
"""
from __future__ import annotations

from typing import Callable

import libcst as cst

from dpcheck.analysis.syntax import call_name, target_names, walk, words

#: word pieces of a call that scores, compares or draws its arguments (the result is a number or a figure)
EVALUATING_WORDS = frozenset({"metric", "metrics", "evaluate", "evaluation", "eval", "score", "scores", "scoring",
                              "plot", "plots", "compare", "comparison", "validate", "validation", "utility",
                              "fidelity", "assess", "assessment", "benchmark", "similarity", "distance", "report"})
#: word pieces of a call that writes, saves or publishes its arguments or receiver
_WRITING_WORDS = frozenset({"save", "saves", "write", "writes", "dump", "dumps", "export", "publish", "release",
                            "upload", "store", "persist", "savez", "savetxt", "pickle", "serialize", "serialise"})
#: methods that write their receiver (``df.to_csv``, ``df.to_parquet``)
_WRITING_PREFIX = "to_"
#: ``to_…`` conversions that do not write (``to_numpy``, ``to_dict``)
_CONVERTING = frozenset({"to_numpy", "to_dict", "to_list", "to_frame", "to_records", "to_string", "to_device", "to"})
#: methods that put an argument into their receiver (``rows.append(syn)``)
_COLLECTING = frozenset({"append", "extend", "insert", "add", "update", "put"})
#: expression nodes whose value carries the value of any operand
_CARRIERS = (cst.BinaryOperation, cst.UnaryOperation, cst.Comparison, cst.BooleanOperation, cst.IfExp, cst.Tuple,
             cst.List, cst.Set, cst.Element, cst.StarredElement, cst.Dict, cst.DictElement, cst.Subscript,
             cst.SubscriptElement, cst.Index, cst.Slice, cst.Await, cst.FormattedStringExpression, cst.FormattedString,
             cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp, cst.CompFor, cst.Lambda)


def evaluating_call(call: cst.Call) -> bool:
    return bool(words(call_name(call) or "") & EVALUATING_WORDS)


def _writing_call(call: cst.Call) -> bool:
    name = call_name(call) or ""
    return bool(words(name) & _WRITING_WORDS) or name.startswith(_WRITING_PREFIX) and name not in _CONVERTING


def _root(expr: cst.BaseExpression) -> str | None:
    while isinstance(expr, (cst.Attribute, cst.Subscript)):
        expr = expr.value
    return expr.value if isinstance(expr, cst.Name) else None


def _target_names(target: cst.BaseExpression) -> set[str]:
    """Plain names bound by a target: ``self.syn = …`` or ``out[k] = …`` binds none of them."""
    return {name for name in target_names(target) if "." not in name}


def never_released(start: str, scope: cst.CSTNode, parent: Callable[[cst.CSTNode], cst.CSTNode | None],
                   skip: cst.CSTNode) -> bool:
    """``start`` (assigned at ``skip``) and every name derived from it in ``scope`` are never released; they
    only reach evaluating calls, conditions, or nothing."""
    held = {start}
    done: set[str] = set()
    while held - done:
        name = (held - done).pop()
        done.add(name)
        for use in walk(scope):
            if not (isinstance(use, cst.Name) and use.value == name):
                continue
            outcome = _follow(use, held, parent, skip)
            if outcome is False:
                return False
    return True


def _follow(use: cst.CSTNode, held: set[str], parent: Callable[[cst.CSTNode], cst.CSTNode | None],
            skip: cst.CSTNode) -> bool:
    """Climb from one use of a held name to where its value ends; False when it ends in a release (new derived
    names are added to ``held``)."""
    cur: cst.CSTNode = use
    handed_on = False  # the value went into a call of unknown effect
    while True:
        up = parent(cur)
        if up is None:
            return False
        if isinstance(up, cst.AssignTarget):
            if isinstance(up.target, cst.Name) and up.target is cur:
                return True  # the name rebound: not a use of its value
            return _root(up.target) in held  # a held value mutated in place, else stored elsewhere
        if isinstance(up, (cst.Assign, cst.AnnAssign, cst.AugAssign)) and getattr(up, "value", None) is cur:
            if up is skip:
                return True
            targets = [t.target for t in up.targets] if isinstance(up, cst.Assign) else [up.target]
            for target in targets:
                names = _target_names(target)
                if names:
                    held.update(names)
                elif _root(target) not in held:
                    return False  # ``self.syn = …``, ``results[k] = …``
            return True
        if isinstance(up, (cst.AnnAssign, cst.AugAssign)) and up.target is cur:
            return True
        if isinstance(up, cst.Arg):
            call = parent(up)
            if not isinstance(call, cst.Call):
                return False
            if evaluating_call(call):
                return True
            if _writing_call(call):
                return False
            if call_name(call) in _COLLECTING and isinstance(call.func, cst.Attribute):
                root = _root(call.func.value)
                if root is None:
                    return False
                held.add(root)
                return True
            cur, handed_on = call, True  # a transformation: its result carries the value
            continue
        if isinstance(up, cst.Attribute) and up.value is cur:
            call = parent(up)
            if isinstance(call, cst.Call) and call.func is up:
                if _writing_call(call):
                    return False
                cur = call
                continue
            cur = up
            continue
        if isinstance(up, cst.Call) and up.func is cur:
            cur = up
            continue
        if isinstance(up, (cst.For, cst.CompFor)) and up.iter is cur:
            held.update(_target_names(up.target))
            return True
        if isinstance(up, (cst.If, cst.While, cst.Assert)) and getattr(up, "test", None) is cur:
            return True
        if isinstance(up, cst.Expr):
            return not handed_on  # ``syn.drop(…, inplace=True)`` stays; ``print(syn)``/``publish_it(syn)`` leaves
        if isinstance(up, _CARRIERS):
            cur = up
            continue
        return False  # returned, yielded, raised, deleted, or an unknown place
