"""DP739: a mask taken from the support (non-zero cells) of the exact table when its noisy version exists."""
from __future__ import annotations

import re

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, last_name, number, walk
from dpcheck.rule import Rule

#: ``real_markov_matrix``, ``exact_counts``, ``true_hist``, ``raw_transition``: the exact-table prefix/suffix
_EXACT = re.compile(r"(?:^|_)(real|exact|true|raw)(?:_|$)")
_NOISY = ("noisy", "noised", "private", "dp")
_SUPPORT_CALLS = frozenset({"nonzero", "flatnonzero", "argwhere", "count_nonzero"})


def _siblings(name: str) -> list[str]:
    """``real_markov_matrix`` -> ``noisy_markov_matrix``, ``noised_markov_matrix``, …"""
    return [_EXACT.sub(lambda m: m.group(0).replace(m.group(1), alt), name, count=1) for alt in _NOISY]


def _table(expr: cst.BaseExpression) -> str | None:
    """The exact table read by ``expr`` (``self.real_m``, ``self.real_m[:-2, :-2]``)."""
    while isinstance(expr, cst.Subscript):
        expr = expr.value
    name = last_name(expr) if isinstance(expr, (cst.Name, cst.Attribute)) else None
    return name if name is not None and _EXACT.search(name) else None


class SupportOfExactTableBesideNoisy(Rule):
    id = "DP739"
    name = "support-of-exact-table-beside-noisy"
    category = "general"
    severity = "warning"
    summary = ("a mask is taken from the non-zero cells of the exact count table although the code keeps a noisy "
               "version of it: which cells occur in the private data leaks into the release")
    rationale = (
        "Code that noises a count table (a Markov transition matrix, a histogram) and keeps both versions, "
        "`real_markov_matrix` and `noisy_markov_matrix`, must use only the noisy one in anything released. A mask "
        "built from the support of the exact table (`real_m > 0`, `np.nonzero(real_m)`) reveals which cells, "
        "transitions or values occur in the private data at all, a cell with a single record included, with no "
        "privacy budget spent; when the mask shapes the model (which transitions are allowed, where the "
        "optimisation may put mass), the release leaks it. Reported: `x > 0`, `x != 0`, `x >= 1` or a "
        "`nonzero`/`argwhere` call on a table named `real_*`/`exact_*`/`true_*`/`raw_*` when the module also "
        "names its noisy sibling (`noisy_*`). Fix: take the mask from the noisy table (or a public domain)."
    )
    TRIGGERS = ("real_", "exact_", "true_", "raw_")
    requires_dp_context = False

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding needs an identifier ``*real_*``-like whose ``noisy``/``noised``/``private``/``dp`` sibling
        is also an identifier of the module."""
        idents = facts.identifiers
        return any(_EXACT.search(i) and any(s in idents for s in _siblings(i)) for i in idents)

    def visit_Module(self, node: cst.Module) -> None:
        self._idents = {n.value for n in walk(node) if isinstance(n, cst.Name)}

    def _exact_with_sibling(self, expr: cst.BaseExpression) -> str | None:
        name = _table(expr)
        if name is None or not any(s in self._idents for s in _siblings(name)):
            return None
        return name

    def visit_Comparison(self, node: cst.Comparison) -> None:
        if len(node.comparisons) != 1:
            return
        comp = node.comparisons[0]
        bound = number(comp.comparator)
        support = (isinstance(comp.operator, (cst.GreaterThan, cst.NotEqual)) and bound == 0
                   or isinstance(comp.operator, cst.GreaterThanEqual) and bound == 1)
        name = self._exact_with_sibling(node.left) if support else None
        if name is not None:
            self._report(node, name)

    def visit_Call(self, node: cst.Call) -> None:
        if call_name(node) in _SUPPORT_CALLS and node.args:
            name = self._exact_with_sibling(node.args[0].value)
            if name is not None:
                self._report(node, name)

    def _report(self, node: cst.CSTNode, name: str) -> None:
        self.report(node, f"the mask is the support of the exact table `{name}`, although its noisy version exists: "
                          "which cells occur in the private data shapes the release with no budget spent; take the "
                          "mask from the noisy table")

    VALID = (
        # twin: the mask from the noisy matrix
        """
import numpy as np
class MarkovModel:
    def fit(self, counts, epsilon):
        self.real_markov_matrix = counts
        self.noisy_markov_matrix = counts + np.random.laplace(0, 1 / epsilon, counts.shape)
    def allowed(self):
        return self.noisy_markov_matrix[:-2, :-2] > 0
""",
        # twin: nonzero of the noised histogram
        """
import numpy as np
def cells(exact_hist, epsilon):
    noisy_hist = exact_hist + np.random.laplace(0, 1 / epsilon, exact_hist.shape)
    return np.nonzero(noisy_hist > 1)
""",
        # no noisy sibling: an exact table used in a non-private evaluation
        """
import numpy as np
def coverage(real_counts, synthetic_counts):
    support = real_counts > 0
    return (synthetic_counts[support] > 0).mean()
""",
        # ordinary ML: labels of true positives
        """
import numpy as np
def accuracy(true_labels, pred_labels):
    positives = np.argwhere(pred_labels)
    return (true_labels == pred_labels).mean(), positives
""",
    )

    INVALID = (
        # the support of the exact Markov matrix restricts the calibration
        """
import numpy as np
class MarkovModel:
    def fit(self, counts, epsilon):
        self.real_markov_matrix = counts
        self.noisy_markov_matrix = counts + np.random.laplace(0, 1 / epsilon, counts.shape)
    def allowed(self):
        return self.real_markov_matrix[:-2, :-2] > 0  # <-
""",
        # nonzero cells of the exact histogram chosen for release
        """
import numpy as np
def cells(exact_hist, epsilon):
    noisy_hist = exact_hist + np.random.laplace(0, 1 / epsilon, exact_hist.shape)
    keep = np.nonzero(exact_hist)  # <-
    return noisy_hist[keep]
""",
        # != 0 on the raw counts, the noised ones kept beside them
        """
import numpy as np
def release(raw_counts, epsilon):
    noised_counts = raw_counts + np.random.laplace(0, 2 / epsilon, raw_counts.shape)
    mask = raw_counts != 0  # <-
    return np.where(mask, noised_counts, 0)
""",
        # >= 1 on the true transition table, dp sibling present
        """
def prune(model):
    dp_transitions = model.dp_transitions
    seen = model.true_transitions >= 1  # <-
    return dp_transitions * seen
""",
    )
