"""DP704: one step of a DP pipeline is given a hard-coded ε (``epsilon=0.1 / 2``) while its sibling steps
spend the function's own budget parameter (``epsilon / 2``)."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import param_names, walk, words
from dpcheck.rule import Rule

_BUDGET_KEYWORDS = frozenset({"epsilon", "eps", "privacy_budget", "budget", "epsilon_budget"})
_NUMERIC = frozenset({"norm", "adam", "optimizer", "tol", "tolerance", "stability", "small", "finfo", "root", "lr"})


def _literal_number(expr: cst.BaseExpression) -> bool:
    """``0.1``, ``0.1 / 2``, ``-1``, ``(1e-1)``: numbers and arithmetic of numbers only."""
    if isinstance(expr, (cst.Integer, cst.Float)):
        return True
    if isinstance(expr, cst.UnaryOperation):
        return _literal_number(expr.expression)
    if isinstance(expr, cst.BinaryOperation):
        return _literal_number(expr.left) and _literal_number(expr.right)
    return False


class LiteralBudgetBesideParameter(Rule):
    id = "DP704"
    name = "literal-budget-beside-parameter"
    category = "general"
    severity = "error"
    summary = ("a function given ε passes its own ε to some DP steps but a hard-coded number (`epsilon=0.1 / 2`) "
               "to another: that step spends a fixed budget whatever ε the caller asked for")
    rationale = (
        "A DP pipeline function (`def synthesize(data, epsilon=0.1)`) splits its budget across its steps "
        "(`structure(..., epsilon=epsilon / 2)`, `conditionals(..., epsilon / 2)`). When one step is instead "
        "given a literal (`epsilon=0.1 / 2`, left from the default), it spends that fixed amount for every call: "
        "for a caller's ε smaller than the literal the run spends more than the ε it reports, and the split no "
        "longer sums to the budget. Reported: in a function with a budget parameter, a call whose budget keyword "
        "(`epsilon=`, `eps=`) is a number or arithmetic of numbers, when another call in the same function passes "
        "an expression of the parameter under a budget keyword or as an argument. Not reported: a fixed share "
        "subtracted from the parameter elsewhere (`epsilon - 0.1`), numerical eps "
        "(a `1e-8` default), functions that never use their budget. Fix: derive every step's ε from the "
        "parameter."
    )
    TRIGGERS = ("eps", "budget")
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A call with a budget keyword given a numeric literal (or literal arithmetic)."""
        for call in facts.calls:
            for kw in call.keywords:
                if kw.arg in _BUDGET_KEYWORDS and isinstance(kw.value, (ast.Constant, ast.BinOp)) \
                        and all(isinstance(n, (ast.Constant, ast.BinOp, ast.operator)) for n in ast.walk(kw.value)):
                    return True
        return False

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        budget = {p for p in param_names(node) if words(p) & {"epsilon", "eps", "budget"} and not words(p) & _NUMERIC}
        if not budget:
            return
        literal: list[tuple[cst.Call, str]] = []
        uses_param = False
        for sub in walk(node.body, into_scopes=False):
            if not isinstance(sub, cst.Call):
                continue
            for arg in sub.args:
                names = {n.value for n in walk(arg.value) if isinstance(n, cst.Name)}
                kw = arg.keyword.value if arg.keyword is not None else None
                if kw in _BUDGET_KEYWORDS and _literal_number(arg.value):
                    value = arg.value
                    if isinstance(value, (cst.Integer, cst.Float)) and float(value.evaluated_value) < 1e-3:
                        continue  # a numerical constant
                    literal.append((sub, kw))
                elif names & budget:
                    uses_param = True
                    if any(isinstance(n, cst.BinaryOperation) and isinstance(n.operator, cst.Subtract)
                           for n in walk(arg.value)):
                        return  # ``epsilon - 0.1``: the fixed share is taken out of the budget
        if not uses_param:
            return
        for call, kw in literal:
            self.report(call, f"`{kw}=` is a hard-coded number while the function's budget "
                              f"`{sorted(budget)[0]}` reaches its other steps: this step spends a fixed ε whatever "
                              "the caller asked for; derive it from the budget parameter")

    VALID = (
        # twin: both steps take a share of the parameter
        """
def synthesize(data, epsilon=0.1, k=2):
    net = greedy_bayes(data, k=k, epsilon=epsilon / 2)
    cond = noisy_conditionals(net, data, epsilon / 2)
    return sample(net, cond, len(data))
""",
        # twin: the literal is the default of the parameter, not a call argument
        """
def release(counts, epsilon=1.0):
    return laplace_mechanism(counts, epsilon=epsilon)
""",
        # a function that does not take a budget may fix one
        """
def demo(data):
    return laplace_mechanism(data, epsilon=0.5)
""",
        # a fixed share taken first and subtracted from the rest: the split still sums to the budget
        """
def dp_clip_and_mean(x, epsilon, lo, hi):
    upper = dp_quantile(x, 0.95, epsilon=0.1, bounds=(lo, hi))
    return dp_mean(x.clip(lo, upper), epsilon=epsilon - 0.1, bounds=(lo, upper))
""",
        # ordinary ML: a numerical eps beside an optimiser's
        """
def train(model, data, eps=1e-8, lr=0.01):
    opt = Adam(model.parameters(), lr=lr, eps=eps)
    norm = LayerNorm(64, eps=1e-5)
    return fit(model, data, opt, norm)
""",
    )

    INVALID = (
        # the structure step keeps the default's half
        """
def synthesize(data, epsilon=0.1, k=2):
    net = greedy_bayes(data, k=0, epsilon=0.1 / 2, seed=0)  # <-
    cond = noisy_conditionals(net, data, epsilon / 2)
    return sample(net, cond, len(data))
""",
        # a fixed ε for the count while the mean uses the parameter
        """
def dp_summary(values, eps):
    n = laplace_count(values, eps=0.5)  # <-
    s = laplace_sum(values, eps=eps / 2)
    return s / n
""",
        # a literal budget for one column of many
        """
def release_columns(frame, privacy_budget):
    out = {}
    for col in frame.columns[1:]:
        out[col] = noisy_histogram(frame[col], epsilon=privacy_budget / len(frame.columns))
    out["age"] = noisy_histogram(frame["age"], epsilon=1)  # <-
    return out
""",
        # a median step with a constant budget
        """
def dp_clip_and_mean(x, epsilon, lo, hi):
    mid = dp_median(x, epsilon=1.0, bounds=(lo, hi))  # <-
    return dp_mean(x.clip(lo, hi), epsilon=epsilon, bounds=(lo, hi)), mid
""",
    )
