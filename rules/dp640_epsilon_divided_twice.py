"""DP640: a noise scale that is already Δ/ε divided by ε a second time."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.noisedraws import last_assignment
from dpcheck.analysis.syntax import call_name, call_params, dotted, param_names, walk, words
from dpcheck.rule import Rule

#: calls that draw noise (or build a noise distribution) from a scale argument
_DRAWS = frozenset({"laplace", "normal", "gauss", "cauchy", "gumbel", "Laplace", "Normal", "Cauchy", "Gumbel",
                    "laplace_noise", "gaussian_noise", "cauchy_noise", "lap", "laplace_mechanism",
                    "gaussian_mechanism"})
#: keywords of a draw that are not its scale
_NOT_SCALE = frozenset({"size", "shape", "loc", "mean", "mu", "out", "dtype", "device", "generator",
                        "random_state", "seed"})
_EPS = frozenset({"eps", "epsilon", "ε"})
#: an ε that is a numerical-stability constant, not a budget
_NUMERIC = frozenset({"norm", "adam", "tol", "stability", "min", "small", "finfo", "root"})


def _is_eps(expr: cst.BaseExpression) -> str | None:
    name = dotted(expr) if isinstance(expr, (cst.Name, cst.Attribute)) else None
    if name is None:
        return None
    pieces = words(name.split(".")[-1])
    return name if pieces & _EPS and not pieces & _NUMERIC else None


def _signed(expr: cst.BaseExpression, sign: int = 1) -> list[tuple[cst.BaseExpression, int]]:
    """The factors of a product/quotient with +1 (numerator) or -1 (denominator)."""
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Multiply):
        return _signed(expr.left, sign) + _signed(expr.right, sign)
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Divide):
        return _signed(expr.left, sign) + _signed(expr.right, -sign)
    return [(expr, sign)]


def _divisor_eps(expr: cst.BaseExpression) -> set[str]:
    """The ε names ``expr`` is divided by (``2 * S / eps``, ``S / (n * epsilon)``)."""
    return {n for f, s in _signed(expr) if s < 0 for n in [_is_eps(f)] if n}


class EpsilonDividedTwice(Rule):
    id = "DP640"
    name = "epsilon-divided-twice"
    category = "general"
    severity = "error"
    summary = ("a noise scale that already is Δ/ε (a helper's `return 2 * S / eps`, a local `b = sens / eps`) "
               "divided by the same ε again at the draw (`laplace(0, b / eps)`): the noise is ε times too small")
    rationale = (
        "The Laplace (or Cauchy, Gaussian) mechanism's scale is Δ/ε, ε entering once. Code that computes that "
        "scale in one place — a helper named for the noise magnitude that returns `2 * S / eps`, or a local "
        "`scale = sensitivity / epsilon` — and then writes the draw as if it held the sensitivity "
        "(`np.random.laplace(0, scale / eps)`) divides by ε twice: the scale is Δ/ε², ε times too small for "
        "ε > 1, and the stated ε does not hold (for ε < 1 the noise is larger than needed, so the guarantee holds "
        "but the utility and any reported accuracy are wrong). Reported: a draw argument that is divided by a "
        "budget name (`eps`, `epsilon`, `self.epsilon`) while a factor of it is a name whose value — the "
        "function's last assignment before the draw — is divided by the same name, either directly "
        "(`b = sens / eps`) or as the return of a module function given that name for a parameter the "
        "returned expression divides by. Not reported: a scale divided once, a budget split (`eps / k`) "
        "before the division, numerical-stability eps. "
        "Bad: `S = noise_magnitude(eps, sens)  # returns 2*sens/eps` then `np.random.laplace(0, S / eps)`. "
        "Good: `np.random.laplace(0, S)` (or let the helper return the sensitivity and divide once)."
    )
    TRIGGERS = ("eps", "ε")
    #: the file must have DP context; the function around the draw need not (a Cauchy helper beside a
    #: Laplace one names no DP word of its own), the ε-twice shape is itself specific enough
    requires_dp_context = False

    @classmethod
    def admits(cls, facts: AstFacts) -> bool:
        return facts.may_have_dp_context and cls.may_report(facts)

    VALID = (
        # twin of the method case: σ drawn with as the helper returns it
        """
import numpy as np
class GaussianRelease:
    def gauss_sigma(self, epsilon, delta):
        return self.sens * np.sqrt(2 * np.log(1.25 / delta)) / epsilon
    def release(self, vec, epsilon, delta):
        sigma = self.gauss_sigma(epsilon, delta)
        return vec + np.random.normal(0, sigma, vec.shape)
""",
        # twin: the helper's scale is drawn with as it is
        """
import numpy as np
def noise_magnitude(eps, sens, spread):
    return 2 * sens * spread / eps
def noisy_total(values, eps, sens):
    b = noise_magnitude(eps, sens, 1.0)
    return sum(values) + np.random.laplace(0, b)
""",
        # twin: the helper returns the sensitivity, the draw divides once
        """
import scipy.stats
def smooth_bound(eps, sens, k):
    beta = eps / 6
    return sens * k * beta
def release(count, eps, sens, k):
    s = smooth_bound(eps, sens, k)
    return count + scipy.stats.cauchy(0, s * 6 / eps).rvs()
""",
        # a local sensitivity, divided once
        """
import numpy as np
def private_mean(x, lo, hi, epsilon):
    x = np.clip(x, lo, hi)
    sens = (hi - lo) / len(x)
    return x.mean() + np.random.laplace(0, sens / epsilon)
""",
        # ordinary ML: Adam's eps in a denominator twice, no noise draw
        """
import torch
def update(p, m, v, lr, eps):
    step = m / (v.sqrt() + eps)
    p.data -= lr * step / (1 + eps)
    return torch.normal(0.0, 0.02, p.shape)
""",
    )
    INVALID = (
        # a method computes the Gaussian σ = Δ·√(2 ln(1.25/δ))/ε; the draw divides it by ε again
        """
import numpy as np
class GaussianRelease:
    def gauss_sigma(self, epsilon, delta):
        return self.sens * np.sqrt(2 * np.log(1.25 / delta)) / epsilon
    def release(self, vec, epsilon, delta):
        sigma = self.gauss_sigma(epsilon, delta)
        return vec + np.random.normal(0, sigma / epsilon, vec.shape)  # <-
""",
        # a helper returns the Laplace scale 2S/ε; the caller divides by ε again
        """
import numpy as np
def noise_magnitude(eps, sens, spread):
    return 2 * sens * spread / eps
def noisy_total(values, eps, sens):
    b = noise_magnitude(eps, sens, 1.0)
    return sum(values) + np.random.laplace(0, b / eps)  # <-
""",
        # the Cauchy scale S·√2/ε, then divided again, passed by keyword
        """
import numpy as np
import scipy.stats
def cauchy_scale(sens, budget_eps):
    return sens * np.sqrt(2) / budget_eps
def release(count, epsilon, sens):
    s = cauchy_scale(sens, budget_eps=epsilon)
    return count + scipy.stats.cauchy(0, s / epsilon).rvs()  # <-
""",
        # a local scale = Δ/ε, then the draw's scale divided by ε again
        """
import numpy as np
class Mech:
    def randomise(self, value):
        scale = self.sensitivity / self.epsilon
        return value + np.random.laplace(loc=0, scale=scale / self.epsilon)  # <-
""",
    )

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding is a noise draw whose scale divides by ε: the file needs a draw and a division."""
        return bool(facts.binops(ast.Div)) and any(facts.call_lasts(c) & _DRAWS for c in facts.calls)

    def visit_Call(self, node: cst.Call) -> None:
        if call_name(node) not in _DRAWS:
            return
        for arg in node.args:
            if arg.star or (arg.keyword is not None and arg.keyword.value in _NOT_SCALE):
                continue
            why = self._twice(node, arg.value)
            if why is not None:
                self.report(node, f"the noise scale `{self.ctx.analysis.code(arg.value).strip()}` divides by "
                                  f"`{why[0]}` although {why[1]} is already divided by it: the scale is Δ/ε², "
                                  f"ε times too small when ε > 1; divide by ε once (draw with {why[1]} as it is)")
                return

    def _twice(self, call: cst.Call, expr: cst.BaseExpression) -> tuple[str, str] | None:
        outer = _divisor_eps(expr)
        if not outer:
            return None
        fa = self.ctx.analysis
        fn = fa.enclosing_function(call)
        for factor, sign in _signed(expr):
            if sign < 0 or not isinstance(factor, cst.Name):
                continue
            if fn is not None and factor.value in param_names(fn):
                continue
            value = last_assignment(fn or self.ctx.module, factor.value, fa.line_of(call) + 1, fa.line_of)
            if value is None:
                continue
            inner = _divisor_eps(value) & outer
            if inner:
                return sorted(inner)[0], f"`{factor.value}`"
            if isinstance(value, cst.Call):
                hit = self._helper_divides(value, outer)
                if hit:
                    return hit, f"`{factor.value}` (returned by `{dotted(value.func)}`)"
        return None

    def _helper_divides(self, value: cst.Call, outer: set[str]) -> str | None:
        """``value`` calls a module function that returns an expression divided by the parameter the caller
        binds to one of the ``outer`` ε names."""
        name = call_name(value)
        fns = self.ctx.analysis.functions_named(name) if name else []
        if len(fns) != 1:
            return None
        callee = fns[0]
        params = call_params(value, callee)
        bound: dict[str, str] = {}
        positional = [a for a in value.args if a.keyword is None and not a.star]
        for param, arg in zip(params, positional):
            eps = _is_eps(arg.value)
            if eps in outer:
                bound[param] = eps
        for arg in value.args:
            if arg.keyword is not None:
                eps = _is_eps(arg.value)
                if eps in outer:
                    bound[arg.keyword.value] = eps
        if not bound:
            return None
        for ret in walk(callee, into_scopes=False):
            if isinstance(ret, cst.Return) and ret.value is not None:
                for param in _divisor_eps(ret.value) & set(bound):
                    return bound[param]
        return None
