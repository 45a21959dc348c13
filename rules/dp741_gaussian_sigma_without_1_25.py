"""DP741: a classical Gaussian σ computed as sqrt(2·ln(1/δ))·Δ/ε, without the 1.25 of the classical bound."""
from __future__ import annotations

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, dotted, name_words, number, target_names, walk
from dpcheck.rule import Rule

_BUDGET = frozenset({"eps", "epsilon"})
_LOGS = frozenset({"log"})


def _delta(expr: cst.CSTNode) -> bool:
    name = dotted(expr)
    return name is not None and ("delta" in name.lower() or "δ" in name)


def _factors(expr: cst.BaseExpression) -> list[cst.BaseExpression]:
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Multiply):
        return _factors(expr.left) + _factors(expr.right)
    return [expr]


def _log_sign(expr: cst.BaseExpression) -> int:
    """+1 for ``log(1/δ)``, -1 for ``log(δ)``, 0 otherwise (``log(1.25/δ)``, ``log(2/δ)`` …)."""
    if not (isinstance(expr, cst.Call) and call_name(expr) in _LOGS and len(expr.args) == 1):
        return 0
    arg = expr.args[0].value
    if isinstance(arg, cst.BinaryOperation) and isinstance(arg.operator, cst.Divide) \
            and number(arg.left) == 1 and _delta(arg.right):
        return 1
    return -1 if _delta(arg) else 0


def _short_root(expr: cst.BaseExpression) -> bool:
    """``2·ln(1/δ)`` or ``-2·ln(δ)``: the radicand of the classical σ with its 1.25 missing."""
    sign = 1
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
        sign, expr = -1, expr.expression
    coef, logs, other = 1.0, [], 0
    for f in _factors(expr):
        value = number(f)
        if value is not None:
            coef *= value
        elif (s := _log_sign(f)) != 0:
            logs.append(s)
        else:
            other += 1
    return other == 0 and len(logs) == 1 and coef * sign * logs[0] == 2


def _roots(node: cst.CSTNode) -> list[cst.CSTNode]:
    out: list[cst.CSTNode] = []
    for n in walk(node):
        if isinstance(n, cst.Call) and call_name(n) == "sqrt" and len(n.args) == 1 and _short_root(n.args[0].value):
            out.append(n)
        elif isinstance(n, cst.BinaryOperation) and isinstance(n.operator, cst.Power) and number(n.right) == 0.5 \
                and _short_root(n.left):
            out.append(n)
    return out


#: calls that search for σ between two ends: a bound passed to one is a bracket end, not the σ used
_SEARCH_WORDS = frozenset({"search", "bisect", "bisection", "brentq", "brenth", "ridder", "toms748", "bracket",
                           "root", "roots", "fsolve", "solve", "solver", "minimize", "minimise", "optimize",
                           "optimise", "binary"})
_BOUND_WORDS = frozenset({"upper", "lower", "hi", "lo", "high", "low", "bound", "bounds", "ub", "lb", "bracket"})


def _midpoint(node: cst.CSTNode) -> bool:
    """``(lo + hi) / 2``: a bisection in the function."""
    return any(isinstance(n, cst.BinaryOperation) and isinstance(n.operator, cst.Divide) and number(n.right) == 2
               and isinstance(_strip(n.left), cst.BinaryOperation) and isinstance(_strip(n.left).operator, cst.Add)
               for n in walk(node))


def _strip(expr: cst.BaseExpression) -> cst.BaseExpression:
    while isinstance(expr, cst.Call) and call_name(expr) in ("float", "int") and len(expr.args) == 1:
        expr = expr.args[0].value
    return expr


def _search_end(fn: cst.FunctionDef, bound: set[str]) -> bool:
    """The names bound to the short σ are one end of a search for σ (an argument of a search/bisect/root call, or
    bound-named in a function that bisects), so the σ used is the one the search returns, not this one."""
    if not bound:
        return False
    for n in walk(fn.body):
        if isinstance(n, cst.Call) and set((call_name(n) or "").lower().split("_")) & _SEARCH_WORDS:
            if {a.value for arg in n.args for a in walk(arg.value) if isinstance(a, cst.Name)} & bound:
                return True
    return any(set(b.lower().split("_")) & _BOUND_WORDS for b in bound) and _midpoint(fn)


def _over_budget(node: cst.CSTNode) -> bool:
    return any(isinstance(n, cst.BinaryOperation) and isinstance(n.operator, cst.Divide)
               and name_words(n.right) & _BUDGET for n in walk(node))


class GaussianSigmaWithout125(Rule):
    id = "DP741"
    name = "gaussian-sigma-without-1-25"
    category = "general"
    severity = "error"
    summary = "Gaussian σ = sqrt(2·ln(1/δ))·Δ/ε: the 1.25 of the classical bound sqrt(2·ln(1.25/δ))·Δ/ε is missing"
    rationale = (
        "The classical Gaussian mechanism is (ε, δ)-DP for ε < 1 when σ ≥ sqrt(2·ln(1.25/δ))·Δ₂/ε. Writing "
        "the radicand as 2·ln(1/δ) (or -2·ln(δ)) drops the 1.25 and gives a σ below the bound, so the release "
        "is not (ε, δ)-DP at the claimed parameters (the zCDP route needs a larger σ too: ρ = (sqrt(L+ε) - "
        "sqrt(L))², L = ln(1/δ)). Reported: `sqrt(2*log(1/δ))` (also `(...)**0.5`, `-2*log(δ)`) divided by an "
        "ε-named value in the same statement, or bound to a name that such a division uses. Not reported: "
        "`log(1.25/δ)`, `log(2/δ)`, composition formulas with a number of steps under the root. Fix: "
        "σ = sqrt(2·ln(1.25/δ))·Δ₂/ε, or the analytic Gaussian calibration."
    )
    TRIGGERS = ("sqrt", "**")
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A ``log`` call, a delta-named identifier and an ε-named identifier."""
        return facts.calls_any(_LOGS) and any("delta" in i.lower() or "δ" in i for i in facts.identifiers) \
            and any(set(i.lower().split("_")) & _BUDGET for i in facts.identifiers)

    @classmethod
    def admits(cls, facts: AstFacts) -> bool:
        return facts.may_have_dp_context and cls.may_report(facts)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        lines = [s for s in walk(node.body, into_scopes=False) if isinstance(s, cst.SimpleStatementLine)]
        for line in lines:
            roots = _roots(line)
            if not roots:
                continue
            bound: set[str] = set()
            for small in line.body:
                if isinstance(small, cst.Assign):
                    for t in small.targets:
                        bound |= target_names(t.target)
            if _search_end(node, bound):
                continue
            hit = _over_budget(line)
            if not hit:
                hit = bool(bound) and any(
                    other is not line and _over_budget(other)
                    and {n.value for n in walk(other) if isinstance(n, cst.Name)} & bound for other in lines)
            if hit:
                self.report(roots[0], "σ = sqrt(2·ln(1/δ))·Δ/ε misses the 1.25 of the classical Gaussian bound "
                                      "sqrt(2·ln(1.25/δ))·Δ/ε: the noise is too small for the claimed (ε, δ)")

    VALID = (
        # twin: the classical bound with its 1.25
        """
import math
import numpy as np
def gaussian_noise(epsilon, delta, n, sensitivity=1.0):
    sigma = math.sqrt(2.0 * math.log(1.25 / delta)) / epsilon * sensitivity
    return np.random.normal(0, sigma, n)
""",
        # twin: constant bound to a name, with 1.25
        """
import numpy as np
def release(total, eps, delta, l2):
    c = np.sqrt(2 * np.log(1.25 / delta))
    sigma = c * l2 / eps
    return total + np.random.normal(0, sigma)
""",
        # advanced composition: the root holds the number of steps and multiplies ε
        """
import math
def composed_epsilon(eps, k, delta_prime):
    return math.sqrt(2 * k * math.log(1 / delta_prime)) * eps + k * eps * (math.exp(eps) - 1)
""",
        # twin of the method case: -2·ln(δ/1.25)
        """
import numpy as np
class GaussianMech:
    def scale(self, sens):
        return sens * (2 * np.log(1.25 / self.delta)) ** 0.5 / self.epsilon
""",
        # the short bound is only the upper end of a binary search for the smallest σ that passes a tail test
        """
import math
def smallest_sigma(sens, epsilon, delta, passes, tol=1e-6):
    sigma_hi = sens / epsilon * math.sqrt(2 * math.log(1 / delta)) * 2
    return bisect_sigma(lambda s: passes(sens, epsilon, delta, s), tol, sigma_hi)
""",
        # the same search written out: lower and upper ends, midpoint
        """
import numpy as np
def calibrate(eps, delta, ok):
    lo, hi_bound = 1e-6, np.sqrt(2 * np.log(1 / delta)) / eps
    while hi_bound - lo > 1e-9:
        mid = (lo + hi_bound) / 2
        if ok(mid):
            hi_bound = mid
        else:
            lo = mid
    return hi_bound
""",
        # ordinary ML: an epsilon in a norm
        """
import numpy as np
def normalise(x, eps=1e-8):
    return x / np.sqrt((x ** 2).sum() + eps)
""",
    )

    INVALID = (
        # the radicand is 2·ln(1/δ)
        """
import math
import numpy as np
def gaussian_noise(epsilon, delta, n, sensitivity=1.0):
    sigma = math.sqrt(2.0 * math.log(1.0 / delta)) / epsilon * sensitivity  # <-
    return np.random.normal(0, sigma, n)
""",
        # constant bound to a name, then divided by ε
        """
import numpy as np
def release(total, eps, delta, l2):
    c = np.sqrt(2 * np.log(1 / delta))  # <-
    sigma = c * l2 / eps
    return total + np.random.normal(0, sigma)
""",
        # -2·ln(δ) under a power of one half
        """
import numpy as np
class GaussianMech:
    def scale(self, sens):
        return sens * (-2 * np.log(self.delta)) ** 0.5 / self.epsilon  # <-
""",
        # torch: per-query noise std with the short radicand
        """
import math
import torch
def noisy_answers(answers, eps_per_query, delta, l2_sens):
    std = l2_sens * math.sqrt(2 * math.log(1 / delta)) / eps_per_query  # <-
    return answers + torch.randn_like(answers) * std
""",
        # a bound-named σ used directly as the noise (no search in the function)
        """
import numpy as np
def release(total, eps, delta):
    sigma_upper = np.sqrt(2 * np.log(1 / delta)) / eps  # <-
    return total + np.random.normal(0, sigma_upper)
""",
)
