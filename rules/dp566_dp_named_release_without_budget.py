"""DP566: a function takes ε, never uses it, and returns a value named as the private release that holds the exact answer."""
from __future__ import annotations

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.noisedraws import PURE_DRAWS
from dpcheck.analysis.syntax import call_name, walk, words
from dpcheck.rule import Rule

#: parameter words that name the privacy budget
_BUDGET_WORDS = frozenset({"epsilon", "eps", "budget"})
#: words of a helper call that draws or applies the mechanism's noise
_NOISE_CALL_WORDS = frozenset({"noise", "noisy", "laplace", "gaussian", "geometric", "perturb", "privatize",
                               "privatise", "randomize", "randomise", "mechanism", "mech", "sanitize", "sanitise",
                               "dp", "private", "ldp", "rr", "exponential", "staircase"})
#: words of an object that carries the mechanism (a Tumult / OpenDP measurement, a mechanism instance)
_MECHANISM_OBJECT_WORDS = frozenset({"measurement", "measurements", "mechanism", "mechanisms"})
#: words of a variable that says it holds the private (noised) release
_RELEASE_WORDS = frozenset({"noisy", "noised", "sanitized", "sanitised", "privatized", "privatised", "perturbed"})


def _release_name(name: str) -> bool:
    w = words(name)
    if w & _RELEASE_WORDS:
        return True
    # ``res_dp`` / ``dp_count`` / ``answerDP``; a bare ``dp`` is a dynamic-programming table
    return "dp" in w and len(w) >= 2


def _literal(node: cst.BaseExpression) -> bool:
    if isinstance(node, (cst.Integer, cst.Float, cst.SimpleString, cst.Imaginary)):
        return True
    if isinstance(node, cst.Name) and node.value in {"None", "True", "False"}:
        return True
    if isinstance(node, cst.UnaryOperation):
        return _literal(node.expression)
    if isinstance(node, (cst.List, cst.Tuple, cst.Set)):
        return all(isinstance(e, cst.Element) and _literal(e.value) for e in node.elements)
    if isinstance(node, cst.Dict):
        return not node.elements
    return False


class DpNamedReleaseWithoutBudget(Rule):
    id = "DP566"
    name = "dp-named-release-without-budget"
    category = "general"
    severity = "error"
    summary = ("a function takes ε but never uses it and returns a variable named as the private release "
               "(`res_dp`, `noisy_count`) that holds the exact answer")
    rationale = (
        "A query endpoint or strategy of a DP system takes the budget and returns the private answer "
        "(`def execute(query, epsilon): ... return res_dp`). When one strategy stores the exact query result in "
        "the release variable (`res_dp = res`) and neither draws noise nor even reads ε, the caller receives "
        "the exact private answer under the name and the budget of a DP release. Reported: in a function with "
        "an ε/budget parameter that the body never reads and that calls no noise draw or mechanism helper, an "
        "assignment of a non-constant value to a variable whose name marks it as the DP/noisy release and that "
        "the function returns. Not reported: a function that reads ε or draws noise (another rule checks how), "
        "an `eps` parameter with a small float default (a numerical tolerance), a bare `dp` table (dynamic "
        "programming), a release variable set to a constant, a body that applies a mechanism object (`query.measurement`, "
        "`self.mechanism`: a Tumult or OpenDP measurement carries its own noise). Fix: add the mechanism's noise calibrated to ε, "
        "or drop ε and the DP name for a non-private mode."
    )
    TRIGGERS = ("dp", "noisy", "noised", "saniti", "privati", "perturbed")
    requires_dp_context = False

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        return True

    VALID = (
        # the noise lives in the query's measurement object, which the accountant applies
        """
def execute_dp_query(accountant, query, budget, exact=None):
    chain = query.transformation | query.measurement
    dp_answer = accountant.measure(chain)
    return dp_answer.collect()[0][0]
""",
        # twin: the simple strategy adds Laplace noise calibrated to ε
        """
import numpy as np
def execute_query(db, query, strategy, epsilon, sensitivity=1.0):
    if strategy == "simple":
        res = db.count(query)
        res_dp = res + np.random.laplace(0, sensitivity / epsilon) if res is not None else 0
        return res_dp
    return 0
""",
        # twin: the release goes through the project's mechanism helper
        """
def answer(db, query, eps):
    exact = db.run(query)
    noisy_answer = laplace_mechanism(exact, eps)
    return noisy_answer
""",
        # ML: a numerical eps with a float default, a bare dp table
        """
def edit_distance(a, b, eps=1e-8):
    dp = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(len(a)):
        for j in range(len(b)):
            dp[i + 1][j + 1] = min(dp[i][j + 1] + 1, dp[i + 1][j] + 1, dp[i][j] + (a[i] != b[j]))
    return dp[-1][-1]
""",
        # the release variable initialised to a constant when the query is empty
        """
def empty_answer(query, epsilon):
    res_dp = 0
    return res_dp
""",
        # a loss margin epsilon that is read
        """
import torch
def hinge(scores_dp, labels, epsilon=0.1):
    margin_dp = scores_dp * labels
    return torch.clamp(epsilon - margin_dp, min=0).mean()
""",
    )

    INVALID = (
        # the twin: only the transformation is applied, the measurement (and the budget) are dropped
        """
def execute_dp_query(accountant, query, budget, exact=None):
    chain = query.transformation | query.aggregation
    dp_answer = accountant.evaluate(chain)  # <-
    return dp_answer.collect()[0][0]
""",
        # the "simple" strategy copies the exact answer into res_dp
        """
def execute_query(db, query, strategy, epsilon):
    if strategy == "simple":
        res = db.count(query)
        if res is not None:
            res_dp = res  # <-
        else:
            res_dp = 0
        return res_dp
    return 0
""",
        # a noisy-named release that is the exact sum
        """
def answer(db, query, eps):
    exact = db.run(query)
    noisy_answer = exact  # <-
    return noisy_answer
""",
        # a DP histogram endpoint that ignores its budget
        """
import numpy as np
def histogram_dp(values, bins, epsilon):
    counts, _ = np.histogram(values, bins=bins)
    dp_counts = counts.astype(float)  # <-
    return dp_counts
""",
        # a method returning the exact aggregate under the DP name, ε unused
        """
class Provider:
    def query(self, table, privacy_budget):
        total = sum(row.value for row in self.rows[table])
        sanitized_total = total  # <-
        return self.id, sanitized_total
""",
    )

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        budget = [p for p in (*node.params.posonly_params, *node.params.params, *node.params.kwonly_params)
                  if words(p.name.value) & _BUDGET_WORDS and not isinstance(p.default, cst.Float)]
        if not budget:
            return
        every = list(walk(node.body))
        names = {n.value for n in every if isinstance(n, cst.Name)}
        if any(p.name.value in names for p in budget):
            return
        for n in every:
            if isinstance(n, cst.Call):
                cn = call_name(n)
                if cn in PURE_DRAWS or words(cn) & _NOISE_CALL_WORDS:
                    return
            # a mechanism object applied (``accountant.measure(query.transformation | query.measurement)``, a
            # Tumult/OpenDP measurement, ``self.mechanism``): the noise is in the object, not a draw in the body
            elif isinstance(n, cst.Attribute) and words(n.attr.value) & _MECHANISM_OBJECT_WORDS \
                    or isinstance(n, cst.Name) and words(n.value) & _MECHANISM_OBJECT_WORDS:
                return
        body = list(walk(node.body, into_scopes=False))
        returned: set[str] = set()
        for n in body:
            if isinstance(n, cst.Return) and n.value is not None:
                returned |= {s.value for s in walk(n.value) if isinstance(s, cst.Name)}
        for n in body:
            if not (isinstance(n, cst.Assign) and len(n.targets) == 1 and isinstance(n.targets[0].target, cst.Name)):
                continue
            name = n.targets[0].target.value
            if name not in returned or not _release_name(name) or _literal(n.value):
                continue
            self.report(n, f"`{name}` is returned as the private release but holds "
                           f"`{self.ctx.analysis.code(n.value).strip()[:40]}`, the exact answer: the function takes "
                           f"`{budget[0].name.value}` and never uses it, and draws no noise; add the mechanism's "
                           "noise or drop the DP name and the budget")
