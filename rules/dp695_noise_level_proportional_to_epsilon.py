"""DP695: a noise level (std, scale, multiplier) set proportional to ε reaches a unit draw it multiplies, directly
or through a helper's parameter."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.resolver import product_factors
from dpcheck.analysis.syntax import call_name, call_params, dotted, walk, words
from dpcheck.rule import Rule

_BUDGET = frozenset({"epsilon", "eps", "budget"})
#: an ``eps`` of these is a numerical constant or an adversarial radius, not a privacy budget
_NUMERIC = frozenset({"norm", "adam", "optimizer", "optim", "tol", "tolerance", "machine", "numerical", "stability",
                      "small", "float", "finfo", "attack", "adv", "adversarial", "pgd", "fgsm", "step"})
_LEVEL = frozenset({"noise", "sigma", "stddev"})
#: draws of unit spread a scale multiplies
_UNIT = frozenset({"randn", "randn_like", "standard_normal", "standard_laplace", "standard_cauchy"})
#: draws whose arguments carry the spread
_DRAWS = frozenset({"normal", "laplace", "gauss", "Normal", "Laplace", "normalvariate", "random_normal"})


_UNWRAP = frozenset({"float", "abs"})


def _factors_of(expr: cst.BaseExpression) -> list[tuple[cst.BaseExpression, int]]:
    return product_factors(expr, _UNWRAP)


def _budget(expr: cst.CSTNode) -> bool:
    name = dotted(expr)
    if name is None:
        return False
    pieces = words(name.rsplit(".", 1)[-1])
    return bool(pieces & _BUDGET) and not pieces & (_NUMERIC | {"std", "sd", "sigma", "noise"})


def _grows_with_budget(value: cst.BaseExpression) -> bool:
    """``value`` is a product/quotient with a budget name among the numerator's factors and none in a
    denominator (``epsilon / (T * q)``, ``eps * clip``)."""
    factors = _factors_of(value)
    if len(factors) < 2 and not _budget(value):
        return False
    up = any(sign > 0 and _budget(f) for f, sign in factors)
    down = any(sign < 0 and any(_budget(n) for n in walk(f) if isinstance(n, (cst.Name, cst.Attribute)))
               for f, sign in factors)
    return up and not down


def _scales_unit_draw(body: cst.CSTNode, name: str) -> bool:
    """``name`` multiplies a unit draw (``torch.randn_like(g) * name``) or is an argument of a draw
    that takes its spread (``np.random.normal(0, name, n)``)."""
    for n in walk(body, into_scopes=False):
        if isinstance(n, cst.BinaryOperation) and isinstance(n.operator, cst.Multiply):
            sides = (n.left, n.right)
            for a, b in (sides, sides[::-1]):
                if dotted(a) == name and isinstance(b, cst.Call) and call_name(b) in _UNIT:
                    return True
        if isinstance(n, cst.Call) and call_name(n) in _DRAWS and any(
                dotted(a.value) == name for a in n.args[1:] if a.keyword is None or a.keyword.value in (
                    "scale", "std", "stddev", "sigma")):
            return True
    return False


class NoiseLevelProportionalToEpsilon(Rule):
    id = "DP695"
    name = "noise-level-proportional-to-epsilon"
    category = "general"
    severity = "error"
    summary = ("a noise std/scale is computed with ε in the numerator (`noise_scale = epsilon / (T * q)`) and "
               "multiplies a unit draw, here or in the helper it is passed to: more budget adds more noise")
    rationale = (
        "Every calibration of additive noise shrinks with the budget: Laplace b = Δ/ε, Gaussian "
        "σ = Δ·√(2 ln(1.25/δ))/ε, DP-SGD's multiplier from an accountant that grows as ε falls. A noise level "
        "assigned `epsilon / (T * batch_size / n)` or `eps * clip` inverts that: a small ε (strong privacy) "
        "gets almost no noise and the clip bound and δ do not enter at all, so the claimed ε is not met. "
        "DP114 reads the scale argument of a draw; this rule follows a noise-named value "
        "(`noise_scale`, `sigma`, `noise_std`) assigned with a budget name among the numerator's factors and "
        "none in a denominator to where it multiplies a unit draw (`torch.randn_like(g) * noise_scale`, "
        "`np.random.standard_normal(n) * sigma`), in the same function or through the parameter of a module "
        "helper it is passed to (`add_noise(grad, noise_scale)`). Not reported: ε in any denominator, an eps "
        "named for numerics or an attack radius, code with no DP context. Fix: σ = C·√(2 ln(1.25/δ))/ε for one "
        "release, or a noise multiplier from an accountant for T steps, times the clip bound."
    )
    TRIGGERS = ("eps",)
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding needs a unit draw or a spread-taking draw, and an assignment to a noise-named name."""
        if not facts.calls_any(_UNIT | _DRAWS):
            return False
        return any(any(isinstance(t, ast.Name) and words(t.id) & _LEVEL for t in node.targets)  # type: ignore[attr-defined]
                   for node in facts.nodes(ast.Assign))

    @classmethod
    def admits(cls, facts: AstFacts) -> bool:
        return facts.may_have_dp_context and cls.may_report(facts)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        fa = self.ctx.analysis
        for stmt in walk(node.body, into_scopes=False):
            if not (isinstance(stmt, cst.Assign) and len(stmt.targets) == 1
                    and isinstance(stmt.targets[0].target, cst.Name)):
                continue
            name = stmt.targets[0].target.value
            if not words(name) & _LEVEL or words(name) & _BUDGET or not _grows_with_budget(stmt.value):
                continue
            if self._noise_level_named_budget(stmt.value, node):
                continue  # ``epsilon_1 = sigma_1 * C * sqrt(T)``: a noise level some code names ε
            reached = _scales_unit_draw(node.body, name)
            if not reached:
                for call in walk(node.body, into_scopes=False):
                    if not isinstance(call, cst.Call) or call_name(call) in _DRAWS:
                        continue
                    callee = fa.callee(call)
                    if callee is None or callee is node:
                        continue
                    params = call_params(call, callee)
                    for i, arg in enumerate(call.args):
                        if dotted(arg.value) != name:
                            continue
                        param = arg.keyword.value if arg.keyword is not None else (
                            params[i] if i < len(params) else None)
                        if param is not None and _scales_unit_draw(callee.body, param):
                            reached = True
            if reached:
                code = " ".join(fa.code(stmt.value).split())
                self.report(stmt, f"the noise level `{name} = {code[:70]}` grows with ε (ε in the numerator, no "
                                  "clip bound or δ) and scales the noise draw: a small ε adds almost no noise; "
                                  "use σ = C·√(2 ln(1.25/δ))/ε, or a noise multiplier from an accountant, "
                                  "times the clip bound")

    def _noise_level_named_budget(self, value: cst.BaseExpression, fn: cst.FunctionDef) -> bool:
        """A budget-named factor of ``value`` is, a few copies back in ``fn``, computed from a noise level."""
        bindings = self.ctx.analysis.bindings_in(fn)
        todo = [f for f, sign in _factors_of(value) if sign > 0 and _budget(f)]
        seen: set[str] = set()
        while todo:
            name = dotted(todo.pop())
            if name is None or name in seen:
                continue
            seen.add(name)
            for b in bindings.get(name, []):
                if b.value is None:
                    continue
                for n in walk(b.value):
                    if isinstance(n, (cst.Name, cst.Attribute)) and words(dotted(n) or "") & {"sigma", "noise", "std"}:
                        return True
                    if isinstance(n, cst.Name) and _budget(n):
                        todo.append(n)
        return False

    VALID = (
        # twin: σ from the Gaussian mechanism, ε in the denominator, passed to the same helper
        """
import math, torch
def add_noise(grad, std):
    return grad + torch.randn_like(grad) * std
def train(model, loader, epsilon, delta, clip):
    noise_std = clip * math.sqrt(2 * math.log(1.25 / delta)) / epsilon
    for batch in loader:
        for p in model.parameters():
            p.grad = add_noise(p.grad, noise_std)
""",
        # twin: the Laplace scale shrinks with the budget
        """
import numpy as np
def release(counts, eps, sens):
    noise_scale = sens / eps
    return counts + np.random.standard_laplace(counts.shape) * noise_scale
""",
        # ordinary ML: an adversarial radius scales the random start of an attack
        """
import torch
def random_start(x, attack_eps, steps):
    noise = attack_eps / steps
    return x + torch.randn_like(x) * noise
""",
        # a quantity named epsilon that is a noise level (σ·C·√T) sets the next σ
        """
import math, torch
def two_phase(grad, sigma_1, C, T):
    epsilon_1 = sigma_1 * C * math.sqrt(T)
    epsilon_2 = epsilon_1
    sigma_2 = epsilon_2 / math.sqrt(T)
    return grad + torch.randn_like(grad) * sigma_2
""",
        # a noise level read off ε only to be reported, never drawn with
        """
import numpy as np
def describe(epsilon, n):
    sigma_hint = epsilon / n
    print("hint", sigma_hint)
    return np.random.normal(0, 1.0 / epsilon)
""",
        # twin of the keyword helper call: the per-round budget divides the sensitivity
        """
import numpy as np
def gaussian_noise(update, std):
    return update + np.random.normal(0.0, std, update.shape)
def aggregate(updates, epsilon, rounds, clip):
    eps_round = epsilon / rounds
    sigma_round = clip * np.sqrt(2 * np.log(1.25e5)) / eps_round
    return gaussian_noise(np.sum(updates, axis=0), std=sigma_round)
""",
    )

    INVALID = (
        """
import torch
def perturb(grad, scale):
    return grad + torch.randn_like(grad) * scale
def train_dp(model, loader, epochs, epsilon, delta, clip):
    steps = epochs * len(loader)
    rate = loader.batch_size / len(loader.dataset)
    noise_scale = epsilon / (steps * rate)  # <-
    for _ in range(epochs):
        for batch in loader:
            for p in model.parameters():
                p.grad = perturb(p.grad, noise_scale)
""",
        """
import numpy as np
def private_mean(values, epsilon, bound):
    sigma = epsilon * bound / len(values)  # <-
    return np.clip(values, -bound, bound).mean() + np.random.standard_normal() * sigma
""",
        """
import torch
class DPClient:
    def local_update(self, delta_w, budget_eps, clip):
        noise_std = self.args.eps * clip  # <-
        return delta_w + torch.normal(0.0, noise_std, delta_w.shape)
""",
        """
import numpy as np
def gaussian_noise(update, std):
    return update + np.random.normal(0.0, std, update.shape)
def aggregate(updates, epsilon, rounds):
    sigma_round = epsilon / rounds  # <-
    total = np.sum(updates, axis=0)
    return gaussian_noise(total, std=sigma_round)
""",
    )
