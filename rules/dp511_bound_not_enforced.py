"""DP511: the bound a mechanism's noise assumes is never enforced: a range check that can never fire
(``any(x) > 1``) or the clamp left commented out."""
from __future__ import annotations

import ast
import re

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.noisedraws import PURE_DRAWS
from dpcheck.analysis.syntax import call_name, last_name, number, param_names, walk, words
from dpcheck.rule import Rule

#: calls that return a bool
_BOOL_CALLS = frozenset({"any", "all", "bool"})
#: a commented-out line that is a clamp/clip of a value (``# W = torch.clamp(W, c - r, c + r)``)
_COMMENTED_CLAMP = re.compile(
    r"^\s*#\s*(?P<code>(?:[\w.\[\]]+\s*=\s*)?[\w.]*\b(?:clamp|clamp_|clip|clip_by_norm|clip_by_value|"
    r"clip_grad_norm_|clip_grad_norm)\s*\(.*\))\s*$")
_BOUND_CALLS = frozenset({"clamp", "clamp_", "clip", "clip_by_norm", "clip_by_value", "clip_grad_norm_",
                          "clip_grad_norm", "minimum", "maximum", "min", "max", "clip_", "normalize"})
_EPS_WORDS = frozenset({"eps", "epsilon"})


def _never(op: cst.BaseCompOp, value: float) -> str | None:
    """What a bool (0 or 1) compared with ``value`` by ``op`` always gives, if it is fixed."""
    if isinstance(op, cst.GreaterThan):
        return "False" if value >= 1 else "True" if value < 0 else None
    if isinstance(op, cst.GreaterThanEqual):
        return "False" if value > 1 else "True" if value <= 0 else None
    if isinstance(op, cst.LessThan):
        return "False" if value <= 0 else "True" if value > 1 else None
    if isinstance(op, cst.LessThanEqual):
        return "False" if value < 0 else "True" if value >= 1 else None
    if isinstance(op, cst.Equal):
        return "False" if value not in (0, 1) else None
    return None


def _ast_bool_compare(node: ast.Compare) -> bool:
    left = node.left
    return isinstance(left, ast.Call) and (
        isinstance(left.func, ast.Name) and left.func.id in _BOOL_CALLS
        or isinstance(left.func, ast.Attribute) and left.func.attr in _BOOL_CALLS) and any(
        isinstance(c, ast.Constant) and isinstance(c.value, (int, float)) and not isinstance(c.value, bool)
        for c in node.comparators)


class BoundNotEnforced(Rule):
    id = "DP511"
    name = "bound-not-enforced"
    category = "general"
    severity = "error"
    summary = ("the bound the noise is calibrated for is never enforced: a range check that cannot fire "
               "(`any(x) > 1`) or a clamp left commented out in a mechanism")
    rationale = (
        "A mechanism's noise is calibrated to a sensitivity that holds only for inputs inside a "
        "bound (unit-norm columns, weights in [c-r, c+r], values in [lo, hi]). When the check or "
        "clamp that enforces it does nothing, one record outside the bound moves the output by more "
        "than the noise covers and the guarantee is void. Two spellings: a check that compares a "
        "bool with a number (`if any(norms) > 1: raise ...`: `any()` is 0 or 1, never above 1, so "
        "the check never fires; likewise `all(x) > c`, `any(x) == 2`), and a clamp or clip commented "
        "out (`# W = torch.clamp(W, c - r, c + r)`) in a function that perturbs its input under ε "
        "with no other clamp. Not reported: a bool compared with 0 or 1 in a way that can hold, a "
        "commented clamp when the function clamps elsewhere, functions that draw no noise and use "
        "no ε, a check outside a function that draws noise or takes ε, code with no DP context. "
        "Fix: compare inside the call (`any(norms > 1)`), and clamp (or raise) before the noise."
    )
    TRIGGERS = ("any(", "all(", "bool(", "clamp", "clip")
    requires_dp_context = False

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding is a comparison of a bool-returning call with a number, or a commented-out
        clamp/clip line."""
        if any(_ast_bool_compare(c) for c in facts.nodes(ast.Compare)):  # type: ignore[arg-type]
            return True
        return any(_COMMENTED_CLAMP.match(line) for line in facts.source.splitlines() if "#" in line)

    VALID = (
        # the comparison inside any()
        """
import numpy as np
def dp_pca(data, epsilon, delta):
    if any(np.linalg.norm(data, axis=0) > 1):
        raise ValueError("columns must have norm at most 1")
    return data @ data.T + np.random.normal(0, np.sqrt(2 * np.log(1.25 / delta)) / epsilon, (len(data), len(data)))
""",
        # a bool compared with 0: can hold
        """
def check(values, epsilon):
    if all(v >= 0 for v in values) == 0:
        raise ValueError("negative value")
""",
        # an always-true assertion in numerical code: no mechanism relies on it
        """
def trust_region(vmultc, mcon, sigma, delta):
    assert all(vmultc[:mcon]) >= 0
    return vmultc * sigma + delta
""",
        # a commented clamp, but the function clamps anyway
        """
import math, torch
def perturb(W, c, r, eps):
    # W = torch.clamp(W, c - r, c + r)
    W = W.clamp(c - r, c + r)
    coff = (math.exp(eps) + 1) / (math.exp(eps) - 1)
    return torch.where(torch.rand(len(W)) < (W - c) / coff + r, c + r * coff, c - r * coff)
""",
        # a commented clip in a function that releases nothing
        """
import numpy as np
def normalise(x):
    # x = np.clip(x, 0, 1)
    return x / x.sum()
""",
    )

    INVALID = (
        # dp-federated_sharing dp_pca.py: any() compared with 1
        """
import numpy as np
def dp_pca_ag(data, epsilon=1.0, delta=0.1):
    if any(np.diag(np.dot(data.transpose(), data))) > 1:  # <-
        print('ERROR: Each column in the data matrix should have 2-norm bounded in [0,1].')
        return
    D = (1.0 / epsilon) * np.sqrt(2.0 * np.log(1.25 / delta))
    return np.dot(data, data.transpose()) + np.random.normal(0, D, (len(data), len(data)))
""",
        """
import numpy as np
def dp_mean(x, epsilon, lower, upper):
    if np.all(x >= lower) < 0 or all(x <= upper) > 1:  # <-
        raise ValueError("out of range")
    return x.mean() + np.random.laplace(0, (upper - lower) / (len(x) * epsilon))
""",
        # LDPFL-Attack LDP_FL.py: the clamp to [c-r, c+r] is commented out
        """
import math, torch
def data_pertubation(W, c: float, r: float, eps: float):
    sz = len(W)
    with torch.no_grad():
        # torch.clamp(W, min=c-r, max=c+r)
        coff = (math.exp(eps) + 1) / (math.exp(eps) - 1)  # <-
        Pb = (((W - c) / coff) + r)
        cmp = torch.gt(Pb, torch.rand(sz) * 2.0 * r)
        return cmp * (c + r * coff) + (~cmp) * (c - r * coff)
""",
        """
import numpy as np
def privatize(values, lo, hi, epsilon):
    #values = np.clip(values, lo, hi)
    return values.sum() + np.random.laplace(0, (hi - lo) / epsilon)  # <-
""",
    )

    def visit_Comparison(self, node: cst.Comparison) -> None:
        left = node.left
        if not isinstance(left, cst.Call) or call_name(left) not in _BOOL_CALLS:
            return
        for target in node.comparisons:
            value = number(target.comparator)
            if value is None:
                continue
            result = _never(target.operator, value)
            if result is None or not self.ctx.analysis.in_dp_context(node) or not self._mechanism_scope(node):
                continue
            fa = self.ctx.analysis
            self.report(node, f"`{fa.code(left).strip()}` is a bool (0 or 1), so comparing it with {value:g} is "
                              f"always {result}: the bound this check should enforce is never checked; compare "
                              f"inside the call (`{call_name(left)}(x > {value:g})`)")
            return

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        fa = self.ctx.analysis
        text = fa.code(node)
        if "#" not in text:
            return
        lines = text.splitlines()
        commented = [i for i, line in enumerate(lines) if _COMMENTED_CLAMP.match(line)]
        if not commented:
            return
        body = list(walk(node.body, into_scopes=False))
        if any(isinstance(n, cst.Call) and call_name(n) in _BOUND_CALLS for n in body):
            return
        if not self._perturbs(body):
            return
        code = _COMMENTED_CLAMP.match(lines[commented[0]]).group("code")  # type: ignore[union-attr]
        self.report(self._statement_after(node, lines, commented[0]) or node,
                    f"`{code.strip()}` is commented out: the function perturbs its input under ε as if it "
                    f"were inside that bound, but nothing enforces it, so one value outside moves the "
                    f"output by more than the noise covers; clamp before the mechanism")

    def _mechanism_scope(self, node: cst.CSTNode) -> bool:
        """The check sits in a function that draws noise or takes ε (a bound a mechanism relies on)."""
        fn = self.ctx.analysis.enclosing_function(node)
        if fn is None:
            return False
        if any(words(p) & {"epsilon", "rho"} for p in param_names(fn)):
            return True
        return any(isinstance(n, cst.Call) and call_name(n) in PURE_DRAWS for n in walk(fn, into_scopes=False))

    @staticmethod
    def _perturbs(body: list[cst.CSTNode]) -> bool:
        """Draws noise or randomises with ``exp(eps)``."""
        for n in body:
            if isinstance(n, cst.Call):
                name = call_name(n)
                if name in PURE_DRAWS or name in ("rand", "random", "uniform", "binomial", "bernoulli"):
                    if any(words(last_name(m) or "") & _EPS_WORDS for m in walk(n) if isinstance(m, cst.Name)) \
                            or any(isinstance(m, cst.Call) and call_name(m) == "exp" for m in body):
                        return True
                if name == "exp" and n.args and any(
                        isinstance(m, cst.Name) and words(m.value) & _EPS_WORDS for m in walk(n.args[0].value)):
                    return any(isinstance(m, cst.Call) and (call_name(m) in PURE_DRAWS or call_name(m) in (
                        "rand", "random", "uniform", "binomial", "bernoulli", "choice")) for m in body)
        return False

    def _statement_after(self, fn: cst.FunctionDef, lines: list[str], index: int) -> cst.CSTNode | None:
        """The first statement of ``fn`` on a line after the commented one (the report's anchor: a
        comment is no node)."""
        fa = self.ctx.analysis
        first = fa.line_of(fn)
        wanted = first + index
        best: tuple[int, cst.CSTNode] | None = None
        for n in walk(fn.body, into_scopes=False):
            if isinstance(n, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
                line = fa.line_of(n)
                if line > wanted and (best is None or line < best[0]):
                    best = (line, n)
        return best[1] if best else None
