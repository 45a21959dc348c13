"""DP658: a query that wraps an inner DP query releases its result without ever calling the inner query's noising."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import FUNCTIONS, AstFacts
from dpcheck.analysis.syntax import call_name, dotted, param_names, walk, words
from dpcheck.analysis.vocabulary import NOISE_DRAWS
from dpcheck.rule import Rule

#: methods that promise a noised release
_RELEASE_METHODS = frozenset({"get_noised_result", "noised_result", "get_noisy_result", "noisy_result",
                              "release", "privatize", "privatise", "noisy_answer", "private_result"})
#: words of a call that adds noise itself
_NOISE_WORDS = frozenset({"noise", "noised", "noisy", "gaussian", "laplace", "laplacian", "geometric", "privatize",
                          "privatise", "mechanism", "dp", "private", "randomize", "sample"})
#: words of a class that is non-private on purpose
_NON_PRIVATE = frozenset({"noprivacy", "nonprivate", "nondp", "plain", "exact", "identity", "no"})


def _inner_queries(cls: cst.ClassDef) -> set[str]:
    """``self._inner_query`` and the like: attributes set from a constructor parameter named as a query."""
    out: set[str] = set()
    for fn in cls.body.body:
        if not isinstance(fn, cst.FunctionDef) or fn.name.value != "__init__":
            continue
        params = {p for p in param_names(fn) if "query" in words(p)}
        for n in walk(fn):
            if isinstance(n, cst.Assign) and isinstance(n.value, cst.Name) and n.value.value in params:
                out |= {d for t in n.targets if (d := dotted(t.target)) and d.startswith("self.")}
    return out


def _non_private(class_name: str) -> bool:
    return bool(words(class_name) & _NON_PRIVATE) or "noprivacy" in class_name.lower()


class WrapperQuerySkipsInnerNoise(Rule):
    id = "DP658"
    name = "wrapper-query-skips-inner-noise"
    category = "general"
    severity = "error"
    summary = "a query wrapping an inner DP query releases its result without calling the inner query's noising"
    rationale = (
        "A DP query that wraps another (`TreeRangeSumQuery(inner_query)`, a normalising or clipping wrapper) "
        "relies on the inner query for the noise: its `get_noised_result` must hand the aggregate to "
        "`self._inner_query.get_noised_result(...)` (or draw noise itself). When that method only reshapes, "
        "sums or post-processes the aggregate and returns it, the result is released exactly while the wrapper "
        "is still advertised (and accounted) as the inner query's Gaussian mechanism. Reported: a release "
        "method (`get_noised_result`, `release`, `privatize`, …) of a class that stores a constructor "
        "argument named as a query, with no call on that inner query's noising and no noise draw in the "
        "method (nested helpers included). Not reported: classes named as non-private (`NoPrivacySumQuery`). "
        "Fix: call the inner query's `get_noised_result` on the aggregate (and thread its global state) before "
        "post-processing."
    )
    TRIGGERS = tuple(sorted(_RELEASE_METHODS))
    requires_dp_context = False

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding is a class (not named non-private) with a release method and an ``__init__`` taking a
        parameter named as a query."""
        for node in facts.nodes(ast.ClassDef):
            name = node.name  # type: ignore[attr-defined]
            if _non_private(name):
                continue
            methods = [s for s in node.body if isinstance(s, FUNCTIONS)]  # type: ignore[attr-defined]
            if not any(m.name in _RELEASE_METHODS for m in methods):
                continue
            for m in methods:
                if m.name == "__init__" and any("query" in words(a.arg) for a in (
                        *m.args.posonlyargs, *m.args.args, *m.args.kwonlyargs)):
                    return True
        return False

    VALID = (
        # the wrapper hands the aggregate to the inner query, then post-processes
        """
class RangeQuery(SumAggregationDPQuery):
    def __init__(self, inner_query, arity=2):
        self._inner_query = inner_query
        self._arity = arity
    def get_noised_result(self, sample_state, global_state):
        noised, inner_state, event = self._inner_query.get_noised_result(sample_state, global_state.inner_query_state)
        return build_tree(noised, self._arity), global_state.replace(inner_query_state=inner_state), event
""",
        # the wrapper draws its own noise
        """
import numpy as np
class ClippedSum:
    def __init__(self, base_query, clip, sigma):
        self.base_query = base_query
        self.clip, self.sigma = clip, sigma
    def release(self, total):
        return total + np.random.normal(0, self.sigma * self.clip, np.shape(total))
""",
        # a non-private reference query, named so
        """
class NoPrivacyAverageQuery(SumAggregationDPQuery):
    def __init__(self, denominator_query=None):
        self._denominator_query = denominator_query
    def get_noised_result(self, sample_state, global_state):
        total, count = sample_state
        return total / count, global_state, None
""",
        # ordinary code: a database wrapper whose release method just returns rows, no privacy query
        """
class Cursor:
    def __init__(self, connection):
        self.connection = connection
    def release(self):
        rows = self.connection.fetchall()
        return rows
""",
    )

    INVALID = (
        # the tree is built from the raw aggregate; the inner Gaussian query is never asked for noise
        """
import tensorflow as tf
class RangeQuery(SumAggregationDPQuery):
    def __init__(self, inner_query, arity=2):
        self._inner_query = inner_query
        self._arity = arity
    def get_noised_result(self, sample_state, global_state):
        splits = [0] + [(self._arity ** (k + 1) - 1) // (self._arity - 1) for k in range(4)]
        tree = tf.RaggedTensor.from_row_splits(values=sample_state, row_splits=splits)
        return tree, global_state  # <-
""",
        # a normalising wrapper that divides the exact sum
        """
class MeanQuery:
    def __init__(self, sum_query, denominator):
        self.sum_query = sum_query
        self.denominator = denominator
    def get_noised_result(self, sample_state, global_state):
        return sample_state / self.denominator, global_state  # <-
""",
        # a hand-rolled mechanism wrapper with a release method
        """
class Histogram:
    def __init__(self, count_query, bins):
        self.inner = count_query
        self.bins = bins
    def release(self, data):
        counts = [sum(1 for x in data if lo <= x < hi) for lo, hi in self.bins]
        return counts  # <-
""",
        # nested post-processing helper, still no noise and no inner call
        """
class SmoothedQuery:
    def __init__(self, wrapped_query, alpha):
        self._wrapped_query = wrapped_query
        self.alpha = alpha
    def get_noised_result(self, state, global_state):
        def smooth(v):
            return v * self.alpha
        return smooth(state), global_state  # <-
""",
    )

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        if _non_private(node.name.value):
            return
        inner = _inner_queries(node)
        if not inner:
            return
        for fn in node.body.body:
            if not isinstance(fn, cst.FunctionDef) or fn.name.value not in _RELEASE_METHODS:
                continue
            if self._noises(fn, inner):
                continue
            returns = [n for n in walk(fn, into_scopes=False) if isinstance(n, cst.Return) and n.value is not None]
            if not returns:
                continue
            self.report(returns[-1], f"`{fn.name.value}` returns without calling the wrapped query "
                                     f"`{sorted(inner)[0]}`'s noising and draws no noise itself: the aggregate is "
                                     "released exactly while the query is accounted as the inner mechanism; call "
                                     f"`{sorted(inner)[0]}.get_noised_result(...)` on it first")

    @staticmethod
    def _noises(fn: cst.FunctionDef, inner: set[str]) -> bool:
        for n in walk(fn):
            if not isinstance(n, cst.Call):
                continue
            name = call_name(n) or ""
            last = name.split(".")[-1]
            if last in _RELEASE_METHODS or last in NOISE_DRAWS or words(last) & _NOISE_WORDS:
                return True
            if isinstance(n.func, cst.Attribute) and dotted(n.func.value) in inner:
                return True
        return False
