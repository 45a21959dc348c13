"""DP793: a budget odometer charges the requested ε before anything checks that ε is positive, so a negative ε
refunds budget."""
from __future__ import annotations

import re

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, last_name, param_names, walk, words
from dpcheck.rule import Rule

_EPS_WORDS = frozenset({"eps", "epsilon", "epsilons", "rho", "budget", "privacy", "cost"})
#: the ledger a charge goes to
_LEDGER_WORDS = frozenset({"eps", "epsilon", "epsilons", "budget", "budgets", "spent", "used", "consumed", "ledger",
                           "history", "remaining", "odometer", "privacy", "costs", "charges", "spending", "left"})
#: calls that validate a parameter (or use it so that a negative value raises)
_CHECK_WORDS = frozenset({"check", "validate", "verify", "assert", "ensure", "require", "laplace", "normal",
                          "gaussian", "geometric", "mechanism", "exponential", "noise", "abs"})

_MECH_WORDS = frozenset({"laplace", "normal", "gauss", "gaussian", "geometric", "mechanism", "mech", "noise",
                         "noisy", "randomise", "randomize", "privatize", "privatise", "exponential", "rvs",
                         "randomised", "randomized", "perturb"})


def _eps_param(name: str) -> bool:
    pieces = words(name)
    return bool(pieces & {"eps", "epsilon", "rho"}) or name in {"e", "epsilon_i", "budget", "cost"}


def _ledger(expr: cst.CSTNode) -> bool:
    name = last_name(expr)
    return bool(name) and bool(words(name) & _LEDGER_WORDS)



_DRAW_TEXT = re.compile(r"(?i)laplace|normal|gauss|noise|randn|geometric|exponential|random")

class BudgetChargedBeforeEpsilonChecked(Rule):
    id = "DP793"
    name = "budget-charged-before-epsilon-checked"
    category = "general"
    severity = "error"
    summary = ("the odometer records the requested ε before anything checks it is positive: a query asking for "
               "a negative ε gives budget back")
    rationale = (
        "A privacy odometer subtracts what each query asks for from a total and refuses queries once the total "
        "is spent. The requested ε comes from the analyst. If it is appended to the spent list (or added to the "
        "spent total, or subtracted from the remaining one) before it is checked to be positive, a negative ε "
        "lowers the spent total: the check `remaining >= 0` passes, and the analyst has bought extra budget for "
        "later queries. It does not help that the noise draw later rejects the negative scale: the ledger was "
        "already changed. Reported: in a function with an ε parameter and a budget check that raises or returns, "
        "a statement that charges that parameter to a ledger (`spent.append(eps)`, `self.spent += eps`, "
        "`self.remaining -= eps`) with no earlier comparison of the parameter, `assert`, validation call or "
        "mechanism call reading it, in a function that answers the query with noise at that ε (so the ε is the "
        "caller's). Fix: reject ε <= 0 (and non-finite ε) before touching the ledger, and charge "
        "only after the query is admitted."
    )
    TRIGGERS = ("append", "+=", "-=")
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding needs a ``raise`` or ``return`` under an ``if`` and an ``append``/``+=``/``-=`` of a name."""
        if not facts.nodes(ast.Raise) and not facts.nodes(ast.Return):
            return False
        # the query answers with noise at that ε: a draw somewhere in the file
        if not _DRAW_TEXT.search(facts.source):
            return False
        if any(isinstance(a.value, ast.Name) for a in facts.nodes(ast.AugAssign)):  # type: ignore[attr-defined]
            return True
        return any(isinstance(c.func, ast.Attribute) and c.func.attr == "append" and len(c.args) == 1
                   and isinstance(c.args[0], ast.Name) for c in facts.calls)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        eps = {p for p in param_names(node) if p != "self" and _eps_param(p)}
        if not eps:
            return
        body = list(walk(node.body, into_scopes=False))
        # an odometer: some ``if`` over a ledger that raises or returns
        if not any(isinstance(s, cst.If) and any(_ledger(n) for n in walk(s.test)
                                                 if isinstance(n, (cst.Name, cst.Attribute))
                                                 and not (isinstance(n, cst.Name) and n.value in eps))
                   and any(isinstance(n, (cst.Raise, cst.Return)) for n in walk(s.body)) for s in body):
            return
        # a query that answers with noise at the requested ε (the ε comes from the caller, not from the
        # code's own schedule)
        derived = set(eps)
        for _ in range(2):
            for sub in body:
                if isinstance(sub, cst.Assign) and any(isinstance(n, cst.Name) and n.value in derived
                                                       for n in walk(sub.value)):
                    derived |= {n.value for t in sub.targets for n in walk(t.target) if isinstance(n, cst.Name)}
        if not any(isinstance(c, cst.Call) and words(call_name(c)) & _MECH_WORDS
                   and any(isinstance(n, cst.Name) and n.value in derived for a in c.args for n in walk(a.value))
                   for c in body):
            return
        checked: set[str] = set()
        for sub in body:
            charged = self._charge(sub, eps)
            if charged is not None and charged not in checked:
                self.report(
                    sub,
                    f"`{charged}` is charged to the budget before anything checks it is positive: a negative "
                    "ε lowers the spent total and buys budget back; reject ε <= 0 before touching the ledger",
                )
                checked.add(charged)  # one report per parameter
                continue
            checked |= self._checks(sub, eps, derived)

    @staticmethod
    def _charge(sub: cst.CSTNode, eps: set[str]) -> str | None:
        if isinstance(sub, cst.AugAssign) and isinstance(sub.operator, (cst.AddAssign, cst.SubtractAssign)) \
                and isinstance(sub.value, cst.Name) and sub.value.value in eps and _ledger(sub.target) \
                and not isinstance(sub.target, cst.Subscript):
            return sub.value.value
        if isinstance(sub, cst.Call) and call_name(sub) == "append" and isinstance(sub.func, cst.Attribute) \
                and len(sub.args) == 1 and isinstance(sub.args[0].value, cst.Name) \
                and sub.args[0].value.value in eps and _ledger(sub.func.value):
            return sub.args[0].value.value
        return None

    @staticmethod
    def _checks(sub: cst.CSTNode, eps: set[str], derived: set[str]) -> set[str]:
        """The ε parameters a statement validates (compares, asserts, passes to a check or a mechanism)."""
        if isinstance(sub, cst.Comparison):
            # ``eps <= 0``, ``0 < eps``, ``eps > MIN_EPS``: the parameter alone against a literal or a bound
            sides = [sub.left] + [c.comparator for c in sub.comparisons]
            named = {s.value for s in sides if isinstance(s, cst.Name) and s.value in eps}
            other = [s for s in sides if not (isinstance(s, cst.Name) and s.value in eps)]
            if named and any(isinstance(o, (cst.Integer, cst.Float, cst.UnaryOperation)) or (
                    isinstance(o, (cst.Name, cst.Attribute)) and words(last_name(o) or "")
                    & {"min", "zero", "lower", "low", "minimum", "tiny", "floor"}) for o in other):
                return named
            return set()
        if isinstance(sub, cst.Assert):
            return {n.value for n in walk(sub.test) if isinstance(n, cst.Name) and n.value in eps}
        if isinstance(sub, cst.Call) and words(call_name(sub)) & _CHECK_WORDS:
            # a noise draw at a scale derived from ε rejects a negative ε before the ledger changes
            if any(isinstance(n, cst.Name) and n.value in derived for a in sub.args for n in walk(a.value)):
                return set(eps)
        return set()

    VALID = (
        # twin: the request is rejected when ε is not positive, before the ledger changes
        """
import numpy as np
class Odometer:
    def query(self, records, epsilon):
        if epsilon <= 0:
            raise ValueError("epsilon must be positive")
        self.spent.append(epsilon)
        if sum(self.spent) > self.total:
            raise RuntimeError("budget exhausted")
        return len(records) + np.random.laplace(0, 1 / epsilon)
""",
        # twin: the noise draw (which rejects a negative scale) comes before the charge
        """
import numpy as np
class Counter:
    def count(self, rows, eps):
        noisy = len(rows) + np.random.laplace(0, 1.0 / eps)
        if self.used + eps > self.limit:
            raise RuntimeError("over budget")
        self.used += eps
        return noisy
""",
        # twin: the Laplace scale is computed and drawn before the charge
        """
import numpy as np
class DB:
    def count(self, movie, epsilon):
        scale = 1.0 / epsilon
        noise = np.random.laplace(0, scale)
        self.epsilons.append(epsilon)
        if self.remaining_budget < 0:
            raise RuntimeError("budget depleted")
        return self.exact(movie) + noise
""",
        # twin: a validation helper reads ε first
        """
class Budget:
    def spend(self, epsilon):
        check_epsilon(epsilon)
        if self.remaining - epsilon < 0:
            raise ValueError("not enough budget")
        self.remaining -= epsilon
""",
        # the ledger is charged but there is no budget check here at all (a logger)
        """
class History:
    def record(self, name, epsilon):
        self.epsilons.append(epsilon)
        self.names.append(name)
""",
        # a training loop's own per-round spending helper: the ε comes from the schedule, no query answered here
        """
class Budget:
    def spend_round(self, epsilon, round_num):
        if self.spent + epsilon > self.total:
            return False
        self.spent += epsilon
        return True
""",
        # ordinary ML: epsilon is a numerical tolerance accumulated in a solver
        """
def solve(step, eps, max_iter):
    tol_history = []
    for i in range(max_iter):
        tol_history.append(eps)
        if step(i) < eps:
            return i
    return max_iter
""",
    )

    INVALID = (
        # appended first, the remaining-budget check comes after
        """
import numpy as np
class MovieDB:
    def count_ratings(self, movie, epsilon):
        self.epsilons.append(epsilon)  # <-
        if self.remaining_budget < 0.0:
            raise RuntimeError("budget depleted")
        return self.count(movie) + np.random.laplace(0, 1 / epsilon)
""",
        # the check only compares the total, never the sign
        """
import numpy as np
class Accountant:
    def noisy_sum(self, values, eps):
        if self.spent + eps > self.total:
            raise ValueError("over budget")
        self.spent += eps  # <-
        return np.clip(values, 0, 1).sum() + np.random.laplace(0, 1 / eps)
""",
        # remaining subtracted, checked with a return
        """
import numpy as np
def answer(state, data, epsilon):
    if state.remaining_budget < epsilon:
        return None
    state.remaining_budget -= epsilon  # <-
    return np.mean(data) + np.random.laplace(0, 1 / (len(data) * epsilon))
""",
        # a per-query log of costs checked against the cap, Gaussian answer
        """
import numpy as np
class Ledger:
    def noisy_total(self, analyst, values, rho):
        self.budget_log.append(rho)  # <-
        if sum(self.budget_log) > self.cap:
            raise PermissionError(analyst)
        return np.clip(values, 0, 1).sum() + np.random.normal(0, np.sqrt(1 / (2 * rho)))
""",
    )
