"""DP309: a privacy check method tested without being called (``if not self.check_eps:``)."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import walk
from dpcheck.rule import Rule

#: decorators that make ``self.name`` a value rather than a bound method
_VALUE_DECORATORS = frozenset({"property", "cached_property", "setter", "getter", "staticproperty",
                               "lazy_property", "overload"})


def _decorator_name(dec: cst.Decorator) -> str:
    node: cst.BaseExpression = dec.decorator
    if isinstance(node, cst.Call):
        node = node.func
    if isinstance(node, cst.Attribute):
        return node.attr.value
    return node.value if isinstance(node, cst.Name) else ""


def _ast_tests(tree: ast.AST) -> list[ast.AST]:
    tests: list[ast.AST] = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.If, ast.While, ast.IfExp, ast.Assert)):
            tests.append(node.test)
        elif isinstance(node, ast.BoolOp):
            tests.extend(node.values)
    return tests


class MethodAsCondition(Rule):
    id = "DP309"
    name = "method-as-condition"
    category = "general"
    severity = "error"
    summary = "a check method is used as a truth value without being called (`if not self.check_eps0:`), so the check never runs"
    rationale = (
        "A bound method or function object is always true. `if not self.check_eps0:` or "
        "`assert self.within_budget` reads the method instead of calling it: the test is constant, "
        "the precondition of an amplification theorem, a budget check or a sensitivity bound is "
        "never enforced, and the (ε, δ) the code reports rests on a condition nobody evaluated. "
        "Reported: an `if`/`while`/`assert`/conditional-expression test, or an operand of "
        "`and`/`or`/`not` there, that is `self.name` or a module-level function name, where `name` "
        "is a plain `def` of the enclosing class (or a module function) never assigned as an "
        "attribute and not a property. Not reported: properties, attributes assigned anywhere in "
        "the file (`self.check = True`), calls, code with no DP context. "
        "Fix: call it (`if not self.check_eps0():`) or make it a property."
    )
    TRIGGERS = ("if ", "assert ", "while ")
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A test reads ``self.<name>`` or a bare name that is a ``def`` in the module."""
        defs = {n.name for n in facts.nodes(ast.FunctionDef, ast.AsyncFunctionDef)}  # type: ignore[attr-defined]
        if not defs:
            return False
        for test in _ast_tests(facts.tree):
            node = test.operand if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) else test
            if isinstance(node, ast.Attribute) and node.attr in defs:
                return True
            if isinstance(node, ast.Name) and node.id in defs:
                return True
        return False

    VALID = (
        # the method is called
        """
import math
class ShuffleDP:
    \"\"\"Privacy amplification by shuffling.\"\"\"
    def __init__(self, eps0, delta, n):
        self.eps0, self.delta, self.n = eps0, delta, n
    def check_eps0(self):
        return self.eps0 < math.log(self.n / (16 * math.log(2 / self.delta)))
    def epsilon(self):
        if not self.check_eps0():
            raise ValueError("eps0 too large")
        return math.exp(self.eps0 / 2) / math.sqrt(self.n)
""",
        # a property is a value
        """
class Accountant:
    def __init__(self, budget):
        self.budget, self.spent = budget, 0.0
    @property
    def exhausted(self):
        return self.spent >= self.budget
    def spend(self, epsilon, noise):
        while not self.exhausted:
            self.spent += epsilon
            yield noise()
""",
        # a flag attribute sharing a method's name elsewhere in the file
        """
class Filter:
    def __init__(self, epsilon):
        self.epsilon = epsilon
        self.enforce = True
    def enforce_budget(self, cost):
        return cost <= self.epsilon
    def run(self, cost, release):
        if self.enforce and self.enforce_budget(cost):
            return release()
""",
        # a module function called in the test
        """
def within_budget(spent, epsilon):
    return spent <= epsilon
def answer(queries, epsilon, laplace):
    spent = 0
    for q in queries:
        assert within_budget(spent + q.cost, epsilon)
        spent += q.cost
        yield laplace(q.value, q.sensitivity / q.cost)
""",
    )

    INVALID = (
        # the amplification-by-shuffling precondition read as a bound method
        """
import math
class ShuffleDP:
    \"\"\"Privacy amplification by shuffling.\"\"\"
    def __init__(self, eps0, delta, n):
        self.eps0, self.delta, self.n = eps0, delta, n
    def check_eps0(self):
        return self.eps0 < math.log(self.n / (16 * math.log(2 / self.delta)))
    def epsilon(self):
        if not self.check_eps0:  # <-
            raise ValueError("eps0 too large")
        return math.exp(self.eps0 / 2) / math.sqrt(self.n)
""",
        # a budget filter's stop test on the method object
        """
class RenyiFilter:
    def __init__(self, alpha, epsilon):
        self.alpha, self.epsilon, self.spent = alpha, epsilon, 0.0
    def exceeded(self):
        return self.spent > self.epsilon
    def charge(self, rdp, release):
        self.spent += rdp
        while self.exceeded:  # <-
            return None
        return release()
""",
        # a module-level check used in an assert and in a conjunction
        """
import numpy as np
def sensitivity_ok(x, bound):
    return np.all(np.abs(x) <= bound)
def dp_sum(x, bound, epsilon):
    assert sensitivity_ok  # <-
    return x.sum() + np.random.laplace(0, bound / epsilon)
def dp_mean(x, bound, epsilon):
    if len(x) and sensitivity_ok:  # <-
        return dp_sum(x, bound, epsilon) / len(x)
""",
        # a conditional expression on an accountant's validity method
        """
import torch
class GaussianAccountant:
    def __init__(self, sigma, q, steps):
        self.sigma, self.q, self.steps = sigma, q, steps
    def valid_regime(self):
        return self.sigma >= 0.8 and self.q <= 0.1
    def epsilon(self, delta):
        bound = 2 * self.q * (self.steps * torch.log(torch.tensor(1 / delta))) ** 0.5 / self.sigma
        return bound if self.valid_regime else float("inf")  # <-
""",
    )

    def __init__(self, ctx) -> None:  # type: ignore[no-untyped-def]
        super().__init__(ctx)
        self._methods: dict[cst.ClassDef, set[str]] = {}
        self._module_functions: set[str] | None = None
        self._assigned: set[str] | None = None

    def _names(self) -> tuple[set[str], set[str]]:
        if self._module_functions is None or self._assigned is None:
            module = self.ctx.module
            self._module_functions = {s.name.value for s in module.body if isinstance(s, cst.FunctionDef)}
            assigned: set[str] = set()
            for node in walk(module):
                targets: list[cst.BaseExpression] = []
                if isinstance(node, cst.Assign):
                    targets = [t.target for t in node.targets]
                elif isinstance(node, (cst.AnnAssign, cst.AugAssign)):
                    targets = [node.target]
                for target in targets:
                    for sub in walk(target):
                        if isinstance(sub, cst.Attribute):
                            assigned.add(sub.attr.value)
                        elif isinstance(sub, cst.Name):
                            assigned.add(sub.value)
                if isinstance(node, cst.Call):  # setattr(self, "name", ...)
                    for arg in node.args:
                        if isinstance(arg.value, cst.SimpleString):
                            assigned.add(arg.value.value.strip("\"'"))
            self._assigned = assigned
        return self._module_functions, self._assigned

    def _class_methods(self, cls: cst.ClassDef) -> set[str]:
        if cls not in self._methods:
            names: set[str] = set()
            for stmt in cls.body.body:
                if isinstance(stmt, cst.FunctionDef) and not any(
                        _decorator_name(d) in _VALUE_DECORATORS for d in stmt.decorators):
                    names.add(stmt.name.value)
            self._methods[cls] = names
        return self._methods[cls]

    def _check(self, test: cst.BaseExpression) -> None:
        if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            test = test.expression
        if isinstance(test, cst.BooleanOperation):
            self._check(test.left)
            self._check(test.right)
            return
        functions, assigned = self._names()
        fa = self.ctx.analysis
        if isinstance(test, cst.Attribute) and isinstance(test.value, cst.Name) and test.value.value == "self":
            cls = fa.enclosing_class(test)
            name = test.attr.value
            if cls is None or name in assigned or name not in self._class_methods(cls):
                return
            kind = f"the method `self.{name}`"
        elif isinstance(test, cst.Name) and test.value in functions and test.value not in assigned:
            if self._shadowed(test):
                return
            kind = f"the function `{test.value}`"
        else:
            return
        self.report(test, f"{kind} is tested as a truth value without being called: a function object is "
                          "always true, so this check never runs and the condition it should enforce "
                          "(a budget, a theorem's precondition, a bound) is not checked; call it")

    def _shadowed(self, name: cst.Name) -> bool:
        """A parameter of an enclosing function with the same name as the module function."""
        for anc in self.ctx.analysis.ancestors(name):
            if isinstance(anc, (cst.FunctionDef, cst.Lambda)):
                params = anc.params
                every = [*params.posonly_params, *params.params, *params.kwonly_params]
                if params.star_arg is not None and isinstance(params.star_arg, cst.Param):
                    every.append(params.star_arg)
                if params.star_kwarg is not None:
                    every.append(params.star_kwarg)
                if any(p.name.value == name.value for p in every):
                    return True
        return False

    def visit_If(self, node: cst.If) -> None:
        self._check(node.test)

    def visit_While(self, node: cst.While) -> None:
        self._check(node.test)

    def visit_IfExp(self, node: cst.IfExp) -> None:
        self._check(node.test)

    def visit_Assert(self, node: cst.Assert) -> None:
        self._check(node.test)
