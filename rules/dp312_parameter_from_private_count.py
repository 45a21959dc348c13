"""DP312: a mechanism's structural parameter (grid size, bins, iterations) set from n·ε with the exact private n."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.clipping import ident
from dpcheck.analysis.syntax import call_name, dotted, number, walk, words
from dpcheck.rule import Rule

#: calls that turn ``n·ε`` into a count (grid cells, bins, iterations, depth)
_ROUNDING = frozenset({"int", "round", "ceil", "floor", "sqrt", "log", "log2", "log10", "cbrt", "max", "min"})
#: table look-ups that pick a parameter from a value (``np.interp(SEP, xs, rounds)``)
_LOOKUP = frozenset({"interp", "searchsorted", "digitize", "bisect", "bisect_left", "bisect_right"})
#: targets that are noise scales, not structure (a scale 1/(nε) is the sensitivity rule's business)
_SCALE_WORDS = frozenset({"scale", "sigma", "std", "noise", "b", "beta", "sensitivity", "sens", "lr", "rate",
                          "loss", "error", "err", "mse", "var", "variance"})
#: names that by convention hold the size of a domain (keys, categories, dimensions), not the record count
_DOMAIN_SIZE_NAMES = frozenset({"d", "D", "k", "K", "dim", "domain", "dims"})
_DOMAIN_WORDS = frozenset({"domain", "keys", "key", "categories", "category", "classes", "vocab", "features",
                           "columns", "attributes", "attrs", "dim", "dims", "dimension", "dimensions", "items",
                           "candidates", "labels", "bins", "cells"})
_NOT_PRIVATE = frozenset({"test", "val", "valid", "validation", "eval", "holdout", "public", "synthetic", "synth",
                          "fake", "generated", "noisy", "dp", "private", "priv", "max", "min", "bound"})


def _budget_name(name: str | None) -> bool:
    return name is not None and bool(words(name) & {"epsilon", "eps", "rho"}) and not words(name) & {"tol", "adam"}


def _ast_budget_product(node: ast.BinOp) -> bool:
    sides = (node.left, node.right)
    return isinstance(node.op, ast.Mult) and any(
        isinstance(s, (ast.Name, ast.Attribute)) and _budget_name(s.id if isinstance(s, ast.Name) else s.attr)
        for s in sides)


class ParameterFromPrivateCount(Rule):
    id = "DP312"
    name = "parameter-from-private-count"
    category = "general"
    severity = "error"
    summary = "a grid size, bin count or iteration count is computed from n·ε with n the exact private record count"
    rationale = (
        "Formulas from the literature size a mechanism from the number of records: uniform grids "
        "with m = √(N·ε/c) cells per side, k-means iterations or tree depth from log(n·ε), "
        "histogram bins from (n·ε)^(1/3). The papers take N as public or spend budget on a "
        "noisy N. Computed from `data.sum()`, `len(X)` or `X.shape[0]` of the private data, the "
        "parameter is a deterministic function of n: the released structure (how many cells, "
        "bins, iterations) differs between neighbouring data sets with probability one, outside "
        "the ε the mechanism spends. Reported: an assignment (not a noise scale) whose value rounds, "
        "takes a root or a log of, or bounds (`int`, `round`, `sqrt`, `log`, `max`) a product of "
        "the budget (ε, ρ) with a name holding the exact record count of data not named "
        "public/held-out/noisy — in the same assignment, or assigned alone (`SEP = Ntotal * epsilon`, "
        "`M = N * epsilon / c`) to a name the function then rounds, roots or looks up in a table "
        "(`int(np.interp(SEP, ...))`, `int(math.sqrt(n * m / M))`); `sum(sum(x))` counts too. Not reported: n·ε in a denominator (a noise scale), a public bound "
        "(`n_max`), a noisy count, code with no DP context. Fix: use a public bound on n, or a "
        "noisy N paid from the budget."
    )
    TRIGGERS = ("eps", "EPS", "rho")
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A product of a budget name with something, in a module reading a count (``len``, ``.shape``, ``.sum``)."""
        if not (facts.called & {"len", "sum", "size", "count_nonzero"} or ".shape" in facts.source):
            return False
        return any(_ast_budget_product(b) for b in facts.binops(ast.Mult))

    VALID = (
        # key-value LDP: d is the size of the key domain; the budget split is a formula in ε and d, not in n
        """
import math
def budget_split(key_table, reports, epsilon):
    n_users = len(reports)
    d = len(key_table)
    e2 = math.log(2 * d * math.exp(epsilon * d / 2) + 1)
    num_categories = len(key_table)
    levels = int(math.sqrt(num_categories * epsilon))
    return e2, levels
""",
        # the grid size from a noisy count
        """
import math
import numpy as np
def uniform_grid(data, epsilon, c=10):
    eps_n, eps_rest = 0.1 * epsilon, 0.9 * epsilon
    n_noisy = max(1.0, data.sum() + np.random.laplace(0, 1 / eps_n))
    m = int(math.sqrt(n_noisy * eps_rest / c))
    return m
""",
        # a Laplace scale 1/(n·ε) (the mean's noise, not a structure)
        """
import numpy as np
def dp_mean(x, epsilon, lower, upper):
    n = len(x)
    scale = (upper - lower) / (n * epsilon)
    return np.clip(x, lower, upper).mean() + np.random.laplace(0, scale)
""",
        # bins from a public bound on the number of records
        """
import numpy as np
def dp_histogram(x, epsilon, n_max=100000):
    bins = int((n_max * epsilon) ** (1 / 3))
    counts, edges = np.histogram(x, bins=bins)
    return counts + np.random.laplace(0, 1 / epsilon, bins), edges
""",
        # iterations from the budget alone
        """
import numpy as np
def dp_kmeans(X, k, epsilon):
    iters = max(2, int(np.log(epsilon * 100)))
    centers = X[:k]
    for _ in range(iters):
        centers = centers + np.random.laplace(0, 1 / epsilon, centers.shape)
    return centers
""",
        # (u39-2 twin: a public n / a noisy N; n·ε only printed)
        """
import numpy as np
class MWEMStar:
    def __init__(self, v_sep, v_round, n_public=100000):
        self._vSEP, self._vRound, self.n_public = v_sep, v_round, n_public
    def Run(self, Q, x, epsilon, seed):
        SEP = self.n_public * epsilon
        self._nrounds = int(np.interp(SEP, self._vSEP, self._vRound))
        return mwem(Q, x, epsilon, self._nrounds, seed)
""",
        # (u39-2 twin: a public n / a noisy N; n·ε only printed)
        """
import math
import numpy as np
def uniform_grid(x, epsilon, c=10):
    n, m = x.shape
    N = x.sum() + np.random.laplace(0, 10 / epsilon)
    M = (N * 0.9 * epsilon) / c
    signal = x.sum() * epsilon
    print("signal", signal)
    return int(math.sqrt(n * m / M) - 1) + 1
""",
    )

    INVALID = (
        # the twin: the number of users (the records) chooses the number of levels
        """
import math
def budget_split(key_table, reports, epsilon):
    n_users = len(reports)
    levels = int(math.sqrt(n_users * epsilon))  # <-
    return levels
""",
        # uniform grid: m = sqrt(N·ε/c) with N the exact number of points of the private histogram
        """
import math
import numpy as np
def uniform_grid(data, epsilon, c=10):
    N = data.sum()
    m = int(math.sqrt(N * epsilon / c))  # <-
    return m
""",
        # histogram bins from (n·ε)^(1/3), n = len of the private column (pandas)
        """
import numpy as np
import pandas as pd
def dp_histogram(df: pd.DataFrame, column, epsilon):
    n = len(df)
    bins = round((n * epsilon) ** (1 / 3))  # <-
    counts, edges = np.histogram(df[column], bins=bins)
    return counts + np.random.laplace(0, 1 / epsilon, bins), edges
""",
        # k-means iterations from the private sample count on the object
        """
import numpy as np
class DPKMeans:
    def __init__(self, k, epsilon):
        self.k, self.epsilon = k, epsilon
    def fit(self, X):
        n_samples = X.shape[0]
        self.n_iter_ = max(2, int(np.log(n_samples * self.epsilon)))  # <-
        return self
""",
        # tree depth from log2(n·ε) in torch
        """
import torch
def private_tree(points: torch.Tensor, eps: float):
    num_points = points.shape[0]
    depth = int(torch.log2(torch.tensor(num_points * eps)).item())  # <-
    return depth + torch.distributions.Laplace(0.0, 1 / eps).sample().item()
""",
        # (u39-2 from the misses (dpcomp): n·ε assigned, then rounded or looked up)
        """
import numpy as np
class MWEMStar:
    def __init__(self, v_sep, v_round):
        self._vSEP, self._vRound = v_sep, v_round
    def Run(self, Q, x, epsilon, seed):
        Ntotal = x.sum()
        SEP = Ntotal * epsilon  # <-
        self._nrounds = int(np.interp(SEP, self._vSEP, self._vRound))
        return mwem(Q, x, epsilon, self._nrounds, seed)
""",
        # (u39-2 from the misses (dpcomp): n·ε assigned, then rounded or looked up)
        """
import math
def uniform_grid(x, epsilon, c=10):
    n, m = x.shape
    N = x.sum()
    M = (N * epsilon) / c  # <-
    grid = int(math.sqrt(n * m / M) - 1) + 1
    return grid
""",
        # (u39-2 from the misses (dpcomp): n·ε assigned, then rounded or looked up)
        """
import math
def adaptive_grid(x, epsilon, c=10):
    N = sum(sum(x))
    m1 = int(math.sqrt(N * epsilon / c) / 4 - 1) + 1  # <-
    return max(m1, 10)
""",
    )

    def visit_Assign(self, node: cst.Assign) -> None:
        if len(node.targets) != 1:
            return
        name = dotted(node.targets[0].target) or ident(node.targets[0].target)
        if name is None or words(name) & _SCALE_WORDS:
            return
        for sub in walk(node.value):
            if not (isinstance(sub, cst.BinaryOperation) and isinstance(sub.operator, cst.Multiply)):
                continue
            sides = (sub.left, sub.right)
            budget = [s for s in sides if isinstance(s, (cst.Name, cst.Attribute)) and _budget_name(ident(s))]
            if not budget:
                continue
            other = sides[1] if budget[0] is sides[0] else sides[0]
            size = self._private_count(other)
            if size is None or self._in_denominator(sub, node.value):
                continue
            if not self._rounded(sub, node.value) and not self._rounded_later(node, sub):
                continue
            if not self.ctx.analysis.in_dp_context(node):
                return
            self.report(node, f"`{name}` is computed from `{self.ctx.analysis.code(sub).strip()}` with {size}, the exact "
                              "private record count: the mechanism's structure (cells, bins, iterations) is then a "
                              "function of n and differs between neighbouring data sets outside the budget; use a "
                              "public bound on n or a noisy count")
            return

    def _rounded(self, product: cst.CSTNode, value: cst.BaseExpression) -> bool:
        """``product`` lies inside ``int``/``round``/``sqrt``/``log``/``max`` or a power (``(nε) ** (1/3)``)."""
        for anc in self.ctx.analysis.ancestors(product):
            if isinstance(anc, cst.Call) and call_name(anc) in _ROUNDING:
                return True
            if isinstance(anc, cst.BinaryOperation) and isinstance(anc.operator, cst.Power):
                return True
            if anc is value:
                break
        return isinstance(value, cst.Call) and call_name(value) in _ROUNDING

    def _rounded_later(self, node: cst.Assign, product: cst.BinaryOperation) -> bool:
        """``SEP = N * epsilon`` (alone, or scaled: ``M = old_div(N * epsilon, c)``) assigned to a name that
        the same function then rounds, roots or looks up in a table (``int(np.interp(SEP, ...))``,
        ``int(math.sqrt(n * m / M))``): the structure is chosen from n·ε one statement later."""
        target = node.targets[0].target
        if not isinstance(target, cst.Name):
            return False
        value = node.value
        while isinstance(value, cst.Call) and call_name(value) in ("old_div", "float", "div", "true_divide") \
                and value.args:
            value = value.args[0].value
        if value is not product and not (isinstance(value, cst.BinaryOperation) and value.left is product
                                         and isinstance(value.operator, (cst.Divide, cst.Multiply))):
            return False
        fa = self.ctx.analysis
        scope = fa.enclosing_function(node) or self.ctx.module
        line = fa.line_of(node)
        for sub in walk(scope, into_scopes=False):
            if isinstance(sub, cst.Name) and sub.value == target.value and fa.line_of(sub) > line \
                    and fa.binding(sub) is not None and fa.binding(sub).target is target:
                for anc in fa.ancestors(sub):
                    if isinstance(anc, cst.Call) and call_name(anc) in _ROUNDING | _LOOKUP:
                        return True
                    if isinstance(anc, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
                        break
        return False

    def _in_denominator(self, product: cst.CSTNode, value: cst.BaseExpression) -> bool:
        child: cst.CSTNode = product
        for anc in self.ctx.analysis.ancestors(product):
            if isinstance(anc, cst.BinaryOperation) and isinstance(anc.operator, (cst.Divide, cst.FloorDivide)) \
                    and anc.right is child:
                return True
            if anc is value:
                break
            child = anc
        return False

    def _private_count(self, expr: cst.BaseExpression) -> str | None:
        count = self._count_expr(expr)
        if count is not None:
            return count
        if isinstance(expr, cst.Name):
            if expr.value in _DOMAIN_SIZE_NAMES or words(expr.value) & _DOMAIN_WORDS:
                return None  # ``d = len(true_count)``: the size of a key or category domain, not of the records
            scope = self.ctx.analysis.enclosing_function(expr) or self.ctx.module
            found = None
            for sub in walk(scope, into_scopes=False):
                if isinstance(sub, cst.Assign) and len(sub.targets) == 1 \
                        and isinstance(sub.targets[0].target, cst.Name) and sub.targets[0].target.value == expr.value:
                    origin = self._count_expr(sub.value)
                    if origin is None:
                        return None
                    found = f"`{expr.value}` = {origin}"
            return found
        return None

    def _count_expr(self, expr: cst.BaseExpression) -> str | None:
        """``len(X)``, ``X.shape[0]``, ``np.size(X)``, ``data.sum()`` of data not named public/noisy."""
        data: cst.BaseExpression | None = None
        if isinstance(expr, cst.Call) and call_name(expr) in ("len", "size") and expr.args \
                and (call_name(expr) == "len" or isinstance(expr.func, cst.Attribute)):
            data = expr.args[0].value
        elif isinstance(expr, cst.Call) and call_name(expr) in ("sum", "count_nonzero") and not expr.args \
                and isinstance(expr.func, cst.Attribute):
            data = expr.func.value
        elif isinstance(expr, cst.Call) and call_name(expr) == "sum" and len(expr.args) == 1 \
                and isinstance(expr.args[0].value, cst.Call) and call_name(expr.args[0].value) == "sum" \
                and len(expr.args[0].value.args) == 1:
            data = expr.args[0].value.args[0].value  # ``sum(sum(x))``: the total of a 2-D histogram
        elif isinstance(expr, cst.Subscript) and isinstance(expr.value, cst.Attribute) \
                and expr.value.attr.value == "shape" and len(expr.slice) == 1:
            index = expr.slice[0].slice
            if isinstance(index, cst.Index) and number(index.value) == 0:
                data = expr.value.value
        if data is None:
            return None
        name = dotted(data)
        if name is None or words(name) & _NOT_PRIVATE:
            return None
        return f"`{self.ctx.analysis.code(expr).strip()}`"
