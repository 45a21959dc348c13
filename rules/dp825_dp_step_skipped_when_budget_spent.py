"""DP825: the DP step runs only when the budget charge succeeds; once the budget is spent the data is released
without it."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, walk, words
from dpcheck.rule import Rule

#: words of a call that charges or checks the privacy budget and answers whether it may be spent
_CHARGE_WORDS = frozenset({"consume", "spend", "charge", "deduct", "withdraw"})
_CHECK_NAMES = frozenset({"has_budget", "can_spend", "check_budget", "budget_available", "has_remaining_budget",
                          "can_consume", "within_budget", "budget_left", "can_afford", "has_privacy_budget"})
#: words of the call that applies the privacy mechanism to the data
_DP_STEP_WORDS = frozenset({"dp", "noise", "noisy", "privacy", "private", "privatize", "privatise", "perturb",
                            "laplace", "gaussian", "anonymize", "anonymise", "sanitize", "sanitise", "randomize"})


def _budget_gate(test: cst.BaseExpression) -> cst.Call | None:
    for n in walk(test):
        if isinstance(n, cst.Call):
            name = call_name(n) or ""
            if words(name) & _CHARGE_WORDS or name in _CHECK_NAMES:
                return n
    return None


def _aborts(block: cst.CSTNode) -> bool:
    return any(isinstance(n, (cst.Raise, cst.Return)) for n in walk(block))


class DPStepSkippedWhenBudgetSpent(Rule):
    id = "DP825"
    name = "dp-step-skipped-when-budget-spent"
    category = "general"
    severity = "error"
    summary = ("the privacy mechanism is applied only when the budget charge succeeds; when the budget is used up "
               "the step is silently skipped and the data it should have protected is still returned")
    rationale = (
        "A budget accountant that refuses a charge (`accountant.consume(eps)` returning False, `can_spend(eps)`) "
        "must stop the release. Code that writes `if accountant.consume(eps): data = dp.apply(data)` with no "
        "`else` that raises or returns releases `data` anyway once the budget is spent: on the second call "
        "(a retry, a second batch, a regenerate loop) the output carries no noise at all, although it is "
        "still reported as ε-DP. Reported: an `if` whose test charges or checks the budget, whose body "
        "reassigns a value with a privacy step (a call named for noise/DP/privatisation), that has no "
        "`else` aborting, and after which the function returns or uses that value. Fix: raise (or return "
        "nothing) when the charge is refused, e.g. `if not acc.consume(eps): raise BudgetExhausted`."
    )
    TRIGGERS = ("consume", "spend", "charge", "budget", "deduct", "withdraw")
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding needs an ``if`` whose test calls a budget charge or check."""
        for node in facts.nodes(ast.If):
            for n in ast.walk(node.test):  # type: ignore[attr-defined]
                if isinstance(n, ast.Call):
                    name = facts.call_lasts(n)
                    if any(words(x) & _CHARGE_WORDS or x in _CHECK_NAMES for x in name):
                        return True
        return False

    @classmethod
    def admits(cls, facts: AstFacts) -> bool:
        return facts.may_have_dp_context and cls.may_report(facts)

    def visit_If(self, node: cst.If) -> None:
        gate = _budget_gate(node.test)
        if gate is None:
            return
        if isinstance(node.test, cst.UnaryOperation) and isinstance(node.test.operator, cst.Not):
            return  # ``if not acc.consume(eps): ...`` handles the refusal in its body
        if node.orelse is not None and _aborts(node.orelse):
            return
        fa = self.ctx.analysis
        fn = fa.enclosing_function(node)
        if fn is None:
            return
        protected: set[str] = set()
        for sub in walk(node.body, into_scopes=False):
            if isinstance(sub, cst.Assign) and isinstance(sub.value, cst.Call) \
                    and self._dp_step(sub.value):
                for t in sub.targets:
                    if isinstance(t.target, cst.Name):
                        protected.add(t.target.value)
        if not protected:
            return
        end = fa.line_of(node.body.body[-1]) if node.body.body else fa.line_of(node)
        for sub in walk(fn, into_scopes=False):
            if isinstance(sub, cst.Return) and sub.value is not None and fa.line_of(sub) > end \
                    and any(isinstance(m, cst.Name) and m.value in protected for m in walk(sub.value)):
                name = sorted(protected & {m.value for m in walk(sub.value) if isinstance(m, cst.Name)})[0]
                self.report(node, f"`{name}` gets its privacy step only when `{fa.code(gate)[:50]}` succeeds; "
                                  f"when the budget is spent the step is skipped and `{name}` is still returned "
                                  f"(line {fa.line_of(sub)}) without noise; raise or return nothing when the "
                                  f"charge is refused")
                return

    @staticmethod
    def _dp_step(call: cst.Call) -> bool:
        """``privatize(x)``, ``self.add_noise(df)``, ``self.dp.apply_to_dataframe(df, cfg)`` (the receiver names it)."""
        pieces: set[str] = set()
        func = call.func
        while isinstance(func, cst.Attribute):
            pieces |= words(func.attr.value)
            func = func.value
        if isinstance(func, cst.Name):
            pieces |= words(func.value)
        return bool(pieces & _DP_STEP_WORDS)

    VALID = (
        # twin: a refused charge stops the release
        """
class Generator:
    def release(self, df):
        df = self.build(df)
        if not self.accountant.consume(self.epsilon, "dp"):
            raise RuntimeError("privacy budget exhausted")
        df = self.dp.apply_to_dataframe(df, self.columns)
        return df
""",
        # twin with an else that aborts
        """
class Generator:
    def release(self, df):
        if self.accountant.spend(self.epsilon):
            df = self.add_noise(df)
        else:
            raise ValueError("budget spent")
        return df
""",
        # twin: the function returns the noisy data only inside the branch
        """
def answer(accountant, mech, value, epsilon):
    if accountant.charge(epsilon):
        noisy = mech.add_laplace_noise(value, epsilon)
        return noisy
    return None
""",
        # ordinary ML: optional noise augmentation, no budget
        """
import numpy as np
def augment(batch, use_noise):
    if use_noise and batch.size > 0:
        batch = add_noise(batch, 0.05)
    return batch
""",
    )

    INVALID = (
        """
class Generator:
    def release(self, df):
        df = self.build(df)
        if self.columns and self.accountant.consume(self.epsilon, "dp"):  # <-
            df = self.dp.apply_to_dataframe(df, self.columns)
        return df
""",
        """
class Generator:
    def release(self, df):
        if self.accountant.spend(self.epsilon):  # <-
            df = self.add_noise(df)
        else:
            print("budget spent")
        return df
""",
        """
def answer(accountant, mech, value, epsilon):
    result = value
    if accountant.charge(epsilon):  # <-
        result = mech.add_laplace_noise(value, epsilon)
    return result
""",
        """
def publish(ledger, stats, epsilon):
    if ledger.can_spend(epsilon):  # <-
        stats = privatize(stats, epsilon)
        ledger.record(epsilon)
    return {"stats": stats, "epsilon": epsilon}
""",
    )
