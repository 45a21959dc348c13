"""DP742: a two-sided geometric noise drawn with success probability ε instead of 1 − exp(−ε)."""
from __future__ import annotations

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, dotted, name_words, target_names, walk
from dpcheck.rule import Rule

_BUDGET = frozenset({"eps", "epsilon"})
_GEOMETRIC = frozenset({"geometric", "Geometric"})
_EXP = frozenset({"exp", "expm1", "exp2", "pow", "power"})


def _prob(call: cst.Call) -> cst.BaseExpression | None:
    for i, arg in enumerate(call.args):
        if arg.keyword is not None and arg.keyword.value in ("p", "probs"):
            return arg.value
        if arg.keyword is None and i == 0 and not arg.star:
            return arg.value
    return None


def _unwrap(expr: cst.BaseExpression) -> cst.BaseExpression:
    while isinstance(expr, cst.Call) and call_name(expr) in ("float", "tensor", "array", "asarray") \
            and len(expr.args) == 1:
        expr = expr.args[0].value
    return expr


def _budget_as_p(expr: cst.BaseExpression) -> bool:
    """``eps``, ``self.epsilon``, ``eps / sensitivity``: a budget read as a probability (no exp anywhere)."""
    expr = _unwrap(expr)
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Divide):
        expr = _unwrap(expr.left)
    if not isinstance(expr, (cst.Name, cst.Attribute)):
        return False
    return bool(name_words(expr) & _BUDGET) and not (name_words(expr) & {"prob", "p", "q", "rate"})


class GeometricProbabilityIsEpsilon(Rule):
    id = "DP742"
    name = "geometric-probability-is-epsilon"
    category = "general"
    severity = "error"
    summary = "geometric noise drawn with success probability ε: the two-sided geometric needs p = 1 − exp(−ε/Δ)"
    rationale = (
        "The geometric mechanism adds G₁ − G₂ with G ~ Geometric(p), p = 1 − exp(−ε/Δ), so that the noise has "
        "P(k) ∝ exp(−ε|k|/Δ). Passing ε itself as p (`np.random.geometric(epsilon)`, `Geometric(probs=eps)`) "
        "gives a noise with ratio (1 − ε) per step: ε = 1 makes p = 1 and the noise identically 0, and any ε "
        "has a privacy level −ln(1 − ε) unrelated to the one claimed (ε > 1 raises). Reported: a `geometric` / "
        "`Geometric` draw whose probability is an ε-named value (directly, through `float()`, divided by a "
        "sensitivity, or through a local name bound to one), with no exp in it. Fix: p = 1 − exp(−ε/Δ) (or "
        "`-np.expm1(-eps / sens)`)."
    )
    TRIGGERS = ("geometric", "Geometric")
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A geometric draw and an ε-named identifier."""
        return facts.calls_any(_GEOMETRIC) and any(set(i.lower().split("_")) & _BUDGET for i in facts.identifiers)

    @classmethod
    def admits(cls, facts: AstFacts) -> bool:
        return facts.may_have_dp_context and cls.may_report(facts)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        bound: dict[str, list[cst.BaseExpression]] = {}
        for sub in walk(node.body, into_scopes=False):
            if isinstance(sub, cst.Assign):
                for t in sub.targets:
                    for name in target_names(t.target):
                        bound.setdefault(name, []).append(sub.value)
        for sub in walk(node.body, into_scopes=False):
            if not (isinstance(sub, cst.Call) and call_name(sub) in _GEOMETRIC):
                continue
            p = _prob(sub)
            if p is None or any(isinstance(n, cst.Call) and call_name(n) in _EXP for n in walk(p)):
                continue
            hit = _budget_as_p(p)
            name = dotted(_unwrap(p))
            if not hit and isinstance(_unwrap(p), cst.Name) and name in bound:
                values = bound[name]
                hit = all(_budget_as_p(v) and not any(isinstance(n, cst.Call) and call_name(n) in _EXP
                                                      for n in walk(v)) for v in values)
            if hit:
                self.report(sub, "the geometric draw takes ε as its success probability: two-sided geometric noise "
                                 "for ε needs p = 1 − exp(−ε/Δ) (ε = 1 gives p = 1 and no noise at all)")

    VALID = (
        # twin: p = 1 − exp(−ε)
        """
import numpy as np
def geometric_counts(epsilon, counts):
    p = 1 - np.exp(-float(epsilon))
    errors = np.random.geometric(p, size=len(counts)) - np.random.geometric(p, size=len(counts))
    return counts + errors
""",
        # twin: expm1 inline with a sensitivity
        """
import numpy as np
def noisy_total(total, epsilon, sens):
    rng = np.random.default_rng()
    return total + rng.geometric(-np.expm1(-epsilon / sens)) - rng.geometric(-np.expm1(-epsilon / sens))
""",
        # twin: torch Geometric with the right probability
        """
import math
import torch
def noisy_histogram(hist, epsilon):
    g = torch.distributions.Geometric(probs=torch.tensor(1 - math.exp(-epsilon)))
    return hist + g.sample(hist.shape) - g.sample(hist.shape)
""",
        # ordinary ML: a geometric number of steps with a named probability
        """
import numpy as np
def random_walk_length(stop_prob, eps=1e-6):
    return np.random.geometric(stop_prob + eps)
""",
    )

    INVALID = (
        # ε bound through float() and used as p
        """
import numpy as np
def geometric_counts(epsilon, counts):
    p = float(epsilon)
    errors = (np.random.geometric(p, size=len(counts))  # <-
              - np.random.geometric(p, size=len(counts)))  # <-
    return counts + errors
""",
        # inline, divided by the sensitivity
        """
import numpy as np
def noisy_total(total, epsilon, sens):
    rng = np.random.default_rng()
    return total + rng.geometric(epsilon / sens) - rng.geometric(epsilon / sens)  # <-
""",
        # torch Geometric with probs=ε
        """
import torch
def noisy_histogram(hist, epsilon):
    g = torch.distributions.Geometric(probs=torch.tensor(epsilon))  # <-
    return hist + g.sample(hist.shape) - g.sample(hist.shape)
""",
        # a method reading the budget off self
        """
import numpy as np
class GeometricMechanism:
    def release(self, count):
        noise = np.random.geometric(self.epsilon) - np.random.geometric(self.epsilon)  # <-
        return count + noise
""",
    )
