"""DP813: a class stores the ε it is built with, but its mechanisms are given a module constant instead."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, dotted, walk, words
from dpcheck.rule import Rule

_EPS_WORDS = frozenset({"eps", "epsilon", "epsilons", "budget"})


def _eps_named(name: str) -> bool:
    return bool(words(name) & _EPS_WORDS) and "delta" not in words(name)


class StoredEpsilonIgnored(Rule):
    id = "DP813"
    name = "stored-epsilon-ignored"
    category = "general"
    severity = "error"
    summary = ("a class keeps the ε it is constructed with (`self.epsilon = epsilon`) but its mechanisms are "
               "called with a module-level constant (`epsilon=EPSILON`), so every instance runs at the constant's ε")
    rationale = (
        "A reporter or release class that takes ε in its constructor promises that instance's releases are "
        "ε-DP at that ε. When the methods that build the mechanisms pass a module constant (`BoundedMean("
        "epsilon=EPSILON)`) and never read the stored field, every instance, whatever ε it was given, adds the "
        "noise of the constant's ε: an ε sweep (0.1 … 20) and the attacks or utility curves drawn from it are "
        "all at one ε while labelled with others, and a caller asking for ε = 0.1 gets the noise of ε = 10. "
        "Reported: a class whose `__init__` stores an ε-named parameter on `self`, no other method of which "
        "reads that field, while a method passes an upper-case ε-named module constant as a call's ε argument; "
        "reported at that call and at each construction of the class with a non-constant ε. Not reported: "
        "classes that read the stored ε anywhere (a default that is overridden), constants passed where the "
        "class takes no ε. Fix: pass `self.epsilon` to the mechanisms."
    )
    TRIGGERS = ("psilon", "eps", "EPS")
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding needs a class and an upper-case ε-named name assigned at module level."""
        if not facts.nodes(ast.ClassDef):
            return False
        return any(isinstance(t, ast.Name) and t.id.isupper() and _eps_named(t.id)
                   for n in facts.nodes(ast.Assign) for t in n.targets)  # type: ignore[attr-defined]

    def visit_Module(self, node: cst.Module) -> None:
        self._constants = {t.target.value for s in node.body if isinstance(s, cst.SimpleStatementLine)
                           for a in s.body if isinstance(a, cst.Assign) for t in a.targets
                           if isinstance(t.target, cst.Name) and t.target.value.isupper() and _eps_named(t.target.value)}
        if not self._constants:
            return
        for cls in node.body:
            if isinstance(cls, cst.ClassDef):
                self._check_class(node, cls)

    def _check_class(self, module: cst.Module, cls: cst.ClassDef) -> None:
        methods = [m for m in cls.body.body if isinstance(m, cst.FunctionDef)]
        init = next((m for m in methods if m.name.value == "__init__"), None)
        if init is None:
            return
        params = [p.name.value for p in init.params.params][1:]
        eps_params = {p for p in params if _eps_named(p)}
        if not eps_params:
            return
        fields = set()
        for n in walk(init.body):
            if isinstance(n, cst.Assign) and isinstance(n.value, cst.Name) and n.value.value in eps_params:
                fields |= {dotted(t.target) for t in n.targets if (dotted(t.target) or "").startswith("self.")}
        if not fields:
            return
        uses: list[cst.Call] = []
        for m in methods:
            if m is init:
                continue
            for n in walk(m):
                if isinstance(n, cst.Attribute) and dotted(n) in fields:
                    return  # the stored ε is read
                if isinstance(n, cst.Call):
                    for a in n.args:
                        if isinstance(a.value, cst.Name) and a.value.value in self._constants and (
                                a.keyword is None or _eps_named(a.keyword.value)):
                            uses.append(n)
                            break
        if not uses:
            return
        constant = next(a.value.value for a in uses[0].args if isinstance(a.value, cst.Name)  # type: ignore[union-attr]
                        and a.value.value in self._constants)
        for call in uses:
            self.report(call, f"`{cls.name.value}` stores the ε it is built with ({', '.join(sorted(fields))}) but this "
                              f"mechanism is given the module constant `{constant}`: every instance adds the noise of "
                              f"`{constant}`'s ε whatever ε it was asked for; pass the stored ε")
        index = params.index(sorted(eps_params)[0])
        name = sorted(eps_params)[0]
        for n in walk(module):
            if isinstance(n, cst.Call) and call_name(n) == cls.name.value:
                positional = [a.value for a in n.args if a.keyword is None]
                given = next((a.value for a in n.args if a.keyword is not None and a.keyword.value == name),
                             positional[index] if index < len(positional) else None)
                if given is None or isinstance(given, (cst.Integer, cst.Float)) or (
                        isinstance(given, cst.Name) and given.value in self._constants):
                    continue
                self.report(n, f"`{cls.name.value}` is built here with ε `{self.ctx.analysis.code(given).strip()}`, "
                               f"but its mechanisms use the module constant `{constant}`, not the stored ε: the "
                               "results are those of the constant's ε, labelled with this one")

    VALID = (
        # twin: the mechanism is given the stored ε
        """
from pydp.algorithms.laplacian import BoundedMean
EPSILON = 1.0
class GradeReporter:
    def __init__(self, grades, epsilon):
        self.grades, self.epsilon = grades, epsilon
    def noisy_mean(self):
        return BoundedMean(epsilon=self.epsilon, lower_bound=0, upper_bound=100).quick_result(self.grades)
def sweep(grades):
    return [GradeReporter(grades, e).noisy_mean() for e in (0.1, 1, 10)]
""",
        # twin: a class that takes no ε uses the module's constant, as documented
        """
import numpy as np
EPSILON = 0.5
class FixedBudgetCounter:
    def __init__(self, values):
        self.values = values
    def release(self):
        return len(self.values) + np.random.laplace(0, 1 / EPSILON)
""",
        # the constant is a default the constructor overrides with the stored field
        """
import numpy as np
DEFAULT_EPS = 1.0
class Histogram:
    def __init__(self, data, eps=None):
        self.eps = eps
        self.data = data
    def release(self):
        eps = self.eps if self.eps is not None else DEFAULT_EPS
        return np.bincount(self.data) + np.random.laplace(0, 1 / eps, np.bincount(self.data).shape)
""",
        # ordinary ML: an optimizer stores Adam's eps, and a module constant is a numerical guard
        """
import torch
EPS = 1e-8
class Normalizer:
    def __init__(self, dim, eps):
        self.eps = eps
        self.dim = dim
    def __call__(self, x):
        return x / (x.norm(dim=self.dim, keepdim=True) + self.eps)
def safe_div(a, b):
    return a / (b + EPS)
""",
    )

    INVALID = (
        # a reporter built with ε whose mechanism always takes the module constant
        """
from pydp.algorithms.laplacian import BoundedMean
EPSILON = 10
class GradeReporter:
    def __init__(self, grades, epsilon):
        self.grades = grades
        self.epsilon = epsilon
    def noisy_mean(self):
        return BoundedMean(epsilon=EPSILON, lower_bound=0, upper_bound=100).quick_result(self.grades)  # <-
def sweep(grades):
    return [GradeReporter(grades, e).noisy_mean() for e in (0.1, 1, 10)]  # <-
""",
        # a Laplace release class storing its budget privately and drawing with the constant
        """
import numpy as np
PRIVACY_EPSILON = 1.0
class CountRelease:
    def __init__(self, counts, epsilon_share):
        self._budget = epsilon_share
        self.counts = counts
    def release(self):
        return self.counts + np.random.laplace(0, 1 / PRIVACY_EPSILON, len(self.counts))
    def answer(self, q):
        return laplace_answer(q, PRIVACY_EPSILON)  # <-
""",
        # the constant passed positionally to a helper mechanism; the caller hands a per-user ε
        """
import numpy as np
EPS = 2.0
def laplace_mech(value, eps, sensitivity=1.0):
    return value + np.random.laplace(0, sensitivity / eps)
class UserRelease:
    def __init__(self, value, user_eps):
        self.value = value
        self.user_eps = user_eps
    def out(self):
        return laplace_mech(self.value, EPS)  # <-
def serve(value, requested_eps):
    return UserRelease(value, requested_eps).out()  # <-
""",
        # keyword construction with a loop variable
        """
from diffprivlib.tools import mean
EPSILON = 5.0
class Auditor:
    def __init__(self, data, epsilon=1.0):
        self.data = data
        self.eps = epsilon
    def average(self):
        return mean(self.data, epsilon=EPSILON, bounds=(0, 1))  # <-
results = {e: Auditor([0.1, 0.5], epsilon=e).average() for e in [0.5, 1.0]}  # <-
""",
    )
