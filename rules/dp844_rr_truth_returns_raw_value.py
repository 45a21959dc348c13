"""DP844: randomized response over k bins returns the raw input on its truthful branch instead of the
input's bin."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, dotted, walk, words
from dpcheck.rule import Rule

_EPS = frozenset({"eps", "epsilon"})
_BINNING = frozenset({"floor", "int", "digitize", "searchsorted", "round", "ceil", "bisect", "bisect_left",
                      "bisect_right"})
_RANDOM = frozenset({"random", "uniform", "rand", "randint", "randrange", "choice", "integers", "binomial",
                     "bernoulli"})


def _eps_exp(node: cst.CSTNode) -> bool:
    def eps(n: cst.CSTNode) -> bool:
        return any(isinstance(m, (cst.Name, cst.Attribute)) and words((dotted(m) or "").split(".")[-1]) & _EPS
                   for m in walk(n))
    for n in walk(node):
        if isinstance(n, cst.Call) and call_name(n) in ("exp", "expm1") and n.args and eps(n.args[0].value):
            return True
        if isinstance(n, cst.BinaryOperation) and isinstance(n.operator, cst.Power) and eps(n.right):
            return True
    return False


class RrTruthReturnsRawValue(Rule):
    id = "DP844"
    name = "rr-truth-returns-raw-value"
    category = "general"
    severity = "error"
    summary = ("randomized response over k bins computes the input's bin but returns the raw input on the "
               "truthful branch, while lies are bin values")
    rationale = (
        "k-RR on a continuous value first maps it to one of k bins and then reports that bin or a random other "
        "bin. When the truthful branch returns the original value instead of its bin, every truthful report of a "
        "value that is not exactly on the grid reveals the exact private value, and lies (always grid values) "
        "can be told apart from the truth: the output is no longer ε-LDP at all. Reported: in a function that "
        "draws randomness and whose function or class computes `exp(ε)`, a name bound to a discretisation of a "
        "parameter or attribute (`idx = floor(v * k)`, `int(v * k)`, `np.digitize(v, edges)`) and a `return` of "
        "that raw parameter or attribute. Bad: `return self.private_val`. Good: `return idx / k` (the bin the "
        "lies are drawn from)."
    )
    TRIGGERS = ("floor", "int(", "digitize", "round", "searchsorted", "ceil", "bisect")
    requires_dp_context = False

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding needs a binning call and a ``return`` of a bare name or attribute."""
        return facts.calls_any(_BINNING) and facts.calls_any(_RANDOM) and any(
            isinstance(r.value, (ast.Name, ast.Attribute)) for r in facts.nodes(ast.Return))  # type: ignore[attr-defined]

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        fa = self.ctx.analysis
        scope: cst.CSTNode = node
        for anc in fa.ancestors(node):
            if isinstance(anc, cst.ClassDef):
                scope = anc
                break
        if not (_eps_exp(node) or _eps_exp(scope)):
            return
        body = list(walk(node.body, into_scopes=False))
        if not any(isinstance(c, cst.Call) and call_name(c) in _RANDOM for c in body):
            return
        params = {p.name.value for p in node.params.params}
        binned: set[str] = set()
        for stmt in body:
            if not (isinstance(stmt, cst.Assign) and isinstance(stmt.value, cst.Call)
                    and call_name(stmt.value) in _BINNING and stmt.value.args):
                continue
            arg = stmt.value.args[0].value
            for n in walk(arg):
                d = dotted(n) if isinstance(n, (cst.Name, cst.Attribute)) else None
                if d and (d in params and d != "self" or d.startswith("self.") and d.count(".") == 1):
                    if d.startswith("self.") and words(d[5:]) & (_EPS | {"k", "total", "num", "bins", "n", "d"}):
                        continue
                    if d in params and words(d) & (_EPS | {"k", "total", "num", "bins", "n", "d", "domain"}):
                        continue
                    if any(isinstance(m, cst.BinaryOperation) for m in walk(arg)) or call_name(stmt.value) in (
                            "digitize", "searchsorted", "bisect", "bisect_left", "bisect_right"):
                        binned.add(d)
        if not binned:
            return
        returns = [r for r in body if isinstance(r, cst.Return) and r.value is not None]
        if len(returns) < 2:
            return
        for ret in returns:
            d = dotted(ret.value) if isinstance(ret.value, (cst.Name, cst.Attribute)) else None
            if d in binned:
                self.report(ret, f"`return {d}` reports the raw input on the truthful branch although the "
                                 "mechanism bins it: a value off the grid is revealed exactly and tells the truth "
                                 "apart from the lies; return its bin (the value the lies are drawn from)")

    VALID = (
        # twin: the truthful branch reports the bin
        """
import math, random
class Discrete:
    def krr(self):
        idx = math.floor(self.value * self.k)
        p = (self.k - 1) / (self.k - 1 + math.exp(self.epsilon))
        if random.uniform(0, 1) < p:
            while True:
                s = random.randrange(self.k)
                if s != idx:
                    return s / self.k
        return idx / self.k
""",
        # twin: a function form returning the bin index
        """
import numpy as np
def bin_rr(x, edges, epsilon, rng):
    b = np.digitize(x, edges)
    k = len(edges) + 1
    if rng.random() < np.exp(epsilon) / (np.exp(epsilon) + k - 1):
        return b
    return rng.choice([c for c in range(k) if c != b])
""",
        # the raw value is returned only when no randomness applies (an identity mechanism for testing)
        """
import numpy as np
def identity(x, epsilon):
    level = int(x * 10)
    return x
""",
        # ordinary ML: quantised augmentation with randomness, no budget
        """
import random
def jitter(v, levels):
    q = round(v * levels)
    if random.random() < 0.5:
        return q / levels
    return v
""",
    )
    INVALID = (
        # the truthful branch returns the raw continuous value
        """
import math, random
class Discrete:
    def krr(self):
        idx = math.floor(self.value * self.k)
        p = (self.k - 1) / (self.k - 1 + math.exp(self.epsilon))
        if random.uniform(0, 1) < p:
            while True:
                s = random.randrange(self.k)
                if s != idx:
                    return s / self.k
        return self.value  # <-
""",
        # function form: digitize then return the input itself
        """
import numpy as np
def bin_rr(x, edges, epsilon, rng):
    b = np.digitize(x, edges)
    k = len(edges) + 1
    if rng.random() < np.exp(epsilon) / (np.exp(epsilon) + k - 1):
        return x  # <-
    return rng.choice([c for c in range(k) if c != b])
""",
        # int() binning, e ** eps, returns the parameter
        """
import random
from math import e
def grr_unit(val, n_bins, eps):
    cell = int(val * n_bins)
    if random.random() > e ** eps / (e ** eps + n_bins - 1):
        other = random.choice([c for c in range(n_bins) if c != cell])
        return (other + 0.5) / n_bins
    return val  # <-
""",
        # the probability lives in another method of the class
        """
import math
import numpy as np
class Bucketizer:
    def keep_prob(self):
        return math.exp(self.eps) / (math.exp(self.eps) + self.buckets - 1)
    def report(self, rng):
        pos = int(np.floor(self.reading * self.buckets))
        if rng.uniform() < self.keep_prob():
            return self.reading  # <-
        return rng.integers(self.buckets) / self.buckets
""",
    )
