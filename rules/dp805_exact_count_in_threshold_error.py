"""DP805: a minimum-group-size (cohort, k) check on an exact record count puts that count into the error (or the
error response) it returns to the caller."""
from __future__ import annotations

import ast
import re

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import dotted, walk, words

#: words of a threshold that suppresses small groups
_THRESHOLD_WORDS = frozenset({"min", "minimum", "threshold", "cohort", "anonymity", "suppression", "floor"})
#: words of a name holding an exact number of records
_COUNT_WORDS = frozenset({"count", "n", "size", "cohort", "rows", "records", "num", "total", "population",
                          "members", "users", "patients"})
_NOISY_WORDS = frozenset({"noisy", "dp", "private", "noised", "perturbed", "sanitized", "released", "estimate"})
_COUNT_CALLS = frozenset({"len", "count", "size", "nunique"})
_TEXT = re.compile(r"(?i)min|threshold|cohort|anonym|suppress|floor|\bk\b")

from dpcheck.rule import Rule  # noqa: E402


def _name_words(expr: cst.BaseExpression) -> frozenset[str]:
    text = dotted(expr)
    return words(text.split(".")[-1]) if text else frozenset()


#: thresholds of a numerical procedure (a test's number of draws, iterations), not of a group size
_PROCEDURE_WORDS = frozenset({"draws", "draw", "iterations", "iters", "steps", "epochs", "batches", "samples",
                              "trials", "runs", "bins", "features", "dims", "dim"})


def _is_threshold(expr: cst.BaseExpression) -> bool:
    w = _name_words(expr)
    return (bool(w & _THRESHOLD_WORDS) or w == {"k"}) and not w & _PROCEDURE_WORDS


def _count_key(expr: cst.BaseExpression, module: cst.Module) -> str | None:
    """The source text of an exact-count operand (``n``, ``cohort_size``, ``len(rows)``), else None."""
    if isinstance(expr, cst.Attribute) and expr.attr.value in ("size", "shape", "ndim"):
        return None  # an array's size: a count of values, rarely of a released group
    if isinstance(expr, (cst.Name, cst.Attribute)):
        w = _name_words(expr)
        if w & _COUNT_WORDS and not w & _NOISY_WORDS and not w & (_THRESHOLD_WORDS - {"cohort"}):
            return module.code_for_node(expr)
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value == "len":
        return module.code_for_node(expr)
    return None


class ExactCountInThresholdError(Rule):
    id = "DP805"
    name = "exact-count-in-threshold-error"
    category = "general"
    severity = "error"
    summary = ("a minimum cohort / group-size check on the exact record count raises or returns an error whose "
               "message contains that exact count")
    rationale = (
        "DP query services often refuse queries whose filter selects too few records (`if cohort_size < "
        "MIN_COHORT: raise ValueError(...)`). The refusal itself depends on the exact count, and when its message "
        "says `f\"Cohort too small (n={cohort_size})\"` the service hands the exact number of matching records to "
        "the caller, without noise and without charging any ε: an analyst can narrow the filter until the error "
        "reveals the count of one person's group, or whether one person is in the data. Reported: in DP code, an "
        "`if` comparing an exact count (`n`, `count`, `cohort_size`, `len(rows)`) with a minimum / threshold / "
        "cohort / k, whose body raises an exception or returns a value that mentions the count. Bad: "
        "`raise HTTPException(400, f\"only {n} rows match\")`. Good: `raise ValueError(\"the query selects too few "
        "records\")` (better still, test a noisy count). Fix: leave the count out of the message and base the "
        "check on a noisy count charged to the budget."
    )
    TRIGGERS = ("raise", "return")
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding needs a comparison with a name speaking of a minimum, threshold, cohort or k."""
        if not facts.nodes(ast.Compare) or not _TEXT.search(facts.source):
            return False
        return bool(facts.nodes(ast.Raise)) or bool(facts.nodes(ast.Return))

    def visit_If(self, node: cst.If) -> None:
        test = node.test
        if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
            return
        op = test.comparisons[0].operator
        left, right = test.left, test.comparisons[0].comparator
        if isinstance(op, (cst.LessThan, cst.LessThanEqual)):
            count, threshold = left, right
        elif isinstance(op, (cst.GreaterThan, cst.GreaterThanEqual)):
            count, threshold = right, left
        else:
            return
        key = _count_key(count, self.ctx.module)
        if key is None or not _is_threshold(threshold):
            return
        module = self.ctx.module
        for sub in walk(node.body):
            value = sub.exc if isinstance(sub, cst.Raise) else sub.value if isinstance(sub, cst.Return) else None
            if value is None:
                continue
            if isinstance(sub, cst.Return) and not any(
                    isinstance(n, (cst.FormattedString, cst.SimpleString, cst.Dict)) for n in walk(value)):
                continue
            if any(isinstance(n, (cst.Name, cst.Attribute, cst.Call)) and module.code_for_node(n) == key
                   for n in walk(value)):
                self.report(
                    sub,
                    f"the error of the minimum-size check carries the exact count `{key}` back to the caller: "
                    "it is released without noise and without charging ε (narrowing the filter reveals small "
                    "groups). Leave the count out of the message and test a noisy count",
                )

    VALID = (
        # twin: the refusal names the threshold, not the exact count
        """
import numpy as np
MIN_COHORT = 25
def private_sum(rows, epsilon, bound):
    cohort_size = len(rows)
    if cohort_size < MIN_COHORT:
        raise ValueError(f"Cohort too small; at least {MIN_COHORT} records are required")
    total = sum(min(max(r, 0), bound) for r in rows)
    return total + np.random.laplace(0, bound / epsilon)
""",
        # twin: the check runs on a noisy count, whose value may be shown
        """
import numpy as np
def dp_group_mean(values, epsilon, min_group=20):
    noisy_n = len(values) + np.random.laplace(0, 2 / epsilon)
    if noisy_n < min_group:
        return {"error": f"group too small (about {noisy_n:.0f})"}
    return np.clip(values, 0, 1).sum() / noisy_n + np.random.laplace(0, 2 / epsilon)
""",
        # twin of the service: HTTP error without the number
        """
import numpy as np
from fastapi import HTTPException
def dp_count(db, table, epsilon, min_count=10):
    count = db.execute(f"SELECT COUNT(*) FROM {table}").scalar()
    if count < min_count:
        raise HTTPException(status_code=400, detail="query selects too few records")
    return count + np.random.laplace(0, 1 / epsilon)
""",
        # ordinary ML: a batch-size check with the dataset length in the message
        """
import torch
def make_loader(dataset, batch_size, min_batches=1):
    if len(dataset) < batch_size:
        raise ValueError(f"dataset has {len(dataset)} items, fewer than one batch of {batch_size}")
    return torch.utils.data.DataLoader(dataset, batch_size=batch_size)
""",
    )

    INVALID = (
        # a query service: the cohort check's error message carries the exact n
        """
import numpy as np
class PrivateQueryService:
    def run(self, db, table, epsilon):
        cohort_size = self._count(db, table)
        MIN_COHORT = 25
        if cohort_size < MIN_COHORT:
            raise ValueError(f"Cohort too small (n={cohort_size}). Need {MIN_COHORT}.")  # <-
        exact = self._sum(db, table)
        return exact + np.random.laplace(0, 1.0 / epsilon)
""",
        # a FastAPI endpoint returning the exact size in the HTTP error detail
        """
import numpy as np
from fastapi import HTTPException
def dp_count(db, table, epsilon, min_count=10):
    n = db.execute(f"SELECT COUNT(*) FROM {table}").scalar()
    if n < min_count:
        raise HTTPException(status_code=400, detail=f"only {n} records match the filter")  # <-
    return n + np.random.laplace(0, 1 / epsilon)
""",
        # a dict error response with len(...) and the comparison written the other way round
        """
import numpy as np
def laplace_group_mean(values, epsilon, threshold=20):
    if threshold > len(values):
        return {"error": "group too small", "size": len(values)}  # <-
    return np.clip(values, 0, 1).mean() + np.random.laplace(0, 1 / (len(values) * epsilon))
""",
        # k-anonymity style suppression with str.format
        """
import numpy as np
def dp_histogram_cell(records, key, epsilon, k=5):
    count = sum(1 for r in records if r == key)
    if count < k:
        raise RuntimeError("cell {} suppressed: {} < {}".format(key, count, k))  # <-
    return count + np.random.laplace(0, 1 / epsilon)
""",
    )
