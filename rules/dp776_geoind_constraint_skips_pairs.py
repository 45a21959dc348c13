"""DP776: the ε-ratio constraints of an optimised mechanism skip the pairs where the output equals an input."""
from __future__ import annotations

import re

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, walk, words
from dpcheck.rule import Rule

_EPS_WORDS = frozenset({"eps", "epsilon"})


def _indices(expr: cst.BaseExpression) -> tuple[str, list[str]] | None:
    """``p[i1, j]`` / ``p[i1][j]``: (``p``, [``i1``, ``j``]) when every index is a plain name."""
    names: list[str] = []
    while isinstance(expr, cst.Subscript):
        part: list[str] = []
        for el in expr.slice:
            if not isinstance(el.slice, cst.Index) or not isinstance(el.slice.value, cst.Name):
                return None
            part.append(el.slice.value.value)
        names = part + names
        expr = expr.value
    if not isinstance(expr, (cst.Name, cst.Attribute)) or len(names) != 2:
        return None
    base = expr.value if isinstance(expr, cst.Name) else expr.attr.value
    return base, names


def _exp_eps(expr: cst.BaseExpression) -> bool:
    return any(isinstance(c, cst.Call) and call_name(c) in ("exp", "e")
               and any(isinstance(n, cst.Name) and words(n.value) & _EPS_WORDS for n in walk(c))
               for c in walk(expr))


def _sides(comp: cst.Comparison) -> tuple[cst.BaseExpression, cst.BaseExpression] | None:
    if len(comp.comparisons) != 1 or not isinstance(comp.comparisons[0].operator,
                                                    (cst.LessThanEqual, cst.GreaterThanEqual, cst.LessThan)):
        return None
    return comp.left, comp.comparisons[0].comparator


def _subscripts(expr: cst.BaseExpression) -> list[tuple[str, list[str]]]:
    out = []
    for n in walk(expr):
        if isinstance(n, cst.Subscript) and (got := _indices(n)) is not None:
            out.append(got)
    return out


def _excludes(test: cst.BaseExpression, shared: str, inputs: set[str]) -> bool:
    """``j != i1``, ``i1 != j``, ``j not in (i1, i2)`` anywhere in the test."""
    for n in walk(test):
        if not isinstance(n, cst.Comparison):
            continue
        left = n.left
        for c in n.comparisons:
            pair = {x.value for x in (left, c.comparator) if isinstance(x, cst.Name)}
            if isinstance(c.operator, cst.NotEqual) and shared in pair and pair & inputs:
                return True
            if isinstance(c.operator, cst.NotIn) and isinstance(left, cst.Name) and left.value == shared \
                    and {x.value for x in walk(c.comparator) if isinstance(x, cst.Name)} & inputs:
                return True
            left = c.comparator
    return False


def _skips_on_equal(block: cst.CSTNode, shared: str, inputs: set[str]) -> bool:
    """``if j == i1 or j == i2: continue`` in the loop body."""
    for n in walk(block):
        if isinstance(n, cst.If) and any(isinstance(s, cst.SimpleStatementLine)
                                         and any(isinstance(x, cst.Continue) for x in s.body)
                                         for s in (n.body.body if isinstance(n.body, cst.IndentedBlock) else [])):
            for c in walk(n.test):
                if isinstance(c, cst.Comparison):
                    left = c.left
                    for cc in c.comparisons:
                        pair = {x.value for x in (left, cc.comparator) if isinstance(x, cst.Name)}
                        if isinstance(cc.operator, cst.Equal) and shared in pair and pair & inputs:
                            return True
                        left = cc.comparator
    return False


class GeoIndConstraintSkipsPairs(Rule):
    id = "DP776"
    name = "geoind-constraint-skips-pairs"
    category = "general"
    severity = "error"
    summary = ("the ε-indistinguishability constraints of an optimised mechanism p[x, z] ≤ exp(ε·d(x, x'))·p[x', z] "
               "are only added when the output z differs from the inputs, so those pairs are unconstrained")
    rationale = (
        "A mechanism found by linear programming (optimal geo-indistinguishability, an optimal local randomizer) is "
        "private only if every ratio constraint p[x, z] ≤ exp(ε·d(x, x'))·p[x', z] holds, for every pair of inputs "
        "and EVERY output z, including z = x and z = x'. When the loops that add the constraints are guarded by "
        "`if z != x and z != x'` (or `continue` when z equals an input), the probability of reporting one's own "
        "location (or a neighbour's) is left free: p[x, x] can be forced to 0 while p[x', x] is positive, an "
        "unbounded ratio. Reported: such a ratio constraint (a comparison between two entries of the same matrix "
        "sharing the output index, one side multiplied by `exp(ε…)`) under a guard that excludes the shared output "
        "index equal to an input index. Good: constrain all triples (skipping only x = x', where it is trivial). "
        "Fix: drop the guard on the output index and make p[x, x] a variable too."
    )
    TRIGGERS = ("exp",)
    requires_dp_context = False

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """An ``exp(`` of an ε word, a ``!=`` or ``==`` comparison and a loop."""
        return "for " in facts.source and re.search(r"exp\([^)]*\beps", facts.source) is not None \
            and ("!=" in facts.source or "==" in facts.source or " not in " in facts.source)

    def visit_Comparison(self, node: cst.Comparison) -> None:
        sides = _sides(node)
        if sides is None:
            return
        left, right = sides
        a, b = _subscripts(left), _subscripts(right)
        if not a or not b or not (_exp_eps(left) or _exp_eps(right)):
            return
        found = None
        for base1, idx1 in a:
            for base2, idx2 in b:
                if base1 != base2:
                    continue
                if idx1[1] == idx2[1] and idx1[0] != idx2[0]:
                    found = idx1[1], {idx1[0], idx2[0]}
                elif idx1[0] == idx2[0] and idx1[1] != idx2[1]:
                    found = idx1[0], {idx1[1], idx2[1]}
        if found is None:
            return
        shared, inputs = found
        fa = self.ctx.analysis
        loops = fa.enclosing_loops(node, comprehensions=False)
        if not loops:
            return
        guarded = False
        for lp in loops:
            for n in walk(lp.body):
                if isinstance(n, cst.If) and any(x is node for x in walk(n.body)) \
                        and _excludes(n.test, shared, inputs):
                    guarded = True
                    break
            if guarded or _skips_on_equal(lp.body, shared, inputs):
                guarded = True
                break
        if guarded:
            self.report(node, f"this ratio constraint is skipped whenever the output `{shared}` equals an input "
                              f"({', '.join(sorted(inputs))}): those probabilities are unconstrained and the "
                              f"ε-ratio can be unbounded; constrain every output")

    VALID = (
        # (h47-91) twin: every output constrained, only the trivial x == x' pair skipped
        """
import numpy as np
def build(m, k, eps, d, p):
    for i1 in range(k):
        for j in range(k):
            for i2 in range(k):
                if i1 != i2:
                    m.addConstr(p[i1, j] <= np.exp(eps * d[i1, i2]) * p[i2, j])
""",
        # (h47-91) twin in cvxpy: all triples
        """
import cvxpy as cp
import numpy as np
def constraints(P, D, epsilon, n):
    cons = []
    for x in range(n):
        for x2 in range(n):
            for z in range(n):
                cons.append(P[x][z] <= np.exp(epsilon * D[x][x2]) * P[x2][z])
    return cons
""",
        # (h47-91) a guard on the inputs only (x == x' is trivial)
        """
import numpy as np
def build(m, k, eps, d, q):
    for a in range(k):
        for b in range(k):
            if a == b:
                continue
            for z in range(k):
                m.addConstr(q[a, z] <= np.exp(eps * d[a, b]) * q[b, z])
""",
        # ordinary ML: a numerically-stable comparison with an epsilon margin
        """
import numpy as np
def check(probs, eps=1e-9):
    n = len(probs)
    for i in range(n):
        for j in range(n):
            if i != j:
                assert probs[i, j] <= np.exp(eps) * probs[i, j] + 1
""",
    )
    INVALID = (
        # (h47-91) the output index skipped when equal to either input
        """
import numpy as np
def build(m, k, eps, d, p):
    for i1 in range(k):
        for j in range(k):
            for i2 in range(k):
                if j != i1 and j != i2:
                    m.addConstr(p[i1, j] <= np.exp(eps * d[i1, i2]) * p[i2, j])  # <-
""",
        # (h47-91) the same skip spelled with continue, nested lists
        """
import numpy as np
def constraints(P, D, epsilon, n):
    cons = []
    for x in range(n):
        for x2 in range(n):
            for z in range(n):
                if z == x or z == x2:
                    continue
                cons.append(P[x][z] <= np.exp(epsilon * D[x][x2]) * P[x2][z])  # <-
    return cons
""",
        # (h47-91) transposed matrix (output first), guard with not in
        """
import math
def add_geo(model, Q, dist, eps, locs):
    for z in locs:
        for a in locs:
            for b in locs:
                if z not in (a, b):
                    model.add(Q[z, a] <= math.exp(eps * dist[a, b]) * Q[z, b])  # <-
""",
        # (h47-91) >= spelling with the skip on one input
        """
import numpy as np
def lp(m, K, epsilon, dd, x):
    for o in range(K):
        for u in range(K):
            for v in range(K):
                if o != u:
                    m.addConstr(np.exp(epsilon * dd[u, v]) * x[v, o] >= x[u, o])  # <-
""",
    )
