"""DP841: a privacy-budget check announces that it skips or stops, but only logs: the spending goes on."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, dotted, walk, words
from dpcheck.rule import Rule

#: words of a test that asks whether a party's privacy budget is used up
_BUDGET_WORDS = frozenset({"budget", "epsilon", "eps", "privacy"})
_LIMIT_WORDS = frozenset({"max", "limit", "target", "total", "remaining", "spent", "exhausted", "exceeded",
                          "consumed", "left", "cap", "bound", "used"})
#: predicates a DP party offers for "may I still spend?" (``client.can_update()``)
_CAN_CALLS = frozenset({"can_update", "can_train", "can_participate", "can_release", "can_query", "can_spend",
                        "has_budget", "budget_left", "budget_remaining", "is_exhausted", "budget_exhausted",
                        "exhausted", "out_of_budget", "over_budget", "within_budget"})
#: logging calls (the body does nothing else)
_LOG_CALLS = frozenset({"print", "debug", "info", "warning", "warn", "error", "log", "critical", "exception",
                        "write", "echo", "secho"})
#: what the message says the code does
_SKIP_TEXT = ("skip", "stop", "exhaust", "exceed", "budget", "not avail", "not availabl", "capped",
              "no longer", "out of", "limit reached", "halt", "abort", "cannot update", "can't update")


def _test_is_budget(test: cst.BaseExpression) -> bool:
    for n in walk(test):
        if isinstance(n, cst.Call) and call_name(n) in _CAN_CALLS:
            return True
    names = [dotted(n) or "" for n in walk(test) if isinstance(n, (cst.Name, cst.Attribute))]
    names += [str(n.evaluated_value) for n in walk(test) if isinstance(n, cst.SimpleString)]
    ws: set[str] = set()
    for name in names:
        ws |= words(name.split(".")[-1]) | words(name)
    return bool(ws & _BUDGET_WORDS) and bool(ws & _LIMIT_WORDS) and any(
        isinstance(n, cst.Comparison) for n in walk(test)) or any(
        isinstance(n, cst.Call) and call_name(n) in _CAN_CALLS for n in walk(test))


def _names_budget(test: ast.AST) -> bool:
    """The gate's view of ``_test_is_budget``: a budget predicate call, or a budget word with a comparison."""
    ws: set[str] = set()
    for n in ast.walk(test):
        if isinstance(n, ast.Name):
            ws |= words(n.id)
        elif isinstance(n, ast.Attribute):
            ws |= words(n.attr)
        elif isinstance(n, ast.Constant) and isinstance(n.value, str):
            ws |= words(n.value)
        if isinstance(n, ast.Call) and (getattr(n.func, "id", None) or getattr(n.func, "attr", None)) in _CAN_CALLS:
            return True
    return bool(ws & _BUDGET_WORDS) and bool(ws & _LIMIT_WORDS)


def _only_logs(body: cst.BaseSuite) -> str | None:
    """The text of the log message when every statement of ``body`` is a logging call (or ``pass``)."""
    if not isinstance(body, cst.IndentedBlock):
        stmts: list[cst.CSTNode] = list(body.body) if isinstance(body, cst.SimpleStatementSuite) else []
    else:
        stmts = []
        for s in body.body:
            if not isinstance(s, cst.SimpleStatementLine):
                return None
            stmts.extend(s.body)
    text = ""
    logged = False
    for s in stmts:
        if isinstance(s, cst.Pass):
            continue
        if not (isinstance(s, cst.Expr) and isinstance(s.value, cst.Call) and call_name(s.value) in _LOG_CALLS):
            return None
        logged = True
        for n in walk(s.value):
            if isinstance(n, cst.SimpleString):
                text += " " + str(n.evaluated_value)
            elif isinstance(n, cst.FormattedStringText):
                text += " " + n.value
    return text.lower() if logged else None


class BudgetCheckOnlyLogs(Rule):
    id = "DP841"
    name = "budget-check-only-logs"
    category = "general"
    severity = "error"
    summary = ("a check that a party's privacy budget is used up only logs that it skips or stops; the code after "
               "it trains or releases anyway")
    rationale = (
        "A federated server or a DP client that promises to stop spending once a party's ε passes its limit must "
        "act on the check: `continue`, `break`, `return` or `raise`. When the branch only logs (\"Skipping client, "
        "budget exhausted\") and falls through, the next statements still train on that party's data and release "
        "the update, so its privacy loss grows past the stated maximum while the logs claim it was skipped. "
        "Reported: an `if` whose test asks a budget predicate (`client.can_update()`, `has_budget()`) or compares "
        "an ε/budget name with a limit (`spent_eps > max_epsilon`), whose body is only logging calls "
        "(`print`, `logger.debug`, `warnings.warn`) with a message about skipping, stopping or the budget, and that "
        "has no `else` while more statements follow it in the same block. Bad: `if not c.can_update(): "
        "log.debug('skipping')` then `c.get_update()`. Good: add `continue` (or `break`/`return`) to the branch."
    )
    TRIGGERS = ("eps", "budget", "can_", "exhaust")
    requires_dp_context = False

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding needs an ``if`` (with no ``else``) whose body is a single expression statement (a log call)."""
        for node in facts.nodes(ast.If):
            if node.orelse:  # type: ignore[attr-defined]
                continue
            body = node.body  # type: ignore[attr-defined]
            if not (body and all(isinstance(s, (ast.Expr, ast.Pass)) for s in body)
                    and any(isinstance(s, ast.Expr) and isinstance(s.value, ast.Call) for s in body)):
                continue
            said = " ".join(str(n.value) for s in body for n in ast.walk(s)
                            if isinstance(n, ast.Constant) and isinstance(n.value, str)).lower()
            if any(t in said for t in _SKIP_TEXT) and _names_budget(node.test):  # type: ignore[attr-defined]
                return True
        return False

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        stmts = list(node.body)
        for i, stmt in enumerate(stmts):
            if not isinstance(stmt, cst.If) or stmt.orelse is not None:
                continue
            if not any(not isinstance(s, cst.SimpleStatementLine) or any(
                    not isinstance(x, (cst.Pass, cst.Return, cst.Continue, cst.Break)) for x in s.body)
                       for s in stmts[i + 1:]):
                continue  # nothing follows: a closing report, not a guard
            if not _test_is_budget(stmt.test):
                continue
            text = _only_logs(stmt.body)
            if text is None or not any(t in text for t in _SKIP_TEXT):
                continue
            self.report(stmt, "this privacy-budget check only logs that it skips/stops, and the statements after it "
                              "still run: the party keeps spending ε past its limit; `continue`, `break`, `return` "
                              "or `raise` in the branch")

    VALID = (
        # twin: the exhausted client is skipped
        """
def tick(clients, params, logger, rng):
    for _ in range(len(clients)):
        client = clients[rng.integers(len(clients))]
        if not client.can_update():
            logger.debug("Skipping client: privacy budget exhausted")
            continue
        delta = client.get_update(params)
        params = params + delta
    return params
""",
        # twin: the loop stops once the budget is spent
        """
def train(model, loader, accountant, max_epsilon, delta):
    for x, y in loader:
        if accountant.get_epsilon(delta) > max_epsilon:
            print("privacy budget exhausted, stopping")
            break
        model.dp_step(x, y)
""",
        # a closing report after training: nothing follows the check
        """
def finish(accountant, target_epsilon, delta):
    eps = accountant.get_epsilon(delta)
    if eps > target_epsilon:
        print(f"warning: spent epsilon {eps:.2f} exceeds the target budget")
""",
        # ordinary ML: an eps tolerance check that logs
        """
def step(loss, prev, eps, log):
    if abs(loss - prev) < eps:
        log.info("converged, stopping soon")
    return loss
""",
        # twin: the warning branch refuses the query
        """
import warnings
import numpy as np
class Curator:
    def answer(self, values, epsilon):
        if self.spent + epsilon > self.total_budget:
            warnings.warn("privacy budget exceeded; query skipped")
            return None
        self.spent += epsilon
        return float(np.sum(values)) + np.random.laplace(0, 1 / epsilon)
""",
        # twin: the one-line branch continues
        """
def federated_round(parties, model):
    for party in parties:
        if not party.has_budget(): continue
        model.merge(party.private_update(model))
    return model
""",
    )
    INVALID = (
        # the server logs the skip but trains the over-budget client anyway
        """
def tick(clients, params, logger, rng):
    for _ in range(len(clients)):
        client = clients[rng.integers(len(clients))]
        if not client.can_update():  # <-
            logger.debug("Skipping client: privacy budget exhausted")
        delta = client.get_update(params)
        params = params + delta
    return params
""",
        # the training loop prints that it stops, but goes on taking noisy steps
        """
def train(model, loader, accountant, max_epsilon, delta):
    for x, y in loader:
        if accountant.get_epsilon(delta) > max_epsilon:  # <-
            print("privacy budget exhausted, stopping")
        model.dp_step(x, y)
""",
        # a warning on the spent budget, then the release is made anyway
        """
import warnings
import numpy as np
class Curator:
    def answer(self, values, epsilon):
        if self.spent + epsilon > self.total_budget:  # <-
            warnings.warn("privacy budget exceeded; query should be skipped")
        self.spent += epsilon
        return float(np.sum(values)) + np.random.laplace(0, 1 / epsilon)
""",
        # a one-line branch with a has_budget() predicate
        """
def federated_round(parties, model):
    for party in parties:
        if not party.has_budget(): print(f"party {party.pid} out of budget, skipping")  # <-
        model.merge(party.private_update(model))
    return model
""",
    )
