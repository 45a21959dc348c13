"""DP123: noise sized for a bounded input added to an aggregate (sum, mean, Xᵀy) of data that nothing bounds."""
from __future__ import annotations

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.dataindex import identifiers

from dpcheck.analysis.syntax import call_name, dotted, number, param_names, scope_assignments, walk, words
from dpcheck.rule import Rule

#: called names that draw noise
_DRAWS = frozenset({"laplace", "Laplace", "normal", "Normal", "gauss", "gaussian", "randn", "standard_normal",
                    "normalvariate", "standard_cauchy"})
#: a distribution object's draw (``Laplace(0, b).sample(shape)``)
_SAMPLE = frozenset({"sample", "rsample"})
#: aggregates whose sensitivity depends on the range of each record
_AGGREGATES = frozenset({"mean", "std", "var", "nanmean", "nanstd", "nanvar", "average", "cov"})
#: products whose two operands must both be data (``X.T @ y``; ``A @ x`` with a query matrix ``A`` is a
#: histogram query, whose sensitivity is the matrix's, not the records')
_PRODUCTS = frozenset({"matmul", "dot", "inner", "mm", "bmm"})
#: calls that bound their argument (clipping, clamping, squashing, normalising)
_BOUND_CALLS = frozenset({"clip", "clamp", "clip_", "clamp_", "minimum", "maximum", "min", "max", "tanh",
                          "sigmoid", "softmax", "where", "sign", "round", "rint", "floor", "ceil", "digitize",
                          "searchsorted", "cut", "qcut", "histogram", "bincount", "unique", "value_counts",
                          "get_dummies", "one_hot", "argmax", "argmin", "isnan", "isna", "notna", "count_nonzero"})
_BOUND_WORDS = frozenset({"clip", "clamp", "normalize", "normalise", "normalized", "normalised", "bound", "bounded",
                          "truncate", "project", "scale", "scaler", "rescale", "standardize", "standardise", "squash",
                          "winsorize", "quantize", "discretize", "encode", "binarize"})
#: conversions that keep the values as they are
_CONVERSIONS = frozenset({"asarray", "array", "tensor", "as_tensor", "to_numpy", "copy", "astype", "float",
                          "from_numpy", "values", "reshape", "flatten", "ravel", "squeeze", "unsqueeze", "view",
                          "to", "double", "cpu", "detach", "atleast_2d", "column_stack", "hstack", "vstack"})
_BUDGET = frozenset({"eps", "epsilon", "epsilons", "rho", "budget"})
#: parameter words that are knobs, not data
_KNOBS = frozenset({"eps", "epsilon", "delta", "rho", "budget", "sensitivity", "sens", "bound", "bounds", "clip",
                    "norm", "lr", "seed", "rng", "sigma", "scale", "size", "shape", "axis", "dim", "n", "k", "d",
                    "noise", "lam", "lamda", "lambda", "alpha", "beta", "weights", "weight", "w", "theta", "params",
                    "model", "mask", "mu", "self", "cls"})


def _names(node: cst.CSTNode) -> set[str]:
    return {d for n in walk(node) if isinstance(n, (cst.Name, cst.Attribute)) and (d := dotted(n)) is not None}


def _last(call: cst.Call) -> str:
    return call_name(call).split(".")[-1]


def _strip(expr: cst.BaseExpression) -> cst.BaseExpression:
    """``-2 * agg``, ``agg / 3``, ``(agg)``: the aggregate itself."""
    while True:
        if isinstance(expr, cst.UnaryOperation):
            expr = expr.expression
        elif isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, (cst.Multiply, cst.Divide)) \
                and number(expr.left) is not None:
            expr = expr.right
        elif isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, (cst.Multiply, cst.Divide)) \
                and number(expr.right) is not None:
            expr = expr.left
        else:
            return expr


class UnboundedAggregateNoised(Rule):
    id = "DP123"
    name = "unbounded-aggregate-noised"
    category = "general"
    severity = "error"
    summary = ("noise calibrated to ε is added to a sum / mean / Xᵀy of data that nothing in the module clips, "
               "clamps or normalises: the sensitivity the noise assumes is never enforced")
    rationale = (
        "A noisy sum, mean, covariance or sufficient statistic (ADASSP's XᵀX and Xᵀy, the Functional Mechanism's "
        "polynomial coefficients, a DP mean of a column) is ε-DP only if every record lies in the range its "
        "sensitivity was derived from (‖x‖ ≤ 1, |y| ≤ 1, [lo, hi]). When the function aggregates its input as "
        "given and nothing in the module clips, clamps, squashes or normalises that input, one outlying record "
        "moves the statistic by more than the noise covers and the guarantee fails. Reported: a draw whose scale "
        "involves the budget, added to an aggregate of a parameter (or an attribute) of the function, in a module "
        "with no clipping of any kind and no bound, assert or normalisation applied to that input. Not reported: "
        "counts of indicators (a comparison inside the aggregate), inputs rebuilt by a call before the aggregate, "
        "modules that clip anything. Fix: clip each record to the assumed bound (np.clip, per-row norm scaling) "
        "before aggregating, or derive the sensitivity from bounds that are enforced."
    )
    TRIGGERS = ("aplace", "normal", "randn", "gauss", "Normal")
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding needs a draw (a call named like one, or a helper named for noise)."""
        return facts.calls_any(_DRAWS) or any("noise" in words(n) for n in facts.called)

    VALID = (
        # the rows are scaled to norm at most 1 first
        """
import numpy as np
def private_xty(X, y, epsilon):
    X = X / np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True))
    y = np.clip(y, -1, 1)
    return X.T @ y + np.random.laplace(0, 2.0 / epsilon, X.shape[1])
""",
        # a bound check on the input
        """
import numpy as np
def dp_mean(values, epsilon):
    assert (values >= 0).all() and (values <= 1).all()
    return np.mean(values) + np.random.laplace(0, 1.0 / (len(values) * epsilon))
""",
        # a count of indicators has sensitivity 1 whatever the data
        """
import numpy as np
def noisy_count(labels, k, epsilon):
    return np.sum(labels == k) + np.random.laplace(0, 1.0 / epsilon)
""",
        # the module clips elsewhere (the caller bounds the column)
        """
import numpy as np
def prepare(col, lo, hi):
    return np.clip(col, lo, hi)
def dp_sum(col, epsilon, hi):
    return np.sum(col) + np.random.laplace(0, hi / epsilon)
""",
        # noise not tied to a budget (a simulation's error term)
        """
import numpy as np
def simulate(X, beta, noise_sd):
    return X @ beta + np.random.normal(0, noise_sd, len(X))
""",
        # torch: the features are squashed with tanh before the moment matrix
        """
import torch
class Objective:
    def __init__(self, x, y, epsilon):
        x = torch.tanh(x)
        y = torch.tanh(y)
        self.coef = torch.matmul(y, x)
        self.coef += torch.distributions.Laplace(0.0, 4.0 / epsilon).sample(self.coef.shape)
""",
        # a histogram query: a query matrix times the data vector (the matrix's sensitivity, not the records')
        """
import numpy as np
class Strategy:
    def __init__(self, counts, eps):
        self.counts = counts
        self.eps = eps
    def answer(self, Q):
        return Q.dot(self.counts) + np.random.laplace(0, np.abs(Q).sum(axis=0).max() / self.eps, Q.shape[0])
""",
        # an input check that returns early
        """
import numpy as np
def dp_mean(vec, epsilon):
    if any(vec < 0.0) or any(vec > 1.0):
        return None
    return np.mean(vec) + np.random.laplace(0, 1.0 / (len(vec) * epsilon))
""",
    )
    INVALID = (
        # sufficient statistics released with noise that assumes unit-norm rows
        """
import numpy as np
def noisy_statistics(A, b, eps, delta):
    bound = 1.0
    Atb = A.T @ b  # <-
    scale = np.sqrt(2 * np.log(1.25 / delta)) * bound ** 2 / eps
    return Atb + scale * np.random.randn(A.shape[1])
""",
        # a column mean of a frame, the noise from a helper taking the budget
        """
import numpy as np
def draw(epsilon, sens):
    return np.random.laplace(0, sens / epsilon)
def release_means(frame, columns, epsilon, span):
    out = {}
    for c in columns:
        out[c] = np.mean(frame[c]) + draw(epsilon, span / len(frame))  # <-
    return out
""",
        # a torch objective's coefficient from the raw inputs, noise through a distribution object
        """
import torch
class PerturbedLoss:
    def __init__(self, feats, target, budget):
        self.linear = -2 * torch.matmul(target, feats)  # <-
        width = 2 * (feats.shape[1] + 1) ** 2 / budget
        dist = torch.distributions.Laplace(0.0, width)
        self.linear += dist.sample(self.linear.shape)
""",
        # per-cluster sums of an attribute's rows, noised coordinate-wise
        """
import numpy as np
class Clusterer:
    def __init__(self, points, epsilon, radius):
        self.points = points
        self.epsilon = epsilon
        self.radius = radius
    def centres(self, groups):
        out = []
        for ids in groups:
            total = self.points[ids].mean(axis=0)  # <-
            out.append(total + np.random.normal(0, self.radius / self.epsilon, total.shape))
        return out
""",
    )

    def visit_Module(self, node: cst.Module) -> None:
        self._bounded: set[str] = set()
        self._clips = False
        self._reported: set[cst.CSTNode] = set()
        #: the module's own functions that draw noise (``def draw(eps, sens): return laplace(0, sens / eps)``)
        self._samplers = {sub.name.value for sub in walk(node) if isinstance(sub, cst.FunctionDef) and any(
            isinstance(c, cst.Call) and _last(c) in _DRAWS for c in walk(sub))}
        for sub in walk(node):
            if isinstance(sub, cst.Call):
                last = _last(sub)
                if words(last) & {"clip", "clamp"}:
                    self._clips = True
                if last in _BOUND_CALLS or words(call_name(sub)) & _BOUND_WORDS:
                    for arg in sub.args:
                        self._bounded |= identifiers(arg.value)
                    if isinstance(sub.func, cst.Attribute):
                        self._bounded |= identifiers(sub.func.value)
            elif isinstance(sub, cst.Assert):
                self._bounded |= identifiers(sub.test)
            elif isinstance(sub, cst.If) and any(isinstance(n, cst.Comparison) for n in walk(sub.test)) \
                    and any(isinstance(n, (cst.Raise, cst.Return)) for n in walk(sub.body)):
                self._bounded |= identifiers(sub.test)
            elif isinstance(sub, cst.BinaryOperation) and isinstance(sub.operator, cst.Divide):
                left = sub.left
                if isinstance(left, cst.BinaryOperation) and isinstance(left.operator, cst.Subtract):
                    left = left.left
                if isinstance(left, (cst.Name, cst.Attribute, cst.Subscript)):
                    self._bounded |= identifiers(left)

    # -- per function ---------------------------------------------------------------------------------------
    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if self._clips:
            return
        self._fn = node
        self._params = set(param_names(node)) - {"self", "cls"}
        self._assigns = scope_assignments(node, self.ctx.analysis.line_of)
        for sub in walk(node, into_scopes=False):
            if isinstance(sub, cst.BinaryOperation) and isinstance(sub.operator, cst.Add):
                for data, noise in ((sub.left, sub.right), (sub.right, sub.left)):
                    if self._check(sub, data, noise):
                        break
            elif isinstance(sub, cst.AugAssign) and isinstance(sub.operator, cst.AddAssign):
                self._check(sub, sub.target, sub.value)

    def _value(self, name: str, line: int) -> cst.BaseExpression | None:
        found = None
        for at, target, value in self._assigns:
            if target == name and at <= line and (found is None or at >= found[0]):
                found = (at, value)
        return found[1] if found else None

    def _closure(self, expr: cst.CSTNode, line: int) -> set[str]:
        """Names in ``expr`` and in the values they were last assigned in the function (three levels)."""
        out = _names(expr)
        frontier = set(out)
        for _ in range(3):
            new: set[str] = set()
            for name in frontier:
                value = self._value(name, line)
                if value is not None:
                    new |= _names(value) - out
            out |= new
            frontier = new
        return out

    def _budgeted(self, expr: cst.CSTNode, line: int) -> bool:
        return any(words(x.split(".")[-1]) & _BUDGET for x in self._closure(expr, line))

    def _noise(self, expr: cst.BaseExpression, line: int, depth: int = 0) -> bool:
        """A draw (or a name bound to one) whose scale, followed through the function's assignments, names
        the budget; or a noise helper given the budget."""
        if isinstance(expr, cst.Name) and depth == 0:
            value = self._value(expr.value, line)
            if value is not None and self._noise(value, line, 1):
                return True
        for n in walk(expr):
            if not isinstance(n, cst.Call):
                continue
            last = _last(n)
            source: cst.CSTNode = n
            draw = last in _DRAWS
            if last in _SAMPLE and isinstance(n.func, cst.Attribute):
                recv = n.func.value
                made = self._value(name, line) if (name := dotted(recv)) else None
                if isinstance(recv, cst.Call) and _last(recv) in _DRAWS:
                    draw = True
                elif isinstance(made, cst.Call) and _last(made) in _DRAWS:
                    draw, source = True, made
            if draw and (self._budgeted(source, line) or self._budgeted(expr, line)):
                return True
            if not draw and ("noise" in words(last) or last in self._samplers) and any(
                    words(x.split(".")[-1]) & _BUDGET for a in n.args for x in _names(a.value)):
                return True
        return False

    def _aggregate(self, expr: cst.BaseExpression, line: int) -> tuple[cst.CSTNode, set[str]] | None:
        for _ in range(3):
            expr = _strip(expr)
            if isinstance(expr, cst.Subscript):
                expr = expr.value
                continue
            if isinstance(expr, (cst.Name, cst.Attribute)):
                name = dotted(expr)
                value = self._value(name, line) if name else None
                if value is None:
                    return None
                expr = value
                continue
            break
        if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.MatrixMultiply):
            return self._product(expr, [expr.left, expr.right], line)
        if isinstance(expr, cst.Call) and _last(expr) in _PRODUCTS:
            operands: list[cst.CSTNode] = [a.value for a in expr.args if a.keyword is None]
            if isinstance(expr.func, cst.Attribute) and _last(expr) == "dot":
                operands.insert(0, expr.func.value)
            return self._product(expr, operands[:2], line)
        if isinstance(expr, cst.Call) and _last(expr) in _AGGREGATES:
            parts: list[cst.CSTNode] = [a.value for a in expr.args if a.keyword is None]
            if isinstance(expr.func, cst.Attribute) and not isinstance(expr.func.value, cst.Name) \
                    or isinstance(expr.func, cst.Attribute) and dotted(expr.func.value) in self._params:
                parts.append(expr.func.value)
            roots: set[str] = set()
            for part in parts:
                roots |= self._data_roots(part, line)
            return expr, roots
        return None

    def _product(self, expr: cst.CSTNode, operands: list[cst.CSTNode], line: int) -> tuple[cst.CSTNode, set[str]] | None:
        per = [self._data_roots(o, line) for o in operands]
        if len(per) < 2 or not all(per):
            return None
        return expr, set().union(*per)

    def _data_roots(self, expr: cst.CSTNode, line: int) -> set[str]:
        """Parameters (or ``self`` attributes not set in this function) the aggregate reads as they came in."""
        if any(isinstance(n, (cst.Comparison, cst.Lambda)) for n in walk(expr)):
            return set()  # a count of indicators
        roots = set()
        for n in walk(expr):
            if isinstance(n, cst.Name) and n.value in self._params:
                name = n.value
            elif isinstance(n, cst.Attribute) and dotted(n.value) == "self":
                name = n.attr.value
                if self._value(f"self.{name}", line) is not None:
                    continue
            else:
                continue
            if words(name) & _KNOBS or name in _KNOBS:
                continue
            if self._rebuilt(n, line):
                continue
            roots.add(name)
        return roots

    def _rebuilt(self, ref: cst.CSTNode, line: int) -> bool:
        """The input was reassigned before the aggregate from something other than a plain conversion."""
        name = dotted(ref)
        value = self._value(name, line) if name else None
        if value is None:
            return False
        return not all(_last(c) in _CONVERSIONS for c in walk(value) if isinstance(c, cst.Call)) \
            or not any(isinstance(c, cst.Call) for c in walk(value)) and not isinstance(value, (cst.Name, cst.Attribute))

    def _check(self, site: cst.CSTNode, data: cst.BaseExpression, noise: cst.BaseExpression) -> bool:
        line = self.ctx.analysis.line_of(site)
        if not self._noise(noise, line):
            return False
        found = self._aggregate(data, line)
        if found is None:
            return False
        agg, roots = found
        free = sorted(r for r in roots if r not in self._bounded)
        if not free or len(free) < len(roots):
            return False
        if agg in self._reported:
            return True
        self._reported.add(agg)
        names = ", ".join(f"`{r}`" for r in free)
        self.report(
            agg,
            f"`{self.ctx.analysis.code(agg).strip()[:60]}` aggregates {names} as given and gets noise calibrated to "
            f"the budget (line {line}), and nothing in this module clips, clamps or normalises {names}: the "
            "sensitivity the noise is sized for assumes a bound on each record that is never enforced; clip "
            "each record to that bound before aggregating",
        )
        return True
