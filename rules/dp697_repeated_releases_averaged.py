"""DP697: the same value is released n times by a mechanism at the full budget and the releases are averaged:
n·ε is spent and the average has √n less noise than one release claims."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, dotted, walk, words
from dpcheck.rule import Rule

#: method names of a mechanism object releasing one value (diffprivlib, IBM, hand-written)
_RELEASE_METHODS = frozenset({"randomise", "randomize", "release", "privatize", "privatise", "add_noise",
                              "perturb", "sanitize", "sanitise"})
_MECH_WORDS = frozenset({"laplace", "gaussian", "geometric", "mechanism", "mech", "dp", "private", "privatize",
                         "privatise", "randomise", "randomize", "noisy"})
_NOISE = frozenset({"laplace", "normal", "gauss", "geometric", "Laplace", "Normal"})
_AVERAGES = frozenset({"mean", "nanmean", "average", "median", "nanmedian", "fmean"})


def _names(expr: cst.CSTNode) -> set[str]:
    return {n.value for n in walk(expr) if isinstance(n, cst.Name)}


def _release(expr: cst.BaseExpression) -> cst.Call | None:
    """The mechanism call ``expr`` is: ``mech.randomise(v)``, ``laplace_mechanism(v, eps, s)``, or
    ``v + np.random.laplace(0, b)``."""
    if isinstance(expr, cst.Call):
        name = call_name(expr) or ""
        owner = dotted(expr.func.value) if isinstance(expr.func, cst.Attribute) else None
        if name in _RELEASE_METHODS and (owner is None or words(owner.rsplit(".", 1)[-1]) & _MECH_WORDS
                                         or name.startswith("randomi")):
            return expr
        if words(name) & _MECH_WORDS and words(name) & {"mechanism", "mech", "laplace", "gaussian"} \
                and name not in _NOISE:
            return expr
        return None
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Add):
        for side in (expr.left, expr.right):
            if isinstance(side, cst.Call) and call_name(side) in _NOISE:
                return side
    return None


class RepeatedReleasesAveraged(Rule):
    id = "DP697"
    name = "repeated-releases-averaged"
    category = "general"
    severity = "error"
    summary = ("one value is released again and again by a mechanism at the full budget "
               "(`[mech.randomise(v) for _ in range(n)]`) and the releases are averaged and returned")
    rationale = (
        "Each call of a mechanism at ε on a private value spends ε. Drawing n releases of the same value "
        "(`samples = [laplace.randomise(stat) for _ in range(num_simulations)]`) and returning their mean or "
        "median spends n·ε by sequential composition, and the average has √n times less noise than one "
        "release, so the output is far less private than the ε it is labelled with (n = 100 gives 100·ε). "
        "Reported: a list comprehension or a `for … in range(…)` loop appending, whose element is a mechanism "
        "release (`.randomise(v)`, a `…_mechanism(v, …)` call, `v + np.random.laplace(…)`) whose arguments do "
        "not depend on the loop variable and are not all literals, when the list is then averaged (`np.mean`, "
        "`np.median`, `statistics.mean`, `sum(xs) / len(xs)`) in the same function. Not reported: releases of "
        "different values per iteration, a test of a mechanism on a literal value, test functions. Fix: release "
        "once, or give each release ε/n (and then the average buys nothing); error bars come from the "
        "mechanism's known noise distribution, not from fresh releases."
    )
    TRIGGERS = ("range",)
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding needs a ``range`` loop or comprehension and an averaging call or a ``sum``."""
        if not facts.calls_any(_AVERAGES | {"sum"}):
            return False
        return any(isinstance(c.func, ast.Name) and c.func.id == "range" for c in facts.calls)

    @classmethod
    def admits(cls, facts: AstFacts) -> bool:
        return facts.may_have_dp_context and cls.may_report(facts)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if node.name.value.startswith("test"):
            return
        found: list[tuple[str, cst.CSTNode]] = []
        for stmt in walk(node.body, into_scopes=False):
            if isinstance(stmt, cst.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0].target, cst.Name) \
                    and isinstance(stmt.value, cst.ListComp):
                comp = stmt.value
                it = comp.for_in.iter
                if comp.for_in.inner_for_in is None and isinstance(it, cst.Call) and call_name(it) == "range":
                    if self._repeated(comp.elt, _names(comp.for_in.target)):
                        found.append((stmt.targets[0].target.value, stmt))
            elif isinstance(stmt, cst.For) and isinstance(stmt.iter, cst.Call) and call_name(stmt.iter) == "range":
                loop_vars = _names(stmt.target)
                for sub in walk(stmt.body, into_scopes=False):
                    if isinstance(sub, cst.Call) and call_name(sub) == "append" and isinstance(sub.func, cst.Attribute) \
                            and len(sub.args) == 1 and self._repeated(sub.args[0].value, loop_vars):
                        owner = dotted(sub.func.value)
                        if owner:
                            found.append((owner, self.ctx.analysis.enclosing_statement(sub)))
        if not found:
            return
        for call in walk(node.body, into_scopes=False):
            if not isinstance(call, cst.Call):
                continue
            averaged = None
            if call_name(call) in _AVERAGES and call.args:
                averaged = dotted(call.args[0].value)
            elif call_name(call) == "sum" and call.args:
                parent = self.ctx.analysis.parent(call)
                if isinstance(parent, cst.BinaryOperation) and isinstance(parent.operator, cst.Divide) \
                        and isinstance(parent.right, cst.Call) and call_name(parent.right) == "len":
                    averaged = dotted(call.args[0].value)
            for name, stmt in [f for f in found if f[0] == averaged]:
                found.remove((name, stmt))
                self.report(stmt,
                            f"`{averaged}` holds repeated releases of one value, each at the full budget, and "
                            "is averaged: the releases compose to n·ε and the average has √n less noise than "
                            "the ε claimed; release once (error bars follow from the noise distribution)")

    def _repeated(self, elt: cst.BaseExpression, loop_vars: set[str]) -> bool:
        call = _release(elt)
        if call is None:
            return False
        if _names(elt) & loop_vars:
            return False
        values = [a.value for a in call.args] if _release(elt) is call and isinstance(elt, cst.Call) else [elt]
        # a literal released over and over is a test of the mechanism, not of data
        return any(_names(v) - {"np", "numpy", "random", "torch"} for v in values)

    VALID = (
        # twin: one release
        """
def error_bars(frame, column, epsilon):
    mech = Laplace(epsilon=epsilon, sensitivity=1.0)
    stat = frame[column].mean()
    noisy = mech.randomise(stat)
    return {"value": noisy, "std": 2 ** 0.5 / epsilon}
""",
        # twin: releases of different values (one per group), averaged
        """
import numpy as np
def group_means(groups, epsilon):
    mech = Laplace(epsilon=epsilon, sensitivity=1.0)
    noisy = [mech.randomise(groups[g]) for g in range(len(groups))]
    return float(np.mean(noisy))
""",
        # a unit test of the mechanism's unbiasedness on a literal
        """
import numpy as np
def check_unbiased(epsilon):
    mech = Laplace(epsilon=epsilon, sensitivity=1.0)
    draws = [mech.randomise(0.0) for _ in range(10000)]
    return abs(np.mean(draws)) < 0.05
""",
        # ordinary ML: Monte-Carlo dropout predictions averaged
        """
import numpy as np
def mc_predict(model, x, passes):
    preds = [model.predict(x, training=True) for _ in range(passes)]
    return np.mean(preds, axis=0)
""",
    )

    INVALID = (
        """
import numpy as np
def error_bars(frame, column, epsilon, runs=100):
    mech = Laplace(epsilon=epsilon, sensitivity=1.0)
    stat = frame[column].mean()
    samples = [mech.randomise(stat) for _ in range(runs)]  # <-
    return {"mean": float(np.mean(samples)), "std": float(np.std(samples))}
""",
        """
import numpy as np
def private_count(records, epsilon, trials):
    true_count = len(records)
    outs = []
    for _ in range(trials):
        outs.append(true_count + np.random.laplace(0, 1.0 / epsilon))  # <-
    return np.median(outs)
""",
        """
def stable_release(value, epsilon, sensitivity, k=20):
    rel = [gaussian_mechanism(value, epsilon, sensitivity) for i in range(k)]  # <-
    return sum(rel) / len(rel)
""",
        """
import statistics
class Reporter:
    def __init__(self, epsilon):
        self.mechanism = LaplaceMechanism(epsilon=epsilon)
    def report(self, total):
        vals = [self.mechanism.randomize(total) for _ in range(self.repeats)]  # <-
        return statistics.mean(vals)
""",
    )
