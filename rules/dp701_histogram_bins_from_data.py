"""DP701: a DP histogram whose bins are chosen by numpy's data-driven rule (``bins="auto"``, ``"fd"``, …)."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, walk, words
from dpcheck.rule import Rule

_HISTOGRAMS = frozenset({"histogram", "histogram_bin_edges"})
#: numpy's bin estimators: each reads the data (its size, spread, IQR or range)
_ESTIMATORS = frozenset({"auto", "fd", "doane", "scott", "stone", "rice", "sturges", "sqrt"})
_BUDGET_KEYWORDS = frozenset({"epsilon", "eps", "privacy_budget"})
_DRAWS = frozenset({"laplace", "normal", "gauss", "geometric", "discrete_laplace", "discrete_gaussian", "Laplace",
                    "Normal", "add_noise", "laplace_noise", "gaussian_noise", "randomise", "randomize"})


def _bins(call: cst.Call) -> cst.BaseExpression | None:
    for i, arg in enumerate(call.args):
        if arg.keyword is not None and arg.keyword.value == "bins":
            return arg.value
        if arg.keyword is None and i == 1 and not arg.star:
            return arg.value
    return None


def _estimator(expr: cst.BaseExpression | None) -> str | None:
    if isinstance(expr, cst.SimpleString):
        text = expr.evaluated_value
        if isinstance(text, str) and text in _ESTIMATORS:
            return text
    return None


class HistogramBinsFromData(Rule):
    id = "DP701"
    name = "histogram-bins-from-data"
    category = "general"
    severity = "error"
    summary = ("a DP histogram takes `bins=\"auto\"` (or `\"fd\"`, `\"sturges\"`, …): numpy picks the number and "
               "width of the bins from the private data")
    rationale = (
        "numpy's named bin estimators compute the bin edges from the sample itself: `auto`/`fd` from its "
        "inter-quartile range and size, `sturges`/`rice`/`sqrt` from its size, all of them over the data's min "
        "and max when no range is given. A DP histogram (diffprivlib's `histogram(..., epsilon=...)`, or "
        "`np.histogram` whose counts get noise) built with such bins releases a bin layout that is an exact "
        "function of the private records, outside the ε that covers the counts. Reported: a `histogram` or "
        "`histogram_bin_edges` call whose `bins` is one of those strings, when "
        "the call takes a budget keyword or the function around it draws noise. Fix: give public bin edges (a "
        "fixed count over a public range), or choose the bins with a DP mechanism."
    )
    TRIGGERS = ("histogram",)
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A histogram call with a string ``bins`` that names an estimator."""
        for call in facts.calls:
            if facts.call_lasts(call) & _HISTOGRAMS:
                vals = [k.value for k in call.keywords if k.arg == "bins"] + call.args[1:2]
                if any(isinstance(v, ast.Constant) and v.value in _ESTIMATORS for v in vals):
                    return True
        return False

    def visit_Call(self, node: cst.Call) -> None:
        if call_name(node) not in _HISTOGRAMS:
            return
        est = _estimator(_bins(node))
        if est is None:
            return
        if not any(a.keyword is not None and words(a.keyword.value) & {"epsilon", "eps", "budget"}
                   for a in node.args):
            fn = self.ctx.analysis.enclosing_function(node)
            if fn is None or not any(isinstance(c, cst.Call) and call_name(c) in _DRAWS for c in walk(fn)):
                return
        self.report(node, f"`bins=\"{est}\"` lets numpy choose the bin edges from the private data (its size and "
                          "spread): the released bin layout is not covered by ε; pass public bin edges over a "
                          "public range")

    VALID = (
        # twin: fixed bins over a public range
        """
from diffprivlib import tools as dp
def leaf_density(column, epsilon, low, high, accountant):
    return dp.histogram(column, bins=20, range=(low, high), density=True, epsilon=epsilon, accountant=accountant)
""",
        # twin: np.histogram with public edges, then noise
        """
import numpy as np
def noisy_hist(values, epsilon, edges):
    counts, edges = np.histogram(values, bins=edges)
    return counts + np.random.laplace(0, 1 / epsilon, len(counts)), edges
""",
        # twin of the Sturges case: public age bands
        """
import numpy as np
def noisy_age_hist(ages, epsilon, sigma):
    h, edges = np.histogram(ages, bins=np.arange(0, 101, 5))
    return h + np.random.normal(0, sigma, h.shape), edges
""",
        # twin of the edges case: a fixed number of bins over a public range
        """
import numpy as np
def dp_edges_hist(values, epsilon, lo, hi):
    edges = np.histogram_bin_edges(values, bins=16, range=(lo, hi))
    counts, _ = np.histogram(values, bins=edges)
    return counts + np.random.laplace(0, 1 / epsilon, len(counts))
""",
        # ordinary ML: a plot of a loss distribution with automatic bins, no privacy
        """
import numpy as np
def plot_losses(losses, ax):
    counts, edges = np.histogram(losses, bins="auto")
    ax.bar(edges[:-1], counts)
""",
    )

    INVALID = (
        # diffprivlib histogram with numpy's automatic bins
        """
from diffprivlib import tools as dp
def leaf_density(column, epsilon, low, high, accountant):
    dens, edges = dp.histogram(column, bins="auto", range=(low, high), density=True,  # <-
                               epsilon=epsilon, accountant=accountant)
    return dens, edges
""",
        # np.histogram with Freedman-Diaconis bins, then Laplace noise on the counts
        """
import numpy as np
def noisy_hist(values, epsilon):
    counts, edges = np.histogram(values, "fd")  # <-
    return counts + np.random.laplace(0, 1 / epsilon, len(counts)), edges
""",
        # Sturges' rule on an age column before Gaussian noise
        """
import numpy as np
def noisy_age_hist(ages, epsilon, sigma):
    h, edges = np.histogram(ages, bins="sturges")  # <-
    return h + np.random.normal(0, sigma, h.shape), edges
""",
        # bin edges picked by the square-root rule, the counts noised
        """
import numpy as np
def dp_edges_hist(values, epsilon):
    edges = np.histogram_bin_edges(values, bins="sqrt")  # <-
    counts, _ = np.histogram(values, bins=edges)
    return counts + np.random.laplace(0, 1 / epsilon, len(counts))
""",
    )
