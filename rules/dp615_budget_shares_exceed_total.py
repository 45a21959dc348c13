"""DP615: one ε split into constant shares that add up to more than the whole."""
from __future__ import annotations

import ast
import math
import re

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, dotted, number
from dpcheck.rule import Rule

#: the last part of a name that holds a privacy budget (``eps``, ``epsilon``, ``self._eps1``, ``epsilon2``)
_EPS_NAME = re.compile(r"(?i)^_*(?:eps|epsilon)(?:_?\d+|_[a-z]+)?$")
_BASE_NAME = re.compile(r"(?i)^_*(?:eps|epsilon|total_eps|total_epsilon|eps_total|epsilon_total|budget)$")


def _last(name: str | None) -> str:
    return (name or "").split(".")[-1]


def _constant(expr: cst.BaseExpression) -> float | None:
    """The value of a constant expression: literals, ``+ - * /`` and ``sqrt`` of constants (``8 / 9``,
    ``np.sqrt(512) / (np.sqrt(512) + 1)``)."""
    value = number(expr)
    if value is not None:
        return float(value)
    if isinstance(expr, cst.BinaryOperation):
        left, right = _constant(expr.left), _constant(expr.right)
        if left is None or right is None:
            return None
        if isinstance(expr.operator, cst.Add):
            return left + right
        if isinstance(expr.operator, cst.Subtract):
            return left - right
        if isinstance(expr.operator, cst.Multiply):
            return left * right
        if isinstance(expr.operator, cst.Divide):
            return left / right if right else None
        return None
    if isinstance(expr, cst.Call) and call_name(expr) == "sqrt" and len(expr.args) == 1:
        inner = _constant(expr.args[0].value)
        return math.sqrt(inner) if inner is not None and inner >= 0 else None
    return None


def _share(expr: cst.BaseExpression) -> tuple[str, float] | None:
    """``eps * (8 / 9)``, ``8. / 9 * epsilon``, ``epsilon / 3``: (the budget's name, its fraction)."""
    if not isinstance(expr, cst.BinaryOperation) or not isinstance(expr.operator, (cst.Multiply, cst.Divide)):
        return None
    # ``8. / 9 * epsilon`` parses as ``(8. / 9) * epsilon``
    pairs = [(expr.left, expr.right)]
    if isinstance(expr.operator, cst.Multiply):
        pairs.append((expr.right, expr.left))
    for base, other in pairs:
        name = dotted(base)
        if name is None or not _BASE_NAME.match(_last(name)):
            continue
        value = _constant(other)
        if value is None or value == 0:
            return None
        return name, (1 / value if isinstance(expr.operator, cst.Divide) else value)
    return None


def _ast_constant(expr: ast.AST) -> bool:
    if isinstance(expr, ast.Constant):
        return isinstance(expr.value, (int, float)) and not isinstance(expr.value, bool)
    if isinstance(expr, ast.BinOp):
        return _ast_constant(expr.left) and _ast_constant(expr.right)
    if isinstance(expr, ast.Call) and len(expr.args) == 1:
        func = expr.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        return name == "sqrt" and _ast_constant(expr.args[0])
    return False


class BudgetSharesExceedTotal(Rule):
    id = "DP615"
    name = "budget-shares-exceed-total"
    category = "general"
    severity = "error"
    summary = ("one ε split into constant shares (`eps1 = 8/9·eps`, `eps2 = 2/9·eps`) that add up to more than "
               "the whole: the mechanisms together spend more than the ε promised")
    rationale = (
        "A mechanism with two parts (a sparse-vector threshold test and its numeric answers, a selection and a "
        "release) splits the budget it is given: ε₁ = a·ε for one part, ε₂ = b·ε for the other, and by "
        "sequential composition the whole spends (a + b)·ε. When the constant shares add up to more than one "
        "(8/9 + 2/9 = 10/9, the NumericSparse split copied from a textbook erratum; "
        "√512/(√512+1) + 2/(√512+1) > 1), the code spends more than the ε its interface promises. "
        "Reported: two or more assignments in the same block of ε-named targets from constant fractions "
        "(each between 0 and 1) of the same budget, whose sum exceeds 1. "
        "Not reported: shares that sum to at most 1, a share computed from a variable (`eps * frac`), "
        "shares in exclusive branches, the whole ε given to each part of disjoint data. "
        "Fix: choose shares that sum to one (ε₁ = 8/9·ε, ε₂ = 1/9·ε) or state the composed ε."
    )
    TRIGGERS = ("eps",)
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding needs an assignment of a budget times (or over) a constant expression."""
        for node in facts.nodes(ast.Assign):
            value = node.value  # type: ignore[attr-defined]
            if not isinstance(value, ast.BinOp) or not isinstance(value.op, (ast.Mult, ast.Div)):
                continue
            for base, other in ((value.left, value.right), (value.right, value.left)):
                name = base.attr if isinstance(base, ast.Attribute) else getattr(base, "id", None)
                if name and _BASE_NAME.match(name) and _ast_constant(other):
                    return True
        return False

    VALID = (
        # twin of the NumericSparse split: the shares add up to the whole budget
        """
\"\"\"Differentially private NumericSparse: noisy threshold test, then Laplace answers.\"\"\"
import numpy as np
class NumericSparse:
    def __init__(self, eps, thresh, c):
        self._eps1 = eps * (8 / 9)
        self._eps2 = eps * (1 / 9)
        self._noisy_thresh = thresh + np.random.laplace(0, 2 * c / self._eps1)
""",
        # three shares of a third each, and a share computed from a configured fraction
        """
import numpy as np
def release(counts, sums, epsilon, frac):
    eps_count = epsilon / 3
    eps_sum = epsilon / 3
    eps_select = epsilon / 3
    eps_other = epsilon * frac
    return np.random.laplace(counts, 1 / eps_count), np.random.laplace(sums, 1 / eps_sum)
""",
        # exclusive branches: each branch splits the budget in its own way
        """
import numpy as np
def split(eps, delta):
    if delta == 0:
        eps1 = eps * 0.75
        eps2 = eps * 0.25
    else:
        eps1 = eps * 0.9
        eps2 = eps * 0.1
    return eps1, eps2
""",
        # ordinary numerical code: a tolerance and its half, no privacy budget
        """
def bisect(f, lo, hi, eps=1e-6):
    tol = eps * 0.5
    step = eps * 0.75
    while hi - lo > tol:
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if f(mid) < 0 else (lo, mid)
    return lo, step
""",
    )
    INVALID = (
        # the NumericSparse split of the threshold test and the numeric answers: 8/9 + 2/9 = 10/9
        """
\"\"\"Differentially private NumericSparse: noisy threshold test, then Laplace answers.\"\"\"
import numpy as np
class NumericSparse:
    def __init__(self, eps, thresh, c):
        self._eps1 = eps * (8 / 9)
        self._eps2 = eps * (2 / 9)  # <-
        self._noisy_thresh = thresh + np.random.laplace(0, 2 * c / self._eps1)
""",
        # selective gradient sharing: a selection budget and a release budget written as fractions first
        """
import numpy as np
def share_gradients(grads, epsilon, sensitivity, tau):
    epsilon1 = 8. / 9 * epsilon
    epsilon2 = 2. / 9 * epsilon  # <-
    threshold = tau + np.random.laplace(0, 2 * sensitivity / epsilon1)
    return [g + np.random.laplace(0, 2 * sensitivity / epsilon2) for g in grads if abs(g) > threshold]
""",
        # the approximate-DP variant with square roots, still over one
        """
import numpy as np
def split(eps, delta, k):
    eps1 = eps * (np.sqrt(512) / (np.sqrt(512) + 1))
    eps2 = eps * (2 / (np.sqrt(512) + 1))  # <-
    return np.random.laplace(0, np.sqrt(32 * k * np.log(1 / delta)) / eps1), eps2
""",
        # a half for the counts and more than a half for the sums of the same records
        """
import numpy as np
def private_mean(values, epsilon, lower, upper):
    eps_count = epsilon / 2
    eps_sum = epsilon * 0.6  # <-
    count = len(values) + np.random.laplace(0, 1 / eps_count)
    total = np.clip(values, lower, upper).sum() + np.random.laplace(0, (upper - lower) / eps_sum)
    return total / count
""",
    )

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        self._block(node.body)

    def visit_Module(self, node: cst.Module) -> None:
        self._block(node.body)

    def _block(self, statements: "tuple[cst.BaseStatement, ...] | list[cst.BaseStatement]") -> None:
        shares: dict[str, list[tuple[str, float, cst.Assign]]] = {}
        for statement in statements:
            if not isinstance(statement, cst.SimpleStatementLine):
                continue
            for small in statement.body:
                if not isinstance(small, cst.Assign) or len(small.targets) != 1:
                    continue
                target = dotted(small.targets[0].target)
                if target is None or not _EPS_NAME.match(_last(target)):
                    continue
                share = _share(small.value)
                if share is None or not 0 < share[1] < 1 or share[0] == target:
                    continue
                shares.setdefault(share[0], []).append((target, share[1], small))
        for budget, parts in shares.items():
            if len({target for target, _, _ in parts}) < 2:
                continue
            total = sum(fraction for _, fraction, _ in parts)
            if total <= 1 + 1e-9:
                continue
            fa = self.ctx.analysis
            listed = " + ".join(f"`{target}` = {fraction:.3g}·{budget}" for target, fraction, _ in parts)
            self.report(parts[-1][2].value,
                        f"the budget `{budget}` is split into constant shares that add up to {total:.3g} of it "
                        f"({listed}): by composition the parts spend {total:.3g}·{budget}, more than the "
                        f"{budget} promised; choose shares that sum to one or report the composed ε "
                        f"(line {fa.line_of(parts[0][2])} onwards)")
