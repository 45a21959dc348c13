"""DP317: an ε computation that returns 0 when no noise is added (the cost of a noise-free release is ∞)."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.clipping import ident
from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import number, walk, words
from dpcheck.rule import Rule

_NOISE_WORDS = frozenset({"noise", "sigma", "multiplier", "std", "scale", "stddev"})
#: not ``dp``: an f-DP trade-off function (``fDP_gaussian``) returns the type II error, and 0 there is "no privacy"
_EPSILON_WORDS = frozenset({"eps", "epsilon", "privacy", "spent", "budget", "rdp"})


def _epsilon_function(name: str) -> bool:
    return bool(words(name) & _EPSILON_WORDS)


def _noise_named(expr: cst.BaseExpression) -> bool:
    name = ident(expr)
    return name is not None and bool(words(name.split(".")[-1]) & _NOISE_WORDS) \
        and not words(name.split(".")[-1]) & {"clip", "norm", "lr"}


def _no_noise_test(test: cst.BaseExpression) -> cst.BaseExpression | None:
    """``sigma <= 0``, ``self.noise_multiplier == 0``, ``not noise_multiplier``, ``sigma is None`` (alone or in
    an ``or``): the noise-free case. Returns the noise operand."""
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.Or):
        return _no_noise_test(test.left) or _no_noise_test(test.right)
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not) and _noise_named(test.expression):
        return test.expression
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        comp = test.comparisons[0]
        if _noise_named(test.left) and (
                isinstance(comp.operator, (cst.LessThanEqual, cst.Equal)) and number(comp.comparator) == 0
                or isinstance(comp.operator, cst.Is) and isinstance(comp.comparator, cst.Name)
                and comp.comparator.value == "None"):
            return test.left
    return None


def _zero(expr: cst.BaseExpression | None) -> bool:
    """``0``, ``0.0``, ``(0.0, delta)``, ``0, None``."""
    if expr is None:
        return False
    if isinstance(expr, cst.Tuple) and expr.elements:
        return number(expr.elements[0].value) == 0
    return number(expr) == 0


class ZeroEpsilonWithoutNoise(Rule):
    id = "DP317"
    name = "zero-epsilon-without-noise"
    category = "general"
    severity = "error"
    summary = "ε computed as 0 when no noise is added (noise multiplier 0 or None): a noise-free run is reported as perfectly private"
    rationale = (
        "An accountant's ε for a mechanism with σ = 0 (or no noise at all) is infinite: the "
        "release is the exact function of the data. A helper that returns `0.0` (or `(0, δ)`) "
        "in that case — `if self.noise_multiplier <= 0 or self.steps == 0: return 0.0` — makes "
        "a non-private run print `ε = 0.00`, the strongest guarantee there is. Reported: a `return` "
        "of 0 guarded by a test that the noise (a σ / noise-multiplier / noise-scale name) is zero, "
        "non-positive, None or falsy, inside a function named for ε, privacy or the budget spent. "
        "Not reported: a return of `float('inf')`/`math.inf`, a zero ε for zero steps alone, code "
        "with no DP context. Fix: return `math.inf` (or raise) when no noise is added, and test "
        "steps separately."
    )
    TRIGGERS = ("return 0",)
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A function named for ε/privacy/budget holding an ``if``."""
        return any(_epsilon_function(fn.name) for fn in facts.functions) and bool(facts.nodes(ast.If))

    VALID = (
        # an f-DP trade-off function: type II error 0 is the no-privacy value (autodp's fdp_bank)
        """
from scipy.stats import norm
def fDP_gaussian(params, fpr):
    sigma = params["sigma"]
    if sigma == 0:
        return 0
    return norm.cdf(norm.ppf(1 - fpr) - 1 / sigma)
""",
        # twin: infinite ε without noise
        """
import math
class ManualDP:
    def get_epsilon(self, delta):
        if self.noise_multiplier <= 0:
            return math.inf
        if self.steps == 0:
            return 0.0
        return self.accountant.get_epsilon(delta)
""",
        # zero steps alone: nothing was released yet
        """
def compute_epsilon(steps, noise_multiplier, sample_rate, delta, accountant):
    if steps == 0:
        return 0.0
    return accountant(steps, noise_multiplier, sample_rate, delta)
""",
        # not an ε helper: a zero noise term
        """
import numpy as np
def noise_for(shape, sigma):
    if sigma == 0:
        return 0
    return np.random.normal(0, sigma, shape)
""",
        # twin: raising on a noise-free configuration
        """
def privacy_spent(sigma, q, steps, delta, rdp):
    if sigma is None or sigma <= 0:
        raise ValueError("no noise: epsilon is infinite")
    return rdp(q, sigma, steps, delta)
""",
    )

    INVALID = (
        # ε = 0 when no noise or no step
        """
class ManualDP:
    def get_epsilon(self, delta):
        if self.noise_multiplier <= 0 or self.steps <= 0:
            return 0.0  # <-
        return self.accountant.get_epsilon(delta)
""",
        # a None σ reported as (0, δ)
        """
def privacy_spent(sigma, q, steps, delta, rdp):
    if sigma is None:
        return 0, delta  # <-
    return rdp(q, sigma, steps, delta), delta
""",
        # a falsy noise multiplier
        """
def compute_eps(noise_multiplier, sample_rate, steps, delta, accountant):
    if not noise_multiplier:
        return 0  # <-
    return accountant(noise_multiplier, sample_rate, steps, delta)
""",
        # a zero noise scale in a budget tracker
        """
class BudgetTracker:
    def spent_budget(self):
        if self.noise_scale == 0:
            return 0.0  # <-
        return self.sensitivity / self.noise_scale * self.releases
""",
    )

    def visit_If(self, node: cst.If) -> None:
        noise = _no_noise_test(node.test)
        if noise is None:
            return
        fa = self.ctx.analysis
        fn = fa.enclosing_function(node)
        if fn is None or not _epsilon_function(fn.name.value):
            return
        for sub in walk(node.body):
            if isinstance(sub, cst.Return) and _zero(sub.value) and fa.in_dp_context(sub):
                self.report(sub, f"`{fn.name.value}` returns ε = 0 when `{fa.code(noise).strip()}` adds no noise: a "
                                 "noise-free release costs ε = ∞, so the run is reported as perfectly private while "
                                 "it has no privacy; return `math.inf` (or raise) in this case")
                return
