"""DP802: an ε computed from the noise multiplier that divides by log(1/δ), so it shrinks as δ shrinks."""
from __future__ import annotations

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, dotted, walk, words
from dpcheck.rule import Rule

_EPS = frozenset({"eps", "epsilon", "ε"})
#: an ε that is a numerical-stability constant, or a per-step share of a total budget, not the spent ε
_NOT_SPENT = frozenset({"norm", "adam", "tol", "stability", "small", "finfo", "step", "per", "iter", "round",
                        "each", "target", "budget", "total"})
#: names of the noise level the spent ε is computed from
_NOISE = frozenset({"sigma", "σ", "multiplier", "nm", "std", "stddev", "noise"})
_LOGS = frozenset({"log", "log1p", "log10", "log2"})
_DELTA = frozenset({"delta", "δ", "dlt"})


def _mentions_delta(expr: cst.CSTNode) -> bool:
    return any(isinstance(n, (cst.Name, cst.Attribute)) and (name := dotted(n)) is not None
               and words(name.split(".")[-1]) & _DELTA for n in walk(expr))


def _delta_log_arg(expr: cst.BaseExpression) -> bool:
    """``δ`` itself or ``c / δ`` (``1/delta``, ``1.25 / self.delta``): the argument of a log(1/δ)."""
    if isinstance(expr, (cst.Name, cst.Attribute)):
        return _mentions_delta(expr)
    return isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Divide) \
        and _mentions_delta(expr.right)


def _signed_logs(expr: cst.BaseExpression, sign: int = 1) -> list[tuple[cst.Call, int]]:
    """The log(…δ…) calls of ``expr`` with +1 where they multiply the value, -1 where they divide it."""
    if isinstance(expr, cst.BinaryOperation):
        if isinstance(expr.operator, cst.Divide):
            return _signed_logs(expr.left, sign) + _signed_logs(expr.right, -sign)
        if isinstance(expr.operator, (cst.Multiply, cst.Add, cst.Subtract)):
            return _signed_logs(expr.left, sign) + _signed_logs(expr.right, sign)
        if isinstance(expr.operator, cst.Power):
            exp = expr.right
            neg = isinstance(exp, cst.UnaryOperation) and isinstance(exp.operator, cst.Minus)
            return _signed_logs(expr.left, -sign if neg else sign)
        return []
    if isinstance(expr, cst.UnaryOperation):
        return _signed_logs(expr.expression, sign)
    if isinstance(expr, cst.Call):
        name = call_name(expr)
        if name in _LOGS and expr.args and _delta_log_arg(expr.args[0].value):
            return [(expr, sign)]
        if name in {"sqrt", "float", "abs"} and expr.args:
            return _signed_logs(expr.args[0].value, sign)
    return []


def _is_spent_eps(name: str | None) -> bool:
    if not name:
        return False
    pieces = words(name.split(".")[-1])
    return bool(pieces & _EPS) and not pieces & _NOT_SPENT


class EpsilonShrinksWithDelta(Rule):
    id = "DP802"
    name = "epsilon-shrinks-with-delta"
    category = "general"
    severity = "error"
    summary = ("the ε reported for a noise multiplier divides by log(1/δ): the smaller δ, the smaller the ε, "
               "the wrong direction for every (ε, δ) bound")
    rationale = (
        "Every valid (ε, δ) bound of the Gaussian mechanism or of DP-SGD gets worse as δ shrinks: the classical "
        "bound is ε = Δ·sqrt(2 ln(1.25/δ))/σ, the RDP conversion is ε = RDP(α) + ln(1/δ)/(α-1), zCDP gives "
        "ρ + 2·sqrt(ρ ln(1/δ)); log(1/δ) always multiplies. A hand-written accountant that returns "
        "`steps / (2 σ² log(1/δ))` or `q·sqrt(T) / (σ·sqrt(log(1/δ)))` puts it in the denominator, so a "
        "stricter δ reports a smaller ε and the reported ε is below what the training spent (an inverted "
        "σ = sqrt(2 ln(1.25/δ))/ε, or a half-remembered moments-accountant formula). Reported: the value of a "
        "function named for ε (`compute_epsilon`, `get_eps`) or of an assignment to an ε name, computed from a "
        "noise level (`sigma`, `noise_multiplier`, `std`), where a log of a δ expression divides the result. "
        "Not reported: per-step or target budgets split from a total (`eps_step = eps / sqrt(8k log(1/δ))`), "
        "ρ = ε²/(4 log(1/δ)), log(1/δ) in a numerator. Fix: use an RDP/PRV accountant (Opacus, "
        "dp-accounting), or the formula with log(1/δ) in the numerator."
    )
    TRIGGERS = ("log",)
    requires_dp_context = False

    @classmethod
    def admits(cls, facts: AstFacts) -> bool:
        return facts.may_have_dp_context and cls.may_report(facts)

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding needs a log call and an identifier for δ and for ε."""
        ids = facts.identifiers
        if not facts.calls_any(_LOGS):
            return False
        return any(words(i) & _DELTA for i in ids) and any(words(i) & _EPS for i in ids)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        eps_fn = _is_spent_eps(node.name.value)
        for sub in walk(node.body, into_scopes=False):
            value: cst.BaseExpression | None = None
            if isinstance(sub, cst.Return) and eps_fn and sub.value is not None:
                value = sub.value
            elif isinstance(sub, cst.Assign) and any(_is_spent_eps(dotted(t.target)) for t in sub.targets):
                value = sub.value
            elif isinstance(sub, cst.AnnAssign) and _is_spent_eps(dotted(sub.target)):
                value = sub.value
            if value is None:
                continue
            if not any(isinstance(n, (cst.Name, cst.Attribute)) and (d := dotted(n)) is not None
                       and words(d.split(".")[-1]) & _NOISE for n in walk(value)):
                continue
            for log, sign in _signed_logs(value):
                if sign < 0:
                    self.report(sub, "this ε divides by a log of δ, so it falls as δ falls: every (ε, δ) bound "
                                     "for a noise multiplier has log(1/δ) in the numerator "
                                     "(sqrt(2 ln(1.25/δ))/σ, RDP + ln(1/δ)/(α-1)); the reported ε is below "
                                     "what was spent — use an RDP/PRV accountant")
                    break

    VALID = (
        # twin: RDP of the Gaussian over T steps converted with log(1/δ) in the numerator
        """
import numpy as np
def compute_epsilon(noise_multiplier, steps, delta=1e-5):
    orders = np.arange(2, 128)
    rdp = steps * orders / (2 * noise_multiplier ** 2)
    return float(np.min(rdp + np.log(1.0 / delta) / (orders - 1)))
""",
        # twin of the classical bound: ε from σ for one Gaussian release
        """
import math
def gaussian_epsilon(sigma, sensitivity, delta):
    epsilon = sensitivity * math.sqrt(2 * math.log(1.25 / delta)) / sigma
    return epsilon
""",
        # a per-step share of a total budget under advanced composition: the log belongs in the denominator
        """
import math
def per_step(total_epsilon, k, delta, noise_scale):
    eps_step = total_epsilon / math.sqrt(8 * k * math.log(1 / delta))
    sigma = noise_scale * math.sqrt(2 * math.log(1.25 / delta)) / eps_step
    return sigma
""",
        # zCDP ρ from a target (ε, δ), no noise level involved
        """
import numpy as np
def rho_for(epsilon, delta, sigma_floor):
    rho = epsilon ** 2 / (4 * np.log(1 / delta))
    return max(rho, sigma_floor)
""",
        # ordinary ML: a log-ratio with an eps constant for stability
        """
import torch
def kl_term(p, q, delta, std, eps=1e-8):
    eps_ratio = std / (torch.log(delta + eps) - torch.log(q + eps))
    return (p * torch.log((p + eps) / (q + eps))).sum() + eps_ratio.mean()
""",
    )

    INVALID = (
        # the moments-accountant formula with log(1/δ) moved below the line
        """
import numpy as np
def compute_epsilon(noise_multiplier, steps, delta=1e-5):
    return (1.0 / noise_multiplier) ** 2 * steps / (2 * np.log(1.0 / delta))  # <-
""",
        # a sqrt form with the sampling rate, assigned to an ε attribute
        """
import math
class Tracker:
    def __init__(self, sigma, q, delta):
        self.sigma, self.q, self.delta = sigma, q, delta
    def update(self, steps):
        self.epsilon = self.q * math.sqrt(steps) / (self.sigma * math.sqrt(math.log(1 / self.delta)))  # <-
        return self.epsilon
""",
        # σ solved the wrong way round: ε = σ / sqrt(2 ln(1.25/δ)) reported for the run
        """
import numpy as np
def get_privacy_spent(noise_std, delta, clip):
    eps = clip / (noise_std * np.sqrt(2 * np.log(1.25 / delta)))  # <-
    return eps, delta
""",
        # negative-power spelling of the same denominator
        """
import math
def epsilon_spent(sigma, epochs, delta):
    epsilon = epochs / sigma ** 2 * (-math.log(delta)) ** -1  # <-
    return epsilon
""",
    )
