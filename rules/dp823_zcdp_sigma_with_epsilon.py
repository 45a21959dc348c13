"""DP823: the Gaussian σ is computed with the zCDP formula Δ/√(2ρ) but with ε in place of ρ and no δ."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, dotted, number, refs, walk, words
from dpcheck.rule import Rule

_GAUSS = frozenset({"normal", "gauss", "randn", "standard_normal", "random_normal", "Normal", "normal_",
                    "gaussian", "gaussian_noise", "add_gaussian_noise", "randn_like", "normal_like"})
_SQRT = frozenset({"sqrt"})


def _last(call: cst.Call) -> str:
    return (call_name(call) or "").split(".")[-1]


def _eps_name(expr: cst.BaseExpression) -> str | None:
    name = dotted(expr)
    if name is None:
        return None
    pieces = words(name.split(".")[-1])
    if pieces & {"rho", "mu", "delta", "lr", "lambda", "alpha"}:
        return None
    if pieces & {"epsilon", "eps"} or name.split(".")[-1] in ("e", "ε"):
        return name
    return None


def _two_eps(expr: cst.BaseExpression) -> str | None:
    """``2 * eps``, ``eps * 2``, ``2.0 * self.epsilon``."""
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Multiply):
        for a, b in ((expr.left, expr.right), (expr.right, expr.left)):
            if number(a) == 2.0:
                return _eps_name(b)
    return None



def _zcdp_sigma(expr: cst.BaseExpression) -> str | None:
    """``sqrt(Δ² / (2ε))`` or ``Δ / sqrt(2ε)``: the ε it uses, or None."""
    if isinstance(expr, cst.Call) and _last(expr) in _SQRT and len(expr.args) == 1:
        inner = expr.args[0].value
        if isinstance(inner, cst.BinaryOperation) and isinstance(inner.operator, cst.Divide):
            return _two_eps(inner.right)
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Divide):
        right = expr.right
        if isinstance(right, cst.Call) and _last(right) in _SQRT and len(right.args) == 1:
            inner = right.args[0].value
            if isinstance(inner, cst.Call) and _last(inner) in ("tensor", "array", "constant", "float") and inner.args:
                inner = inner.args[0].value
            return _two_eps(inner)
    return None


#: a Rényi order in the numerator (σ = √(αΔ²/(2ε)) is the RDP calibration of order α)
_ORDER = frozenset({"alpha", "α", "al", "order", "orders", "lam", "lmbda", "lambda"})


def _has_delta_or_log(expr: cst.BaseExpression) -> bool:
    for sub in walk(expr):
        if isinstance(sub, cst.Call) and _last(sub) in ("log", "log1p"):
            return True
    return any(words(n.split(".")[-1]) & ({"delta", "rho"} | _ORDER) for n in refs(expr))


class ZcdpSigmaWithEpsilon(Rule):
    id = "DP823"
    name = "zcdp-sigma-with-epsilon"
    category = "general"
    severity = "error"
    summary = "Gaussian noise σ = √(Δ²/(2ε)) (or Δ/√(2ε)): the zCDP formula with ε in the place of ρ, and no δ"
    rationale = (
        "σ = Δ/√(2ρ) is the Gaussian noise for ρ-zCDP. Written with ε — `sigma = sqrt(sens**2 / (2 * epsilon))` — "
        "it gives neither ε-DP (the Gaussian mechanism has no pure ε guarantee) nor the (ε, δ) calibration "
        "σ = Δ·√(2 ln(1.25/δ))/ε: for ε = 0.5, Δ = 1 it is σ = 1, where (0.5, 1e-5)-DP needs about 9.7, and σ "
        "shrinks only like 1/√ε. Reported: a Gaussian draw whose std is, or is a name assigned, √(X/(2ε)) or "
        "X/√(2ε) with an ε-named divisor and no δ or log in the expression. Not reported: the same formula "
        "with ρ (zCDP stated as such), the classical (ε, δ) formula. Fix: use σ = Δ·√(2 ln(1.25/δ))/ε (ε < 1) or "
        "an analytic Gaussian calibration with δ, or convert the budget to ρ explicitly and report zCDP."
    )
    TRIGGERS = ("sqrt",)
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding needs a Gaussian draw, a ``sqrt`` call and a division."""
        return bool(facts.binops(ast.Div)) and facts.calls_any(_SQRT) and facts.calls_any(_GAUSS)

    @classmethod
    def admits(cls, facts: AstFacts) -> bool:
        return facts.may_have_dp_context and cls.may_report(facts)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        text = self.ctx.analysis.code(node).lower()
        if "renyi" in text or "rényi" in text or "rdp" in text:
            return  # a Rényi-DP mechanism: ε there is the RDP ε of an order
        nested = {id(n) for fd in walk(node.body) if isinstance(fd, (cst.FunctionDef, cst.ClassDef)) for n in walk(fd)}
        body = [s for s in walk(node.body) if id(s) not in nested]
        assigned: dict[str, tuple[cst.CSTNode, str]] = {}
        for sub in body:
            if isinstance(sub, cst.Assign) and not _has_delta_or_log(sub.value):
                eps = _zcdp_sigma(sub.value)
                if eps is not None:
                    for t in sub.targets:
                        name = dotted(t.target)
                        if name:
                            assigned[name] = (sub, eps)
        done: set[int] = set()
        for sub in body:
            if isinstance(sub, cst.BinaryOperation) and isinstance(sub.operator, cst.Multiply):
                # ``torch.randn_like(x) * scale``: the other factor is the std
                for draw, other in ((sub.left, sub.right), (sub.right, sub.left)):
                    if isinstance(draw, cst.Call) and _last(draw) in _GAUSS:
                        self._std(sub, other, assigned, done)
                continue
            if not (isinstance(sub, cst.Call) and _last(sub) in _GAUSS):
                continue
            for arg in sub.args:
                if arg.keyword is not None and arg.keyword.value in ("mean", "loc", "size", "shape", "mu", "seed",
                                                                      "dtype", "device", "generator"):
                    continue
                self._std(sub, arg.value, assigned, done)

    def _std(self, at: cst.CSTNode, value: cst.BaseExpression, assigned: dict[str, tuple[cst.CSTNode, str]],
             done: set[int]) -> None:
        direct = None if _has_delta_or_log(value) else _zcdp_sigma(value)
        if direct is not None:
            if id(at) not in done:
                done.add(id(at))
                self._flag(at, value, direct)
            return
        for name in refs(value):
            if name in assigned and id(assigned[name][0]) not in done:
                done.add(id(assigned[name][0]))
                stmt, eps = assigned[name]
                self._flag(stmt, stmt.value, eps)  # type: ignore[attr-defined]

    def _flag(self, node: cst.CSTNode, expr: cst.BaseExpression, eps: str) -> None:
        code = self.ctx.analysis.code(expr).strip()
        self.report(node, f"the Gaussian std `{code}` is the zCDP formula Δ/√(2ρ) with `{eps}` as ρ and no δ: "
                          "that is neither ε-DP nor the (ε, δ) calibration Δ·√(2 ln(1.25/δ))/ε (far less noise "
                          "for ε < 1); calibrate with δ, or state and account the budget as ρ-zCDP")

    VALID = (
        # a Rényi-DP Gaussian mechanism of order alpha: σ = √(αΔ²/(2ε)) is its calibration
        """
import numpy as np
def gaussian_mech_rdp(value, sensitivity, alpha, eps):
    sigma = np.sqrt(sensitivity ** 2 * alpha / (2 * eps))
    return value + np.random.normal(0.0, sigma)
""",
        # twin: the classical (ε, δ) Gaussian calibration
        """
import numpy as np
def add_output_noise(image, epsilon, delta, sensitivity=1.0):
    sigma = np.sqrt(2 * np.log(1.25 / delta)) * sensitivity / epsilon
    return image + np.random.normal(0.0, sigma, image.shape)
""",
        # twin: the zCDP formula with ρ, named as such
        """
import numpy as np
def zcdp_release(values, rho, sensitivity=1.0):
    sigma = np.sqrt(sensitivity ** 2 / (2 * rho))
    return values + np.random.normal(0.0, sigma, values.shape)
""",
        # twin of the inline case: Laplace for pure ε
        """
import tensorflow as tf
def perturb(x, epsilon, sensitivity=1.0):
    return x + tf.random.laplace(tf.shape(x), 0.0, sensitivity / epsilon)
""",
        # ordinary ML: He initialisation std sqrt(2 / fan_in), eps a numerical constant
        """
import numpy as np
def init_weights(fan_in, fan_out, eps=1e-8):
    std = np.sqrt(2.0 / (fan_in + eps))
    return np.random.normal(0.0, std, (fan_in, fan_out))
""",
    )

    INVALID = (
        # output perturbation with the zCDP σ written with ε
        """
import numpy as np
def add_output_noise(image, epsilon, sensitivity=1.0):
    sigma = np.sqrt(sensitivity ** 2 / (2 * epsilon))  # <-
    return image + np.random.normal(0.0, sigma, image.shape)
""",
        # Δ / sqrt(2ε) inline in the draw
        """
import math
import random
def noisy_count(records, epsilon):
    return len(records) + random.gauss(0, 1.0 / math.sqrt(2 * epsilon))  # <-
""",
        # TensorFlow, the budget an attribute, std passed by keyword
        """
import tensorflow as tf
class OutputPerturbation:
    def __init__(self, epsilon, l2_sensitivity):
        self.epsilon = epsilon
        self.l2_sensitivity = l2_sensitivity
    def __call__(self, fused):
        std = tf.sqrt(self.l2_sensitivity ** 2 / (self.epsilon * 2))  # <-
        return fused + tf.random.normal(tf.shape(fused), mean=0.0, stddev=std)
""",
        # torch: the std of randn scaled by Δ/√(2ε)
        """
import torch
def privatize(embedding, epsilon, sens):
    scale = sens / torch.sqrt(torch.tensor(2 * epsilon))  # <-
    return embedding + torch.randn_like(embedding) * scale
""",
    )
