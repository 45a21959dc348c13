"""DP610: the noise scale Δ/ε is capped from above with ``min(Δ/ε, cap)``: beyond the cap the noise ignores ε."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts, call_name as ast_call_name
from dpcheck.analysis.noisedraws import PURE_DRAWS
from dpcheck.analysis.syntax import call_name, dotted, target_names, walk, words
from dpcheck.rule import Rule

_BUDGET = frozenset({"epsilon", "eps", "budget"})
_MINS = frozenset({"min", "minimum", "fmin"})
#: callees that draw or add noise with a scale argument
_NOISE_WORDS = frozenset({"noise", "laplace", "gaussian", "gauss", "perturb"})


def _reads_budget_in_denominator(expr: cst.BaseExpression) -> bool:
    """``Δ / ε``, ``Δ / max(ε, 1e-6)``, ``2 * Δ / (n * eps)``: the budget divides the value."""
    for n in walk(expr):
        if isinstance(n, cst.BinaryOperation) and isinstance(n.operator, cst.Divide):
            for leaf in walk(n.right):
                if isinstance(leaf, (cst.Name, cst.Attribute)) and words((dotted(leaf) or "").split(".")[-1]) & _BUDGET:
                    return True
    return False


def _reads_budget(expr: cst.BaseExpression) -> bool:
    return any(isinstance(n, (cst.Name, cst.Attribute)) and words((dotted(n) or "").split(".")[-1]) & _BUDGET
               for n in walk(expr))


class NoiseScaleCapped(Rule):
    id = "DP610"
    name = "noise-scale-capped"
    category = "general"
    severity = "error"
    summary = "the noise scale Δ/ε is capped with min(Δ/ε, cap): for small ε the noise stops growing and ε is not met"
    rationale = (
        "The Laplace (or Gaussian) mechanism is ε-DP only with a scale of at least Δ/ε. Writing "
        "`scale = min(sensitivity / epsilon, noise_clip)` keeps the scale at the cap whenever Δ/ε exceeds it, so for "
        "every ε below Δ/cap the release gets the same, too small, noise and the claimed ε does not hold (the "
        "effective ε is Δ/cap). A floor (`max(Δ/ε, s_min)`) only adds noise and is fine. Reported: a `min` of an "
        "expression with the budget in a denominator and an expression without the budget, whose value is the "
        "scale of a noise draw (directly or through a local name). Not reported: `min(1, C/‖g‖)` clipping factors "
        "(no budget), floors, caps on ε itself (`min(eps, 10)`), code with no DP context. Fix: drop the cap, or "
        "report the ε the capped scale actually gives."
    )
    TRIGGERS = ("min",)
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        return any(ast_call_name(c) in _MINS for c in facts.calls) and any(
            isinstance(n, ast.BinOp) and isinstance(n.op, ast.Div) for n in facts.nodes(ast.BinOp))

    VALID = (
        # the twin: the scale is Δ/ε, the noisy image is clipped afterwards (post-processing)
        """
import numpy as np
def add_noise(image, sensitivity, epsilon):
    scale = sensitivity / max(epsilon, 1e-6)
    noise = np.random.laplace(0, scale, size=image.shape)
    return np.clip(image + noise, -1.0, 1.0)
""",
        # a floor on the scale only adds noise
        """
import numpy as np
def noisy(value, sensitivity, epsilon, min_scale):
    scale = max(sensitivity / epsilon, min_scale)
    return value + np.random.laplace(0, scale)
""",
        # a clipping factor min(1, C / ||g||) has no budget in it
        """
import torch
def clip_and_noise(g, clip, sigma, epsilon):
    factor = min(1.0, clip / (g.norm() + 1e-12))
    return g * factor + torch.normal(0, sigma * clip, g.shape)
""",
        # a cap on ε itself (the budget per query), not on the scale
        """
import numpy as np
def per_query(value, epsilon, n):
    eps_q = min(epsilon / n, 1.0)
    return eps_q
""",
        # ordinary code: a learning-rate schedule with an Adam eps, no noise
        """
def lr_at(step, base, eps=1e-8):
    return min(base / (step + eps), 0.1)
""",
    )

    INVALID = (
        # an LDP client caps the Laplace scale: for small ε the noise is that of a larger ε
        """
import numpy as np
class Client:
    def __init__(self, epsilon, noise_clip=0.5):
        self.epsilon, self.noise_clip = epsilon, noise_clip
    def add_noise(self, image, sensitivity):
        scale = min(sensitivity / max(self.epsilon, 1e-6), self.noise_clip)  # <-
        noise = np.random.laplace(0, scale, size=image.shape)
        return np.clip(image + noise, -1.0, 1.0)
""",
        # a Gaussian σ capped at a maximum std
        """
import math
import numpy as np
def gaussian_release(values, sensitivity, epsilon, delta, sigma_max):
    sigma = min(sensitivity * math.sqrt(2 * math.log(1.25 / delta)) / epsilon, sigma_max)  # <-
    return values + np.random.normal(0, sigma, values.shape)
""",
        # the capped scale handed to a project noise helper
        """
def laplace_noise(scale, size):
    raise NotImplementedError
def privatize(counts, delta_f, eps):
    b = min(delta_f / eps, 5.0)  # <-
    return counts + laplace_noise(b, len(counts))
""",
        # the cap written inline in the draw
        """
import numpy as np
def release(count, epsilon, max_scale):
    return count + np.random.laplace(0.0, np.minimum(1.0 / epsilon, max_scale))  # <-
""",
    )

    def visit_Call(self, node: cst.Call) -> None:
        if call_name(node).split(".")[-1] not in _MINS or len(node.args) < 2 or any(a.star for a in node.args):
            return
        values = [a.value for a in node.args if a.keyword is None]
        if len(values) != 2:
            return
        capped = [v for v in values if _reads_budget_in_denominator(v)]
        caps = [v for v in values if not _reads_budget(v)]
        if len(capped) != 1 or len(caps) != 1:
            return
        if not self._is_scale(node):
            return
        fa = self.ctx.analysis
        self.report(node, f"the noise scale `{fa.code(capped[0]).strip()}` is capped at `{fa.code(caps[0]).strip()}`: "
                          f"whenever Δ/ε exceeds the cap the noise no longer grows as ε shrinks, so the stated ε does "
                          f"not hold (the effective ε is Δ/cap); drop the cap or report the ε it gives")

    def _is_scale(self, node: cst.Call) -> bool:
        """The ``min`` is a draw's argument, or it is assigned to a name that a draw (or a noise helper) reads."""
        fa = self.ctx.analysis
        parent = fa.parent(node)
        if isinstance(parent, cst.Arg):
            call = fa.parent(parent)
            return isinstance(call, cst.Call) and self._noise_call(call)
        if not (isinstance(parent, cst.Assign) and len(parent.targets) == 1):
            return False
        names = target_names(parent.targets[0].target)
        fn = fa.enclosing_function(node)
        if fn is None or not names:
            return False
        for call in walk(fn, into_scopes=False):
            if isinstance(call, cst.Call) and self._noise_call(call) and any(
                    isinstance(n, (cst.Name, cst.Attribute)) and dotted(n) in names
                    for a in call.args for n in walk(a.value)):
                return True
        return False

    @staticmethod
    def _noise_call(call: cst.Call) -> bool:
        name = call_name(call).split(".")[-1]
        return name in PURE_DRAWS or bool(words(name) & _NOISE_WORDS)
