"""DP317: an ε computation that returns 0 when no noise is added (the cost of a noise-free release is ∞)."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.clipping import ident
from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, dotted, number, walk, words
from dpcheck.analysis.vocabulary import NOISE_DRAWS
from dpcheck.rule import Rule

_NOISE_WORDS = frozenset({"noise", "sigma", "multiplier", "std", "scale", "stddev"})
#: not ``dp``: an f-DP trade-off function (``fDP_gaussian``) returns the type II error, and 0 there is "no privacy"
_EPSILON_WORDS = frozenset({"eps", "epsilon", "privacy", "spent", "budget", "rdp"})


def _epsilon_function(name: str) -> bool:
    return bool(words(name) & _EPSILON_WORDS)


def _noise_named(expr: cst.BaseExpression) -> bool:
    name = ident(expr)
    return name is not None and bool(words(name.split(".")[-1]) & _NOISE_WORDS) \
        and not words(name.split(".")[-1]) & {"clip", "norm", "lr"}


def _no_noise_test(test: cst.BaseExpression) -> cst.BaseExpression | None:
    """``sigma <= 0``, ``self.noise_multiplier == 0``, ``not noise_multiplier``, ``sigma is None`` (alone or in
    an ``or``): the noise-free case. Returns the noise operand."""
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.Or):
        return _no_noise_test(test.left) or _no_noise_test(test.right)
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not) and _noise_named(test.expression):
        return test.expression
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        comp = test.comparisons[0]
        if _noise_named(test.left) and (
                isinstance(comp.operator, (cst.LessThanEqual, cst.Equal)) and number(comp.comparator) == 0
                or isinstance(comp.operator, cst.Is) and isinstance(comp.comparator, cst.Name)
                and comp.comparator.value == "None"):
            return test.left
    return None


def _zero(expr: cst.BaseExpression | None) -> bool:
    """``0``, ``0.0``, ``(0.0, delta)``, ``0, None``."""
    if expr is None:
        return False
    if isinstance(expr, cst.Tuple) and expr.elements:
        return number(expr.elements[0].value) == 0
    return number(expr) == 0


#: words of a privacy budget ε (a ``target_epsilon``, ``self.eps``, ``privacy_budget``)
_BUDGET_WORDS = frozenset({"eps", "epsilon", "budget"})
#: words that make an ``eps`` something else (a numerical tolerance, an optimiser's or a norm's epsilon)
_NOT_BUDGET = frozenset({"adam", "norm", "bn", "tol", "tolerance", "ls", "smoothing", "step", "attack", "adv",
                         "pgd", "fgsm", "clip", "lr", "log", "decay", "greedy", "min", "stability",
                         # a remainder of the budget: spending it only when some is left is correct
                         "remain", "remaining", "left", "rest", "leftover", "spent", "used", "accu", "residual"})
#: a noise draw or a calibration of the noise (``get_noise_multiplier``, ``compute_sigma``)
_DRAWS = (NOISE_DRAWS - {"sample", "exponential", "rvs"}) | {"add_noise", "gaussian_noise", "laplace_noise",
                                                            "laplace_mechanism", "gaussian_mechanism"}
_CALIBRATION_WORDS = frozenset({"noise", "sigma", "multiplier", "scale", "std"})


def _budget_name(expr: cst.BaseExpression) -> str | None:
    name = dotted(expr)
    if name is None:
        return None
    last = words(name.split(".")[-1])
    if not last & _BUDGET_WORDS or last & _NOT_BUDGET or "privacy" in last and "budget" not in last:
        return None
    if "budget" in last and not last & {"eps", "epsilon", "privacy"}:
        return None
    return name


def _positive_test(test: cst.BaseExpression) -> str | None:
    """``epsilon > 0``, ``self.epsilon > 1e-5``, ``eps != 0``, ``0 < eps``: the branch runs only for a positive ε.
    Returns ε's name."""
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        return _positive_test(test.left) or _positive_test(test.right)
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return None
    comp = test.comparisons[0]
    left, op, right = test.left, comp.operator, comp.comparator
    if isinstance(op, (cst.GreaterThan, cst.NotEqual)):
        value, bound = left, right
    elif isinstance(op, cst.LessThan):
        value, bound = right, left
    else:
        return None
    limit = number(bound)
    if limit is None or not 0 <= limit < 1e-2:
        return None
    return _budget_name(value)


def _reads(expr: cst.CSTNode, names: set[str]) -> bool:
    return any(dotted(x) in names for x in walk(expr) if isinstance(x, (cst.Name, cst.Attribute)))


def _calibrates(body: cst.CSTNode, budget: str) -> bool:
    """Does ``body`` draw noise from ``budget``, or compute a noise scale from it (ε or a share of it divides
    the scale, or it is handed to a calibration such as ``get_noise_multiplier(target_epsilon=eps)``)?"""
    derived = {budget}
    assigns = [n for n in walk(body) if isinstance(n, cst.Assign)]
    for _ in range(3):
        for n in assigns:
            if _reads(n.value, derived):
                derived |= {d for t in n.targets if (d := dotted(t.target)) is not None}
    for n in walk(body):
        if isinstance(n, cst.Call) and _reads(cst.Module([]) if not n.args else n, derived):
            name = call_name(n) or ""
            if any(_reads(a.value, derived) for a in n.args) and (name in _DRAWS or words(name) & _CALIBRATION_WORDS):
                return True
    for n in assigns:
        targets = {d for t in n.targets if (d := dotted(t.target)) is not None}
        if not any(words(t.split(".")[-1]) & _CALIBRATION_WORDS for t in targets):
            continue
        if any(isinstance(d, cst.BinaryOperation) and isinstance(d.operator, cst.Divide) and _reads(d.right, derived)
               for d in walk(n.value)):
            return True
    return False


def _no_privacy_marker(body: cst.CSTNode) -> bool:
    """The other branch sets the run's reported ε to a value no guarantee can have (``eps = -1``,
    ``epsilon = None``, ``eps = float('inf')``): the ε ≤ 0 case is a declared non-private run, not a
    release under a claimed ε."""
    for n in walk(body):
        if not isinstance(n, cst.Assign):
            continue
        if not any(words((dotted(t.target) or "").split(".")[-1]) & {"eps", "epsilon"} for t in n.targets):
            continue
        value = n.value
        if isinstance(value, cst.Name) and value.value == "None":
            return True
        num = number(value)
        if num is not None and num < 0:
            return True
        if isinstance(value, cst.Call) and call_name(value) == "float" and value.args \
                and isinstance(value.args[0].value, cst.SimpleString) and "inf" in value.args[0].value.value.lower():
            return True
        if isinstance(value, cst.Attribute) and value.attr.value == "inf":
            return True
    return False


def _raises(body: cst.CSTNode) -> bool:
    return any(isinstance(n, cst.Raise) for n in walk(body))


def _ast_positive_budget(node: ast.AST) -> bool:
    """``eps > 0``, ``self.epsilon > 1e-5``, ``epsilon != 0.0``, ``0 < eps`` (the ``ast`` gate's view of
    :func:`_positive_test`)."""
    if not isinstance(node, ast.Compare) or len(node.ops) != 1:
        return False
    op, left, right = node.ops[0], node.left, node.comparators[0]
    if isinstance(op, (ast.Gt, ast.NotEq)):
        value, bound = left, right
    elif isinstance(op, ast.Lt):
        value, bound = right, left
    else:
        return False
    if not (isinstance(bound, ast.Constant) and isinstance(bound.value, (int, float))
            and not isinstance(bound.value, bool) and 0 <= bound.value < 1e-2):
        return False
    name = value.attr if isinstance(value, ast.Attribute) else value.id if isinstance(value, ast.Name) else None
    return name is not None and bool(words(name) & _BUDGET_WORDS)


class ZeroEpsilonWithoutNoise(Rule):
    id = "DP317"
    name = "zero-epsilon-without-noise"
    category = "general"
    severity = "error"
    summary = "ε computed as 0 when no noise is added (noise multiplier 0 or None), or noise drawn only for ε > 0: a noise-free run is reported as perfectly private"
    rationale = (
        "An accountant's ε for a mechanism with σ = 0 (or no noise at all) is infinite: the "
        "release is the exact function of the data. A helper that returns `0.0` (or `(0, δ)`) "
        "in that case — `if self.noise_multiplier <= 0 or self.steps == 0: return 0.0` — makes "
        "a non-private run print `ε = 0.00`, the strongest guarantee there is. Reported: a `return` "
        "of 0 guarded by a test that the noise (a σ / noise-multiplier / noise-scale name) is zero, "
        "non-positive, None or falsy, inside a function named for ε, privacy or the budget spent. "
        "Not reported: a return of `float('inf')`/`math.inf`, a zero ε for zero steps alone, code "
        "with no DP context. Fix: return `math.inf` (or raise) when no noise is added, and test "
        "steps separately. The mirror image is reported too: noise calibrated and drawn only for a positive "
        "ε (`noise_multiplier = 0.0; if self.epsilon > 0: noise_multiplier = get_noise_multiplier(target_epsilon="
        "self.epsilon, …)`, `if epsilon > 0: probs += laplace(0, sens / (epsilon / k))`, `scale = s / eps if "
        "eps > 0 else 0`): ε = 0 is the strongest guarantee a caller can ask for, and it runs with no noise at "
        "all. Not reported there: ε ≤ 0 refused earlier (`raise`, `assert`), an else branch that draws noise "
        "or raises, an else branch that marks the run non-private by setting its reported ε to -1, None or "
        "inf (a baseline switch: no ε is claimed), ε-named values that are tolerances (an optimiser's or label smoothing's eps)."
    )
    TRIGGERS = ("return 0", "eps", "budget")
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A function named for ε/privacy/budget holding an ``if``; or any ``if`` / conditional expression (a noise
        calibrated only for a positive ε)."""
        if any(_epsilon_function(fn.name) for fn in facts.functions) and bool(facts.nodes(ast.If)):
            return True
        return any(_ast_positive_budget(c) for c in facts.nodes(ast.Compare))

    VALID = (
        # an f-DP trade-off function: type II error 0 is the no-privacy value (autodp's fdp_bank)
        """
from scipy.stats import norm
def fDP_gaussian(params, fpr):
    sigma = params["sigma"]
    if sigma == 0:
        return 0
    return norm.cdf(norm.ppf(1 - fpr) - 1 / sigma)
""",
        # twin: infinite ε without noise
        """
import math
class ManualDP:
    def get_epsilon(self, delta):
        if self.noise_multiplier <= 0:
            return math.inf
        if self.steps == 0:
            return 0.0
        return self.accountant.get_epsilon(delta)
""",
        # zero steps alone: nothing was released yet
        """
def compute_epsilon(steps, noise_multiplier, sample_rate, delta, accountant):
    if steps == 0:
        return 0.0
    return accountant(steps, noise_multiplier, sample_rate, delta)
""",
        # not an ε helper: a zero noise term
        """
import numpy as np
def noise_for(shape, sigma):
    if sigma == 0:
        return 0
    return np.random.normal(0, sigma, shape)
""",
        # twin: raising on a noise-free configuration
        """
def privacy_spent(sigma, q, steps, delta, rdp):
    if sigma is None or sigma <= 0:
        raise ValueError("no noise: epsilon is infinite")
    return rdp(q, sigma, steps, delta)
""",
        # twin of the ε-gated calibration: ε ≤ 0 is refused
        """
import opacus
class DPTVAE:
    def fit(self, loader, epochs):
        if self.epsilon <= 0:
            raise ValueError("epsilon must be positive")
        noise_multiplier = 0.0
        if self.epsilon > 0:
            noise_multiplier = opacus.accountants.utils.get_noise_multiplier(
                target_epsilon=self.epsilon, target_delta=self.delta, sample_rate=1 / len(loader), epochs=epochs)
        return noise_multiplier
""",
        # twin of the conditional scale: an infinite ε (no privacy asked) is the case without noise
        """
import numpy as np
def perturb(col, epsilon, sensitivity):
    scale = sensitivity / epsilon if epsilon != float("inf") else 0
    return col + np.random.laplace(0.0, scale, col.shape)
""",
        # ordinary ML code: an optimiser's eps and a label-smoothing eps gate no privacy noise
        """
import torch
def smooth(logits, target, ls_eps=0.1, adam_eps=1e-8):
    if ls_eps > 0:
        target = target * (1 - ls_eps) + ls_eps / logits.shape[-1]
    if adam_eps > 0:
        noise_scale = 1.0 / adam_eps
    return torch.nn.functional.cross_entropy(logits, target)
""",
        # the budget left over after the first measurement is spent only when some remains
        """
import numpy as np
def refine(node, eps_total, eps_used, rng):
    node.noisy = node.count + rng.laplace(0.0, 1 / eps_used)
    epsilon_remain = eps_total - eps_used
    if epsilon_remain > 0:
        node.noisy = node.count + rng.laplace(0.0, 1 / epsilon_remain)
    return node
""",
        # a positive-ε branch that adds noise and an else branch that adds other noise
        """
import numpy as np
def release(x, epsilon, sigma):
    if epsilon > 0:
        return x + np.random.laplace(0, 1.0 / epsilon)
    else:
        return x + np.random.normal(0, sigma)
""",
        # the same launcher where ε ≤ 0 is the declared non-private baseline: the else branch marks both the
        # noise and the reported ε as absent (-1), so no run claims an ε it lacks
        """
def launch(cfg, n_train):
    if cfg.target_eps > 0:
        rate = cfg.bs / n_train
        noise_std, target_eps = calibrate_sigma(rate, cfg.epochs * n_train // cfg.bs, cfg.target_eps, cfg.delta)
        print("training with epsilon", target_eps)
    else:
        noise_std = -1
        target_eps = -1
    return run_training(noise_std=noise_std, epsilon=target_eps)
""",
        # ordinary ML: an optimizer's eps > 0 guard is no privacy budget
        """
import torch
def make_opt(params, cfg):
    if cfg.adam_eps > 0:
        return torch.optim.Adam(params, lr=cfg.lr, eps=cfg.adam_eps)
    return torch.optim.SGD(params, lr=cfg.lr)
""",
    )

    INVALID = (
        # the noise multiplier stays 0.0 unless ε > 0 (default ε = 0.0): ε = 0 trains without noise
        """
import opacus
class DPCTGAN:
    def __init__(self, epsilon=0.0, delta=1e-5):
        self.epsilon = epsilon
        self.delta = delta
    def fit(self, loader, epochs):
        noise_multiplier = 0.0
        if self.epsilon > 0:  # <-
            noise_multiplier = opacus.accountants.utils.get_noise_multiplier(
                target_epsilon=self.epsilon, target_delta=self.delta, sample_rate=1 / len(loader), epochs=epochs)
        return noise_multiplier
""",
        # the histogram is noised only for a positive budget; ε = 0 leaves it exact
        """
import numpy as np
def inject_noise(probs, epsilon, n_attributes, n):
    if epsilon > 0:  # <-
        share = epsilon / n_attributes
        scale = (2 / n) / share
        probs = probs + np.random.laplace(0, scale, len(probs))
    return probs
""",
        # a fine-tuning launcher: for ε ≤ 0 the else branch drops the noise but leaves the ε the run reports
        """
def launch(cfg, n_train):
    target_eps = cfg.target_eps
    if cfg.target_eps > 0:  # <-
        rate = cfg.bs / n_train
        noise_std, target_eps = calibrate_sigma(rate, cfg.epochs * n_train // cfg.bs, cfg.target_eps, cfg.delta)
    else:
        noise_std = 0.0
    print("training with epsilon", target_eps)
    return run_training(noise_std=noise_std, epsilon=target_eps)
""",
        # a conditional Laplace scale: 0 (no noise) for ε ≤ 0
        """
import numpy as np
def laplace_column(col, epsilon, sensitivity):
    scale = sensitivity / epsilon if epsilon > 0 else 0  # <-
    return col + np.random.laplace(0.0, scale, col.shape)
""",

        # ε = 0 when no noise or no step
        """
class ManualDP:
    def get_epsilon(self, delta):
        if self.noise_multiplier <= 0 or self.steps <= 0:
            return 0.0  # <-
        return self.accountant.get_epsilon(delta)
""",
        # a None σ reported as (0, δ)
        """
def privacy_spent(sigma, q, steps, delta, rdp):
    if sigma is None:
        return 0, delta  # <-
    return rdp(q, sigma, steps, delta), delta
""",
        # a falsy noise multiplier
        """
def compute_eps(noise_multiplier, sample_rate, steps, delta, accountant):
    if not noise_multiplier:
        return 0  # <-
    return accountant(noise_multiplier, sample_rate, steps, delta)
""",
        # a zero noise scale in a budget tracker
        """
class BudgetTracker:
    def spent_budget(self):
        if self.noise_scale == 0:
            return 0.0  # <-
        return self.sensitivity / self.noise_scale * self.releases
""",
    )

    def _guarded(self, node: cst.CSTNode, budget: str) -> bool:
        """Is a non-positive ``budget`` refused earlier in the function (``if eps <= 0: raise``, ``assert eps > 0``)?"""
        fn = self.ctx.analysis.enclosing_function(node)
        if fn is None:
            return False
        for n in walk(fn.body):
            if isinstance(n, cst.If) and n is not node and _reads(n.test, {budget}) and _raises(n.body):
                return True
            if isinstance(n, cst.Assert) and _reads(n.test, {budget}):
                return True
        return False

    def _report_off(self, node: cst.CSTNode, budget: str) -> None:
        self.report(node, f"the noise is calibrated and drawn only when `{budget}` is positive: with ε = 0 (the "
                          "strongest privacy a caller can ask for) or a negative ε the value is released with no noise "
                          "at all while the run still carries that ε; refuse ε ≤ 0 (raise) instead of skipping the "
                          "noise")

    def visit_IfExp(self, node: cst.IfExp) -> None:
        budget = _positive_test(node.test)
        if budget is None or not _zero(node.orelse) and not (isinstance(node.orelse, cst.Name)
                                                              and node.orelse.value == "None"):
            return
        fa = self.ctx.analysis
        if not fa.in_dp_context(node) or not any(
                isinstance(d, cst.BinaryOperation) and isinstance(d.operator, cst.Divide)
                and _reads(d.right, {budget}) for d in walk(node.body)):
            return
        parent = fa.parent(node)
        used = False
        if isinstance(parent, cst.Assign):
            used = any(words((dotted(t.target) or "").split(".")[-1]) & _CALIBRATION_WORDS for t in parent.targets)
        else:
            up: cst.CSTNode | None = parent
            for _ in range(3):
                if isinstance(up, cst.Call) and (call_name(up) or "") in _DRAWS:
                    used = True
                    break
                up = fa.parent(up) if up is not None else None
        if used and not self._guarded(node, budget):
            self._report_off(node.test, budget)

    def visit_If(self, node: cst.If) -> None:
        self._positive_branch(node)
        noise = _no_noise_test(node.test)
        if noise is None:
            return
        fa = self.ctx.analysis
        fn = fa.enclosing_function(node)
        if fn is None or not _epsilon_function(fn.name.value):
            return
        for sub in walk(node.body):
            if isinstance(sub, cst.Return) and _zero(sub.value) and fa.in_dp_context(sub):
                self.report(sub, f"`{fn.name.value}` returns ε = 0 when `{fa.code(noise).strip()}` adds no noise: a "
                                 "noise-free release costs ε = ∞, so the run is reported as perfectly private while "
                                 "it has no privacy; return `math.inf` (or raise) in this case")
                return

    def _positive_branch(self, node: cst.If) -> None:
        """``if self.epsilon > 0: sigma = get_noise_multiplier(target_epsilon=self.epsilon, …)`` with nothing
        noisy (and no refusal) when ε ≤ 0."""
        budget = _positive_test(node.test)
        if budget is None:
            return
        orelse = node.orelse
        if isinstance(orelse, cst.If):
            return  # an ``elif`` chain: the other branches decide
        if orelse is not None and (_raises(orelse) or _calibrates(orelse.body, budget) or _no_privacy_marker(orelse)
                                   or any(isinstance(c, cst.Call) and (call_name(c) or "") in _DRAWS
                                          for c in walk(orelse))):
            return
        fa = self.ctx.analysis
        if not fa.in_dp_context(node) or not _calibrates(node.body, budget) or self._guarded(node, budget):
            return
        self._report_off(node.test, budget)
