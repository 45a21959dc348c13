"""DP743: a noisy histogram released with the bin edges numpy took from the exact min and max of the data."""
from __future__ import annotations

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import all_params, call_name, dotted, number, target_names, walk, words
from dpcheck.rule import Rule

_HISTOGRAMS = frozenset({"histogram"})
_DRAWS = frozenset({"laplace", "normal", "gauss", "geometric", "discrete_laplace", "discrete_gaussian",
                    "Laplace", "Normal", "randomise", "randomize"})
_NOISE_WORDS = frozenset({"noise", "noisy", "laplace", "laplacian", "gaussian", "perturb", "privatize",
                          "privatise", "mechanism"})


def _arg(call: cst.Call, keyword: str, position: int) -> cst.BaseExpression | None:
    for i, arg in enumerate(call.args):
        if arg.keyword is not None and arg.keyword.value == keyword:
            return arg.value
        if arg.keyword is None and i == position and not arg.star:
            return arg.value
    return None


def _count_bins(expr: cst.BaseExpression | None, fn: cst.FunctionDef, assigned: dict[str, list]) -> bool:
    """No ``bins``, an integer, or a name whose only values are integer literals (a count, not edges)."""
    if expr is None or isinstance(expr, cst.Integer):
        return True
    if not isinstance(expr, cst.Name):
        return False
    values = list(assigned.get(expr.value, []))
    for p in all_params(fn):
        if p.name.value == expr.value:
            if p.default is None:
                return False
            values.append(p.default)
    return bool(values) and all(isinstance(v, cst.Integer) for v in values)


def _noisy(call: cst.Call) -> bool:
    name = call_name(call)
    return name in _DRAWS or bool(words(name) & _NOISE_WORDS)


class HistogramEdgesFromDataRangeReleased(Rule):
    id = "DP743"
    name = "histogram-edges-from-data-range-released"
    category = "general"
    severity = "error"
    summary = ("`np.histogram(data, bins=k)` with no `range`: the bin edges are spaced over the exact min and max "
               "of the private data and are released beside the noisy counts")
    rationale = (
        "Without `range=`, numpy spreads the k bins over [min(data), max(data)]. The first and last edge are the "
        "exact extreme values of the private records, and every other edge is a function of them. Noising the "
        "counts does not cover the edges: a function that returns the edges next to the noisy counts publishes "
        "the smallest and largest record exactly, and a neighbouring dataset with a new extreme moves every edge. "
        "Reported: `counts, edges = histogram(x, bins=<count>)` (a count literal, a parameter defaulting to one, or "
        "no bins) with no range, in a function that noises the counts and returns the edges. Not reported: a "
        "public `range=(lo, hi)`, explicit bin edges, edges kept internal, histograms without noise. Fix: pass a "
        "public range (or public edges) and clip the data to it."
    )
    TRIGGERS = ("histogram",)
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A histogram call without a range keyword, and a return statement."""
        import ast
        return any(facts.call_lasts(c) & _HISTOGRAMS and not any(k.arg == "range" for k in c.keywords)
                   and len(c.args) < 3 for c in facts.calls) and bool(facts.nodes(ast.Return))

    @classmethod
    def admits(cls, facts: AstFacts) -> bool:
        return facts.may_have_dp_context and cls.may_report(facts)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        body = list(walk(node.body, into_scopes=False))
        assigned: dict[str, list] = {}
        for sub in body:
            if isinstance(sub, cst.Assign):
                for t in sub.targets:
                    for name in target_names(t.target):
                        assigned.setdefault(name, []).append(sub.value)
        returned = {n.value for r in body if isinstance(r, cst.Return) and r.value is not None
                    for n in walk(r.value) if isinstance(n, cst.Name)}
        statements = [s for s in body if isinstance(s, cst.SimpleStatementLine)]
        for sub in body:
            if not (isinstance(sub, cst.Assign) and isinstance(sub.value, cst.Call)
                    and call_name(sub.value) in _HISTOGRAMS and len(sub.targets) == 1
                    and isinstance(sub.targets[0].target, cst.Tuple)):
                continue
            call, elements = sub.value, sub.targets[0].target.elements
            if len(elements) != 2 or not all(isinstance(e.value, cst.Name) for e in elements):
                continue
            owner = (dotted(call.func) or "").split(".")[0]
            if owner not in ("np", "numpy", "jnp", "cupy", "cp", "torch"):
                continue
            if _arg(call, "range", 2) is not None or any(a.keyword is not None and a.keyword.value == "density"
                                                         for a in call.args):
                continue
            if not _count_bins(_arg(call, "bins", 1), node, assigned):
                continue
            counts, edges = elements[0].value.value, elements[1].value.value
            if edges not in returned:
                continue
            if not any(any(isinstance(c, cst.Call) and _noisy(c) for c in walk(s))
                       and any(isinstance(n, cst.Name) and n.value == counts for n in walk(s)) for s in statements):
                continue
            self.report(call, "the histogram takes its range from the exact min/max of the private data and the "
                              "bin edges are returned beside the noisy counts: they reveal the extreme records "
                              "outside ε; pass a public `range=(lo, hi)` and clip the data to it")

    VALID = (
        # twin: a public range is given
        """
import numpy as np
def noisy_histogram(data, epsilon, lo, hi, bins=10):
    hist, bin_edges = np.histogram(np.clip(data, lo, hi), bins=bins, range=(lo, hi))
    noisy = [c + np.random.laplace(0, 1 / epsilon) for c in hist]
    return list(bin_edges), noisy
""",
        # twin: explicit public edges passed in
        """
import numpy as np
def noisy_histogram(data, epsilon, edges):
    counts, edges_out = np.histogram(data, bins=edges)
    return edges_out, counts + np.random.laplace(0, 1 / epsilon, len(counts))
""",
        # twin: the edges stay internal, only noisy counts are released
        """
import numpy as np
class Release:
    def histogram(self, values, epsilon):
        counts, edges = np.histogram(values, bins=20)
        return counts + np.random.laplace(0, 1 / epsilon, counts.shape)
""",
        # ordinary ML: histogram of validation losses for a plot
        """
import numpy as np
def loss_histogram(losses, bins=30):
    counts, edges = np.histogram(losses, bins=bins)
    centres = (edges[:-1] + edges[1:]) / 2
    return centres, counts
""",
    )

    INVALID = (
        # counts noised one by one, edges from the data returned
        """
import numpy as np
class PrivacyService:
    def noisy_histogram(self, data, bins=10):
        hist, bin_edges = np.histogram(data, bins=bins)  # <-
        noisy = [self.add_noise(float(c), sensitivity=1) for c in hist]
        return list(bin_edges), noisy
""",
        # vector noise, edges in a result dict
        """
import numpy as np
def dp_age_histogram(ages, epsilon):
    counts, edges = np.histogram(ages, 15)  # <-
    noisy = counts + np.random.laplace(0, 1.0 / epsilon, size=counts.shape)
    return {"edges": edges.tolist(), "counts": noisy.tolist()}
""",
        # default bins, Gaussian noise
        """
import numpy as np
def release_income_histogram(incomes, epsilon, delta):
    sigma = np.sqrt(2 * np.log(1.25 / delta)) / epsilon
    h, e = np.histogram(incomes)  # <-
    noisy_h = h + np.random.normal(0, sigma, size=h.shape)
    return noisy_h, e
""",
        # the bin count bound to a local integer
        """
import numpy as np
def private_histogram(values, epsilon):
    n_bins = 25
    freq, bounds = np.histogram(values, bins=n_bins)  # <-
    freq = laplace_mechanism(freq, 1.0, epsilon)
    return bounds, freq
""",
    )
