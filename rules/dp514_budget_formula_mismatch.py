"""DP514: a noise scale that grows with the privacy budget (``sigma = m * rho``), or δ passed where a
function takes ρ or ε."""
from __future__ import annotations

import re

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.noisedraws import PURE_DRAWS, project_operator_without_scale, user_helper_without_scale
from dpcheck.analysis.syntax import call_name, call_params, dotted, last_name, param_names, walk, words
from dpcheck.rule import Rule

_BUDGET = re.compile(r"(eps|epsilon|rho|zcdp)\d*")
_STD_WORDS = frozenset({"sigma", "std", "stddev", "scale", "b", "lam", "lambda", "beta"})
#: words that make an ε/ρ name something other than the budget (a ratio, a share's index, a count)
_NOT_BUDGET = frozenset({"ratio", "frac", "fraction", "inv", "inverse", "prime", "min", "max"})
_DELTA_ONLY = frozenset({"delta", "target", "dp", "self", "privacy", "args", "config", "cfg"})
_DRAW_SCALE_KEYS = ("scale", "std", "sigma", "stddev", "b")
#: keyword words of a noise or budget parameter that a δ value must not also fill
_TWIN_WORDS = frozenset({"sigma", "multiplier", "noise", "eps", "epsilon", "rho", "std", "stddev", "scale"})


def _budget_name(expr: cst.CSTNode) -> bool:
    if not isinstance(expr, (cst.Name, cst.Attribute)):
        return False
    pieces = words(last_name(expr) or "")
    return any(_BUDGET.fullmatch(w) for w in pieces) and not pieces & _NOT_BUDGET


def _sides(expr: cst.BaseExpression, top: bool = True) -> tuple[list[cst.BaseExpression], list[cst.BaseExpression]]:
    """(numerator, denominator) factors of a product/quotient; ``sqrt(x)`` counts as ``x``."""
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Multiply):
        ln, ld = _sides(expr.left, False)
        rn, rd = _sides(expr.right, False)
        return ln + rn, ld + rd
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Divide):
        ln, ld = _sides(expr.left, False)
        rn, rd = _sides(expr.right, False)
        return ln + rd, ld + rn
    if isinstance(expr, cst.Call) and call_name(expr) == "sqrt" and len(expr.args) == 1:
        return _sides(expr.args[0].value, False)
    return [expr], []


def _grows_with_budget(expr: cst.BaseExpression) -> cst.BaseExpression | None:
    """The budget factor of a scale that is a product with a budget in the numerator and none in the
    denominator (``m * rho``, ``sens * epsilon``); a bare budget name is not enough (a scale may be
    named ``eps``)."""
    numerator, denominator = _sides(expr)
    if len(numerator) + len(denominator) < 2:
        return None
    if any(any(_budget_name(n) for n in walk(f)) for f in denominator):
        return None
    budget = [f for f in numerator if _budget_name(f)]
    if not budget:
        return None
    if any(isinstance(f, cst.BinaryOperation) and isinstance(f.operator, (cst.Add, cst.Subtract))
           for f in numerator + denominator):
        return None
    return budget[0]


def _std_target(name: str | None) -> bool:
    pieces = words(name or "")
    return bool(pieces & _STD_WORDS) and not pieces & {"var", "variance", "sq", "lr", "learning"}


def _delta_only(expr: cst.BaseExpression) -> bool:
    """``delta``, ``self.delta``, ``target_delta``: a δ (not ``delta_f`` or ``delta_t``)."""
    if not isinstance(expr, (cst.Name, cst.Attribute)):
        return False
    pieces = words(last_name(expr) or "")
    return "delta" in pieces and pieces <= _DELTA_ONLY


class BudgetFormulaMismatch(Rule):
    id = "DP514"
    name = "budget-formula-mismatch"
    category = "general"
    severity = "error"
    summary = ("a noise scale that grows with the privacy budget (`sigma = m * rho`), or δ passed where a "
               "function takes ρ or ε")
    rationale = (
        "Every calibrated noise scale falls as the budget grows: Laplace Δ/ε, Gaussian "
        "Δ·√(2 ln(1.25/δ))/ε, zCDP Gaussian √(m·Δ²/(2ρ)). A scale assigned a product with ε or ρ in "
        "the numerator and no budget in the denominator (`sigma = m * rho`, `scale = sens * "
        "epsilon`), then used as a draw's scale, adds more noise the more budget there is and almost "
        "none for a small one, so the claimed ε (ρ) bounds nothing. A second slip of the same "
        "formula: a call that passes δ (`self.delta`, `target_delta`) to a parameter of the module's "
        "own function named ρ or ε; δ ≈ 1e-5 then sizes the noise as a budget (σ ∝ δ: no noise, or "
        "σ ∝ 1/δ: useless). A third: one call that gives the same named value to a δ keyword and to a σ/ε "
        "keyword (`Engine(sigma=args.dp_sigma, delta=args.dp_sigma)`); one of them is the wrong parameter. "
        "Not reported (besides): a shared NaN/inf placeholder. Not reported: a budget in the denominator, a ratio of budgets, a bare "
        "name (a scale may be called `eps`), sums, a variance, `delta_f`-like sensitivities, code "
        "with no DP context. Fix: derive the scale from the mechanism's formula (σ = "
        "√(m·Δ²/(2ρ)) for m Gaussian answers under ρ-zCDP), and pass the budget share meant."
    )
    TRIGGERS = ("eps", "rho", "delta")

    @classmethod
    def applies_to(cls, source: str) -> bool:
        """A δ word (an argument to check), or an ε/ρ word with a ``*`` or ``/`` (a scale formula)."""
        return "delta" in source or ("eps" in source or "rho" in source) and ("*" in source or "/" in source)
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding is a scale growing with an ε/ρ-named factor (a draw's scale, or a std-named target a
        draw reads), or a δ passed to a function or method of the module with an ε/ρ-named parameter."""
        from dpcheck.analysis.astshapes import budget_scale, delta_twin_call

        return budget_scale(facts, PURE_DRAWS, _BUDGET, _STD_WORDS, _DELTA_ONLY, _DRAW_SCALE_KEYS) \
            or delta_twin_call(facts, _TWIN_WORDS)

    VALID = (
        # B25 taoshen2022 run_exp2: a non-private row records NaN for both ε and δ
        """
import numpy as np
def nonprivate_row(labels, score):
    return dict(method="non-private", eps=np.nan, delta=np.nan, labels=labels, score=score)
""",
        # twins of the δ/σ mix-ups: each parameter gets its own value
        """
from dp_engine import DPEngine
def make_engine(model, args):
    return DPEngine(model, sigma=args.dp_sigma, delta=args.dp_delta, grad_norm=args.grad_norm)
""",
        """
from opacus import PrivacyEngine
def private(model, opt, loader, cfg):
    return PrivacyEngine().make_private_with_epsilon(module=model, optimizer=opt, data_loader=loader,
        target_epsilon=cfg.eps, target_delta=cfg.delta, epochs=cfg.epochs, max_grad_norm=1.0)
""",
        """
from tensorflow_privacy import compute_dp_sgd_privacy
def report(n, batch, sigma, epochs, delta):
    return compute_dp_sgd_privacy(n=n, batch_size=batch, noise_multiplier=sigma, epochs=epochs, delta=delta)
""",
        # zCDP Gaussian: σ falls with ρ
        """
import numpy as np
def noisy_indifs(indifs, rho):
    sigma = np.sqrt(len(indifs) * 4 / (2 * rho))
    return {k: v + np.random.normal(0, sigma) for k, v in indifs.items()}
""",
        """
import numpy as np
def laplace_mech(value, sensitivity, epsilon):
    scale = sensitivity / epsilon
    return value + np.random.laplace(0, scale)
""",
        # a budget share, not a scale
        """
def split(epsilon, rho, frac):
    eps_select = frac * epsilon
    rho_measure = (1 - frac) * rho
    return eps_select, rho_measure
""",
        # δ passed to a δ parameter, ρ to ρ
        """
import numpy as np
class Synth:
    def measure(self, x, rho, delta):
        return x + np.random.normal(0, 1 / np.sqrt(2 * rho))
    def run(self, x):
        return self.measure(x, self.rho, self.delta)
""",
        # the callee is a function passed in (a δ(ε) curve), not the module's function of that name
        """
def deltacomp(n, eps0, rho, delta):
    return rho * delta
def binarysearch(deltacomp, delta, num_iterations, epsupper):
    llim, rlim = 0, epsupper
    for t in range(num_iterations):
        mideps = (rlim + llim) / 2
        if deltacomp(mideps, delta) < delta:
            rlim = mideps
        else:
            llim = mideps
    return rlim
""",
        # a ratio of budgets scales the noise down
        """
import numpy as np
def rescale(noise_std, eps_total, eps_round):
    sigma = noise_std * eps_round / eps_total
    return np.random.normal(0, sigma)
""",
        # the service's own ``laplace(M, eps)`` operator given a share of the budget (it divides by it)
        """
class Service:
    def laplace(self, M, eps):
        return self.measure("Laplace", eps, {"A": M, "eps": eps})
    def partition(self, M, ratio, eps):
        y = self.laplace(M, ratio * eps)
        return y
""",
    )

    INVALID = (
        # twin: the service's own ``laplace(loc, scale)`` wrapper given a share of the budget as its scale
        """
import numpy as np
class Service:
    def laplace(self, loc, scale):
        return loc + np.random.laplace(0.0, scale)
    def partition(self, total, ratio, eps):
        return self.laplace(total, ratio * eps)  # <-
""",
        # B24 csl-cqu my_model_trainer_classification.py: the engine's δ is the noise multiplier
        """
from dp_engine import DPEngine
def make_engine(model, args):
    return DPEngine(model, sigma=args.dp_sigma, delta=args.dp_sigma, grad_norm=args.grad_norm)  # <-
""",
        # the target ε given again as the target δ
        """
from opacus import PrivacyEngine
def private(model, opt, loader, cfg):
    return PrivacyEngine().make_private_with_epsilon(module=model, optimizer=opt, data_loader=loader,  # <-
        target_epsilon=cfg.eps, target_delta=cfg.eps, epochs=cfg.epochs, max_grad_norm=1.0)
""",
        # the noise multiplier given as δ to the accountant
        """
from tensorflow_privacy import compute_dp_sgd_privacy
def report(n, batch, sigma, epochs, delta):
    return compute_dp_sgd_privacy(n=n, batch_size=batch, noise_multiplier=sigma, epochs=epochs, delta=sigma)  # <-
""",
        # PrivSyn Anonymisation.py: sigma = pairs * rho, and delta passed as rho
        """
import numpy as np
class Anonymiser:
    def __init__(self, epsilon, delta):
        self.delta = delta
        self.rho = epsilon + 2 * np.log(1 / delta) - 2 * np.sqrt(np.log(1 / delta) * (epsilon + np.log(1 / delta)))
    def get_noisy_indifs(self, indifs, rho):
        numattpairs = len(indifs)
        sigma = numattpairs * rho  # <-
        return {k: v + np.random.normal(0, sigma) for k, v in indifs.items()}
    def two_way_selection(self, indifs):
        return self.get_noisy_indifs(indifs, self.delta)  # <-
""",
        """
import numpy as np
def dp_count(count, sensitivity, epsilon):
    return count + np.random.laplace(0, sensitivity * epsilon)  # <-
""",
        """
import torch
def gaussian_release(x, l2_sensitivity, epsilon, delta):
    std = l2_sensitivity * epsilon * (2 * torch.log(torch.tensor(1.25 / delta))).sqrt()  # <-
    return x + torch.normal(0, std, x.shape)
""",
        """
import numpy as np
def measure_marginals(marginals, rho, delta):
    return [m + np.random.normal(0, noise_scale(rho=delta), m.shape) for m in marginals]  # <-
def noise_scale(rho):
    return np.sqrt(1 / (2 * rho))
""",
    )

    def visit_Assign(self, node: cst.Assign) -> None:
        if len(node.targets) != 1 or not _std_target(last_name(node.targets[0].target)):
            return
        budget = _grows_with_budget(node.value)
        if budget is None:
            return
        target = last_name(node.targets[0].target) or ""
        fa = self.ctx.analysis
        fn = fa.enclosing_function(node)
        if fn is None or not self._drawn_with(fn, target):
            return
        self.report(node, f"`{target}` grows with the budget `{fa.code(budget).strip()}`: a calibrated noise scale "
                          f"falls as the budget grows (Δ/ε, √(m·Δ²/(2ρ))), so this adds almost no noise for a "
                          f"small budget")

    def visit_Call(self, node: cst.Call) -> None:
        if call_name(node) in PURE_DRAWS:
            scale = self._draw_scale(node)
            if scale is not None and not isinstance(scale, (cst.Name, cst.Attribute)) and not self._own_operator(node):
                budget = _grows_with_budget(scale)
                if budget is not None:
                    fa = self.ctx.analysis
                    self.report(node, f"the noise scale `{fa.code(scale).strip()}` grows with the budget "
                                      f"`{fa.code(budget).strip()}`: it should fall as the budget grows (Δ/ε)")
                    return
        if not self._delta_twin(node):
            self._delta_as_budget(node)

    # -- helpers ---------------------------------------------------------------------------------
    def _own_operator(self, call: cst.Call) -> bool:
        """``self.laplace(M, ratio * eps)`` / ``measurement.Laplace(M, alpha * eps)``: the module's or the project's
        own operator, whose second argument is a budget share it divides by, not a draw's scale."""
        if any(a.keyword is not None and a.keyword.value in _DRAW_SCALE_KEYS for a in call.args):
            return False
        return user_helper_without_scale(call, self.ctx.analysis.callee(call), 1) or \
            project_operator_without_scale(self.ctx, call, 1)

    @staticmethod
    def _draw_scale(call: cst.Call) -> cst.BaseExpression | None:
        for a in call.args:
            if a.keyword is not None and a.keyword.value in _DRAW_SCALE_KEYS:
                return a.value
        positional = [a.value for a in call.args if a.keyword is None and not a.star]
        if call_name(call) in ("laplace", "normal", "gumbel", "Laplace", "Normal", "gauss") and len(positional) >= 2:
            return positional[1]
        return None

    @staticmethod
    def _drawn_with(fn: cst.FunctionDef, name: str) -> bool:
        for sub in walk(fn, into_scopes=False):
            if isinstance(sub, cst.Call) and call_name(sub) in PURE_DRAWS:
                if any(isinstance(n, (cst.Name, cst.Attribute)) and last_name(n) == name
                       for a in sub.args for n in walk(a.value)):
                    return True
        return False

    def _delta_twin(self, call: cst.Call) -> bool:
        """``Engine(sigma=args.dp_sigma, delta=args.dp_sigma)``: one value given as δ and as σ/ε in one call."""
        from dpcheck.analysis.astshapes import delta_twin_keyword

        pairs = [(a.keyword.value, dotted(a.value) if isinstance(a.value, (cst.Name, cst.Attribute)) else None)
                 for a in call.args if a.keyword is not None]
        key = delta_twin_keyword(pairs, _TWIN_WORDS) if len(pairs) >= 2 else None
        if key is None:
            return False
        value = dict(pairs)[key]
        self.report(call, f"`{value}` is passed both as `{key}` and as δ: one of them is the wrong parameter (a σ "
                          f"or ε of about 1 as δ makes every reported guarantee meaningless); pass the δ meant")
        return True

    def _delta_as_budget(self, call: cst.Call) -> None:
        if not any(_delta_only(a.value) for a in call.args):
            return
        fa = self.ctx.analysis
        caller = fa.enclosing_function(call)
        if caller is not None and isinstance(call.func, cst.Name) and call.func.value in param_names(caller):
            return  # a function passed in, not the module's function of that name
        callee = fa.callee(call)
        if callee is None:
            return
        params = call_params(call, callee)
        position = 0
        for arg in call.args:
            if arg.star:
                return
            if arg.keyword is not None:
                param = arg.keyword.value
            else:
                if position >= len(params):
                    return
                param = params[position]
                position += 1
            pieces = words(param)
            if _delta_only(arg.value) and any(_BUDGET.fullmatch(w) for w in pieces) and "delta" not in pieces:
                self.report(call, f"`{fa.code(arg.value).strip()}` (a δ) is passed as `{param}` of "
                                  f"`{callee.name.value}`: a δ of about 1e-5 then sizes the noise as if it were the "
                                  f"budget; pass the {param} share meant")
                return
