"""DP667: a privacy-budget exhaustion check whose branches do the same thing, so spending goes on past the limit."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import name_words
from dpcheck.rule import Rule

#: words of a test that asks whether the privacy budget is used up
_LIMIT_WORDS = frozenset({"budget", "exhausted", "consumed", "exceeded", "limit", "remaining", "spent", "global",
                          "total", "max", "cap"})
_EPS_WORDS = frozenset({"eps", "epsilon", "budget", "privacy", "rho", "delta"})


def _body_code(module: cst.Module, block: cst.BaseSuite) -> str:
    """The block's statements without comments or blank lines."""
    code = module.code_for_node(block)
    lines = []
    for line in code.splitlines():
        stripped = line.split("#", 1)[0].strip()
        if stripped:
            lines.append(stripped)
    return "\n".join(lines)


class BudgetCheckWithoutEffect(Rule):
    id = "DP667"
    name = "budget-check-without-effect"
    category = "general"
    severity = "error"
    summary = ("a check that the privacy budget is exhausted runs the same code as the branch where it is not: "
               "the party keeps releasing at the full ε past its limit")
    rationale = (
        "A client or mechanism that promises to stop (or to release nothing) once its budget is spent must act "
        "on that check. When the exhausted branch does exactly what the other branch does — typically because "
        "its `return 0` was commented out and replaced by `return self.epsilon` while debugging — every report "
        "after the limit still spends ε, so the total privacy loss is unbounded while the code and its docs "
        "claim `limit · ε`. Reported: an `if` whose test reads a budget word (`budget_consumed`, `global_eps`, "
        "`count * epsilon > limit`, `remaining`) together with an ε/budget name, and whose body and `else` are the "
        "same statements (comments ignored). Not reported: branches that differ, checks with no `else` (their "
        "effect is the body). Bad: `if self.count * self.epsilon > self.global_eps: return self.epsilon` / "
        "`else: return self.epsilon`. Good: `if …: return 0` (no budget left, nothing released)."
    )
    TRIGGERS = ("budget", "eps", "limit")
    requires_dp_context = False

    VALID = (
        # twin: the exhausted branch releases nothing
        """
class Reporter:
    def current_budget(self):
        if self.count * self.epsilon > self.global_eps or self.budget_consumed:
            return 0
        else:
            return self.epsilon
""",
        # twin: the exhausted branch stops the loop
        """
def run(mech, data, epsilon, total_budget):
    spent = 0.0
    for x in data:
        if spent + epsilon > total_budget:
            break
        else:
            spent += epsilon
        yield mech(x, epsilon)
""",
        # same branches on a test that is not about a budget (a learning-rate schedule)
        """
def lr_at(step, warmup, base_lr):
    if step < warmup:
        return base_lr
    else:
        return base_lr
""",
        # ordinary ML: early stopping on a patience limit, branches differ
        """
def should_stop(history, patience, eps=1e-4):
    if len(history) > patience and history[-1] > min(history[:-1]) - eps:
        return True
    else:
        return False
""",
    )
    INVALID = (
        """
class Reporter:
    def current_budget(self):
        if self.count * self.epsilon > self.global_eps or self.budget_consumed:  # <-
            # return 0
            return self.epsilon
        else:
            return self.epsilon
""",
        """
def spend(acct, epsilon, limit):
    if acct.spent + epsilon > limit:  # <-
        acct.spent += epsilon
        return epsilon
    else:
        acct.spent += epsilon
        return epsilon
""",
        """
def next_release(self, x):
    if self.remaining_budget <= 0:  # <-
        return self.laplace(x, self.epsilon)
    return self.laplace(x, self.epsilon)
""",
        """
def grant(user, eps_request):
    if user.privacy_spent >= user.privacy_cap:  # <-
        allowed = eps_request
    else:
        allowed = eps_request
    return allowed
""",
    )

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding is an ``if`` with an ``else`` (or a body ending in ``return``) whose test reads a limit word."""
        for node in facts.nodes(ast.If):
            if node.orelse or (node.body and isinstance(node.body[-1], ast.Return)):
                return True
        return False

    def visit_If(self, node: cst.If) -> None:
        test_names = name_words(node.test)
        if not (test_names & _LIMIT_WORDS and test_names & _EPS_WORDS):
            return
        body = _body_code(self.ctx.module, node.body)
        if not body:
            return
        orelse = node.orelse
        if isinstance(orelse, cst.Else):
            other = _body_code(self.ctx.module, orelse.body)
        elif orelse is None:
            other = self._falls_through(node)
        else:
            return
        if other is None or other != body:
            return
        self.report(node, "the budget-exhaustion check runs the same code whether or not the budget is used up, so "
                          "releases continue at the full ε past the limit; release nothing (e.g. `return 0`) or stop "
                          "once the budget is exhausted")

    def _falls_through(self, node: cst.If) -> str | None:
        """``if exhausted: return f(x)`` followed directly by the same ``return f(x)``: the code after the ``if``
        is what the other branch runs (only when the body ends in a ``return``)."""
        parent = self.ctx.analysis.parent(node)
        body = getattr(parent, "body", None)
        if not isinstance(body, (list, tuple)) or node not in body:
            return None
        stmts = node.body.body if isinstance(node.body, cst.IndentedBlock) else ()
        if not stmts or not isinstance(stmts[-1], cst.SimpleStatementLine) \
                or not any(isinstance(s, cst.Return) for s in stmts[-1].body):
            return None
        index = list(body).index(node)
        rest = list(body)[index + 1:index + 1 + len(stmts)]
        if len(rest) != len(stmts):
            return None
        lines = []
        for stmt in rest:
            for line in self.ctx.module.code_for_node(stmt).splitlines():
                stripped = line.split("#", 1)[0].strip()
                if stripped:
                    lines.append(stripped)
        return "\n".join(lines)
