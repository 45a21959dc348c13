"""DP790: a Private-PGM measurement (``LinearMeasurement``, ``(Q, y, sigma, proj)``) built from an exact marginal,
with no noise ever added to it."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, walk, words
from dpcheck.rule import Rule

#: calls that count records into a marginal / histogram
_COUNT_CALLS = frozenset({
    "datavector", "histogramdd", "histogram", "histogram2d", "bincount", "value_counts", "crosstab",
    "count_nonzero", "project", "marginal", "tabulate", "pivot_table",
})
_COUNT_WORDS = frozenset({"marginal", "marginals", "count", "counts", "hist", "histogram", "datavector", "tabulate"})
#: words of a call or name that draw or hold noise
_NOISE_WORDS = frozenset({
    "noise", "noisy", "noised", "laplace", "normal", "gauss", "gaussian", "randn", "random", "geometric",
    "privatize", "privatise", "perturb", "perturbed", "mechanism", "mech", "dp", "private", "privately",
    "randomise", "randomize", "measure", "measured", "sample", "standard_normal", "rng", "rvs",
})
#: the measurement argument of ``LinearMeasurement`` given by keyword
_MEAS_KEYWORDS = frozenset({"noisy_measurement", "measurement", "y", "values", "answer", "answers"})
#: an estimator that consumes measurements (the old tuple API)
_PGM_ESTIMATORS = frozenset({"FactoredInference", "mirror_descent", "estimate", "MirrorDescent",
                             "LinearMeasurement", "GraphicalModel"})


def _has_noise(expr: cst.CSTNode) -> bool:
    for n in walk(expr):
        if isinstance(n, cst.Call) and words(call_name(n)) & _NOISE_WORDS:
            return True
        if isinstance(n, cst.Name) and words(n.value) & {"noise", "noisy", "noised", "perturbed", "dp",
                                                             "private", "privatized", "privatised"}:
            return True
        if isinstance(n, cst.Attribute) and words(n.attr.value) & {"noise", "noisy", "laplace", "normal",
                                                                    "gauss", "gaussian", "randn"}:
            return True
    return False


def _counts(expr: cst.CSTNode) -> bool:
    for n in walk(expr):
        if isinstance(n, cst.Call):
            name = call_name(n)
            if name in _COUNT_CALLS or words(name) & _COUNT_WORDS:
                return True
    return False



def _inside_library(module: cst.Module) -> bool:
    """Is this file part of the library that defines the measurement type (``class LinearMeasurement``, or a
    relative import of it or of its module)? Its own shape placeholders and ground-truth callbacks are not a
    user's release."""
    for n in walk(module):
        if isinstance(n, cst.ClassDef) and n.name.value == "LinearMeasurement":
            return True
        if isinstance(n, cst.ImportFrom) and n.relative:
            names = [] if isinstance(n.names, cst.ImportStar) else [a.name for a in n.names]
            mod = n.module
            text = " ".join([cst.Module([]).code_for_node(x) for x in names]
                            + ([cst.Module([]).code_for_node(mod)] if mod is not None else []))
            if "LinearMeasurement" in text or "marginal_loss" in text:
                return True
    return False

class PgmMeasurementWithoutNoise(Rule):
    id = "DP790"
    name = "pgm-measurement-without-noise"
    category = "general"
    severity = "error"
    summary = ("a Private-PGM measurement is built from an exact marginal of the records: the noise scale is "
               "passed to the estimator, but no noise is ever added to the counts")
    rationale = (
        "Private-PGM (``mbi``) fits a graphical model to noisy marginals: each measurement is a vector of "
        "answers and the standard deviation of the noise that was added to them "
        "(``LinearMeasurement(y, clique, stddev)``, or ``(Q, y, sigma, proj)`` in the older API). The estimator "
        "only uses the standard deviation as a weight; it adds no noise itself. When ``y`` is the exact marginal "
        "(``data.project(cl).datavector()``, ``np.histogramdd(...)``), the synthetic data is fitted to exact "
        "counts and carries no DP guarantee, whatever σ says. Reported: a measurement whose answer vector, "
        "followed through the assignments of the function, is computed from a counting call and never has a "
        "noise draw added. Bad: `y = data.project(cl).datavector(); LinearMeasurement(y, cl, sigma)`. Good: "
        "`y = x + np.random.normal(0, sigma, x.size)`. Fix: add Gaussian (or Laplace) noise of the stated scale "
        "to every marginal before building the measurement, and charge it to the budget."
    )
    TRIGGERS = ("LinearMeasurement", "FactoredInference", "mirror_descent", "mbi")
    requires_dp_context = False

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding needs a ``LinearMeasurement`` call, or a 4-tuple appended in a file that calls a PGM
        estimator."""
        if facts.calls_any(frozenset({"LinearMeasurement"})):
            return True
        if not (facts.calls_any(_PGM_ESTIMATORS) or "mbi" in facts.identifiers):
            return False
        return any(isinstance(c.func, ast.Attribute) and c.func.attr == "append" and c.args
                   and isinstance(c.args[0], ast.Tuple) and len(c.args[0].elts) == 4 for c in facts.calls)

    def visit_Module(self, node: cst.Module) -> None:
        text = self.ctx.source
        self._estimator_file = any(w in text for w in _PGM_ESTIMATORS) or "mbi" in text
        self._library_file = _inside_library(node)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if self._library_file:
            return
        body = list(walk(node.body, into_scopes=False))
        defs: dict[str, list[cst.CSTNode]] = {}
        for sub in body:
            if isinstance(sub, cst.Assign):
                for t in sub.targets:
                    for n in walk(t.target):
                        if isinstance(n, cst.Name):
                            defs.setdefault(n.value, []).append(sub.value)
            elif isinstance(sub, (cst.AugAssign, cst.AnnAssign)) and isinstance(sub.target, cst.Name) \
                    and sub.value is not None:
                defs.setdefault(sub.target.value, []).append(sub.value)
        for sub in body:
            if not isinstance(sub, cst.Call):
                continue
            answer = self._answer(sub)
            if answer is None:
                continue
            closure = self._closure(answer, defs)
            if closure is None:
                continue
            if any(_has_noise(e) for e in closure) or not any(_counts(e) for e in closure):
                continue
            self.report(
                sub,
                "this Private-PGM measurement carries an exact marginal: the σ passed beside it is only a "
                "weight, the estimator adds no noise; add noise of that scale to the counts first",
            )

    def _answer(self, call: cst.Call) -> cst.BaseExpression | None:
        name = call_name(call)
        if name == "LinearMeasurement":
            for arg in call.args:
                if arg.keyword is not None and arg.keyword.value in _MEAS_KEYWORDS:
                    return arg.value
            positional = [a for a in call.args if a.keyword is None and not a.star]
            return positional[0].value if positional else None
        if name == "append" and getattr(self, "_estimator_file", False) and len(call.args) == 1:
            tup = call.args[0].value
            if isinstance(tup, cst.Tuple) and len(tup.elements) == 4:
                scale = tup.elements[2].value
                if isinstance(scale, (cst.Integer, cst.Float)) or (
                        isinstance(scale, cst.Name) and words(scale.value) & {"sigma", "std", "stddev", "scale",
                                                                               "noise"}):
                    return tup.elements[1].value
        return None

    @staticmethod
    def _closure(expr: cst.BaseExpression, defs: dict[str, list[cst.CSTNode]]) -> list[cst.CSTNode] | None:
        """``expr`` and every definition its names reach in the function (up to 6 hops); None when the answer
        is a bare name never assigned here (a parameter or loop variable: not known)."""
        if isinstance(expr, cst.Name) and expr.value not in defs:
            return None
        out: list[cst.CSTNode] = [expr]
        seen: set[str] = set()
        frontier = [expr]
        for _ in range(6):
            nxt: list[cst.CSTNode] = []
            for e in frontier:
                for n in walk(e):
                    if isinstance(n, cst.Name) and n.value in defs and n.value not in seen:
                        seen.add(n.value)
                        nxt.extend(defs[n.value])
            out.extend(nxt)
            frontier = nxt
            if not nxt:
                break
        return out

    VALID = (
        # the estimator library's own code: shape placeholders for compilation, not a user's measurement
        """
import jax
from .marginal_loss import LinearMeasurement
def compile_for(domain, cliques, measurements):
    out = list(measurements)
    for cl in cliques:
        placeholder = jax.ShapeDtypeStruct((domain.project(cl).size(),), float)
        out.append(LinearMeasurement(placeholder, cl))
    return out
""",
        # twin: the marginal gets Gaussian noise of the scale passed on
        """
import numpy as np
from mbi import LinearMeasurement, estimation
def measure(data, cliques, sigma):
    measurements = []
    for cl in cliques:
        x = data.project(cl).datavector()
        y = x + np.random.normal(loc=0, scale=sigma, size=x.size)
        measurements.append(LinearMeasurement(y, cl, sigma))
    return estimation.mirror_descent(data.domain, measurements)
""",
        # twin, older tuple API: noise drawn into a name first
        """
import numpy as np
from scipy import sparse
from mbi import FactoredInference
def measure(data, cliques, sigma):
    measurements = []
    for proj in cliques:
        x = data.project(proj).datavector()
        noise = np.random.laplace(0, sigma, x.size)
        y = x + noise
        Q = sparse.eye(x.size)
        measurements.append((Q, y, sigma, proj))
    return FactoredInference(data.domain).estimate(measurements)
""",
        # the answers come in as a parameter (measured elsewhere)
        """
from mbi import LinearMeasurement
def wrap(answers, cliques, sigma):
    return [LinearMeasurement(y, cl, sigma) for y, cl in zip(answers, cliques)]
""",
        # twin of the crosstab case: Laplace noise added through a named draw
        """
import numpy as np
import pandas as pd
from mbi import LinearMeasurement
def two_way(df, pairs, sigma, rng):
    out = []
    for a, b in pairs:
        table = pd.crosstab(df[a], df[b])
        flat = table.values.flatten()
        flat = flat + rng.laplace(0, sigma, flat.size)
        out.append(LinearMeasurement(flat, (a, b), stddev=sigma))
    return out
""",
        # ordinary ML: a histogram feature appended in a 4-tuple, no PGM estimator
        """
import numpy as np
def features(images):
    out = []
    for img in images:
        h = np.histogram(img, bins=16)[0]
        out.append((img.shape, h, 1.0, img.mean()))
    return out
""",
    )

    INVALID = (
        # the exact histogram is handed to the estimator with a sigma beside it
        """
import numpy as np
from mbi import Domain, LinearMeasurement
from mbi.estimation import mirror_descent
def synthesize(codes, domain, pairs, epsilon, delta):
    sigma = np.sqrt(2 * np.log(1.25 / delta)) / epsilon
    measurements = []
    for pair in pairs:
        bins = [np.arange(domain.size(c) + 1) for c in pair]
        counts = np.histogramdd(codes[list(pair)].values, bins=bins)[0].flatten()
        measurements.append(LinearMeasurement(counts, pair, sigma))  # <-
    return mirror_descent(domain, measurements)
""",
        # inline datavector, keyword spelling
        """
from mbi import LinearMeasurement
def measure_all(data, cliques, rho):
    sigma = (len(cliques) / (2 * rho)) ** 0.5
    out = []
    for cl in cliques:
        out.append(LinearMeasurement(noisy_measurement=data.project(cl).datavector(), clique=cl, stddev=sigma))  # <-
    return out
""",
        # older tuple API, the answer is the exact marginal
        """
import numpy as np
from scipy import sparse
from mbi import FactoredInference
def measure(data, cliques, sigma):
    measurements = []
    for proj in cliques:
        x = data.project(proj).datavector()
        Q = sparse.eye(x.size)
        measurements.append((Q, x, sigma, proj))  # <-
    engine = FactoredInference(data.domain, iters=1000)
    return engine.estimate(measurements)
""",
        # pandas crosstab of the records, then flattened: still exact
    """
import pandas as pd
from mbi import LinearMeasurement
def two_way(df, pairs, sigma):
    out = []
    for a, b in pairs:
        table = pd.crosstab(df[a], df[b])
        flat = table.values.flatten()
        out.append(LinearMeasurement(flat, (a, b), stddev=sigma))  # <-
    return out
""",
)
