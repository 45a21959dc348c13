"""DP746: noise scaled by a smooth sensitivity S/ε whose smoothing parameter β is ε itself."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, dotted, param_names, target_names, walk, words
from dpcheck.rule import Rule

_EPS = frozenset({"eps", "epsilon"})
_DRAWS = frozenset({"normal", "laplace", "cauchy", "standard_cauchy", "gauss", "gumbel", "randn", "standard_normal",
                    "standard_t", "Laplace", "Normal", "Cauchy"})
_BETA = frozenset({"beta", "b", "smoothing", "smooth"})


def _is_eps(expr: cst.CSTNode, aliases: set[str]) -> bool:
    name = dotted(expr)
    return name is not None and (bool(words(name.split(".")[-1]) & _EPS) or name in aliases)


def _factors(expr: cst.BaseExpression) -> list[cst.BaseExpression] | None:
    """Factors of a (negated) product; None when the expression divides or is not a product."""
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
        return _factors(expr.expression)
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Multiply):
        left, right = _factors(expr.left), _factors(expr.right)
        return None if left is None or right is None else left + right
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Divide):
        return None
    return [expr]


def _smoothing_names(fn: cst.FunctionDef) -> tuple[bool, set[str]]:
    """(β is ε inside ``fn``, the names ``fn`` uses as β in ``exp(-β·k)``)."""
    aliases: set[str] = set()
    for sub in walk(fn.body):
        if isinstance(sub, cst.Assign) and _is_eps(sub.value, set()):
            for t in sub.targets:
                aliases |= target_names(t.target)
    direct, used = False, set()
    for sub in walk(fn.body):
        if not (isinstance(sub, cst.Call) and call_name(sub) == "exp" and len(sub.args) == 1):
            continue
        factors = _factors(sub.args[0].value)
        if not factors or len(factors) < 2:
            continue
        for f in factors:
            if _is_eps(f, aliases):
                direct = True
            name = dotted(f)
            if name is not None:
                used.add(name.split(".")[-1])
    return direct, used


class SmoothSensitivityBetaIsEpsilon(Rule):
    id = "DP746"
    name = "smooth-sensitivity-beta-is-epsilon"
    category = "general"
    severity = "error"
    summary = "noise S/ε from a smooth sensitivity S computed with smoothing β = ε (exp(-ε·k))"
    rationale = (
        "Smooth sensitivity (Nissim, Raskhodnikova, Smith) gives ε-DP or (ε, δ)-DP only when the smoothing "
        "parameter β and the noise are calibrated together: Cauchy noise 6·S/ε with β = ε/6, Laplace 2·S/ε "
        "with β = ε/(2·ln(2/δ)), Gaussian with β ≈ ε/(4·(1+ln(2/δ))) and a larger constant. Computing "
        "S = max_k e^(-ε·k)·A(k) with β = ε and then adding noise of scale S/ε (Gaussian or Laplace) matches "
        "none of them: the noise scale can change by e^ε between neighbours while the density ratio allowed "
        "is e^ε in total, so no (ε, δ) guarantee holds (the median, a trimmed mean... is released with "
        "too little noise). Reported: a noise draw whose scale uses a value returned by a function named "
        "smooth... (smooth_sensitivity, smoothSens) in which exp(-ε·k) is taken with the budget ε itself "
        "(or a name assigned from it), or called with β = ε. Not reported: β = ε/6, ε/(2·ln(2/δ)), any "
        "β that divides ε. Fix: choose the noise distribution first and set β and the scale by its theorem."
    )
    TRIGGERS = ("smooth", "Smooth")
    requires_dp_context = False

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """An ``exp`` call, a noise draw, an ε-named identifier and a function named smooth…."""
        if not facts.calls_any({"exp"}) or not facts.calls_any(_DRAWS):
            return False
        if not any(words(i) & _EPS for i in facts.identifiers):
            return False
        return any("smooth" in fn.name.lower() for fn in facts.nodes(ast.FunctionDef))  # type: ignore[attr-defined]

    @classmethod
    def admits(cls, facts: AstFacts) -> bool:
        return cls.may_report(facts)

    def visit_Module(self, node: cst.Module) -> None:
        smooth: dict[str, tuple[bool, set[str], list[str]]] = {}
        for fn in walk(node):
            if isinstance(fn, cst.FunctionDef) and "smooth" in fn.name.value.lower():
                direct, used = _smoothing_names(fn)
                params = [p for p in param_names(fn) if p not in {"self", "cls"}]
                smooth[fn.name.value] = (direct, used, params)
        if not smooth:
            return
        for fn in walk(node):
            if not isinstance(fn, cst.FunctionDef):
                continue
            bad_names: set[str] = set()
            bad_calls: set[int] = set()
            body = list(walk(fn.body))
            for sub in body:
                if isinstance(sub, cst.Call) and call_name(sub) in smooth and self._beta_is_eps(sub, smooth):
                    bad_calls.add(id(sub))
            for sub in body:
                if isinstance(sub, cst.Assign) and any(id(c) in bad_calls for c in walk(sub.value)):
                    for t in sub.targets:
                        bad_names |= target_names(t.target)
            for sub in body:
                if not (isinstance(sub, cst.Call) and call_name(sub) in _DRAWS):
                    continue
                args = [a.value for a in sub.args]
                uses = any(id(c) in bad_calls or (dotted(c) or "") in bad_names
                           for a in args for c in walk(a))
                over_eps = any(isinstance(c, cst.BinaryOperation) and isinstance(c.operator, cst.Divide)
                               and _is_eps(c.right, set()) for a in args for c in walk(a))
                if uses and over_eps:
                    self.report(sub, "the noise scale is S/ε with S a smooth sensitivity computed with β = ε "
                                     "(exp(-ε·k)); no smooth-sensitivity theorem covers this pair, so the "
                                     "release has no (ε, δ) guarantee: use Cauchy noise 6·S/ε with β = ε/6, or "
                                     "Laplace 2·S/ε with β = ε/(2·ln(2/δ))")

    @staticmethod
    def _beta_is_eps(call: cst.Call, smooth: dict[str, tuple[bool, set[str], list[str]]]) -> bool:
        direct, used, params = smooth[call_name(call)]  # type: ignore[index]
        if direct:
            return True
        for i, arg in enumerate(call.args):
            pname = arg.keyword.value if arg.keyword is not None else (params[i] if i < len(params) else None)
            if pname is not None and pname in used and (words(pname) & _BETA or pname in _BETA) \
                    and _is_eps(arg.value, set()):
                return True
        return False

    VALID = (
        # twin of the alias case: β = ε/6 bound to a name, Cauchy noise
        """
import numpy as np
def smooth_sensitivity_median(xs, epsilon):
    beta = epsilon / 6
    ks = np.arange(len(xs))
    return float(np.max(np.exp(-beta * ks) * np.abs(xs[::-1] - xs)))
def release(xs, epsilon):
    s = smooth_sensitivity_median(np.sort(xs), epsilon)
    return np.median(xs) + 6 * s / epsilon * np.random.standard_cauchy()
""",
        # the noise uses a global sensitivity; the smooth helper is only logged
        """
import math
import numpy as np
def smooth_bound(xs, eps):
    return max(abs(x) * math.exp(-eps * k) for k, x in enumerate(xs))
def release_sum(xs, eps, clip):
    print("smooth bound", smooth_bound(xs, eps))
    return sum(xs) + np.random.laplace(0, clip / eps)
""",
        # twin: Cauchy noise with β = ε/6 and scale 6·S/ε
        """
import math
import numpy as np
class Median:
    def smooth_sensitivity(self, xs, beta):
        n = len(xs)
        m = n // 2
        return max((xs[min(m + k, n - 1)] - xs[max(m - k, 0)]) * math.exp(-beta * k) for k in range(n))
    def release(self, xs):
        s = self.smooth_sensitivity(sorted(xs), self.epsilon / 6)
        return float(np.median(xs)) + np.random.standard_cauchy() * 6 * s / self.epsilon
""",
        # twin: β computed from ε and δ inside the function
        """
import math
import numpy as np
def smooth_sens(xs, epsilon, delta):
    beta = epsilon / (2 * math.log(2 / delta))
    return max((xs[-1] - xs[0]) * math.exp(-beta * k) for k in range(len(xs)))
def private_median(xs, epsilon, delta):
    s = smooth_sens(sorted(xs), epsilon, delta)
    return np.median(xs) + np.random.laplace(0, 2 * s / epsilon)
""",
        # ordinary ML: exponential smoothing of a loss curve, noise for augmentation
        """
import numpy as np
def smooth_curve(losses, eps=0.1):
    return [l * np.exp(-eps * i) for i, l in enumerate(losses)]
def augment(x, eps=0.1):
    s = smooth_curve(x)
    return x + np.random.normal(0, 0.01, len(x))
""",
    )

    INVALID = (
        # β bound to a name from ε, then exp(-β·k) over an array, Gaussian noise with keywords
        """
import numpy as np
def smooth_sensitivity_median(xs, epsilon):
    beta = epsilon
    ks = np.arange(len(xs))
    return float(np.max(np.exp(-beta * ks) * np.abs(xs[::-1] - xs)))
def release(xs, epsilon):
    s = smooth_sensitivity_median(np.sort(xs), epsilon)
    return np.random.normal(loc=np.median(xs), scale=s / epsilon)  # <-
""",
        # the smooth sensitivity call inline in the noise scale
        """
import math
import numpy as np
class TrimmedMean:
    def smooth_sens(self, xs):
        return max((xs[-1 - k] - xs[k]) * math.exp(-k * self.eps) for k in range(len(xs) // 2))
    def answer(self, xs):
        xs = sorted(xs)
        return np.mean(xs) + np.random.laplace(0, self.smooth_sens(xs) / self.eps)  # <-
""",
        # β = ε inside the smooth sensitivity, Gaussian noise S/ε
        """
import math
import numpy as np
class Median:
    def smoothSensitivity(self, xs):
        n = len(xs)
        m = n // 2
        return max((xs[min(m + k, n - 1)] - xs[max(m - k, 0)]) * math.exp(-self.epsilon * k) for k in range(n))
    def release(self, xs):
        s = self.smoothSensitivity(sorted(xs))
        return float(np.median(xs)) + np.random.normal(0, s / self.epsilon)  # <-
""",
        # β passed as ε to a β-parametrised smooth sensitivity, Laplace S/ε
        """
import math
import numpy as np
def smooth_sens(xs, beta):
    return max((xs[-1] - xs[0]) * math.exp(-k * beta) for k in range(len(xs)))
def private_median(xs, eps):
    s = smooth_sens(sorted(xs), beta=eps)
    return np.median(xs) + np.random.laplace(0, s / eps)  # <-
""",
    )
