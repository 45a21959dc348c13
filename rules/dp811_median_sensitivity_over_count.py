"""DP811: the sensitivity of a median (or another order statistic) is taken as the data range divided by the
number of records, as if it were a mean."""
from __future__ import annotations

import ast
import re

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, dotted, walk, words
from dpcheck.rule import Rule

#: words naming an order statistic (its global sensitivity does not shrink with n)
_ORDER_WORDS = frozenset({"median", "percentile", "quantile", "iqr"})
#: words of a name that holds a data range (the numerator)
_RANGE_WORDS = frozenset({"range", "span", "width", "spread", "diameter"})
#: words of a name holding the number of records (the denominator)
_COUNT_WORDS = frozenset({"n", "count", "size", "num", "rows", "records", "samples", "length", "total"})
_COUNT_CALLS = frozenset({"len", "count", "size", "shape"})
#: words of a function or a target that computes a sensitivity
_SENS_WORDS = frozenset({"sensitivity", "sensitivities", "sens", "sensitiviy"})
_TEXT = re.compile(r"(?i)median|percentile|quantile")


def _text_words(node: cst.CSTNode) -> set[str]:
    """Words of the names, attributes and string constants of ``node``."""
    out: set[str] = set()
    for n in walk(node):
        if isinstance(n, cst.Name):
            out |= words(n.value)
        elif isinstance(n, cst.SimpleString):
            value = n.evaluated_value
            if isinstance(value, str):
                out |= words(value)
    return out


def _is_range(expr: cst.BaseExpression) -> bool:
    """``range_val``, ``hi - lo``, ``upper - lower``, ``max(x) - min(x)``, ``bounds[1] - bounds[0]``."""
    if isinstance(expr, (cst.Name, cst.Attribute)):
        return bool(words((dotted(expr) or "").split(".")[-1]) & _RANGE_WORDS)
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Subtract):
        return not isinstance(expr.left, (cst.Integer, cst.Float)) and not isinstance(expr.right, (cst.Integer, cst.Float))
    return False


def _is_count(expr: cst.BaseExpression) -> bool:
    """``n``, ``len(data)``, ``max(n, 1)``, ``max(n / 2, 1)``, ``n_rows``, ``df.shape[0]``."""
    for n in walk(expr):
        if isinstance(n, cst.Call) and call_name(n) in _COUNT_CALLS - {"shape"}:
            return True
        if isinstance(n, cst.Attribute) and n.attr.value in ("shape", "size"):
            return True
        if isinstance(n, cst.Name) and n.value not in ("max", "min", "float", "int") \
                and (n.value == "n" or words(n.value) & _COUNT_WORDS and words(n.value) & {"n", "count", "num", "rows",
                                                                                           "records", "samples"}):
            return True
    return False


def _range_over_count(expr: cst.BaseExpression) -> bool:
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Divide):
        return _is_range(expr.left) and _is_count(expr.right)
    return False


class MedianSensitivityOverCount(Rule):
    id = "DP811"
    name = "median-sensitivity-over-count"
    category = "laplace_noise"
    severity = "error"
    summary = ("the sensitivity of a median (percentile, quantile) is the data range divided by the number of "
               "records, as for a mean")
    rationale = (
        "A mean of n values bounded in [lo, hi] moves by at most (hi - lo)/n when one record changes, but an order "
        "statistic does not: replacing one record can move the median from one order statistic to its neighbour, "
        "and the gap between two neighbours can be the whole range (half the records at lo, half at hi). Its "
        "global sensitivity is (hi - lo) (or half of it for a midpoint median), whatever n is. Calibrating the "
        "Laplace or Gaussian noise of a median to range/n, range/(n/2) or similar makes the noise n times too "
        "small, so the claimed ε does not hold. Reported: in a branch selected by a median/percentile/quantile "
        "test (`elif agg == AggType.MEDIAN:`, `if stat == \"median\":`), or under a `\"median\"` key of a "
        "sensitivity table, a `return` or a sensitivity assignment whose value is a range (`range_val`, "
        "`hi - lo`) divided by a record count (`n`, `len(data)`, `max(n / 2, 1)`), in a function or a target "
        "named for sensitivity. Bad: `elif f == MEDIAN: return rng / max(n / 2, 1)`. Good: `return rng` or a "
        "DP quantile mechanism (exponential mechanism over the sorted values). Fix: use the full range as the "
        "median's sensitivity, or release it with an exponential-mechanism quantile."
    )
    TRIGGERS = ("median", "percentile", "quantile", "MEDIAN")
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding needs a division and a name or a string speaking of sensitivity."""
        if not facts.binops(ast.Div):
            return False
        for node in facts.nodes(ast.FunctionDef, ast.AsyncFunctionDef):
            if "sensitiv" in node.name.lower() or "sens" in node.name.lower().split("_"):  # type: ignore[attr-defined]
                return True
        for node in facts.nodes(ast.Name):
            if "sensitiv" in node.id.lower():  # type: ignore[attr-defined]
                return True
        return False

    def visit_Module(self, node: cst.Module) -> None:
        self._functions: list[cst.FunctionDef] = []
        self._targets: list[bool] = []

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._functions.append(node)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self._functions.pop()

    def _sensitivity_function(self) -> bool:
        return bool(self._functions) and bool(words(self._functions[-1].name.value) & _SENS_WORDS)

    def visit_If(self, node: cst.If) -> None:
        if not _TEXT.search(self.ctx.module.code_for_node(node.test)) or not _text_words(node.test) & _ORDER_WORDS:
            return
        for stmt in node.body.body:
            if not isinstance(stmt, cst.SimpleStatementLine):
                continue
            for small in stmt.body:
                if isinstance(small, cst.Return) and small.value is not None and self._sensitivity_function() \
                        and _range_over_count(small.value):
                    self._flag(small.value)
                elif isinstance(small, cst.Assign) and _range_over_count(small.value) and any(
                        words(dotted(t.target) or "") & _SENS_WORDS or self._sensitivity_function()
                        for t in small.targets):
                    self._flag(small.value)

    def visit_Assign(self, node: cst.Assign) -> None:
        self._targets.append(any(words(dotted(t.target) or "") & _SENS_WORDS for t in node.targets))

    def leave_Assign(self, original_node: cst.Assign) -> None:
        self._targets.pop()

    def visit_Dict(self, node: cst.Dict) -> None:
        if not self._sensitivity_function() and not (self._targets and self._targets[-1]):
            return
        for el in node.elements:
            if isinstance(el, cst.DictElement) and isinstance(el.key, cst.SimpleString) \
                    and isinstance(el.key.evaluated_value, str) and words(el.key.evaluated_value) & _ORDER_WORDS \
                    and _range_over_count(el.value):
                self._flag(el.value)

    def _flag(self, value: cst.BaseExpression) -> None:
        self.report(
            value,
            f"`{self.ctx.module.code_for_node(value)}` is used as the sensitivity of a median/quantile: dividing the "
            "range by the record count is the sensitivity of a mean; one record can move an order statistic by up "
            "to the whole range, so the noise is about n times too small for the claimed ε. Use the full range "
            "(or a DP quantile mechanism)",
        )

    VALID = (
        # twin of the aggregation table: the median's sensitivity is the whole range, the mean's range / n
        """
def aggregation_sensitivity(func, bounds, n, epsilon):
    lo, hi = bounds
    range_val = hi - lo
    if func == "count":
        return 1.0
    elif func == "mean":
        return range_val / max(n, 1)
    elif func == "median":
        return range_val
    return range_val
""",
        # twin of the enum spelling: the median branch returns the range itself
        """
import numpy as np
class Stat:
    MEAN = "mean"
    MEDIAN = "median"
def compute_sensitivity(stat, lower, upper, n_records, epsilon):
    if stat == Stat.MEAN:
        return (upper - lower) / n_records
    elif stat == Stat.MEDIAN:
        return upper - lower
def release(values, stat, lower, upper, epsilon):
    s = compute_sensitivity(stat, lower, upper, len(values), epsilon)
    return np.median(np.clip(values, lower, upper)) + np.random.laplace(0, s / epsilon)
""",
        # a median branch that is not a sensitivity: the robust scale of a loss (ordinary ML)
        """
import numpy as np
def robust_scale(residuals, kind="median"):
    if kind == "median":
        spread = np.max(residuals) - np.min(residuals)
        return spread / len(residuals)
    return np.std(residuals)
""",
        # the per-record table: a mean's sensitivity keyed "mean" only
        """
def laplace_sensitivity_table(lo, hi, n, epsilon):
    return {"count": 1.0, "sum": hi - lo, "mean": (hi - lo) / n, "median": hi - lo}
""",
    )

    INVALID = (
        # the aggregation table gives the median half a mean's sensitivity
        """
def aggregation_sensitivity(func, bounds, n, epsilon):
    lo, hi = bounds
    range_val = hi - lo
    if func == "count":
        return 1.0
    elif func == "mean":
        return range_val / max(n, 1)
    elif func == "median":
        return range_val / max(n / 2, 1)  # <-
    return range_val
""",
        # enum spelling: the median branch divides the bounds' span by the number of records
        """
import numpy as np
class Stat:
    MEAN = "mean"
    MEDIAN = "median"
def compute_sensitivity(stat, lower, upper, n_records, epsilon):
    if stat == Stat.MEAN:
        return (upper - lower) / n_records
    elif stat == Stat.MEDIAN:
        return (upper - lower) / n_records  # <-
def release(values, stat, lower, upper, epsilon):
    s = compute_sensitivity(stat, lower, upper, len(values), epsilon)
    return np.median(np.clip(values, lower, upper)) + np.random.laplace(0, s / epsilon)
""",
        # a sensitivity assigned in a percentile branch of a release function
        """
import numpy as np
def release_stat(values, stat, lo, hi, epsilon):
    clipped = np.clip(values, lo, hi)
    if stat in ("median", "percentile"):
        sensitivity = (hi - lo) / len(clipped)  # <-
        value = np.median(clipped)
    else:
        sensitivity = (hi - lo) / len(clipped)
        value = clipped.mean()
    return value + np.random.laplace(0, sensitivity / epsilon)
""",
        # a sensitivity table keyed by statistic
        """
def laplace_sensitivity_table(lo, hi, n, epsilon):
    return {"count": 1.0, "sum": hi - lo, "mean": (hi - lo) / n, "median": (hi - lo) / n}  # <-
""",
    )
