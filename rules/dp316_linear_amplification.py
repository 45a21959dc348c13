"""DP316: privacy amplification by subsampling computed as q·ε instead of log(1 + q(e^ε − 1))."""
from __future__ import annotations

import ast
import re

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.clipping import ident
from dpcheck.analysis.syntax import call_name, words
from dpcheck.rule import Rule

_EPS = re.compile(r"(?:epsilon|eps)\d*")
_SAMPLING_WORDS = frozenset({"sample", "sampling", "subsample", "subsampling", "poisson"})
_RATE_WORDS = frozenset({"rate", "prob", "probability", "ratio", "fraction", "frac"})
#: an ε that is already the amplified or the total one is not the input of an amplification
_AMPLIFY_WORDS = frozenset({"amplify", "amplified", "amplification", "subsampled", "sampled"})


def _eps_named(name: str | None) -> bool:
    return name is not None and any(_EPS.fullmatch(w) for w in words(name))


def _rate_named(expr: cst.BaseExpression) -> bool:
    """``q``, ``sample_rate``, ``sampling_prob``, ``self.q``, ``batch_size / n``."""
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Divide):
        left = ident(expr.left) or ""
        return bool(words(left) & {"batch", "lot", "batchsize"}) or left.endswith("batch_size")
    name = ident(expr)
    if name is None:
        return False
    last = name.split(".")[-1]
    pieces = words(last)
    return last == "q" or bool(pieces & _SAMPLING_WORDS and pieces & _RATE_WORDS)


def _product(expr: cst.BaseExpression) -> tuple[cst.BaseExpression, cst.BaseExpression] | None:
    """``eps * q`` / ``q * eps``: (ε, rate); ``eps * batch_size / n``: (ε, the whole quotient)."""
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Divide) \
            and isinstance(expr.left, cst.BinaryOperation) and isinstance(expr.left.operator, cst.Multiply):
        inner = expr.left
        for eps, batch in ((inner.left, inner.right), (inner.right, inner.left)):
            if isinstance(eps, (cst.Name, cst.Attribute)) and _eps_named(ident(eps)) \
                    and _rate_named(cst.BinaryOperation(left=batch, operator=cst.Divide(), right=expr.right)):
                return eps, expr
        return None
    if not (isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Multiply)):
        return None
    for eps, rate in ((expr.left, expr.right), (expr.right, expr.left)):
        if isinstance(eps, (cst.Name, cst.Attribute)) and _eps_named(ident(eps)) and _rate_named(rate):
            return eps, rate
    return None


class LinearAmplification(Rule):
    id = "DP316"
    name = "linear-amplification"
    category = "general"
    severity = "error"
    summary = "amplification by subsampling computed as ε·q (linear) instead of log(1 + q(e^ε − 1)): the amplified ε is understated"
    rationale = (
        "Running an ε-DP mechanism on a Poisson sample of rate q is ε'-DP with "
        "ε' = log(1 + q(e^ε − 1)), which is at least q·ε for every ε > 0 and much larger once ε is "
        "not small (ε = 2, q = 0.01: 0.064, not 0.02). Code that amplifies with `epsilon * q` "
        "(`amplified_eps = eps * sample_rate`, `return epsilon * sampling_prob` in `amplify_epsilon`, "
        "`eps_step = epsilon * batch_size / n`) reports a privacy cost that is too small, and its "
        "(ε, δ) claim does not hold. (The amplification also needs the batches to be Poisson or "
        "uniform samples; see DP305.) Reported: a product of an ε-named value and a sampling rate "
        "(`q`, `sample_rate`, `sampling_prob`, `batch_size / n`) assigned to an ε-named or "
        "amplification-named target, or returned by a function named for amplification or an ε. "
        "Not reported: a budget split by a fraction (`epsilon * frac_for_counts`), a noise scale, code "
        "with no DP context. Fix: `math.log1p(q * math.expm1(eps))`, or an accountant "
        "(`PoissonSampledDpEvent`, Opacus' RDP accountant)."
    )
    TRIGGERS = ("eps",)
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A product ``a * b`` in a file that names a sampling rate (``q``, ``sample_rate`` …)."""
        return bool(facts.binops(ast.Mult)) and bool(re.search(r"\bq\b|sampl|batch_size", facts.source))

    VALID = (
        # twin: the amplification bound itself
        """
import math
def amplify_epsilon(epsilon, sample_rate):
    return math.log1p(sample_rate * math.expm1(epsilon))
""",
        # twin: an accountant charges the subsampled mechanism
        """
from opacus.accountants import RDPAccountant
def spent(noise_multiplier, sample_rate, steps, delta):
    acc = RDPAccountant()
    for _ in range(steps):
        acc.step(noise_multiplier=noise_multiplier, sample_rate=sample_rate)
    return acc.get_epsilon(delta)
""",
        # a budget split by a fraction, not a sampling rate
        """
import numpy as np
def release(counts, epsilon, frac_for_counts=0.8):
    eps_counts = epsilon * frac_for_counts
    return counts + np.random.laplace(0, 1 / eps_counts, counts.shape)
""",
        # q times a noise scale is not an ε
        """
import numpy as np
def noisy_mean(total, epsilon, q, n):
    scale = q * n / epsilon
    return total / n + np.random.laplace(0, scale)
""",
    )

    INVALID = (
        # an amplification helper
        """
def amplify_epsilon(epsilon, sample_rate):
    return epsilon * sample_rate  # <-
""",
        # the per-step ε of DP-SGD amplified linearly
        """
import math
def dp_sgd_epsilon(noise_multiplier, batch_size, n, steps, delta):
    eps_step = math.sqrt(2 * math.log(1.25 / delta)) / noise_multiplier
    eps_amplified = eps_step * batch_size / n  # <-
    return steps * eps_amplified
""",
        # an attribute rate, assigned to an ε-named attribute
        """
import numpy as np
class SubsampledLaplace:
    def __init__(self, epsilon, q):
        self.epsilon, self.q = epsilon, q
        self.effective_epsilon = self.epsilon * self.q  # <-
    def release(self, value):
        return value + np.random.laplace(0, 1 / self.epsilon)
""",
        # returned by a function named for the privacy cost
        """
def subsampled_privacy(eps, sampling_prob):
    return sampling_prob * eps  # <-
""",
    )

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        found = _product(node)
        if found is None:
            return
        eps, rate = found
        if words(ident(eps) or "") & _AMPLIFY_WORDS:
            return
        fa = self.ctx.analysis
        parent = fa.parent(node)
        while isinstance(parent, cst.BinaryOperation) and isinstance(parent.operator, (cst.Divide, cst.Multiply)) \
                and parent.left is node:
            node, parent = parent, fa.parent(parent)  # ``eps * batch_size / n``
        claimed = False
        if isinstance(parent, cst.Assign) and len(parent.targets) == 1:
            target = ident(parent.targets[0].target) or ""
            claimed = _eps_named(target) or bool(words(target) & _AMPLIFY_WORDS)
        elif isinstance(parent, cst.Return):
            fn = fa.enclosing_function(node)
            name = fn.name.value if fn is not None else ""
            claimed = bool(words(name) & (_AMPLIFY_WORDS | {"privacy", "epsilon", "eps"}))
        if not claimed or not fa.in_dp_context(node):
            return
        self.report(node, f"`{fa.code(node).strip()}` amplifies ε linearly by the sampling rate "
                          f"`{fa.code(rate).strip()}`, but subsampling at rate q gives log(1 + q(e^ε − 1)), which is "
                          "larger (much larger once ε is not small): the ε reported is understated; use "
                          "`log1p(q * expm1(ε))` or an accountant")
