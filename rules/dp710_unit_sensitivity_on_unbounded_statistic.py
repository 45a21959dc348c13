"""DP710: Laplace noise of scale 1/ε (sensitivity 1) on a statistic whose sensitivity is not 1: a mean of a raw
data column, or a graph's degree sequence."""
from __future__ import annotations

import ast
import re

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import (call_name, dotted, loop_iter, loop_targets, number, param_names,
                                     scope_assignments, string_text, walk, words)
from dpcheck.rule import Rule

#: draws whose second argument (or ``scale=``) is the Laplace scale
_DRAWS = frozenset({"laplace", "Laplace"})
#: aggregates averaging a column (their sensitivity is the column's range over n, not 1)
_MEANS = frozenset({"mean", "average", "nanmean", "median"})
#: pandas calls that read a frame of records
_LOADERS = frozenset({"read_csv", "read_excel", "read_parquet", "read_table", "read_sql", "read_json",
                      "read_feather", "read_pickle", "read_stata", "read_sas", "read_spss"})
#: a column is bounded when one of these is applied to it (or to the whole frame)
_BOUNDS = frozenset({"clip", "clamp", "clip_", "clamp_", "between", "minmax_scale", "winsorize", "minimum",
                     "maximum", "where", "mask", "cut", "qcut", "digitize", "MinMaxScaler", "normalize", "rank"})
#: words of a column whose values already lie in [0, 1] (rates, flags, shares)
_UNIT_COLUMN = frozenset({"rate", "ratio", "share", "flag", "is", "has", "binary", "indicator", "prob",
                          "probability", "fraction", "frac", "pct", "percent", "label", "target", "outcome",
                          "survived", "bool"})
_DEGREE = frozenset({"degree", "degrees", "deg", "degs"})
#: a file about graphs (so ``degrees`` is a vertex degree, not an angle)
_GRAPH = frozenset({"graph", "graphs", "edge", "edges", "networkx", "nx", "adj", "adjacency", "vertex",
                    "vertices", "node_degree", "neighbors", "neighbours"})
_HELPER_WORDS = frozenset({"laplace", "laplacian", "noise", "mechanism", "perturb", "lap"})
_EPS = re.compile(r"^(eps|epsilon|budget)", re.I)


def _eps_name(expr: cst.CSTNode) -> bool:
    name = dotted(expr) if isinstance(expr, (cst.Name, cst.Attribute)) else None
    return name is not None and bool(_EPS.match(name.split(".")[-1]))


def _last(call: cst.Call) -> str:
    return call_name(call).split(".")[-1]


def _unit_over_eps(expr: cst.BaseExpression | None) -> bool:
    """``1 / eps``, ``1.0 / epsilon``, ``1 / self.eps``: a scale that takes the sensitivity to be 1."""
    return isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Divide) \
        and number(expr.left) == 1.0 and _eps_name(expr.right)


def _scale(call: cst.Call) -> cst.BaseExpression | None:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == "scale":
            return arg.value
    positional = [a.value for a in call.args if a.keyword is None]
    return positional[1] if len(positional) >= 2 else None


def _unit_draw(expr: cst.CSTNode) -> bool:
    return any(isinstance(c, cst.Call) and _last(c) in _DRAWS and _unit_over_eps(_scale(c)) for c in walk(expr))


class UnitSensitivityOnUnboundedStatistic(Rule):
    id = "DP710"
    name = "unit-sensitivity-on-unbounded-statistic"
    category = "general"
    severity = "error"
    summary = ("Laplace noise of scale 1/ε (sensitivity 1) is added to a mean of a raw data column or to a "
               "graph's degree sequence, whose sensitivity is not 1")
    rationale = (
        "Laplace(1/ε) is ε-DP only for a query whose L1 sensitivity is 1, such as a count. A mean of a data "
        "column (billing amounts, incomes, ages) moves by (max − min)/n when one record changes, which for "
        "raw values is unbounded and in practice far above 1; a degree sequence changes in two entries when "
        "one edge is added or removed (L1 sensitivity 2 under edge DP, more under node DP). Noising either at "
        "scale 1/ε gives far less privacy than the ε claimed. Reported: a Laplace draw with scale `1/ε` added "
        "(directly, through a name, or in a loop over the values) to a `.mean()` of a string-named column of "
        "a frame (a `groupby` mean, `df['col'].mean()`) that nothing in the module clips, or to a degree "
        "sequence in a graph module; and a call passing a degree sequence and ε (only) to a Laplace helper "
        "whose noise is `1/ε`. Not reported: columns that are clipped or rescaled, columns named as rates or "
        "flags (already in [0, 1]), a sensitivity argument passed to the helper. Fix: clip the column to "
        "[L, U] and use scale (U − L)/(n·ε) with a noisy or public n (or noise the clipped sum and the count "
        "separately); for a degree sequence use scale 2/ε under edge DP."
    )
    TRIGGERS = ("aplace", "noise", "mechanism")
    requires_dp_context = False

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding needs a Laplace draw (or a call of a noise helper) and a mean or a degree name."""
        called = facts.called
        draws = facts.calls_any(_DRAWS) or any(words(n.split(".")[-1]) & _HELPER_WORDS for n in called)
        if not draws:
            return False
        idents = facts.identifiers
        return any(n.split(".")[-1] in _MEANS for n in called) or any(words(i) & _DEGREE for i in idents)

    @classmethod
    def admits(cls, facts: AstFacts) -> bool:
        return facts.may_have_dp_context and cls.may_report(facts)

    # -- module ------------------------------------------------------------------------------------------------
    def visit_Module(self, node: cst.Module) -> None:
        self._bounded_text: list[str] = []
        self._graph = False
        #: the module's Laplace helpers drawing at 1/ε, with their draw
        self._helpers: dict[str, cst.Call] = {}
        for sub in walk(node):
            if isinstance(sub, cst.Call) and (_last(sub) in _BOUNDS or words(_last(sub)) & {"clip", "clamp"}):
                self._bounded_text.append(self.ctx.analysis.code(sub))
            elif isinstance(sub, (cst.Name, cst.Attribute)):
                ident = sub.value if isinstance(sub, cst.Name) else sub.attr.value
                if words(ident) & _GRAPH or ident == "G":
                    self._graph = True
            elif isinstance(sub, cst.FunctionDef):
                draws = [c for c in walk(sub) if isinstance(c, cst.Call) and _last(c) in _DRAWS
                         and _unit_over_eps(_scale(c))]
                if len(param_names(sub)) >= 2 and draws:
                    self._helpers[sub.name.value] = draws[0]
        self._reported: set[int] = set()

    # -- per function --------------------------------------------------------------------------------------------
    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._assigns = scope_assignments(node, self.ctx.analysis.line_of)
        self._loops: dict[str, cst.BaseExpression] = {}
        for sub in walk(node, into_scopes=False):
            it = loop_iter(sub) if isinstance(sub, cst.For) else None
            if it is not None:
                for t in loop_targets(sub):
                    self._loops.setdefault(t, it)
        for sub in walk(node, into_scopes=False):
            if isinstance(sub, cst.BinaryOperation) and isinstance(sub.operator, cst.Add):
                for data, noise in ((sub.left, sub.right), (sub.right, sub.left)):
                    if self._noise(noise, sub) and self._check(sub, data):
                        break
            elif isinstance(sub, cst.AugAssign) and isinstance(sub.operator, cst.AddAssign):
                if self._noise(sub.value, sub):
                    self._check(sub, sub.target)
            elif isinstance(sub, cst.Call):
                self._helper_call(sub)

    def _value(self, name: str, at: cst.CSTNode) -> cst.BaseExpression | None:
        line = self.ctx.analysis.line_of(at)
        found = None
        for ln, target, value in self._assigns:
            if target == name and ln <= line and (found is None or ln >= found[0]):
                found = (ln, value)
        return found[1] if found else None

    def _noise(self, expr: cst.BaseExpression, at: cst.CSTNode) -> bool:
        if _unit_draw(expr):
            return True
        if isinstance(expr, cst.Name):
            value = self._value(expr.value, at)
            return value is not None and _unit_draw(value)
        return False

    def _resolve(self, expr: cst.BaseExpression, at: cst.CSTNode) -> list[cst.BaseExpression]:
        """``expr`` and what it was built from: names followed to their last assignment or loop iterable,
        subscripts to their value (four hops)."""
        out = [expr]
        for _ in range(4):
            if isinstance(expr, cst.Subscript):
                expr = expr.value
            elif isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) \
                    and _last(expr) in {"reset_index", "to_numpy", "values", "copy", "astype", "tolist"}:
                expr = expr.func.value
            elif isinstance(expr, (cst.Name, cst.Attribute)) and (name := dotted(expr)) is not None:
                value = self._value(name, at)
                if value is None and name in self._loops:
                    value = self._loops[name]
                if value is None:
                    break
                expr = value
            else:
                break
            out.append(expr)
        return out

    def _check(self, site: cst.CSTNode, data: cst.BaseExpression) -> bool:
        chain = self._resolve(data, site)
        for expr in chain:
            column = self._raw_column_mean(expr)
            if column is not None:
                self._report(site, f"a mean of the raw column '{column}' (its sensitivity is the column's range "
                                   "over n, and nothing in this module clips it)",
                             "clip the column to [L, U] and use scale (U − L)/(n·ε), or noise the clipped sum "
                             "and the count separately")
                return True
        if self._graph and any(self._degree(e) for e in chain):
            self._report(site, "a degree sequence (one edge changes two degrees: L1 sensitivity 2 under edge DP, "
                               "more under node DP)", "use scale 2/ε under edge DP")
            return True
        return False

    def _helper_call(self, call: cst.Call) -> None:
        if not self._graph:
            return
        last = _last(call)
        positional = [a for a in call.args if a.keyword is None]
        if len(positional) != 2 or len(call.args) != 2 or not _eps_name(positional[1].value):
            return
        if last not in self._helpers:
            if last in _DRAWS or not words(last) & _HELPER_WORDS or isinstance(call.func, cst.Attribute):
                return
        if any(self._degree(e) for e in self._resolve(positional[0].value, call)):
            line = self.ctx.analysis.line_of(call)
            self._report(self._helpers.get(last, call),
                         f"a degree sequence passed with ε alone to the Laplace helper `{last}` (line {line}; one "
                         "edge changes two degrees: L1 sensitivity 2 under edge DP)",
                         "pass the sensitivity (2 under edge DP) and draw at scale 2/ε")

    @staticmethod
    def _degree(expr: cst.CSTNode) -> bool:
        if isinstance(expr, (cst.Name, cst.Attribute)):
            name = dotted(expr)
            return name is not None and bool(words(name.split(".")[-1]) & _DEGREE)
        if isinstance(expr, cst.Call):
            return bool(words(_last(expr)) & _DEGREE) or any(
                isinstance(n, cst.Call) and words(_last(n)) & _DEGREE for n in walk(expr))
        if isinstance(expr, (cst.ListComp, cst.GeneratorExp)):
            return any(isinstance(n, cst.Call) and words(_last(n)) & _DEGREE for n in walk(expr))
        return False

    def _raw_column_mean(self, expr: cst.CSTNode) -> str | None:
        if not (isinstance(expr, cst.Call) and _last(expr) in _MEANS and isinstance(expr.func, cst.Attribute)):
            return None
        column = None
        for n in walk(expr.func.value):
            if isinstance(n, cst.Subscript) and len(n.slice) == 1 \
                    and isinstance(n.slice[0].slice, cst.Index) \
                    and isinstance(n.slice[0].slice.value, cst.SimpleString):
                column = string_text(n.slice[0].slice.value)
                break
        if not column:
            return None
        if words(re.sub(r"\W+", "_", column)) & _UNIT_COLUMN:
            return None
        if any(f"'{column}'" in text or f'"{column}"' in text for text in self._bounded_text):
            return None
        root = expr.func.value
        while isinstance(root, (cst.Subscript, cst.Call, cst.Attribute)):
            root = root.value if isinstance(root, (cst.Subscript, cst.Attribute)) else root.func
        frame = root.value if isinstance(root, cst.Name) else None
        if frame and any(re.search(rf"\b{re.escape(frame)}\s*\.\s*(clip|clip_)\s*\(", t) or
                         re.search(rf"\(\s*{re.escape(frame)}\s*[,)]", t) for t in self._bounded_text):
            return None
        return column

    def _report(self, site: cst.CSTNode, what: str, fix: str) -> None:
        if id(site) in self._reported:
            return
        self._reported.add(id(site))
        self.report(site, f"Laplace noise of scale 1/ε (sensitivity 1) is added to {what}: the noise is sized "
                          f"for a count, so the release is not ε-DP; {fix}")

    VALID = (
        # twin of the group mean: the column is clipped and the scale is the clipped range over n
        """
import numpy as np
import pandas as pd
def noisy_group_means(epsilon, lo, hi):
    df = pd.read_csv('visits.csv')
    df['Charge'] = df['Charge'].clip(lo, hi)
    means = df.groupby('Ward')['Charge'].mean().reset_index()
    sizes = df.groupby('Ward').size().values
    noise = np.random.laplace(0, (hi - lo) / (sizes * epsilon))
    return means['Charge'] + noise
""",
        # a rate column already lies in [0, 1]
        """
import numpy as np
import pandas as pd
def noisy_rates(epsilon):
    df = pd.read_csv('survey.csv')
    rates = df.groupby('Region')['smoker_rate'].mean()
    return rates + np.random.laplace(0, 1 / epsilon, len(rates))
""",
        # twin of the degree case: scale 2/ε for edge DP
        """
import numpy as np
import networkx as nx
def noisy_degrees(G, epsilon):
    degrees = np.array([d for _, d in G.degree()])
    return degrees + np.random.laplace(0, 2 / epsilon, len(degrees))
""",
        # twin of the helper case: the helper is given the sensitivity
        """
import numpy as np
def lap_noise(values, epsilon, sensitivity):
    return values + np.random.laplace(0, sensitivity / epsilon, len(values))
def release(graph, epsilon):
    degree_seq = sorted(d for _, d in graph.degree())
    return lap_noise(degree_seq, epsilon, 2.0)
""",
        # counts per group: sensitivity 1 is right
        """
import numpy as np
import pandas as pd
def noisy_counts(epsilon):
    df = pd.read_csv('visits.csv')
    counts = df.groupby('Ward').size()
    return counts + np.random.laplace(0, 1 / epsilon, len(counts))
""",
        # ordinary ML: a mean of losses with label-smoothing noise, no privacy
        """
import numpy as np
def smooth_targets(df, eps):
    avg = df['loss'].mean()
    return avg + np.random.normal(0, eps)
""",
    )

    INVALID = (
        # per-group mean of a raw amount column, noise drawn into a name
        """
import numpy as np
import pandas as pd
def noisy_group_means(epsilon):
    df = pd.read_csv('visits.csv')
    means = df.groupby('Ward')['Charge'].mean().reset_index()
    noise = np.random.laplace(0, 1 / epsilon, len(means))
    noisy = means['Charge'] + noise  # <-
    return noisy
""",
        # a column mean of a frame parameter, noise inline (another column is binned, not this one)
        """
import numpy as np
import pandas as pd
def release_income(frame, eps):
    frame['band'] = pd.cut(frame['age'], [0, 30, 60, 120])
    return frame['income'].mean() + np.random.laplace(0.0, 1.0 / eps)  # <-
""",
        # degree sequence noised value by value in a loop
        """
import numpy as np
def noisy_degree_sequence(graph, epsilon):
    degree_sequence = [d for _, d in graph.degree()]
    out = []
    for value in degree_sequence:
        noise = np.random.laplace(0, 1 / epsilon)
        out.append(max(0, round(value + noise)))  # <-
    return out
""",
        # a degree vector given to a local helper whose noise is 1/ε
        """
import numpy as np
def add_noise(data, epsilon):
    return [x + np.random.laplace(0, 1.0 / epsilon) for x in data]  # <-
def synthesize(adj, epsilon):
    degrees = adj.sum(axis=1)
    noisy = add_noise(degrees, epsilon)
    return noisy
""",
        # a sorted degree vector given to an imported Laplace helper that takes no sensitivity
        """
import numpy as np
from helpers import laplace_mechanism, sorted_degree_vector
def dp_graph(G, epsilon):
    eps1 = epsilon / 2
    sorted_degrees = sorted_degree_vector(G)
    noisy = laplace_mechanism(sorted_degrees, eps1)  # <-
    return noisy
""",
    )
