"""DP314: a privacy budget divided by a fraction of itself (``eps / r`` for r in ratios) instead of multiplied."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import dotted, walk, words
from dpcheck.rule import Rule

#: a share of a whole: values in (0, 1] meant to sum to one
_FRACTION_WORDS = frozenset({"ratio", "ratios", "fraction", "fractions", "frac", "fracs", "proportion", "proportions",
                             "share", "shares", "portion", "portions", "percent", "percentage", "pct", "split",
                             "splits", "weight", "weights", "alloc", "allocation", "allocations"})
_BUDGET_WORDS = frozenset({"eps", "epsilon", "rho", "budget", "delta", "mu"})


def _budget(expr: cst.BaseExpression) -> bool:
    """``eps``, ``self.rho``, or a multiple of one (``2 * rho``)."""
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Multiply):
        return _budget(expr.left) or _budget(expr.right)
    name = dotted(expr)
    return name is not None and bool(words(name) & _BUDGET_WORDS) and not words(name) & {"lr", "tol", "adam"}


def _fraction_name(name: str | None) -> bool:
    # a count or a sum of the shares (``n_splits``, ``sum_weights``) normalises: ε / n is an equal split
    return name is not None and bool(words(name) & _FRACTION_WORDS) and not words(name) & {
        "decay", "lr", "loss", "sample", "sampling", "n", "num", "number", "count", "nb", "sum", "total"}


def _ast_budget(node: ast.AST) -> bool:
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        return _ast_budget(node.left) or _ast_budget(node.right)
    name = node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else ""
    return bool(words(name) & _BUDGET_WORDS)


def _ast_candidate(node: ast.BinOp) -> bool:
    return isinstance(node.op, ast.Div) and _ast_budget(node.left)


class BudgetDividedByFraction(Rule):
    id = "DP314"
    name = "budget-divided-by-fraction"
    category = "general"
    severity = "error"
    summary = "a budget split by dividing by each share (`eps / r` for r in ratios) hands out more than the budget"
    rationale = (
        "Splitting ε (or ρ) by shares r₁ + … + r_k = 1 gives each part ε·rᵢ. Dividing instead, "
        "ε/rᵢ, gives each part more than the whole: `partition([0.8, 0.2])` of ε = 2 hands out "
        "2.5 + 10 = 12.5, and a filter or odometer built on those parts admits queries far beyond "
        "the budget it was given. Reported: a budget-named value divided by a name that is a share "
        "(`ratio`, `fraction`, `proportion`, `weight`, `share`, …) — directly, a loop variable over a "
        "collection of shares, or an element of one. Not reported: multiplication by the share, "
        "division by a count (`eps / k`, `eps / len(ratios)`), normalisation by a total "
        "(`eps * w / sum(weights)`), code with no DP context. Fix: multiply by the share."
    )
    TRIGGERS = ("eps", "rho", "budget", "EPS")
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A division of a budget-named value in a module naming a share."""
        if not any(w in facts.source.lower() for w in ("ratio", "frac", "proportion", "share", "weight", "split",
                                                       "portion", "percent", "pct", "alloc")):
            return False
        return any(_ast_candidate(b) for b in facts.binops(ast.Div))

    VALID = (
        # equal splits and normalised weights
        "def plan(value_protection_epsilon, n_dp_splits, privacy_budget, budget_split_sum, w, i):\n"
        "    per_part = value_protection_epsilon / n_dp_splits\n"
        "    share = privacy_budget / budget_split_sum * w[i]\n"
        "    return per_part, share, laplace_mechanism(1.0, per_part)\n",
        # the shares multiply the budget
        """
class RenyiFilter:
    def __init__(self, alpha, eps):
        self.alpha, self.eps = alpha, eps
    def partition(self, ratios):
        assert abs(sum(ratios) - 1.0) < 1e-9
        return [RenyiFilter(self.alpha, self.eps * r) for r in ratios]
""",
        # an even split by the number of parts
        """
import numpy as np
def per_query(epsilon, ratios, answers, sens):
    eps_each = epsilon / len(ratios)
    return [a + np.random.laplace(0, sens / eps_each) for a in answers]
""",
        # normalised weights
        """
import numpy as np
def allocate(epsilon, weights):
    total = sum(weights)
    return [epsilon * w / total for w in weights]
""",
        # a learning-rate schedule in a DP module (not a budget)
        """
import numpy as np
def schedule(lr, decay_ratio, epsilon, steps):
    return [lr / decay_ratio ** t for t in range(steps)], np.random.laplace(0, 1 / epsilon)
""",
        # the divisor is a number of draws: clamped to the item count, looped over with range()
        """
import numpy as np
def pick(scores, epsilon, allocation, sens):
    if allocation >= len(scores):
        allocation = len(scores) - 1
    if allocation <= 0:
        allocation = 1
    out = []
    for _ in range(allocation):
        p = np.exp(epsilon / allocation * np.asarray(scores) / (2 * sens))
        out.append(np.random.choice(len(scores), p=p / p.sum()))
    return out
""",
    )

    INVALID = (
        # the same selection with a fractional allocation of the budget (never a count)
        """
import numpy as np
def pick(scores, epsilon, allocation, sens):
    assert 0 < allocation <= 1
    p = np.exp(epsilon / allocation * np.asarray(scores) / (2 * sens))  # <-
    return np.random.choice(len(scores), p=p / p.sum())
""",
        # a privacy filter's partition divides by each ratio
        """
class RenyiFilter:
    \"\"\"A differential-privacy filter: refuses queries beyond its epsilon.\"\"\"
    def __init__(self, alpha, eps):
        self.alpha, self.eps = alpha, eps
    def partition(self, ratios):
        assert abs(sum(ratios) - 1.0) < 1e-9
        out = []
        for r in ratios:
            out.append(RenyiFilter(self.alpha, self.eps / r))  # <-
        return out
""",
        # a comprehension over budget proportions
        """
import numpy as np
def split_budget(epsilon, proportions):
    return [epsilon / p for p in proportions]  # <-
""",
        # a marginal's budget is the total divided by its weight from a dict
        """
import numpy as np
def measure(data, marginals, epsilon, weights):
    return {m: data.project(m) + np.random.laplace(0, 1 / (2 * epsilon / weights[m])) for m in marginals}  # <-
""",
        # a named fraction of the budget
        """
import numpy as np
def release(hist, total_eps, selection_fraction):
    eps_select = total_eps / selection_fraction  # <-
    eps_measure = total_eps - eps_select
    return np.argmax(hist + np.random.gumbel(0, 2 / eps_select, hist.shape)), eps_measure
""",
    )

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        if not isinstance(node.operator, cst.Divide) or not _budget(node.left):
            return
        share = self._share(node.right)
        if share is None or not self.ctx.analysis.in_dp_context(node):
            return
        self.report(node, f"the budget `{self.ctx.analysis.code(node.left).strip()}` is divided by {share}: a share of the budget is "
                          "ε·r, and ε/r gives each part more than the whole (ratios 0.8 and 0.2 of ε = 2 hand out "
                          "2.5 + 10); multiply by the share")

    def _share(self, expr: cst.BaseExpression) -> str | None:
        """``r`` iterating ``ratios``, ``weights[m]``, ``selection_fraction``: a share, not a count."""
        if isinstance(expr, cst.Subscript):
            name = dotted(expr.value)
            return f"an element of `{name}`" if _fraction_name(name) else None
        name = dotted(expr)
        if name is None:
            return None
        if _fraction_name(name):
            return None if self._counts(expr) else f"the share `{name}`"
        if isinstance(expr, cst.Name):
            over = self._iterated(expr)
            if over is not None and _fraction_name(over):
                return f"`{name}`, each of the shares in `{over}`"
        return None

    def _counts(self, expr: cst.BaseExpression) -> bool:
        """The divisor plays a count in its function: ``range(allocation)``, clamped to ``len(...)`` or set
        to a whole number ≥ 1 (``allocation = 1``) — ε / k over k draws is an equal split, not a share."""
        fn = self.ctx.analysis.enclosing_function(expr)
        if fn is None:
            return False
        name = dotted(expr)
        for node in walk(fn):
            if isinstance(node, cst.Call) and dotted(node.func) == "range" and node.args \
                    and any(dotted(a.value) == name for a in node.args):
                return True
            if isinstance(node, cst.Comparison) and dotted(node.left) == name and any(
                    isinstance(c.comparator, cst.Call) and dotted(c.comparator.func) == "len"
                    for c in node.comparisons):
                return True
            if isinstance(node, cst.Assign) and any(dotted(t.target) == name for t in node.targets):
                v = node.value
                if isinstance(v, cst.Integer) and int(v.value, 0) >= 1:
                    return True
                if isinstance(v, cst.BinaryOperation) and isinstance(v.left, cst.Call) \
                        and dotted(v.left.func) == "len":
                    return True
        return False

    def _iterated(self, name: cst.Name) -> str | None:
        """The collection a loop or comprehension variable ``name`` runs over."""
        fa = self.ctx.analysis
        for anc in fa.ancestors(name):
            fors: list[tuple[cst.BaseExpression, cst.BaseExpression]] = []
            if isinstance(anc, cst.For):
                fors = [(anc.target, anc.iter)]
            elif isinstance(anc, (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)):
                comp = anc.for_in
                while comp is not None:
                    fors.append((comp.target, comp.iter))
                    comp = comp.inner_for_in
            for target, it in fors:
                if any(isinstance(n, cst.Name) and n.value == name.value for n in walk(target)):
                    return dotted(it) or (dotted(it.args[0].value) if isinstance(it, cst.Call) and it.args else None)
            if isinstance(anc, cst.FunctionDef):
                return None
        return None
