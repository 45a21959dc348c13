"""DP616: a Gaussian mechanism whose standard deviation is the Laplace scale Δ/ε, with no δ in it."""
from __future__ import annotations

import re

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts, call_name as ast_call_name
from dpcheck.analysis.syntax import all_params, call_name, dotted, last_name, number, walk, words
from dpcheck.rule import Rule

#: Gaussian draws and the position / keywords of their standard deviation
_GAUSSIAN = {"normal": (1, ("scale", "std")), "normal_": (1, ("std",)), "gauss": (1, ("sigma",)),
             "normalvariate": (1, ("sigma",))}
#: words of a sensitivity (the numerator of Δ/ε)
_SENSITIVITY_WORDS = frozenset({"sensitivity", "sens", "sensitivities", "clip", "bound", "l2"})
_EPS_WORDS = frozenset({"eps", "epsilon", "epsi"})
#: a module that works in zero-concentrated DP (σ = Δ/√(2ρ), ``rho = eps**2 / 2``) or Gaussian DP (μ)
_DELTA_TEXT = re.compile(r"(?i)delta|δ")
_CONCENTRATED = re.compile(r"(?i)zcdp|\brho\b|concentrated|gaussian differential privacy|\bgdp\b|\bmu_?gdp")


def _std_arg(call: cst.Call) -> cst.BaseExpression | None:
    """The standard-deviation argument of a zero-centred Gaussian draw, or None."""
    position, keywords = _GAUSSIAN[call_name(call)]
    given = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
    positional = [a.value for a in call.args if a.keyword is None and not a.star]
    loc = given.get("loc", given.get("mean", given.get("mu", positional[0] if positional else None)))
    if loc is None or number(loc) != 0:
        return None
    std = next((given[k] for k in keywords if k in given), None)
    if std is None and len(positional) > position:
        std = positional[position]
    return std


def _laplace_scale(expr: cst.BaseExpression) -> bool:
    """``sensitivity / epsilon``, ``self.sensitivity / self.epsilon``, ``2 * clip / eps``: a sensitivity over ε
    and nothing else (no log, no square root, no δ)."""
    if not (isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Divide)):
        return False
    right = _guarded_epsilon(expr.right)
    denominator = last_name(right)
    if denominator is None or not words(denominator) & _EPS_WORDS or not isinstance(
            right, (cst.Name, cst.Attribute)):
        return False
    names = [last_name(n) or "" for n in walk(expr.left) if isinstance(n, (cst.Name, cst.Attribute))]
    if any(isinstance(n, cst.Call) for n in walk(expr.left)):
        return False
    leaves = [n for n in names if n not in ("self", "cls")]
    if not leaves:
        return number(expr.left) is not None  # ``1 / epsilon``: a sensitivity of one
    return bool(leaves) and all(_sensitivity(n) for n in leaves if not n.isupper()) and any(
        _sensitivity(n) for n in leaves)


def _sensitivity(name: str) -> bool:
    """A sensitivity or clipping bound: ``sensitivity``, ``clip``, ``l2_bound``, (T2 h48) ``max_grad_norm``,
    ``clip_norm``, ``max_norm``."""
    pieces = words(name)
    return bool(pieces & _SENSITIVITY_WORDS) or "norm" in pieces and bool(pieces & {"max", "clip", "clipping"})


def _guarded_epsilon(expr: cst.BaseExpression) -> cst.BaseExpression:
    """(T2 h48) ``(epsilon + 1e-8)``: ε guarded against division by zero is ε."""
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Add):
        for a, b in ((expr.left, expr.right), (expr.right, expr.left)):
            value = number(b)
            if isinstance(a, (cst.Name, cst.Attribute)) and value is not None and 0 < value < 1e-3:
                return a
    return expr


class GaussianLaplaceScale(Rule):
    id = "DP616"
    name = "gaussian-laplace-scale"
    category = "general"
    severity = "error"
    summary = "a Gaussian mechanism draws its noise with the Laplace scale σ = Δ/ε, which gives no (ε, δ) guarantee at ε"
    rationale = (
        "The Laplace mechanism's scale Δ/ε makes Laplace noise ε-DP; Gaussian noise of that standard deviation does "
        "not: Gaussian noise is never pure ε-DP, and for (ε, δ)-DP its σ must grow with sqrt(log(1/δ)) (the "
        "classical σ = Δ·sqrt(2 ln(1.25/δ))/ε, or the analytic calibration). With σ = Δ/ε the privacy loss at the "
        "stated ε fails with a probability far above any usual δ (about 0.16 at σ = Δ/ε, ε = 1). Reported: a "
        "zero-centred Gaussian draw (`normal`, `normal_`, `gauss`) whose standard deviation is a sensitivity over "
        "ε and nothing else (`sensitivity / epsilon`, directly, through one local, or through `self.` fields set in "
        "the constructor), in a function or class named for the Gaussian mechanism or one that takes δ and leaves "
        "it out. Not reported: a σ with a δ term, a module that works in zero-concentrated or Gaussian DP (ρ, μ: "
        "σ = Δ/ε is ρ = ε²/2 zCDP when the claim is stated that way), a Laplace draw, code with no DP context. "
        "Fix: calibrate σ to (ε, δ) (`sensitivity * sqrt(2 * log(1.25 / delta)) / epsilon` for ε < 1, or the "
        "analytic Gaussian mechanism), or use Laplace noise for pure ε-DP."
    )
    TRIGGERS = ("normal", "gauss")
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        return any(ast_call_name(c) in _GAUSSIAN for c in facts.calls) and any(
            words(i) & _EPS_WORDS for i in facts.identifiers)

    VALID = (
        # (T2 h48) twin of the DP-SGD step: σ is calibrated with δ
        """
import math
import torch
def private_step(model, batch, loss_fn, optimizer, epsilon, delta=1e-5, max_grad_norm=1.0):
    optimizer.zero_grad()
    loss_fn(model(batch[0]), batch[1]).backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
    for p in model.parameters():
        std = 2 * max_grad_norm * math.sqrt(2 * math.log(1.25 / delta)) / (epsilon + 1e-8)
        p.grad += torch.normal(0, std, size=p.grad.shape)
    optimizer.step()
""",
        # (T2 h48) ordinary ML: annealed gradient noise in an optimizer step that takes Adam's eps
        """
import torch
def noisy_sgd_step(params, lr, step, eps=1e-8, max_norm=1.0, gamma=0.55):
    torch.nn.utils.clip_grad_norm_(params, max_norm)
    for p in params:
        std = (lr / (1 + step) ** gamma) ** 0.5
        p.grad += torch.normal(0, std, size=p.grad.shape)
        p.data -= lr * p.grad / (p.grad.norm() + eps)
""",
        # the twins: σ calibrated with δ; Laplace noise at Δ/ε; a module stating zCDP (ρ = ε²/2)
        """
import numpy as np
def add_gaussian_noise(features, sensitivity, epsilon, delta=1e-5):
    sigma = sensitivity * np.sqrt(2 * np.log(1.25 / delta)) / epsilon
    return features + np.random.normal(0, sigma, features.shape)
def add_laplace_noise(features, sensitivity, epsilon):
    return features + np.random.laplace(0, sensitivity / epsilon, features.shape)
""",
        """
import numpy as np
# zCDP release: rho = epsilon ** 2 / 2, so sigma = sensitivity / epsilon
def gaussian_zcdp(x, sensitivity, epsilon):
    sigma = sensitivity / epsilon
    return x + np.random.normal(0, sigma, x.shape)
""",
        # ordinary ML: weight init scaled by a fan-in, noise in diffusion, Adam's eps
        """
import numpy as np
import torch
def init(fan_in, shape, eps=1e-8):
    return np.random.normal(0, 1.0 / np.sqrt(fan_in + eps), shape)
def q_sample(x0, t, alphas_cumprod):
    return alphas_cumprod[t].sqrt() * x0 + (1 - alphas_cumprod[t]).sqrt() * torch.randn_like(x0)
""",
        # dpgnn preprocess.py: the δ factor is a local (``c = sqrt(2 log(1.25/δ))``) multiplying Δ/ε
        """
import numpy as np
def get_noise(kind, size, eps=10, delta=1e-5, sensitivity=2):
    if kind == "gaussian":
        c = np.sqrt(2 * np.log(1.25 / delta))
        stddev = c * sensitivity / eps
        return np.random.normal(0, stddev, size)
    return np.random.laplace(0, sensitivity / eps, size)
""",
        # a helper taking δ that uses it in σ, and a Laplace class storing δ for bookkeeping
        """
import random
def gaussian_mechanism(value, epsilon, delta):
    return value + random.gauss(0, (2 * math.log(1.25 / delta)) ** 0.5 / epsilon)
class LaplaceNoise:
    def __init__(self, sensitivity, epsilon, delta=0.0):
        self.sensitivity, self.epsilon, self.delta = sensitivity, epsilon, delta
    def draw(self, shape):
        return np.random.laplace(0, self.sensitivity / self.epsilon, shape)
""",
    )

    INVALID = (
        # (T2 h48) a DP-SGD step handed ε only, in a module that never mentions δ: Gaussian noise at 2C/ε
        """
import torch
def private_step(model, batch, loss_fn, optimizer, epsilon, max_grad_norm=1.0):
    optimizer.zero_grad()
    loss_fn(model(batch[0]), batch[1]).backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
    for p in model.parameters():
        std = 2 * max_grad_norm / (epsilon + 1e-8)
        p.grad += torch.normal(0, std, size=p.grad.shape)  # <-
    optimizer.step()
""",
        # a pure random.gauss at 1/ε in a function named for the Gaussian mechanism; a helper that takes δ and
        # never uses it
        """
import random
import numpy as np
def gaussian_mechanism(value, epsilon):
    return value + random.gauss(0, 1 / epsilon)  # <-
def perturb_update(update, clip, eps, delta, rng):
    noise = rng.normal(loc=0.0, scale=2 * clip / eps, size=update.shape)  # <-
    return update + noise
""",
        # graph-experiments GlobalDPSyntheticGraph.py: "Gaussian noise calibrated to the sensitivity", σ = Δ/ε
        """
import numpy as np
def add_gaussian_noise(features, sensitivity, epsilon):
    sigma = sensitivity / epsilon
    noise = np.random.normal(0, sigma, features.shape)  # <-
    return features + noise, sigma
""",
        # UDP-FL gradients/noise.py: the Gaussian generator stores δ and draws with the Laplace scale
        """
import torch
class GaussianNoiseGenerator:
    def __init__(self, sensitivity=8, epsilon=5, delta=1e-6):
        self.sensitivity = sensitivity
        self.epsilon = epsilon
        self.delta = delta
    def mechanism(self, gradient):
        return torch.empty(gradient.size()).normal_(0, self.sensitivity / self.epsilon)  # <-
""",
        # a local Gaussian randomiser whose σ is the sensitivity over ε (as in a federated client's LDP step); its
        # twin with the δ factor computed first is VALID
        """
import numpy as np
def ldp_gaussian(x, l2_bound, epsilon):
    std = l2_bound / epsilon
    return x + np.random.normal(0.0, std, size=x.shape)  # <-
""",
    )

    def visit_Call(self, node: cst.Call) -> None:
        if call_name(node) not in _GAUSSIAN:
            return
        if call_name(node) in ("gauss", "normalvariate") and not (dotted(node.func) or "").startswith("random"):
            return
        std = _std_arg(node)
        if std is None:
            return
        scale = self._resolve(node, std)
        if scale is None or not _laplace_scale(scale) or self._delta_in_factors(node, scale):
            return
        if not self._gaussian_mechanism(node) or _CONCENTRATED.search(self.ctx.module.code):
            return
        fa = self.ctx.analysis
        self.report(node, f"the Gaussian noise has standard deviation `{fa.code(scale).strip()[:60]}`, the Laplace "
                          f"scale Δ/ε with no δ term: Gaussian noise of that σ is not ε-DP and not (ε, δ)-DP at the "
                          f"stated ε for any usual δ; calibrate σ = Δ·sqrt(2 ln(1.25/δ))/ε (ε < 1) or use the "
                          f"analytic Gaussian mechanism, or draw Laplace noise for pure ε-DP")

    def _delta_in_factors(self, node: cst.Call, scale: cst.BaseExpression) -> bool:
        """A factor of the numerator is a local computed from δ (``c = sqrt(2 * log(1.25 / delta))``)."""
        for leaf in walk(scale):
            if isinstance(leaf, cst.Name):
                value = self._resolve(node, leaf)
                if value is not None and value is not leaf and any(
                        isinstance(n, cst.Name) and "delta" in words(n.value) or isinstance(n, cst.Call)
                        for n in walk(value)):
                    return True
        return False

    def _resolve(self, node: cst.Call, std: cst.BaseExpression) -> cst.BaseExpression | None:
        """The expression ``std`` names: itself, the single assignment of a local, or of a ``self.`` field."""
        fa = self.ctx.analysis
        if isinstance(std, cst.BinaryOperation):
            return std
        name = dotted(std)
        if name is None:
            return None
        scope: cst.CSTNode | None = fa.enclosing_function(node)
        if name.startswith("self."):
            scope = fa.enclosing_class(node)
        if scope is None:
            scope = self.ctx.module
        values = [a.value for a in walk(scope) if isinstance(a, cst.Assign) and len(a.targets) == 1
                  and dotted(a.targets[0].target) == name]
        return values[0] if len(values) == 1 else None

    def _gaussian_mechanism(self, node: cst.Call) -> bool:
        """The draw sits in a function or class named for the Gaussian mechanism, or in one that takes (or
        stores) δ and leaves it out of σ."""
        fa = self.ctx.analysis
        cur = fa.parent(node)
        while cur is not None:
            if isinstance(cur, (cst.FunctionDef, cst.ClassDef)):
                if words(cur.name.value) & {"gaussian", "gauss"}:
                    return True
                if isinstance(cur, cst.FunctionDef) and any(words(p.name.value) & {"delta"}
                                                            for p in all_params(cur)):
                    return True
                if isinstance(cur, cst.ClassDef) and any(
                        isinstance(a, cst.Assign) and any(dotted(t.target) == "self.delta" for t in a.targets)
                        for a in walk(cur)):
                    return True
            cur = fa.parent(cur)
        # (T2 h48) a function handed ε (a DP-SGD step ``train(model, loader, optimizer, epsilon)``) in a module
        # that never mentions δ: the claim is ε-DP, which Gaussian noise never gives
        fn = fa.enclosing_function(node)
        if isinstance(fn, cst.FunctionDef) and any(words(p.name.value) & _EPS_WORDS for p in all_params(fn)) \
                and not _DELTA_TEXT.search(self.ctx.module.code):
            return True
        return False
