"""DP843: k-ary randomized response sets its probabilities for k values but draws the lie from k + 1
(``random.randint(0, k)`` is inclusive)."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, dotted, walk, words
from dpcheck.rule import Rule

_EPS = frozenset({"eps", "epsilon"})
_DRAWS = frozenset({"randint", "randrange", "integers"})


def _eps_named(node: cst.CSTNode) -> bool:
    return any(isinstance(n, (cst.Name, cst.Attribute)) and words((dotted(n) or "").split(".")[-1]) & _EPS
               for n in walk(node))


def _exp_of_eps(node: cst.CSTNode) -> bool:
    for n in walk(node):
        if isinstance(n, cst.Call) and call_name(n) in ("exp", "expm1") and n.args and _eps_named(n.args[0].value):
            return True
        if isinstance(n, cst.BinaryOperation) and isinstance(n.operator, cst.Power) and _eps_named(n.right):
            return True
    return False


def _domains(scope: cst.CSTNode) -> set[str]:
    """``k`` of every ``k - 1`` that sits in one statement with ``exp(ε)`` (the k-RR probabilities)."""
    out: set[str] = set()
    for stmt in walk(scope):
        if not isinstance(stmt, (cst.SimpleStatementLine, cst.Return)):
            continue
        if not _exp_of_eps(stmt):
            continue
        for n in walk(stmt):
            if isinstance(n, cst.BinaryOperation) and isinstance(n.operator, cst.Subtract) \
                    and isinstance(n.right, cst.Integer) and n.right.value == "1":
                sides = [n.left]
                if isinstance(n.left, cst.BinaryOperation) and isinstance(n.left.operator, cst.Add):
                    sides = [n.left.left, n.left.right]  # ``exp(eps) + k - 1`` parses as ``(exp(eps) + k) - 1``
                for side in sides:
                    d = dotted(side)
                    if d and not words(d.split(".")[-1]) & _EPS:
                        out.add(d)
    return out


def _plus_one(expr: cst.BaseExpression, domain: set[str]) -> str | None:
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Add):
        for a, b in ((expr.left, expr.right), (expr.right, expr.left)):
            if isinstance(b, cst.Integer) and b.value == "1" and dotted(a) in domain:
                return dotted(a)
    return None


class KrrLieFromKPlusOneValues(Rule):
    id = "DP843"
    name = "krr-lie-from-k-plus-one-values"
    category = "general"
    severity = "error"
    summary = ("k-ary randomized response sets its probabilities for k outputs but draws the lie from k + 1 "
               "values (an inclusive `random.randint(0, k)`)")
    rationale = (
        "k-RR keeps the true value with probability e^ε/(e^ε + k − 1) and otherwise reports one of the other k − 1 "
        "values uniformly. Python's `random.randint(a, b)` includes b, so `random.randint(0, k)` draws from k + 1 "
        "values (and `np.random.randint(0, k + 1)` likewise): the lie mass is spread over k values other than the "
        "truth, one of them outside the domain, so each real lie value gets less probability than the analysis "
        "assumes and the likelihood ratio becomes e^ε·k/(k − 1) > e^ε; the out-of-range value also breaks the "
        "estimator. Reported: in a function (or class) whose statements compute `exp(ε)` together with `k - 1`, a "
        "draw `random.randint(0, k)`, `randint(0, k + 1)`/`integers(0, k + 1)` or `randrange(k + 1)` over that "
        "same `k`. Bad: `random.randint(0, self.k)`. Good: `random.randrange(self.k)` or "
        "`random.randint(0, self.k - 1)`."
    )
    TRIGGERS = ("randint", "randrange", "integers")
    requires_dp_context = False

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding needs an integer draw and a ``- 1``."""
        return facts.calls_any(_DRAWS) and any(
            isinstance(b.right, ast.Constant) and b.right.value == 1  # type: ignore[attr-defined]
            for b in facts.binops(ast.Sub))

    def visit_Module(self, node: cst.Module) -> None:
        self._stdlib_randint = any(
            isinstance(s, cst.ImportFrom) and isinstance(s.module, cst.Name) and s.module.value == "random"
            and not isinstance(s.names, cst.ImportStar) and any(a.name.value == "randint" for a in s.names)
            for s in walk(node))

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        fa = self.ctx.analysis
        scope: cst.CSTNode = node
        for anc in fa.ancestors(node):
            if isinstance(anc, cst.ClassDef):
                scope = anc
                break
        domain = _domains(node) or (_domains(scope) if scope is not node else set())
        if not domain:
            return
        for call in walk(node.body, into_scopes=False):
            if not isinstance(call, cst.Call) or call_name(call) not in _DRAWS:
                continue
            args = [a.value for a in call.args if a.keyword is None]
            func = dotted(call.func) or ""
            stdlib = func == "random.randint" or (func == "randint" and self._stdlib_randint)
            hit = None
            if call_name(call) == "randint" and stdlib and len(args) == 2 and isinstance(args[0], cst.Integer) \
                    and args[0].value == "0" and dotted(args[1]) in domain:
                hit = f"`{fa.code(call)}` includes {dotted(args[1])}"
            elif len(args) == 2 and isinstance(args[0], cst.Integer) and args[0].value == "0" \
                    and _plus_one(args[1], domain) and not (call_name(call) == "randint" and stdlib):
                hit = f"`{fa.code(call)}` excludes only {_plus_one(args[1], domain)} + 1"
            elif call_name(call) == "randrange" and len(args) == 1 and _plus_one(args[0], domain):
                hit = f"`{fa.code(call)}` excludes only {_plus_one(args[0], domain)} + 1"
            if hit:
                self.report(call, f"{hit}: the lie is drawn from k + 1 values while the k-RR probabilities are set "
                                  "for k, so the likelihood ratio exceeds e^ε (and one output is outside the "
                                  "domain); draw from exactly k values (`randrange(k)`, `randint(0, k - 1)`)")

    VALID = (
        # twin: randrange(k) has exactly k values
        """
import math, random
class KRR:
    def perturb(self, index):
        p = math.exp(self.epsilon) / (math.exp(self.epsilon) + self.k - 1)
        if random.random() < p:
            return index
        while True:
            lie = random.randrange(self.k)
            if lie != index:
                return lie
""",
        # twin: numpy's randint excludes the upper end
        """
import numpy as np
def grr(value, k, epsilon, rng=np.random):
    keep = np.exp(epsilon) / (np.exp(epsilon) + k - 1)
    if rng.random() < keep:
        return value
    other = rng.randint(0, k - 1)
    return other if other < value else other + 1
""",
        # twin: stdlib randint with k - 1 as the inclusive end
        """
import math, random
def krr(v, k, eps):
    if random.random() < math.exp(eps) / (math.exp(eps) + k - 1):
        return v
    choices = [x for x in range(k) if x != v]
    return random.choice(choices) if choices else random.randint(0, k - 1)
""",
        # ordinary ML: a random crop offset, no budget
        """
import random
def crop(img, size):
    h = img.shape[0] - size
    top = random.randint(0, h)
    return img[top:top + size]
""",
    )
    INVALID = (
        # stdlib randint is inclusive: k + 1 values
        """
import math, random
class KRR:
    def perturb(self, index):
        p = math.exp(self.epsilon) / (math.exp(self.epsilon) + self.k - 1)
        if random.random() < p:
            return index
        while True:
            lie = random.randint(0, self.k)  # <-
            if lie != index:
                return lie
""",
        # numpy randint(0, k + 1): k + 1 values
        """
import numpy as np
def grr(value, k, epsilon, rng=np.random):
    keep = np.exp(epsilon) / (np.exp(epsilon) + k - 1)
    if rng.random() < keep:
        return value
    while True:
        other = rng.randint(0, k + 1)  # <-
        if other != value:
            return other
""",
        # the probability is set in another method of the class; randrange(k + 1)
        """
import math, random
class Randomizer:
    def flip_probability(self):
        return (self.n_values - 1) / (math.exp(self.eps) + self.n_values - 1)
    def privatize(self, x):
        if random.random() >= self.flip_probability():
            return x
        y = x
        while y == x:
            y = random.randrange(self.n_values + 1)  # <-
        return y
""",
        # e ** epsilon spelling, randint imported from random
        """
from math import e
from random import randint, uniform
def discrete_rr(idx, total, epsilon):
    lie_prob = (total - 1) / (total - 1 + e ** epsilon)
    if uniform(0, 1) < lie_prob:
        while True:
            s = randint(0, total)  # <-
            if s != idx:
                return s / total
    return idx / total
""",
    )
