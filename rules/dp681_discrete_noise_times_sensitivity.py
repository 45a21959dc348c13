"""DP681: a unit discrete (geometric / discrete Laplace) draw multiplied by the sensitivity: lattice noise."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, target_names, value_refs, walk, words
from dpcheck.rule import Rule

#: words of a call that draws integer noise of unit step
_DISCRETE = frozenset({"geometric", "skellam"})
_DISCRETE_PAIRS = (frozenset({"discrete", "laplace"}), frozenset({"discrete", "gaussian"}),
                   frozenset({"discrete", "laplacian"}), frozenset({"discrete", "noise"}))
_SENSITIVITY = frozenset({"sensitivity", "sens"})


def _discrete_call(node: cst.CSTNode) -> bool:
    if not isinstance(node, cst.Call):
        return False
    w = words(call_name(node))
    return bool(w & _DISCRETE) or any(pair <= w for pair in _DISCRETE_PAIRS)


def _sensitivity(node: cst.CSTNode) -> bool:
    for n in walk(node):
        if isinstance(n, cst.Name) and words(n.value) & _SENSITIVITY:
            return True
        if isinstance(n, cst.Attribute) and words(n.attr.value) & _SENSITIVITY:
            return True
    return False


class DiscreteNoiseTimesSensitivity(Rule):
    id = "DP681"
    name = "discrete-noise-times-sensitivity"
    category = "general"
    severity = "error"
    summary = ("a unit-step discrete noise draw (geometric, discrete Laplace/Gaussian) is multiplied by the "
               "sensitivity: the noise lives on a lattice of multiples of Δ and the residue mod Δ is released exact")
    rationale = (
        "The geometric (discrete Laplace) mechanism for an integer query of sensitivity Δ draws integer noise with "
        "P(k) ∝ exp(-ε|k|/Δ): the parameter carries Δ, and every integer is a possible noise value. Drawing a "
        "unit-step variable for ε and multiplying it by Δ (`value + geometric_noise(eps) * sensitivity`) gives "
        "noise that only takes multiples of Δ: two neighbouring answers that differ by less than Δ (or by a "
        "non-multiple of it) produce outputs on disjoint lattices, so the output's residue mod Δ names the true "
        "answer and ε is infinite. Reported: a product of a geometric / discrete-Laplace / discrete-Gaussian / "
        "Skellam draw (called directly or bound to a name first) with a sensitivity-named value. Fix: draw the "
        "discrete noise with the scale Δ/ε inside the distribution (`p = exp(-ε/Δ)`), or use continuous Laplace "
        "noise of scale Δ/ε."
    )
    TRIGGERS = ("geometric", "discrete", "skellam", "Geometric", "Discrete")
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding needs a multiplication and a sensitivity-named value."""
        if not any(isinstance(b.op, ast.Mult) for b in facts.nodes(ast.BinOp)):  # type: ignore[attr-defined]
            return False
        return any(words(n.id) & _SENSITIVITY for n in facts.nodes(ast.Name)) or \
            any(words(n.attr) & _SENSITIVITY for n in facts.nodes(ast.Attribute))  # type: ignore[attr-defined]

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        draws: set[str] = set()
        for sub in walk(node.body, into_scopes=False):
            if isinstance(sub, cst.Assign) and _discrete_call(sub.value):
                for t in sub.targets:
                    draws |= target_names(t.target)
        for sub in walk(node.body, into_scopes=False):
            if not (isinstance(sub, cst.BinaryOperation) and isinstance(sub.operator, cst.Multiply)):
                continue
            for a, b in ((sub.left, sub.right), (sub.right, sub.left)):
                unit = any(_discrete_call(n) for n in walk(a)) or (isinstance(a, cst.Name) and a.value in draws)
                if unit and _sensitivity(b) and not value_refs(b) & draws:
                    self.report(sub, "a unit-step discrete noise draw is multiplied by the sensitivity: the noise "
                                     "takes only multiples of Δ, so the output's residue mod Δ is exact; put Δ/ε "
                                     "into the distribution's parameter instead")
                    return

    VALID = (
        # twin: the sensitivity enters the distribution's parameter
        """
import math, random
def geometric(epsilon, sensitivity):
    p = math.exp(-epsilon / sensitivity)
    k = 0
    while random.random() < p:
        k += 1
    return k if random.random() < 0.5 else -k
def private_sum(values, epsilon, sensitivity):
    return sum(values) + geometric(epsilon, sensitivity)
""",
        # twin with numpy: two geometric draws with p from ε/Δ
        """
import numpy as np
def noisy_count(count, epsilon, sensitivity=1):
    p = 1 - np.exp(-epsilon / sensitivity)
    return count + np.random.geometric(p) - np.random.geometric(p)
""",
        # continuous Laplace noise may be scaled after the draw: Lap(1/ε)·Δ is Lap(Δ/ε)
        """
import numpy as np
def noisy_sum(total, epsilon, sensitivity):
    return total + np.random.laplace(0.0, 1.0 / epsilon) * sensitivity
""",
        # twin of the library case: the scale is Δ/ε inside the draw
        """
def noisy_total(total, epsilon, sensitivity, sampler):
    k = sampler.discrete_laplace(sensitivity / epsilon)
    return total + k
""",
        # ordinary ML: a geometric schedule of learning rates
        """
import numpy as np
def lr_schedule(base, decay, steps):
    return base * np.geomspace(1, decay, steps)
""",
    )
    INVALID = (
        # the unit draw is scaled by the sensitivity
        """
import math, random
def two_sided_geometric(epsilon):
    p = math.exp(-epsilon)
    k = 0
    while random.random() < p:
        k += 1
    return k if random.random() < 0.5 else -k
def private_sum(values, epsilon, sensitivity):
    return sum(values) + two_sided_geometric(epsilon) * sensitivity  # <-
""",
        # numpy: difference of two geometric draws, then scaled
        """
import numpy as np
def noisy_count(count, epsilon, sensitivity):
    p = 1 - np.exp(-epsilon)
    return count + (np.random.geometric(p) - np.random.geometric(p)) * sensitivity  # <-
""",
        # a method of a typed column
        """
class IntegerColumn:
    def dp(self, value, sensitivity, epsilon):
        return max(self.low, value + self.noise.geometric_noise(epsilon) * sensitivity)  # <-
""",
        # bound to a name first; discrete Laplace from a library
        """
def noisy_total(total, epsilon, self_sensitivity, sampler):
    k = sampler.discrete_laplace(1.0 / epsilon)
    return total + self_sensitivity * k  # <-
""",
    )
