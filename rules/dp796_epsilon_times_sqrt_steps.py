"""DP796: the total ε of T steps reported (or the per-step ε set) as ε_step·√T: advanced composition without
its linear and δ terms."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, name_words, number, target_names, walk, words, name_values
from dpcheck.rule import Rule

#: words of a count of composed steps
_STEP_WORDS = frozenset({"t", "steps", "step", "epochs", "epoch", "iterations", "iteration", "iters", "iter",
                         "rounds", "round", "queries", "compositions", "releases", "updates", "niter"})
#: words of a privacy-loss parameter that composes as √T legitimately (GDP μ, noise σ) or of a noise scale
_NOT_EPS = frozenset({"mu", "gdp", "sigma", "std", "noise", "scale", "lr", "rate", "margin", "tol"})


def _eps_words(w: frozenset[str] | set[str]) -> bool:
    return bool(w & {"eps", "epsilon"})


def _sqrt_arg(expr: cst.BaseExpression) -> cst.BaseExpression | None:
    """``x`` of ``sqrt(x)`` / ``x ** 0.5``."""
    if isinstance(expr, cst.Call) and call_name(expr) == "sqrt" and len(expr.args) == 1:
        return expr.args[0].value
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Power) and number(expr.right) == 0.5:
        return expr.left
    return None


def _factors(expr: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The operands of a product ``a * b * c`` (parentheses and unary signs looked through)."""
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Multiply):
        return _factors(expr.left) + _factors(expr.right)
    return [expr]


def _gaussian_one_shot(expr: cst.CSTNode) -> bool:
    """``sqrt(2 * log(1.25 / δ))`` somewhere in ``expr``: the classical one-release Gaussian ε/σ."""
    return any(isinstance(n, cst.Call) and call_name(n) == "log" and any(number(s) == 1.25 for s in walk(n))
               for n in walk(expr))


class EpsilonTimesSqrtSteps(Rule):
    id = "DP796"
    name = "epsilon-times-sqrt-steps"
    category = "general"
    severity = "error"
    summary = "ε of T composed steps computed as ε_step·√T (or per-step ε as ε/√T): not a composition bound"
    rationale = (
        "Composing T (ε0, δ0)-DP steps costs T·ε0 (basic composition) or, by advanced composition, "
        "ε0·√(2T ln(1/δ')) + T·ε0·(e^ε0 − 1) at δ = T·δ0 + δ'. Reporting the total as ε0·√T (or splitting a "
        "budget as ε/√T per step) keeps only the shape of the square-root term: it drops the ln(1/δ') factor, "
        "the linear term and the growth of δ, and under-states the privacy loss. For Gaussian noise the "
        "classical one-shot formula √(2 ln(1.25/δ))/σ times √T is also invalid once the result passes 1 (the "
        "theorem needs ε < 1). Reported: a product of an ε-named value (or the one-shot Gaussian ε "
        "expression) and √(steps/epochs/rounds/T), assigned to an ε-named target or returned as ε, and an "
        "ε-named per-step value set to ε/√T. Not reported: the full advanced composition (a log inside the "
        "root or an e^ε term), GDP μ·√T and σ·√T (valid for Gaussian DP / noise scales), an accountant's ε. "
        "Fix: use an RDP/PRV accountant, or the full advanced composition bound with its δ."
    )
    TRIGGERS = ("sqrt", "** 0.5", "**0.5")
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding needs a square root and an ε-like identifier."""
        return bool(facts.identifiers & {"sqrt"} or facts.binops(ast.Pow)) and any(
            words(i) & {"eps", "epsilon"} for i in facts.identifiers)

    def __init__(self, ctx) -> None:  # type: ignore[no-untyped-def]
        super().__init__(ctx)
        self._functions: list[cst.FunctionDef] = []
        self._values: list[dict[str, list[cst.BaseExpression]]] = [{}]

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._functions.append(node)
        self._values.append(name_values(node.body))

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self._functions.pop()
        self._values.pop()

    def _step_count(self, expr: cst.BaseExpression) -> str | None:
        """The step count under the root: a name of a step word, or a name assigned from one
        (``t = max(1, int(epochs))``); None when a log sits inside (advanced composition)."""
        if any(isinstance(n, cst.Call) and call_name(n) in ("log", "log1p", "log10", "log2") for n in walk(expr)):
            return None
        names = [n for n in walk(expr) if isinstance(n, (cst.Name, cst.Attribute))]
        for n in names:
            w = name_words(n)
            if w & _STEP_WORDS and not w & {"size", "per", "rate", "lr"}:
                return n.value if isinstance(n, cst.Name) else n.attr.value
        for n in names:
            if isinstance(n, cst.Name):
                for value in self._values[-1].get(n.value, ()):
                    if any(name_words(v) & _STEP_WORDS - {"t"} for v in walk(value)
                           if isinstance(v, (cst.Name, cst.Attribute))):
                        return n.value
        return None

    def _check(self, value: cst.BaseExpression, anchor: cst.CSTNode) -> None:
        if any(isinstance(n, cst.Call) and call_name(n) in ("exp", "expm1") for n in walk(value)):
            return  # the linear term of advanced composition
        factors = _factors(value)
        for i, f in enumerate(factors):
            root = _sqrt_arg(f)
            if root is None:
                continue
            steps = self._step_count(root)
            if steps is None:
                continue
            others = factors[:i] + factors[i + 1:]
            other_words: set[str] = set()
            for o in others:
                other_words |= name_words(o)
            if other_words & _NOT_EPS - {"noise"} and not any(_gaussian_one_shot(o) for o in others):
                return
            if _eps_words(other_words) or any(_gaussian_one_shot(o) for o in others):
                self.report(anchor, f"ε of the composed steps taken as ε_step·√{steps}: not a composition bound "
                                    "(advanced composition needs √(2T·ln(1/δ')) plus T·ε(e^ε − 1) and δ grows "
                                    "with T); use an accountant or the full bound")
                return
        # ε/√T as the per-step share
        if isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Divide):
            root = _sqrt_arg(value.right)
            if root is not None and self._step_count(root) is not None and _eps_words(name_words(value.left)) \
                    and not name_words(value.left) & _NOT_EPS:
                self.report(anchor, f"per-step ε set to ε/√{self._step_count(root)}: composing the steps costs "
                                    "more than ε (advanced composition needs a ln(1/δ') factor and a linear term); "
                                    "use an accountant or split ε over the steps")

    def visit_Assign(self, node: cst.Assign) -> None:
        targets: set[str] = set()
        for t in node.targets:
            targets |= target_names(t.target)
        tw: set[str] = set()
        for t in targets:
            tw |= words(t)
        if _eps_words(tw) and not tw & _NOT_EPS:
            self._check(node.value, node)

    def visit_Return(self, node: cst.Return) -> None:
        if node.value is None or not self._functions:
            return
        fw = words(self._functions[-1].name.value)
        if _eps_words(fw) or fw & {"spent", "privacy"} and not fw & _NOT_EPS:
            self._check(node.value, node)

    VALID = (
        # twin: full advanced composition with its linear term
        """
import math
def total_epsilon(eps_step, steps, delta_prime):
    return eps_step * math.sqrt(2 * steps * math.log(1 / delta_prime)) + steps * eps_step * (math.exp(eps_step) - 1)
""",
        # twin: basic composition
        """
def report_epsilon(eps_step, epochs):
    epsilon = eps_step * epochs
    return epsilon
""",
        # twin: Gaussian DP composes as mu * sqrt(T)
        """
import math
def gdp_epsilon_after(mu_step, steps):
    mu = mu_step * math.sqrt(steps)
    return mu
""",
        # ordinary ML: a learning rate warm-up by sqrt(step); Adam's eps untouched
        """
import math
def lr_at(step, base_lr=1e-3, adam_eps=1e-8):
    lr = base_lr * math.sqrt(step) / 100
    return lr
""",
    )

    INVALID = (
        # DP-SGD epsilon as the one-shot Gaussian epsilon times sqrt(epochs)
        """
import math
def train_dp(model, epochs, noise_multiplier, delta):
    for _ in range(epochs):
        model.noisy_step(noise_multiplier)
    t = max(1, int(epochs))
    eps = (1.0 / noise_multiplier) * math.sqrt(2.0 * math.log(1.25 / delta)) * math.sqrt(t)  # <-
    return model, eps
""",
        # per-round epsilon composed as sqrt(rounds)
        """
import numpy as np
def privacy_spent(epsilon_per_round, num_rounds):
    return np.sqrt(num_rounds) * epsilon_per_round  # <-
""",
        # power spelling, attribute count
        """
class Accountant:
    def update(self):
        self.total_epsilon = self.step_epsilon * self.steps ** 0.5  # <-
""",
        # a budget split as eps / sqrt(T)
        """
import math
def per_query_budget(epsilon, n_queries):
    eps_per_query = epsilon / math.sqrt(n_queries)  # <-
    return eps_per_query
""",
    )
