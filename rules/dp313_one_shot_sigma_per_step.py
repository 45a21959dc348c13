"""DP313: σ calibrated for one (ε, δ) release, then drawn at every training step with no composition."""
from __future__ import annotations

import ast
import re

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, dotted, number, walk, words
from dpcheck.rule import Rule

#: an accountant or an explicit split of ε over the steps somewhere in the module
_COMPOSED = re.compile(
    r"(?i)accountant|compute_rdp|rdp_|privacy_spent|get_epsilon|privacy_engine|make_private|moments|"
    r"compose|composition|eps(ilon)?_?(per|each)_?(step|iter|epoch|round|batch)|zcdp|rho"
)
#: per-step noise draws and noise layers
_DRAWS = frozenset({"normal", "randn", "randn_like", "normal_", "gauss", "laplace", "GaussianNoise",
                    "random_normal", "gaussian_noise", "add_noise"})
_LOOP_WORDS = frozenset({"epoch", "epochs", "step", "steps", "iteration", "iterations", "iters", "batch", "batches",
                         "round", "rounds", "loader", "dataloader", "dataset", "train", "niter", "n_iter"})
_STEP_FUNCTIONS = frozenset({"step", "train", "training", "forward", "update", "backward", "call"})


def _eps_name(name: str | None) -> bool:
    return name is not None and bool(words(name) & {"epsilon", "eps"}) and not words(name) & {
        "per", "step", "iter", "round", "epoch", "batch", "each"}


def _one_shot_formula(expr: cst.BaseExpression) -> bool:
    """``sqrt(2 * log(1.25 / δ)) / ε`` (times a sensitivity): the classical Gaussian mechanism for a
    single release, with the whole ε in the denominator."""
    has_log = any(isinstance(n, cst.Call) and call_name(n) in ("log", "log2", "log10") and any(
        number(s) == 1.25 for s in walk(n)) for n in walk(expr))
    if not has_log:
        return False
    return any(isinstance(n, cst.BinaryOperation) and isinstance(n.operator, cst.Divide)
               and isinstance(n.right, (cst.Name, cst.Attribute)) and _eps_name(dotted(n.right))
               for n in walk(expr))


class OneShotSigmaPerStep(Rule):
    id = "DP313"
    name = "one-shot-sigma-per-step"
    category = "general"
    severity = "error"
    summary = "σ = Δ·√(2 ln(1.25/δ))/ε, calibrated for one release, is drawn at every training step with no accounting"
    rationale = (
        "The classical Gaussian mechanism σ = Δ·√(2 ln(1.25/δ))/ε makes ONE release (ε, δ)-DP. "
        "Noise of that σ added at every step of training — to each gradient, each weight update, "
        "or by a noise layer (`GaussianNoise(σ)`) that fires on every forward pass — composes: T "
        "steps cost about √T·ε (advanced composition) up to T·ε, and the model is not "
        "(ε, δ)-DP as claimed. Reported: a name assigned that formula with the whole ε (not a "
        "per-step share) and then drawn from inside a loop over epochs/batches/steps, inside a "
        "training-step function (`step`, `train`, `forward`), or passed to a noise layer, in a "
        "module with no accountant and no split of ε over the steps. Not reported: ε divided by "
        "the number of steps before the formula, a module using an accountant (RDP, moments, "
        "zCDP), a single draw outside any loop, code with no DP context. Fix: calibrate the noise "
        "multiplier with an accountant for T steps (and the sampling rate), or split ε over T."
    )
    TRIGGERS = ("1.25",)
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A module calling a noise draw and holding ``1.25`` and no accountant word."""
        if _COMPOSED.search(facts.source):
            return False
        return 1.25 in facts.numbers and bool(facts.called & _DRAWS)

    VALID = (
        # ε split over the steps before the formula
        """
import numpy as np
def train(w, X, y, epsilon, delta, epochs, lr, C):
    eps_step = epsilon / epochs
    sigma = C * np.sqrt(2 * np.log(1.25 / delta)) / eps_step
    for epoch in range(epochs):
        g = np.clip(X.T @ (X @ w - y), -C, C)
        w -= lr * (g + np.random.normal(0, sigma, w.shape))
    return w
""",
        # one release of a mean
        """
import numpy as np
def dp_mean(x, epsilon, delta, bound):
    sigma = bound / len(x) * np.sqrt(2 * np.log(1.25 / delta)) / epsilon
    return np.clip(x, -bound, bound).mean() + np.random.normal(0, sigma)
""",
        # an RDP accountant tracks the steps
        """
import torch
from opacus.accountants import RDPAccountant
def train(model, loader, epsilon, delta, C, epochs):
    sigma = C * torch.sqrt(torch.tensor(2 * torch.log(torch.tensor(1.25 / delta)))) / epsilon
    accountant = RDPAccountant()
    for epoch in range(epochs):
        for x, y in loader:
            for p in model.parameters():
                p.grad += torch.normal(0, sigma, p.grad.shape)
            accountant.step(noise_multiplier=sigma / C, sample_rate=0.01)
""",
        # a loop over independent trials of one release (a test of the mechanism)
        """
import numpy as np
def release(value, epsilon, delta, sens):
    sigma = sens * np.sqrt(2 * np.log(1.25 / delta)) / epsilon
    return value + np.random.normal(0, sigma)
""",
    )

    INVALID = (
        # numpy gradient descent: the one-shot σ on every epoch's gradient
        """
import numpy as np
def train(w, X, y, epsilon, delta, epochs, lr, C):
    sigma = C * np.sqrt(2 * np.log(1.25 / delta)) / epsilon  # <-
    for epoch in range(epochs):
        g = np.clip(X.T @ (X @ w - y), -C, C)
        w -= lr * (g + np.random.normal(0, sigma, w.shape))
    return w
""",
        # keras: a GaussianNoise layer with the one-shot σ fires on every training batch
        """
import math
import tensorflow as tf
def make_model(epsilon, delta, C=1.0):
    stddev = C * math.sqrt(2 * math.log(1.25 / delta)) / epsilon  # <-
    return tf.keras.Sequential([tf.keras.layers.Dense(64), tf.keras.layers.GaussianNoise(stddev),
                                tf.keras.layers.Dense(1)])
""",
        # torch: an optimizer step adds the one-shot σ kept on the object
        """
import math
import torch
class NoisySGD(torch.optim.SGD):
    def __init__(self, params, lr, epsilon, delta, clip):
        super().__init__(params, lr=lr)
        self.sigma = clip * math.sqrt(2 * math.log(1.25 / delta)) / epsilon  # <-
    def step(self, closure=None):
        for group in self.param_groups:
            for p in group["params"]:
                p.grad.add_(torch.randn_like(p.grad) * self.sigma)
        return super().step(closure)
""",
        # jax: the noise is drawn in each batch of the loop
        """
import jax
import jax.numpy as jnp
def fit(params, batches, grad_fn, epsilon, delta, clip, key):
    noise_std = clip * jnp.sqrt(2 * jnp.log(1.25 / delta)) / epsilon  # <-
    for batch in batches:
        key, sub = jax.random.split(key)
        g = grad_fn(params, batch)
        params = params - 0.1 * (g + noise_std * jax.random.normal(sub, g.shape))
    return params
""",
    )

    def __init__(self, ctx) -> None:  # type: ignore[no-untyped-def]
        super().__init__(ctx)
        self._sigmas: dict[str, cst.CSTNode] = {}
        self._reported: set[int] = set()

    def visit_Module(self, node: cst.Module) -> None:
        if _COMPOSED.search(self.ctx.source):
            return
        for sub in walk(node):
            if isinstance(sub, cst.Assign) and len(sub.targets) == 1 and _one_shot_formula(sub.value):
                name = dotted(sub.targets[0].target)
                if name is not None:
                    self._sigmas[name] = sub

    def visit_Call(self, node: cst.Call) -> None:
        if not self._sigmas or call_name(node) not in _DRAWS:
            return
        used = self._sigma_in(node)
        if used is None:
            return
        fa = self.ctx.analysis
        where = self._per_step(node)
        if where is None or not fa.in_dp_context(node):
            return
        assign = self._sigmas[used]
        if id(assign) in self._reported:
            return
        self._reported.add(id(assign))
        self.report(assign, f"`{used}` is calibrated by the one-release Gaussian formula √(2 ln(1.25/δ))/ε with the "
                            f"whole ε, but the draw on line {fa.line_of(node)} runs {where}: T steps compose to far "
                            "more than ε (≈√T·ε at best) and nothing accounts for them; calibrate σ with an "
                            "accountant for T steps, or split ε")

    def _sigma_in(self, call: cst.Call) -> str | None:
        """The one-shot σ read by the draw's arguments or by the expression the draw is multiplied into."""
        fa = self.ctx.analysis
        scope: list[cst.CSTNode] = [a.value for a in call.args]
        parent = fa.parent(call)
        if isinstance(parent, cst.BinaryOperation) and isinstance(parent.operator, cst.Multiply):
            scope.append(parent)
        for expr in scope:
            for n in walk(expr):
                if isinstance(n, (cst.Name, cst.Attribute)):
                    name = dotted(n)
                    if name in self._sigmas and self._same_scope(n, name):
                        return name
        return None

    def _same_scope(self, use: cst.CSTNode, name: str) -> bool:
        """A local σ is read in the function that assigns it; ``self.sigma`` anywhere in the class."""
        fa = self.ctx.analysis
        assign = self._sigmas[name]
        if name.startswith("self."):
            return fa.enclosing_class(assign) is fa.enclosing_class(use)
        return fa.enclosing_function(assign) is fa.enclosing_function(use)

    def _per_step(self, draw: cst.Call) -> str | None:
        fa = self.ctx.analysis
        if call_name(draw) == "GaussianNoise":
            return "in a noise layer, on every forward pass of training"
        for loop in fa.enclosing_loops(draw):
            names = [n for n in walk(loop.target if isinstance(loop, cst.For) else loop.test)] + \
                ([n for n in walk(loop.iter)] if isinstance(loop, cst.For) else [])
            if any(isinstance(n, (cst.Name, cst.Attribute)) and words(dotted(n) or "") & _LOOP_WORDS for n in names):
                return f"inside the training loop on line {fa.line_of(loop)}"
        fn = fa.enclosing_function(draw)
        if fn is not None and words(fn.name.value) & _STEP_FUNCTIONS and fa.enclosing_class(draw) is not None:
            return f"in `{fn.name.value}`, once per training step"
        return None
