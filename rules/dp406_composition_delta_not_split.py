"""DP406: advanced composition over k steps whose per-step δ0 is not divided by k."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, number, walk
from dpcheck.rule import Rule


def _names(expr: cst.CSTNode) -> set[str]:
    return {n.value for n in walk(expr) if isinstance(n, cst.Name)}


def _assignments(scope: cst.CSTNode) -> dict[str, list[cst.BaseExpression]]:
    out: dict[str, list[cst.BaseExpression]] = {}
    for sub in walk(scope, into_scopes=False):
        if isinstance(sub, cst.Assign) and len(sub.targets) == 1 and isinstance(sub.targets[0].target, cst.Name):
            out.setdefault(sub.targets[0].target.value, []).append(sub.value)
    return out


def _closure(names: set[str], assigned: dict[str, list[cst.BaseExpression]]) -> set[str]:
    """``names`` and every name they are assigned from (``k = n_steps`` -> {k, n_steps})."""
    seen = set(names)
    todo = list(names)
    while todo:
        for value in assigned.get(todo.pop(), []):
            for name in _names(value) - seen:
                seen.add(name)
                todo.append(name)
    return seen


def _composition_count(scope: cst.CSTNode) -> set[str] | None:
    """The k of ``sqrt(2 * k * log(1 / δ')) * ε0`` (the advanced composition bound)."""
    for node in walk(scope, into_scopes=False):
        if isinstance(node, cst.Call) and call_name(node) == "sqrt" and node.args:
            inner = node.args[0].value
            logs = [c for c in walk(inner) if isinstance(c, cst.Call) and call_name(c) == "log"]
            if not logs:
                continue
            outside = _names(inner) - set().union(*(_names(c) for c in logs)) - {"np", "math", "jnp", "torch"}
            if outside:
                return outside
    return None


def _gaussian_delta(scope: cst.CSTNode) -> cst.Name | None:
    """The δ0 of the per-step Gaussian calibration ``sqrt(2 log(1.25 / δ0)) / σ``."""
    for node in walk(scope, into_scopes=False):
        if isinstance(node, cst.Call) and call_name(node) == "log" and node.args:
            arg = node.args[0].value
            if isinstance(arg, cst.BinaryOperation) and isinstance(arg.operator, cst.Divide) \
                    and number(arg.left) == 1.25 and isinstance(arg.right, cst.Name):
                return arg.right
    return None


class CompositionDeltaNotSplit(Rule):
    id = "DP406"
    name = "composition-delta-not-split"
    category = "general"
    severity = "error"
    summary = "advanced composition of k (ε0, δ0) steps with δ0 not divided by k: the total δ is k·δ0 + δ', not the δ reported"
    rationale = (
        "Advanced composition (Dwork, Rothblum & Vadhan) turns k adaptive (ε0, δ0)-DP steps into an "
        "(ε, k·δ0 + δ')-DP release with ε = sqrt(2k ln(1/δ'))·ε0 + k·ε0(e^ε0 − 1). Code that "
        "calibrates each step's Gaussian with a δ0 taken from the target δ without dividing by k "
        "(`delta0 = delta / 2`, `delta_prime = delta / 2`) reports (ε, δ) while the release is only "
        "(ε, k·δ/2 + δ/2): with k = 30 steps, about 15δ. Reported: the assignment of the δ0 that "
        "the per-step Gaussian calibration `sqrt(2 log(1.25 / δ0))` reads, in a function that "
        "also composes with `sqrt(2·k·log(1/δ'))`, when δ0 is computed without k. Not reported: "
        "δ0 divided by k (`(delta - delta_prime) / k`), code with no DP context. Fix: split δ "
        "as δ0 = (δ − δ') / k."
    )
    TRIGGERS = ("1.25",)
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """``log`` and ``sqrt`` calls."""
        return {"log", "sqrt"} <= facts.called and bool(facts.nodes(ast.Assign))

    VALID = (
        # twin: δ0 split over the k steps
        """
import numpy as np
def advanced_composition_epsilon(noise_multiplier, n_steps, delta):
    delta_prime = delta / 2.0
    delta0 = (delta - delta_prime) / n_steps
    eps0 = np.sqrt(2 * np.log(1.25 / delta0)) / noise_multiplier
    k = n_steps
    return np.sqrt(2 * k * np.log(1 / delta_prime)) * eps0 + k * eps0 * (np.exp(eps0) - 1)
""",
        # one Gaussian release, no composition
        """
import math
def gaussian_epsilon(sigma, delta):
    delta0 = delta / 2
    return math.sqrt(2 * math.log(1.25 / delta0)) / sigma
""",
        # twin with a per-round δ split through an intermediate name
        """
import math
def total_epsilon(sigma, rounds, delta):
    per_round = delta / (2 * rounds)
    d0 = per_round
    e0 = math.sqrt(2 * math.log(1.25 / d0)) / sigma
    return math.sqrt(2 * rounds * math.log(2 / delta)) * e0 + rounds * e0 * (math.exp(e0) - 1)
""",
        # δ' only: the per-step mechanism is pure ε (no 1.25 / δ0 calibration)
        """
import math
def composed(eps0, k, delta):
    delta_prime = delta
    return math.sqrt(2 * k * math.log(1 / delta_prime)) * eps0 + k * eps0 * (math.exp(eps0) - 1)
""",
    )

    INVALID = (
        # δ0 = δ / 2 for each of k steps
        """
import numpy as np
def advanced_composition_epsilon(noise_multiplier, n_steps, delta):
    delta0 = delta / 2.0  # <-
    delta_prime = delta / 2.0
    eps0 = np.sqrt(2 * np.log(1.25 / delta0)) / noise_multiplier
    k = n_steps
    return np.sqrt(2 * k * np.log(1 / delta_prime)) * eps0 + k * eps0 * (np.exp(eps0) - 1)
""",
        # the whole δ per round
        """
import math
def total_epsilon(sigma, rounds, delta):
    d0 = delta  # <-
    e0 = math.sqrt(2 * math.log(1.25 / d0)) / sigma
    return math.sqrt(2 * rounds * math.log(2 / delta)) * e0 + rounds * e0 * (math.exp(e0) - 1)
""",
        # a fixed fraction of δ per step
        """
import math
def dp_sgd_advanced(steps, sigma, target_delta):
    step_delta = 0.1 * target_delta  # <-
    step_eps = math.sqrt(2 * math.log(1.25 / step_delta)) / sigma
    slack = 0.5 * target_delta
    return math.sqrt(2 * steps * math.log(1 / slack)) * step_eps + steps * step_eps * (math.exp(step_eps) - 1)
""",
        # a method with attributes
        """
import numpy as np
class Accountant:
    def epsilon(self, T):
        delta_step = self.delta / 3  # <-
        e = np.sqrt(2 * np.log(1.25 / delta_step)) / self.sigma
        return np.sqrt(2 * T * np.log(3 / self.delta)) * e + T * e * (np.exp(e) - 1)
""",
    )

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        count = _composition_count(node)
        if not count:
            return
        delta0 = _gaussian_delta(node)
        if delta0 is None:
            return
        assigned = _assignments(node)
        values = assigned.get(delta0.value)
        if not values:
            return
        counts = _closure(count, assigned)
        used = _closure({delta0.value}, assigned) - {delta0.value}
        if used & counts:
            return
        fa = self.ctx.analysis
        target = next((s for s in walk(node, into_scopes=False) if isinstance(s, cst.Assign)
                       and len(s.targets) == 1 and isinstance(s.targets[0].target, cst.Name)
                       and s.targets[0].target.value == delta0.value), None)
        if target is None or not fa.in_dp_context(target):
            return
        k = sorted(count)[0]
        self.report(target, f"`{fa.code(target).strip()}` is the δ0 of each of the `{k}` composed steps, but it is "
                            f"not divided by `{k}`: advanced composition gives total δ = {k}·δ0 + δ', not the δ "
                            "reported; split it as δ0 = (δ − δ') / k")
