"""DP122: a budget of ε = 0 answered with no noise (the exact value, or a zero noise term) instead of no information."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, dotted, number, walk, words
from dpcheck.rule import Rule

#: words naming a privacy budget (``eps``, ``self.speed_budget``, ``rho``)
_BUDGET_WORDS = frozenset({"eps", "epsilon", "budget", "rho"})
#: called names that draw noise (any library), and words naming a noise helper
_DRAWS = frozenset({"normal", "laplace", "gauss", "gumbel", "randn", "standard_normal", "gaussian", "normalvariate",
                    "exponential", "lambertw", "uniform", "rand", "random", "geometric", "choice", "binomial"})
_NOISE_WORDS = frozenset({"noise", "lap", "laplace", "laplacian", "gauss", "gaussian", "perturb", "mechanism"})


def _budget(expr: cst.BaseExpression) -> str | None:
    name = dotted(expr)
    if name is None or not words(name.split(".")[-1]) & _BUDGET_WORDS:
        return None
    return name


def _zero_budget(test: cst.BaseExpression) -> str | None:
    """``eps == 0``, ``self.budget <= 0`` (not in an ``and``/``or``; ``not eps`` is often a None switch)."""
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        comp = test.comparisons[0]
        if isinstance(comp.operator, (cst.Equal, cst.LessThanEqual)) and number(comp.comparator) == 0:
            return _budget(test.left)
    return None


def _zero(expr: cst.BaseExpression | None) -> bool:
    """``0``, ``0.0``, ``(0, 0)``."""
    if isinstance(expr, (cst.Tuple, cst.List)) and expr.elements:
        return all(number(e.value) == 0 for e in expr.elements)
    return expr is not None and number(expr) == 0


def _draws(node: cst.CSTNode) -> bool:
    name = call_name(node) if isinstance(node, cst.Call) else None
    return name is not None and (name.split(".")[-1] in _DRAWS or bool(words(name) & _NOISE_WORDS))


def _names(node: cst.CSTNode) -> set[str]:
    return {d for n in walk(node) if isinstance(n, (cst.Name, cst.Attribute)) and (d := dotted(n)) is not None}


class ZeroBudgetReleasesExact(Rule):
    id = "DP122"
    name = "zero-budget-releases-exact"
    category = "general"
    severity = "error"
    summary = "ε = 0 answered without noise: the raw value, or a zero noise term, where ε = 0 must reveal nothing"
    rationale = (
        "A privacy budget of ε = 0 promises that the output says nothing about the data: the noise scale "
        "Δ/ε grows without bound. A mechanism that special-cases the zero budget to dodge the division — "
        "`if self.budget == 0: return 0` in a noise sampler whose caller adds the sample to the true value, "
        "`if eps == 0: return value` before `return value + laplace(Δ/eps)`, or `scale = 0 if eps == 0 "
        "else Δ/eps` fed to the draw — releases the exact value at the strongest budget, and a budget grid "
        "or a CLI default starting at 0 publishes it as the most private result. Reported: a branch on a "
        "budget-named value being 0 (`== 0`, `<= 0`) that returns 0 (or a tuple of zeros) from a "
        "function whose other returns are pure noise drawn with a scale of that budget, or that returns a "
        "parameter the other path returns noised; and a scale set to 0 for a zero budget that a draw then "
        "uses. Not reported: a branch that raises, returns infinity or None, a zero returned where the other "
        "path returns value + noise (a constant output reveals nothing), accountants (no draw), code with "
        "no DP context. Fix: reject ε ≤ 0 (raise), or return an output independent of the data."
    )
    TRIGGERS = ("== 0", "<= 0")
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A budget-named identifier and an ``if`` (statement or expression)."""
        return any(words(i) & _BUDGET_WORDS for i in facts.identifiers) \
            and bool(facts.nodes(ast.If) or facts.nodes(ast.IfExp))

    VALID = (
        # the zero budget is rejected
        """
import numpy as np
class Arbitrary:
    def __init__(self, budget):
        self.budget = budget
    def sample(self, sensitivity):
        if self.budget == 0:
            raise ValueError("budget must be positive")
        return np.random.laplace(scale=sensitivity / self.budget)
""",
        # a constant answer with the value noised otherwise: nothing about the data
        """
import numpy as np
def release(value, eps, sensitivity):
    if eps == 0:
        return 0.0
    return value + np.random.laplace(0, sensitivity / eps)
""",
        # an infinite scale for a zero budget
        """
import numpy as np
def noise_scale(sensitivity, rho):
    if rho == 0:
        return float('inf')
    return np.sqrt(sensitivity ** 2 / (2 * rho))
""",
        # an accountant: no draw
        """
import math
def rho_to_eps(rho, delta):
    if rho == 0:
        return 0
    return rho + 2 * math.sqrt(rho * math.log(1 / delta))
""",
        # the scale for zero budget is infinite, not zero
        """
import numpy as np
def privatize(x, epsilon, sens):
    scale = np.inf if epsilon == 0 else sens / epsilon
    return x + np.random.laplace(0, scale, x.shape)
""",
    )

    INVALID = (
        # v2x diff.py: a noise sampler answering a zero budget with no noise
        """
import numpy as np
class Arbitrary:
    def __init__(self, budget):
        self.budget = budget
    def sample(self, sensitivity, bound):
        if self.budget == 0:
            return 0  # <-
        b = sensitivity / self.budget
        return np.random.laplace(scale=b)
""",
        # planar Laplace offset: (0, 0) for a zero budget
        """
import numpy as np
from scipy.special import lambertw
class Positional:
    def sample(self):
        if self.epsilon <= 0:
            return (0, 0)  # <-
        r = (-1 / self.epsilon) * (lambertw((np.random.uniform() - 1) / np.e, k=-1) + 1)
        theta = np.random.uniform() * 2 * np.pi
        return r.real * np.cos(theta), r.real * np.sin(theta)
""",
        # the raw value released for ε = 0
        """
import numpy as np
def laplace_mechanism(value, epsilon, sensitivity):
    if epsilon <= 0:
        return value  # <-
    return value + np.random.laplace(0, sensitivity / epsilon)
""",
        # a zero scale for a zero budget
        """
import torch
def privatize(grad, epsilon, clip):
    scale = 0.0 if epsilon == 0 else clip / epsilon  # <-
    return grad + torch.distributions.Laplace(0.0, scale).sample(grad.shape)
""",
    )

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        params = {p.name.value for p in node.params.params} - {"self", "cls"}
        body = list(walk(node, into_scopes=False))
        for sub in body:
            if isinstance(sub, cst.If):
                self._branch(node, sub, params, body)
            elif isinstance(sub, cst.Assign) and len(sub.targets) == 1 and isinstance(sub.value, cst.IfExp):
                self._zero_scale(sub, body)

    def _derived(self, budget: str, body: list[cst.CSTNode]) -> set[str]:
        """The budget and the names computed from it (``b = sensitivity / self.budget``, ``r`` from ``b``)."""
        out = {budget}
        for _ in range(3):
            for sub in body:
                if isinstance(sub, cst.Assign) and _names(sub.value) & out:
                    out.update(d for t in sub.targets for n in walk(t.target)
                               if isinstance(n, (cst.Name, cst.Attribute)) and (d := dotted(n)))
        return out

    def _branch(self, fn: cst.FunctionDef, stmt: cst.If, params: set[str], body: list[cst.CSTNode]) -> None:
        fa = self.ctx.analysis
        budget = _zero_budget(stmt.test)
        if budget is None or not isinstance(stmt.body, cst.IndentedBlock) or not stmt.body.body:
            return
        last = stmt.body.body[-1]
        ret = last.body[0] if isinstance(last, cst.SimpleStatementLine) and last.body else None
        if not isinstance(ret, cst.Return) or any(isinstance(n, cst.Raise) or _draws(n) for n in walk(stmt.body)):
            return
        others = [r for r in fa.returns_of(fn) if r is not ret and r.value is not None and not fa.inside(r, stmt.body)]
        if not others:
            return
        scaled = self._derived(budget, body)
        if not any(_draws(n) and not fa.inside(n, stmt.body) for n in body) \
                or not any(_names(r.value) & scaled for r in others):
            return  # no draw, or no release computed from the budget (an accountant, a lookup)
        if _zero(ret.value):
            # a sampler: every other return is built from the draws and the budget, no data parameter
            if any(_names(r.value) & (params - scaled) for r in others):
                return
            what = "a zero noise term"
        elif isinstance(ret.value, cst.Name) and ret.value.value in params and ret.value.value not in scaled \
                and any(ret.value.value in _names(r.value)
                        and (_names(r.value) & scaled or any(_draws(n) for n in walk(r.value))) for r in others):
            what = f"the raw `{ret.value.value}`"
        else:
            return
        self.report(
            ret,
            f"for a zero budget (`{fa.code(stmt.test).strip()}`) this returns {what}, while the other path draws "
            f"noise scaled by `{budget}`: ε = 0 must reveal nothing, but here it releases the exact value; "
            "reject ε ≤ 0 or answer with an output independent of the data",
        )

    def _zero_scale(self, stmt: cst.Assign, body: list[cst.CSTNode]) -> None:
        value = stmt.value
        assert isinstance(value, cst.IfExp)
        budget = _zero_budget(value.test)
        target = dotted(stmt.targets[0].target)
        if budget is None or target is None or not _zero(value.body):
            return
        if any(_draws(n) and any(a for a in n.args if target in _names(a.value)) for n in body if isinstance(n, cst.Call)):
            self.report(
                stmt,
                f"`{target}` is 0 for a zero budget (`{self.ctx.analysis.code(value.test).strip()}`) and then scales "
                "the noise: ε = 0 releases the exact value, where it must reveal nothing; reject ε ≤ 0",
            )
