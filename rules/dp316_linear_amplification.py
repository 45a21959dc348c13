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


def _number_like(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, (cst.Integer, cst.Float)) or isinstance(expr, cst.UnaryOperation) \
        and isinstance(expr.expression, (cst.Integer, cst.Float))


def _transcendental_of(stmt: cst.CSTNode, eps: str) -> bool:
    """``stmt`` still takes an exp or log of an expression in ``eps`` (``eps + log(q + (1 - q) * exp(-eps))``,
    the same bound rewritten for numerical stability), not an approximation without one."""
    from dpcheck.analysis.syntax import walk

    return any(isinstance(n, cst.Call) and call_name(n) in ("exp", "expm1", "log", "log1p") and n.args
               and any(ident(m) == eps for a in n.args for m in walk(a.value))
               for n in walk(stmt))


def _exp_of(expr: cst.CSTNode, eps: str) -> bool:
    """The term ``e^eps − 1``: ``exp(eps) - 1``, ``math.e ** eps - 1``, ``expm1(eps)`` somewhere in ``expr``
    (not a probability ``exp(eps) / (exp(eps) + k - 1)``)."""
    from dpcheck.analysis.syntax import number, walk

    def exp_call(n: cst.CSTNode) -> bool:
        if isinstance(n, cst.Call) and call_name(n) == "exp" and n.args and ident(n.args[0].value) == eps:
            return True
        return isinstance(n, cst.BinaryOperation) and isinstance(n.operator, cst.Power) and ident(n.right) == eps \
            and (ident(n.left) or "").split(".")[-1] == "e"

    for n in walk(expr):
        if isinstance(n, cst.Call) and call_name(n) == "expm1" and n.args and ident(n.args[0].value) == eps:
            return True
        if isinstance(n, cst.BinaryOperation) and isinstance(n.operator, cst.Subtract) and exp_call(n.left) \
                and number(n.right) == 1:
            return True
    return False


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
        " "
        "(h44-2) Also reported: the exact `ε·(e^ε − 1)` term of an advanced-composition or amplification bound kept on one side of a threshold on ε and replaced on the other by an approximation without the exponential (`ε * ε`, `0.0`), which is smaller for every ε > 0."
    )
    TRIGGERS = ("eps",)
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A product ``a * b`` in a file that names a sampling rate (``q``, ``sample_rate`` …)."""
        if ("exp" in facts.source or "e **" in facts.source) and any(
                isinstance(n.test, ast.Compare) and isinstance(n.test.left, (ast.Name, ast.Attribute))  # type: ignore[attr-defined]
                and _eps_named(n.test.left.id if isinstance(n.test.left, ast.Name) else n.test.left.attr)  # type: ignore[attr-defined]
                and n.orelse for n in facts.nodes(ast.If)):  # type: ignore[attr-defined]
            return True  # (h44-2) the e^ε − 1 term approximated on one side of a threshold on ε
        return bool(facts.binops(ast.Mult)) and bool(re.search(r"\bq\b|sampl|batch_size", facts.source))

    VALID = (
        # the same amplification bound in two numerically stable spellings on either side of ε = 1
        """
import numpy as np
def amplified(eps, q):
    if eps < 1:
        out = np.log(1 + q * (np.exp(eps) - 1))
    else:
        out = eps + np.log(q + (1 - q) * np.exp(-eps))
    return out
""",
        # (h44-2 twin) the exact term in every case; a branch on ε that picks between two correct bounds; an
        # ε-greedy exploration switch
        """
import math
import random
def advanced_composition(epsilons, delta_slack):
    linear = sum(eps * math.expm1(eps) for eps in epsilons)
    return math.sqrt(2 * math.log(1 / delta_slack) * sum(e * e for e in epsilons)) + linear
def composed_privacy(k, eps0, delta_slack):
    advanced = math.sqrt(2 * k * math.log(1 / delta_slack)) * eps0 + k * eps0 * math.expm1(eps0)
    if eps0 > 1.0:
        total = k * eps0
    else:
        total = min(k * eps0, advanced)
    return total
def keep_probability(epsilon, k):
    if epsilon > 100:
        p = 1
    else:
        p = math.exp(epsilon) / (math.exp(epsilon) + k - 1)
    return p
def act(q_values, epsilon=0.1):
    if random.random() < epsilon:
        return random.randrange(len(q_values))
    return max(range(len(q_values)), key=lambda a: q_values[a] * math.exp(epsilon))
""",
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
        # (h44-2) advanced composition: the k·ε(e^ε − 1) term kept for small ε, replaced by ε² (or dropped) otherwise
        """
import math
def advanced_composition(epsilons, delta_slack):
    linear = 0.0
    for eps in epsilons:
        if eps < 1.0:
            linear += eps * (math.exp(eps) - 1.0)
        else:
            linear += eps * eps  # <-
    return math.sqrt(2 * math.log(1 / delta_slack) * sum(e * e for e in epsilons)) + linear
def composed_privacy(k, eps0, delta_slack):
    first = math.sqrt(2 * k * math.log(1 / delta_slack)) * eps0
    if eps0 < 1.0:
        second = 0.0  # <-
    else:
        second = k * eps0 * (math.exp(eps0) - 1)
    return first + second
""",
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

    def visit_If(self, node: cst.If) -> None:
        """(h44-2) ``if eps < 1: t += eps * (exp(eps) - 1) else: t += eps * eps`` (or ``t = 0.0``): the exact
        e^ε − 1 term of a composition or amplification bound kept on one side of a threshold on ε and replaced,
        on the other, by an approximation with no exponential, which is smaller for every ε > 0."""
        test = node.test
        if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1
                and isinstance(test.comparisons[0].operator, (cst.LessThan, cst.LessThanEqual, cst.GreaterThan,
                                                              cst.GreaterThanEqual))):
            return
        sides = (test.left, test.comparisons[0].comparator)
        eps = next((ident(a) for a, b in (sides, sides[::-1]) if _eps_named(ident(a)) and _number_like(b)), None)
        if eps is None or not isinstance(node.orelse, cst.Else):
            return
        fa = self.ctx.analysis
        branches = (node.body, node.orelse.body)
        exact = [self._assigned(b, eps, True) for b in branches]
        other = [self._assigned(b, eps, False) for b in branches]
        for i in (0, 1):
            for target, _stmt in exact[i]:
                for target2, stmt2 in other[1 - i]:
                    if target2 != target or not fa.in_dp_context(stmt2) or _transcendental_of(stmt2, eps):
                        continue
                    self.report(stmt2, f"`{fa.code(stmt2).strip()}` replaces the term `{eps}·(e^{eps} − 1)` of the "
                                       f"bound (kept in the other branch of the test on `{eps}`) by an approximation "
                                       "without the exponential, which is smaller for every ε > 0: the composed ε "
                                       "is understated; keep `eps * math.expm1(eps)` in both branches")
                    return

    @staticmethod
    def _assigned(block: cst.BaseSuite, eps: str, with_exp: bool) -> list[tuple[str, cst.CSTNode]]:
        """Targets assigned (``=``/``+=``) in ``block`` with (or, ``with_exp`` false, without) ``exp(eps)`` /
        ``e ** eps`` / ``expm1(eps)`` in the value."""
        out: list[tuple[str, cst.CSTNode]] = []
        body = block.body if isinstance(block, cst.IndentedBlock) else []
        for line in body:
            if not isinstance(line, cst.SimpleStatementLine):
                continue
            for stmt in line.body:
                if isinstance(stmt, cst.Assign) and len(stmt.targets) == 1:
                    target, value = ident(stmt.targets[0].target), stmt.value
                elif isinstance(stmt, cst.AugAssign) and isinstance(stmt.operator, cst.AddAssign):
                    target, value = ident(stmt.target), stmt.value
                else:
                    continue
                if target is None:
                    continue
                has_exp = _exp_of(value, eps)
                if has_exp == with_exp:
                    out.append((target, stmt))
        return out

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
