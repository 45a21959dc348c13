"""DP744: a per-record loop that stores the raw value when the record's budget is 0 and a noised one otherwise."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, dotted, number, subscripted_name, walk, words
from dpcheck.rule import Rule

_BUDGET_WORDS = frozenset({"eps", "epsilon", "budget", "rho"})
_NOISE_WORDS = frozenset({"noise", "noisy", "laplace", "gauss", "gaussian", "perturb", "privatize", "privatise",
                          "randomize", "randomise", "mechanism", "normal", "geometric"})


def _zero_budget(test: cst.BaseExpression) -> str | None:
    """``eps <= 0`` / ``budget == 0`` on a budget-named value (alone, not in and/or)."""
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        comp = test.comparisons[0]
        if isinstance(comp.operator, (cst.Equal, cst.LessThanEqual)) and number(comp.comparator) == 0:
            name = dotted(test.left)
            if name is not None and words(name.split(".")[-1]) & _BUDGET_WORDS:
                return name
    return None


def _store(stmt: cst.BaseSmallStatement) -> tuple[str, cst.BaseExpression] | None:
    """``out[i] = value`` or ``out.append(value)``: (out, value)."""
    if isinstance(stmt, cst.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0].target, cst.Subscript):
        base = subscripted_name(stmt.targets[0].target)
        return (base, stmt.value) if base else None
    if isinstance(stmt, cst.Expr) and isinstance(stmt.value, cst.Call) and call_name(stmt.value) == "append" \
            and isinstance(stmt.value.func, cst.Attribute) and isinstance(stmt.value.func.value, cst.Name) \
            and len(stmt.value.args) == 1:
        return stmt.value.func.value.value, stmt.value.args[0].value
    return None


def _stores(node: cst.CSTNode) -> list[tuple[cst.CSTNode, str, cst.BaseExpression]]:
    out = []
    for n in walk(node, into_scopes=False):
        if isinstance(n, cst.SimpleStatementLine):
            for small in n.body:
                if (s := _store(small)) is not None:
                    out.append((small, *s))
    return out


def _noised(expr: cst.BaseExpression, budget: str, raw: str) -> bool:
    """A call that takes the raw value and the budget, or a noise-named call / draw over the raw value."""
    if raw not in {x.value for x in walk(expr) if isinstance(x, cst.Name)}:
        return False
    for n in walk(expr):
        if not isinstance(n, cst.Call):
            continue
        names = {dotted(x) for x in walk(n) if isinstance(x, (cst.Name, cst.Attribute))}
        if budget in names or words(call_name(n)) & _NOISE_WORDS:
            return True
    return False


class ZeroBudgetStoresExactInLoop(Rule):
    id = "DP744"
    name = "zero-budget-stores-exact-in-loop"
    category = "general"
    severity = "error"
    summary = ("a per-record loop stores the raw value when the record's budget is 0 (`if eps <= 0: out[i] = v; "
               "continue`) and a noised value otherwise")
    rationale = (
        "A budget of ε = 0 must release nothing about the record; a loop that perturbs each record with its own "
        "allocated budget and, for a zero budget, copies the exact value into the output (`out[i] = v` or "
        "`out.append(v)` then `continue`) publishes those records in the clear, exactly where the allocation "
        "meant to spend nothing. Allocations that hand out 0 to some steps (a window already spent, a skipped "
        "point) make this branch reachable. Reported: inside a `for` loop, an `if <budget> <= 0` / `== 0` whose "
        "body stores a plain name into an output list or array, when the loop elsewhere stores into the same "
        "output a call that noises that name (a noise/perturb call, or one that takes the budget). Not "
        "reported: a zero budget answered with a constant, a previous release or NaN, or skipped. Fix: publish "
        "a data-independent value (the last release, a constant) or skip the record."
    )
    TRIGGERS = ("== 0", "<= 0")
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A loop with an ``if`` inside, and a budget-named identifier."""
        return bool(facts.nodes(ast.For)) and bool(facts.nodes(ast.If)) \
            and any(words(i) & _BUDGET_WORDS for i in facts.identifiers)

    @classmethod
    def admits(cls, facts: AstFacts) -> bool:
        return facts.may_have_dp_context and cls.may_report(facts)

    def visit_For(self, node: cst.For) -> None:
        loop_stores = _stores(node.body)
        for sub in walk(node.body, into_scopes=False):
            if not isinstance(sub, cst.If):
                continue
            budget = _zero_budget(sub.test)
            if budget is None:
                continue
            for small, out, value in _stores(sub.body):
                if not isinstance(value, cst.Name):
                    continue
                raw = value.value
                if any(o == out and s is not small and _noised(v, budget, raw) for s, o, v in loop_stores):
                    self.report(small, f"`{budget}` of 0 stores the exact `{raw}` into `{out}` while the other "
                                       "records are noised: a zero budget must release nothing about the record; "
                                       "publish a data-independent value or skip it")

    VALID = (
        # twin: a zero budget repeats the last release
        """
import numpy as np
def perturb_stream(values, budgets, sens):
    out = np.empty_like(values)
    last = 0.0
    for i, (v, eps) in enumerate(zip(values, budgets)):
        if eps <= 0:
            out[i] = last
            continue
        out[i] = v + np.random.laplace(0, sens / eps)
        last = out[i]
    return out
""",
        # twin: append version, zero budget skipped
        """
import numpy as np
def noisy_series(xs, epsilons):
    noisy = []
    for x, epsilon in zip(xs, epsilons):
        if epsilon == 0:
            noisy.append(np.nan)
            continue
        noisy.append(x + np.random.laplace(0, 1.0 / epsilon))
    return noisy
""",
        # twin: the zero budget is rejected
        """
import numpy as np
def randomise_points(points, eps_per_point, b):
    out = np.zeros(len(points))
    for i in range(len(points)):
        eps = eps_per_point[i]
        if eps <= 0:
            raise ValueError("each point needs a positive budget")
        out[i] = sample_truncated(points[i], eps, b)
    return out
""",
        # ordinary ML: an epsilon-greedy loop copying the greedy action
        """
import numpy as np
def choose_actions(q_values, epsilon):
    actions = []
    for q in q_values:
        greedy = int(np.argmax(q))
        if epsilon <= 0:
            actions.append(greedy)
            continue
        actions.append(greedy if np.random.rand() > epsilon else np.random.randint(len(q)))
    return actions
""",
    )

    INVALID = (
        # the exact value is published for a zero allocation
        """
import numpy as np
def perturb_stream(values, budgets, sens):
    out = np.empty_like(values)
    for i, (v, eps) in enumerate(zip(values, budgets)):
        if eps <= 0:
            out[i] = v  # <-
            continue
        out[i] = v + np.random.laplace(0, sens / eps)
    return out
""",
        # append version
        """
import numpy as np
def noisy_series(xs, epsilons):
    noisy = []
    for x, epsilon in zip(xs, epsilons):
        if epsilon == 0:
            noisy.append(x)  # <-
            continue
        noisy.append(x + np.random.laplace(0, 1.0 / epsilon))
    return noisy
""",
        # a custom sampler that takes the budget, with an else branch
        """
import numpy as np
def randomise_points(points, eps_per_point, b):
    out = np.zeros(len(points))
    for i in range(len(points)):
        p, epsilon = points[i], eps_per_point[i]
        if epsilon <= 0:
            out[i] = p  # <-
        else:
            out[i] = sample_truncated(p, epsilon, b)
    return out
""",
        # a per-user budget read off a dict
        """
import numpy as np
def release_scores(scores, user_budget):
    released = {}
    for user, score in scores.items():
        budget = user_budget[user]
        if budget == 0:
            released[user] = score  # <-
            continue
        released[user] = score + np.random.laplace(0, 1.0 / budget)
    return released
""",
    )
