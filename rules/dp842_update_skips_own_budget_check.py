"""DP842: a DP party defines its own budget check, but the method that trains and charges its accountant
never asks it: the party spends past its maximum ε."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, dotted, walk, words
from dpcheck.rule import Rule

_BUDGET = frozenset({"epsilon", "eps", "budget"})
_LIMIT = frozenset({"max", "limit", "target", "total", "cap", "maximum", "allowed"})
#: receivers whose method call charges privacy spent (``accountant.update_privacy(ledger)``)
_ACCOUNT_OWNERS = frozenset({"accountant", "acc", "acct", "accountants", "ledger", "odometer", "budget", "tracker"})
_CHARGE_CALLS = frozenset({"update_privacy", "spend", "charge", "consume", "compose", "step", "update",
                           "record", "add_step", "accumulate", "spend_budget", "track"})
_SPENT = frozenset({"spent", "used", "consumed", "cumulative", "accumulated"})


def _names_words(node: cst.CSTNode) -> list[frozenset[str]]:
    out = []
    for n in walk(node):
        if isinstance(n, (cst.Name, cst.Attribute)):
            d = dotted(n)
            if d:
                out.append(words(d.split(".")[-1]))
        elif isinstance(n, cst.SimpleString):
            out.append(words(str(n.evaluated_value)))
    return out


def _budget_comparison(node: cst.CSTNode) -> bool:
    """A comparison reading a budget limit (``x > self.hyperparameters['max_epsilon']``, ``spent >= eps_limit``)."""
    for n in walk(node):
        if isinstance(n, cst.Comparison) and any(w & _BUDGET and w & _LIMIT for w in _names_words(n)):
            return True
    return False


def _method_calls(fn: cst.FunctionDef) -> set[str]:
    return {n.func.attr.value for n in walk(fn.body) if isinstance(n, cst.Call) and isinstance(n.func, cst.Attribute)
            and isinstance(n.func.value, cst.Name) and n.func.value.value == "self"}


class UpdateSkipsOwnBudgetCheck(Rule):
    id = "DP842"
    name = "update-skips-own-budget-check"
    category = "general"
    severity = "error"
    summary = ("a DP client defines a budget check against its maximum ε, but its update method trains and "
               "charges the accountant without asking it")
    rationale = (
        "A client (or mechanism) that carries a maximum ε and a predicate for it (`can_update()` comparing the "
        "accountant's bound with `max_epsilon`) protects its data only if the code that spends asks the "
        "predicate. When the method that runs the noisy local fit and charges the accountant never calls the "
        "check (and nothing in the class does so before calling it), a client already past its budget still "
        "trains and returns another update whenever any caller forgets the check, so the released updates cost "
        "more than the stated maximum. Reported: in a class with a method whose body compares an ε/budget name "
        "with a limit name (`max_epsilon`, `budget_limit`), another method that charges privacy (an "
        "`accountant.update_privacy(...)`, `ledger.spend(...)`, `self.spent_eps += ...`) but neither calls that "
        "check nor tests a budget limit itself, and that no method of the class calls after checking. Bad: "
        "`def compute_update(self): d = self.fit(); self.accountant.update_privacy(l); return d` beside "
        "`def can_update(self): return self.accountant.eps <= self.max_epsilon`. Good: `if not self.can_update(): "
        "return zero_update` first."
    )
    TRIGGERS = ("eps", "budget")
    requires_dp_context = False

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding needs a class with at least two methods and a comparison."""
        return bool(facts.nodes(ast.Compare)) and any(
            sum(isinstance(b, ast.FunctionDef) for b in c.body) >= 2  # type: ignore[attr-defined]
            for c in facts.nodes(ast.ClassDef))

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        if words(node.name.value) & (_ACCOUNT_OWNERS | {"accounting", "privacy"}):
            return  # (S5 h48) the accountant/tracker itself records spending; its callers enforce the limit
        methods = [s for s in node.body.body if isinstance(s, cst.FunctionDef)]
        checks = {m.name.value for m in methods if _budget_comparison(m.body)
                  and any(isinstance(r, cst.Return) for r in walk(m.body))
                  and not self._charges(m)}
        if not checks:
            return
        calls = {m.name.value: _method_calls(m) for m in methods}
        for m in methods:
            if m.name.value in checks or not self._charges(m):
                continue
            if calls[m.name.value] & checks or _budget_comparison(m.body):
                continue
            if any(m.name.value in calls[o.name.value] and calls[o.name.value] & checks for o in methods):
                continue
            self.report(m, f"`{m.name.value}` charges this party's privacy accountant (it trains or releases) but "
                           f"never asks its own budget check `{sorted(checks)[0]}()`: past its maximum ε the party "
                           f"still spends; return early when the check fails")

    @staticmethod
    def _charges(fn: cst.FunctionDef) -> bool:
        for n in walk(fn.body):
            if isinstance(n, cst.Call) and isinstance(n.func, cst.Attribute) and call_name(n) in _CHARGE_CALLS:
                owner = dotted(n.func.value) or ""
                if words(owner.split(".")[-1]) & _ACCOUNT_OWNERS:
                    return True
            if isinstance(n, cst.AugAssign) and isinstance(n.operator, cst.AddAssign):
                w = words((dotted(n.target) or "").split(".")[-1])
                if w & _BUDGET and w & _SPENT:
                    return True
        return False

    VALID = (
        # the tracker only records rounds; the server asks is_budget_exhausted() before training a client
        """
class BudgetTracker:
    def add_round(self, eps_round):
        self.spent_epsilon += eps_round
    def is_budget_exhausted(self):
        return self.spent_epsilon >= self.target_epsilon
""",
        # twin: the update returns early when the budget check fails
        """
class DPClient:
    def compute_update(self, params):
        if not self.can_update():
            return None
        delta = self.local_fit(params)
        for acc in self.accountants.values():
            acc.update_privacy(self.ledger)
        return delta
    def can_update(self):
        return self.accountant_bound() <= self.hyperparameters["max_epsilon"]
""",
        # twin: the spending method tests the limit inline
        """
class Reporter:
    def within(self):
        return self.spent_epsilon + self.epsilon <= self.max_epsilon
    def report(self, value, rng):
        if self.spent_epsilon + self.epsilon > self.max_epsilon:
            raise RuntimeError("budget spent")
        self.spent_epsilon += self.epsilon
        return value + rng.laplace(0, 1 / self.epsilon)
""",
        # twin: the public entry asks the check before calling the charging helper
        """
class Party:
    def has_budget(self):
        return self.budget_accountant.total() < self.eps_limit
    def _spend(self, grads):
        self.budget_accountant.spend(self.eps_step)
        return grads
    def share(self, grads):
        if self.has_budget():
            return self._spend(grads)
        return None
""",
        # ordinary ML: an early-stopping check beside a training step
        """
class Trainer:
    def should_stop(self):
        return self.max_epochs <= self.epoch or self.loss < self.eps
    def train_epoch(self, loader):
        for x, y in loader:
            self.tracker.update(self.model.step(x, y))
        self.epoch += 1
""",
    )
    INVALID = (
        # the DP client's update never asks its own can_update()
        """
class DPClient:
    def compute_update(self, params):  # <-
        delta = self.local_fit(params)
        for acc in self.accountants.values():
            acc.update_privacy(self.ledger)
        return delta
    def can_update(self):
        return self.accountant_bound() <= self.hyperparameters["max_epsilon"]
""",
        # the reporter defines within() but its report() spends without it
        """
class Reporter:
    def within(self):
        return self.spent_epsilon + self.epsilon <= self.max_epsilon
    def report(self, value, rng):  # <-
        self.spent_epsilon += self.epsilon
        return value + rng.laplace(0, 1 / self.epsilon)
""",
        # the public entry calls the charging helper without the check
        """
class Party:
    def has_budget(self):
        return self.budget_accountant.total() < self.eps_limit
    def share(self, grads):  # <-
        self.budget_accountant.spend(self.eps_step)
        return grads
""",
        # the check logs and returns False, but the training round never consults it
        """
import logging
class PrivateLearner:
    def budget_ok(self):
        for name, acc in self.accountants.items():
            if acc.bound()[0] > self.max_epsilon:
                logging.debug("capped out")
                return False
        return True
    def run_round(self, data):  # <-
        out = self.noisy_fit(data)
        for name, acc in self.accountants.items():
            acc.update_privacy(self.ledger)
        return out
""",
    )
