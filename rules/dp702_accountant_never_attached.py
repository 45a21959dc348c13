"""DP702: the ε a script reports comes from a ``BudgetAccountant`` that no mechanism is ever given."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name
from dpcheck.rule import Rule

_ACCOUNTANTS = frozenset({"BudgetAccountant"})
#: what reading the spend of an accountant looks like
_READS = frozenset({"total", "spent_budget", "remaining", "budget", "spent"})
#: methods that make the accountant the one mechanisms charge by default
_ATTACH = frozenset({"set_default", "load_default"})


class AccountantNeverAttached(Rule):
    id = "DP702"
    name = "accountant-never-attached"
    category = "general"
    severity = "error"
    summary = ("the spent ε is read from a `BudgetAccountant` that is never passed to a mechanism (`accountant=`) "
               "nor made the default: it reports 0 whatever was spent")
    rationale = (
        "diffprivlib's mechanisms and tools charge the accountant they are given (`accountant=acc`) or else the "
        "default one. An accountant created with `BudgetAccountant()` and never handed over (no `accountant=acc`, "
        "no argument, no `acc.set_default()`, no `with acc:`) is charged nothing: `acc.total()` stays (0, 0), so "
        "the ε the script saves or prints as the spent budget is not the ε the run spent. Reported: reads of the "
        "spend (`.total()`, `.spent_budget`, `.remaining()`) of a name bound to `BudgetAccountant(...)` when, in "
        "the whole file, that name is never an argument, a `with` item, a returned or stored value, nor the "
        "receiver of `set_default`. Fix: pass `accountant=acc` to every DP call (or `acc.set_default()` before "
        "them)."
    )
    TRIGGERS = ("BudgetAccountant",)
    requires_dp_context = False

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A name bound to a ``BudgetAccountant(...)`` call and read through ``.total``/``.spent_budget``."""
        bound = {t.id for node in facts.nodes(ast.Assign) for t in node.targets  # type: ignore[attr-defined]
                 if isinstance(t, ast.Name) and isinstance(node.value, ast.Call)  # type: ignore[attr-defined]
                 and facts.call_lasts(node.value) & _ACCOUNTANTS}  # type: ignore[attr-defined]
        return bool(bound) and any(isinstance(a.value, ast.Name) and a.value.id in bound and a.attr in _READS
                                   for a in facts.nodes(ast.Attribute))  # type: ignore[attr-defined]

    def visit_Module(self, node: cst.Module) -> None:
        bound: set[str] = set()
        for sub in self._all(node):
            if isinstance(sub, cst.Assign) and isinstance(sub.value, cst.Call) \
                    and call_name(sub.value) in _ACCOUNTANTS:
                bound |= {t.target.value for t in sub.targets if isinstance(t.target, cst.Name)}
        if not bound:
            return
        escaped: set[str] = set()
        reads: dict[str, list[cst.CSTNode]] = {}
        parents: dict[int, cst.CSTNode] = {}
        for sub in self._all(node):
            for child in sub.children:
                parents[id(child)] = sub
        for sub in self._all(node):
            if not (isinstance(sub, cst.Name) and sub.value in bound):
                continue
            parent = parents.get(id(sub))
            if isinstance(parent, cst.Attribute) and parent.value is sub:
                if parent.attr.value in _ATTACH:
                    escaped.add(sub.value)
                elif parent.attr.value in _READS:
                    reads.setdefault(sub.value, []).append(parent)
                continue
            if isinstance(parent, cst.AssignTarget) or isinstance(parent, cst.Attribute):
                continue  # the binding itself / an attribute named like it
            if isinstance(parent, cst.Arg) and parent.keyword is sub:
                continue
            escaped.add(sub.value)  # an argument, a with item, a returned/stored value, an alias
        for name in sorted(set(reads) - escaped):
            for where in reads[name]:
                self.report(where, f"`{name}` is a BudgetAccountant no mechanism is given (no `accountant={name}`, "
                                   f"no `{name}.set_default()`): its spend stays 0, so the ε read from it is not "
                                   "what the run spent; pass it to every DP call")

    @staticmethod
    def _all(node: cst.CSTNode):
        stack = [node]
        while stack:
            cur = stack.pop()
            yield cur
            stack.extend(reversed(cur.children))

    VALID = (
        # twin: the accountant is passed to every tool
        """
import diffprivlib as dp
acc = dp.BudgetAccountant()
def fit(X, epsilon):
    return dp.tools.mean(X, epsilon=epsilon, bounds=(0, 1), accountant=acc)
spent = acc.total()[0]
""",
        # twin: the accountant is made the default
        """
from diffprivlib import BudgetAccountant
from diffprivlib.tools import histogram
acc = BudgetAccountant()
acc.set_default()
counts, edges = histogram([1, 2, 3], epsilon=0.5, range=(0, 4))
print(acc.total())
""",
        # twin: used as a context manager
        """
from diffprivlib import BudgetAccountant
from diffprivlib.tools import var
with BudgetAccountant() as acc0:
    pass
acc = BudgetAccountant(epsilon=2)
with acc:
    v = var([1.0, 2.0], epsilon=1, bounds=(0, 3))
print(acc.spent_budget)
""",
        # ordinary bookkeeping: a class that returns its accountant to the caller
        """
from diffprivlib.accountant import BudgetAccountant
def make_accountant(total):
    acc = BudgetAccountant(epsilon=total)
    print(acc.remaining())
    return acc
""",
    )

    INVALID = (
        # the script prints the spend of an accountant it never passes
        """
import diffprivlib as dp
acc = dp.BudgetAccountant()
def fit(X, epsilon):
    return dp.tools.mean(X, epsilon=epsilon, bounds=(0, 1))
spent = acc.total()[0]  # <-
""",
        # spent_budget of an unattached accountant saved to a file name
        """
from diffprivlib import BudgetAccountant
from diffprivlib.tools import histogram
acc = BudgetAccountant()
counts, edges = histogram([1, 2, 3], epsilon=0.5, range=(0, 4))
name = "run_eps_%s.csv" % (acc.spent_budget,)  # <-
""",
        # inside a function
        """
from diffprivlib.accountant import BudgetAccountant
from diffprivlib.models import GaussianNB
def train(X, y, epsilon):
    acc = BudgetAccountant()
    model = GaussianNB(epsilon=epsilon, bounds=(0, 1)).fit(X, y)
    return model, acc.total()  # <-
""",
        # remaining budget checked on an accountant nobody charges
        """
import diffprivlib
from diffprivlib.tools import quantile
budget = diffprivlib.BudgetAccountant(epsilon=1.0)
for q in (0.25, 0.5, 0.75):
    if budget.remaining()[0] > 0.2:  # <-
        print(quantile([1, 2, 3], q, epsilon=0.2, bounds=(0, 4)))
""",
    )
