"""DP708: a hand-written RDP bound adds a log-scale term to a linear-scale one, or divides by (α − 1) twice."""
from __future__ import annotations

import re

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, number, walk, words
from dpcheck.rule import Rule

_LOGS = frozenset({"log", "log1p", "log10", "log2"})
_ORDER_WORDS = frozenset({"alpha", "alphas", "order", "orders", "lmbda", "lam", "lamb", "lambda", "a", "l"})
_SPACE = re.compile(r"\s+")


def _terms(expr: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The summands of ``a + b − c``."""
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, (cst.Add, cst.Subtract)):
        return _terms(expr.left) + _terms(expr.right)
    return [expr]


def _rate_name(name: str) -> bool:
    ws = words(name)
    return name == "q" or bool(ws & {"rate", "prob", "probability"} and ws & {"sample", "sampling", "sub"}) \
        or name in ("sample_rate", "sampling_rate", "sampling_prob", "sampling_probability", "q_rate")


def _log_of_rate(term: cst.CSTNode) -> str | None:
    """``math.log(q)``, ``2 * np.log(q)``, ``log(q) * 2``: the rate's name."""
    for call in walk(term):
        if isinstance(call, cst.Call) and call_name(call).split(".")[-1] in ("log",) and len(call.args) == 1 \
                and isinstance(call.args[0].value, cst.Name) and _rate_name(call.args[0].value.value):
            return call.args[0].value.value
    return None


def _outside_log_exp(term: cst.CSTNode, name: str) -> bool:
    """``term`` reads ``name ** k`` or ``name * name`` not inside any log/exp call (a linear-scale amplitude)."""
    inside: set[int] = set()
    for call in walk(term):
        if isinstance(call, cst.Call) and call_name(call).split(".")[-1] in _LOGS | {"exp", "expm1", "logsumexp"}:
            inside |= {id(n) for n in walk(call)}
    for sub in walk(term):
        if id(sub) in inside or not isinstance(sub, cst.BinaryOperation):
            continue
        if isinstance(sub.operator, cst.Power) and isinstance(sub.left, cst.Name) and sub.left.value == name \
                and number(sub.right) is not None and number(sub.right) >= 1:
            return True
        if isinstance(sub.operator, cst.Multiply) and isinstance(sub.left, cst.Name) and isinstance(sub.right, cst.Name) \
                and sub.left.value == name == sub.right.value:
            return True
    return False


def _gaussian_rdp(term: cst.CSTNode) -> bool:
    """A term divided by σ² (``/ (2 * sigma ** 2)``, ``/ sigma**2``, ``/ noise_multiplier ** 2``)."""
    for sub in walk(term):
        if isinstance(sub, cst.BinaryOperation) and isinstance(sub.operator, cst.Divide):
            for n in walk(sub.right):
                if isinstance(n, cst.BinaryOperation) and isinstance(n.operator, cst.Power) and number(n.right) == 2 \
                        and isinstance(n.left, (cst.Name, cst.Attribute)):
                    return True
    return False


def _order_minus_one(expr: cst.CSTNode) -> str | None:
    """``(alpha - 1)``: the order's name."""
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Subtract) and number(expr.right) == 1 \
            and isinstance(expr.left, cst.Name) and words(expr.left.value) & _ORDER_WORDS:
        return expr.left.value
    return None


class RdpMixesLogAndLinearTerms(Rule):
    id = "DP708"
    name = "rdp-mixes-log-and-linear-terms"
    category = "moments_accountant"
    severity = "error"
    summary = ("a hand-written subsampled-Gaussian RDP bound adds `log(q)` to a linear-scale term like "
               "`q²·α/(2σ²)`, or divides by (α − 1) both inside the log and outside it: the ε it reports is too small")
    rationale = (
        "RDP bounds for the subsampled Gaussian come in two scales. Linear: `2·q²·α/σ²` (small-q bound). Log: "
        "`log(Σ …)/(α−1)`, where `log(q)` terms live inside the log-sum (`k·log(q) + (α−k)·log(1−q) + …` added with "
        "`logaddexp`). A sum that adds `log(q)` (negative for q < 1) directly to the linear term "
        "(`q**2 * alpha / (2 * sigma**2) + 2 * log(q)`) is no bound at all: it subtracts a constant from ε, "
        "can make the RDP negative, and the accountant reports an ε far below the true one. Likewise "
        "`log(1 + q²·(e^{x} − 1)/(α − 1)) / (α − 1)` divides by α − 1 twice (the (α − 1) belongs only outside "
        "the log), shrinking the amplification term. Reported: an addition whose terms are `c·log(q)` (q a "
        "sampling rate) and a linear `q**k` (or `q*q`) term outside any log/exp, in a term divided by σ²; and a "
        "`log(…)/(α − 1)` whose argument also divides by the same `(α − 1)`. Fix: use a published bound "
        "(Mironov et al. 2019's integer-α expansion, or Opacus/TF-Privacy's `compute_rdp`)."
    )
    TRIGGERS = ("log",)
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A ``log`` call and a power or a division in the file."""
        import ast

        return facts.calls_any(frozenset({"log"})) and (bool(facts.binops(ast.Pow)) or bool(facts.binops(ast.Div)))

    @classmethod
    def admits(cls, facts: AstFacts) -> bool:
        return facts.may_have_dp_context and cls.may_report(facts)

    VALID = (
        # the small-q bound alone, linear scale
        """
def rdp_small_q(q, sigma, alpha):
    return 2 * q ** 2 * alpha / sigma ** 2
""",
        # log(q) terms summed inside the log-space binomial expansion
        """
import math
from scipy.special import comb
def rdp_int_alpha(q, sigma, alpha):
    log_a = -float("inf")
    for i in range(alpha + 1):
        s = math.log(comb(alpha, i)) + i * math.log(q) + (alpha - i) * math.log(1 - q) + (i * i - i) / (2 * sigma ** 2)
        log_a = max(log_a, s) + math.log1p(math.exp(-abs(log_a - s)))
    return log_a / (alpha - 1)
""",
        # (twin) the amplification term divided by (alpha - 1) once, outside the log
        """
import math
def rdp_subsampled(q, sigma, alpha):
    x = (alpha - 1) * alpha / (2 * sigma ** 2)
    return math.log(1 + q ** 2 * math.comb(alpha, 2) * (math.exp(x / alpha) - 1)) / (alpha - 1)
""",
        # ordinary statistics: a log-likelihood adding log(p) terms to a squared error
        """
import math
def neg_log_lik(p, resid, sigma):
    return resid ** 2 / (2 * sigma ** 2) - math.log(p) + math.log(sigma)
""",
    )

    INVALID = (
        # log(q) added to the linear small-q term
        """
import math
def rdp_gaussian_subsampled(q, sigma, alpha):
    base = alpha / (2.0 * sigma ** 2)
    return min(base, q ** 2 * alpha / (2 * sigma ** 2) + math.log(q) * 2)  # <-
""",
        # log(q) subtracted from the RDP of a noise multiplier, numpy spelling
        """
import numpy as np
def compute_rdp(sample_rate, noise_multiplier, orders):
    return np.array([2 * sample_rate ** 2 * a / noise_multiplier ** 2 + np.log(sample_rate) for a in orders])  # <-
""",
        # the amplification term divided by (alpha - 1) inside the log and again outside
        """
import math
def rdp_subsampled(q, sigma, alpha):
    x = (alpha - 1) * alpha / (2 * sigma ** 2)
    return math.log(1 + q ** 2 * (math.exp(x) - 1) / (alpha - 1)) / (alpha - 1)  # <-
""",
        # the same double division with numpy and the order named `order`
        """
import numpy as np
def privacy_rdp(q, noise_multiplier, order):
    inner = np.expm1(order * (order - 1) / (2 * noise_multiplier ** 2))
    return np.log(1 + q * q * inner / (order - 1)) / (order - 1)  # <-
""",
    )

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        fa = self.ctx.analysis
        if isinstance(node.operator, cst.Divide):
            order = _order_minus_one(node.right)
            if order is not None and isinstance(node.left, cst.Call) \
                    and call_name(node.left).split(".")[-1] in ("log", "log1p") and node.left.args:
                inner = node.left.args[0].value
                if any(isinstance(d, cst.BinaryOperation) and isinstance(d.operator, cst.Divide)
                       and _order_minus_one(d.right) == order for d in walk(inner)):
                    self.report(node, f"`log(…)/({order} - 1)` whose argument is already divided by "
                                      f"`({order} - 1)`: the RDP amplification term is divided by α − 1 twice, so "
                                      "the RDP (and ε) is under-stated; divide once, outside the log")
            return
        if not isinstance(node.operator, (cst.Add, cst.Subtract)):
            return
        parent = fa.parent(node)
        if isinstance(parent, cst.BinaryOperation) and isinstance(parent.operator, (cst.Add, cst.Subtract)):
            return  # the whole sum is judged once, at its top
        terms = _terms(node)
        for i, term in enumerate(terms):
            rate = _log_of_rate(term)
            if rate is None or any(isinstance(c, cst.Call) and call_name(c).split(".")[-1] in ("log1p",)
                                   for c in walk(term)):
                continue
            others = [t for j, t in enumerate(terms) if j != i]
            if any(_outside_log_exp(t, rate) and _gaussian_rdp(t) for t in others):
                self.report(node, f"`{_SPACE.sub(' ', fa.code(node).strip())[:70]}` adds `log({rate})` (a "
                                  f"log-scale term, negative for {rate} < 1) to the linear-scale RDP term in "
                                  f"`{rate}`: this is no bound, it lowers the RDP (possibly below 0) and the "
                                  "reported ε; use a published subsampled-Gaussian RDP bound")
                return
