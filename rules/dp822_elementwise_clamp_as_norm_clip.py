"""DP822: the gradient is clamped element-wise to the L2 clipping norm, so its norm stays unbounded in dimension."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, dotted, param_names, refs, walk, words
from dpcheck.rule import Rule

_CLAMPS = frozenset({"clamp", "clip", "clamp_", "clip_", "clip_by_value"})
_MODULES = frozenset({"torch", "np", "numpy", "tf", "jnp", "jax", "K", "backend", "math"})
_LOWER = frozenset({"min", "a_min", "clip_value_min", "min_value"})
_UPPER = frozenset({"max", "a_max", "clip_value_max", "max_value"})
_GRAD_WORDS = frozenset({"grad", "grads", "gradient", "gradients", "g"})
_NORM_CALLS = frozenset({"norm", "vector_norm", "global_norm", "clip_by_norm", "clip_by_global_norm",
                         "clip_grad_norm_", "clip_grad_norm", "matrix_norm", "clip_by_average_norm"})
_DRAWS = frozenset({"normal", "laplace", "gauss", "randn", "randn_like", "normal_", "standard_normal", "Laplace",
                    "Normal", "random_normal", "gaussian"})


def _last(call: cst.Call) -> str:
    return (call_name(call) or "").split(".")[-1]


def _norm_named(name: str) -> bool:
    pieces = words(name.split(".")[-1])
    return bool(pieces & {"norm", "l2"}) and not pieces & {"layer", "batch", "group", "instance", "weight"}


def _gradient_like(expr: cst.BaseExpression) -> bool:
    for name in refs(expr):
        pieces = name.split(".")
        if "grad" in pieces or words(pieces[-1]) & _GRAD_WORDS:
            return True
    return False


def _parts(call: cst.Call) -> tuple[cst.BaseExpression | None, list[cst.BaseExpression]]:
    """The clamped value and its bounds."""
    positional = [a.value for a in call.args if a.keyword is None]
    bounds = [a.value for a in call.args if a.keyword is not None and a.keyword.value in _LOWER | _UPPER]
    func = call.func
    if isinstance(func, cst.Attribute) and not (isinstance(func.value, cst.Name) and func.value.value in _MODULES):
        return func.value, bounds + positional
    if not positional:
        return None, bounds
    return positional[0], bounds + positional[1:]


class ElementwiseClampAsNormClip(Rule):
    id = "DP822"
    name = "elementwise-clamp-as-norm-clip"
    category = "general"
    severity = "error"
    summary = ("the gradient is clamped coordinate by coordinate to the L2 clipping norm (`torch.clamp(g, -C, C)`, "
               "`np.clip`, `tf.clip_by_value`) while the noise is calibrated to an L2 norm of C")
    rationale = (
        "DP-SGD's Gaussian noise σ·C covers one example's gradient only if its L2 norm is at most C. Clamping each "
        "coordinate to [-C, C] (or only from above, `clamp(g, max=C)`) bounds the coordinates, not the norm: a "
        "gradient of d coordinates keeps a norm up to C·√d (unbounded below with a one-sided clamp), so for a "
        "network of millions of parameters the noise is orders of magnitude too small and the claimed ε does not "
        "hold. Reported: a clamp of a gradient-like value whose bound is named as an L2 norm bound "
        "(`max_grad_norm`, `l2_norm_clip`, `clip_norm`), or, in a class whose noise is calibrated to such an "
        "attribute, a parameter standing for it, in a function that computes no norm of the gradient. Not "
        "reported: value clipping with a bound named as a value (`clip_value`), an element-wise clamp next to a "
        "real norm clip. Fix: scale by min(1, C/‖g‖) (`clip_grad_norm_`, `tf.clip_by_norm`), or calibrate the "
        "noise to the L2 bound C·√d the clamp implies."
    )
    TRIGGERS = ("clamp", "clip")
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding clamps a gradient in a file that draws noise."""
        return facts.calls_any(_CLAMPS) and facts.calls_any(_DRAWS)

    @classmethod
    def admits(cls, facts: AstFacts) -> bool:
        return facts.may_have_dp_context and cls.may_report(facts)

    def __init__(self, *args, **kwargs) -> None:  # type: ignore[no-untyped-def]
        super().__init__(*args, **kwargs)
        self._functions: list[cst.FunctionDef] = []
        self._classes: list[cst.ClassDef] = []

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._classes.append(node)

    def leave_ClassDef(self, node: cst.ClassDef) -> None:
        self._classes.pop()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._functions.append(node)

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._functions.pop()

    def _class_norm_bound(self) -> str | None:
        """A norm-named attribute of the enclosing class that scales a noise draw, when the class computes no
        norm."""
        if not self._classes:
            return None
        cls_node = self._classes[-1]
        found: str | None = None
        for sub in walk(cls_node):
            if isinstance(sub, cst.Call):
                last = _last(sub)
                if last in _NORM_CALLS:
                    return None
                if last in _DRAWS and found is None:
                    for name in refs(sub):
                        if name.startswith("self.") and _norm_named(name):
                            found = name
                            break
        return found

    def visit_Call(self, node: cst.Call) -> None:
        if _last(node) not in _CLAMPS or not isinstance(node.func, cst.Attribute):
            return  # a bare ``clip(g, C)`` is a project helper (often a norm clip), not the library clamp
        subject, bounds = _parts(node)
        if subject is None or not bounds or not _gradient_like(subject):
            return
        fn = self._functions[-1] if self._functions else None
        if fn is not None and any(isinstance(c, cst.Call) and _last(c) in _NORM_CALLS for c in walk(fn.body)):
            return
        named = sorted({n for b in bounds for n in refs(b) if _norm_named(n)})
        why = None
        if named:
            why = f"`{named[0]}`"
        elif fn is not None:
            params = set(param_names(fn))
            attr = self._class_norm_bound()
            if attr is not None and any(isinstance(b, cst.Name) and b.value in params for b in bounds):
                why = f"a parameter standing for `{attr}` (the noise scale's bound)"
        if why is None:
            return
        self.report(node, f"the gradient is clamped element-wise to {why}: that bounds each coordinate, not the "
                          "L2 norm, which stays up to C·√d (unbounded with a one-sided clamp), so the noise "
                          "calibrated to an L2 bound C is far too small; clip by norm (g · min(1, C/‖g‖))")

    VALID = (
        # twin: the per-example gradient is clipped by its L2 norm
        """
import torch
def private_step(model, noise_multiplier=1.0, max_grad_norm=1.0):
    for p in model.parameters():
        if p.grad is not None:
            norm = p.grad.norm(2)
            p.grad = p.grad * torch.clamp(max_grad_norm / (norm + 1e-6), max=1.0)
            p.grad += torch.normal(0, noise_multiplier * max_grad_norm, size=p.grad.shape)
""",
        # twin of the query class: norm clipping before the sum
        """
import torch
class GaussianSumQuery:
    def __init__(self, l2_norm_clip, noise_multiplier):
        self.l2_norm_clip = l2_norm_clip
        self.noise_multiplier = noise_multiplier
    def accumulate(self, state, grads, bound):
        total = torch.sqrt(sum(g.norm(2) ** 2 for g in grads))
        factor = min(1.0, bound / (total.item() + 1e-6))
        return [s + g * factor for s, g in zip(state, grads)]
    def noised(self, state):
        return [s + torch.normal(0, self.l2_norm_clip * self.noise_multiplier, size=s.shape) for s in state]
""",
        # value clipping with a value-named bound next to a separate norm clip
        """
import numpy as np
def clip_and_noise(grads, clip_value, l2_clip, sigma):
    grads = np.clip(grads, -clip_value, clip_value)
    n = np.linalg.norm(grads)
    grads = grads * min(1.0, l2_clip / n)
    return grads + np.random.normal(0, sigma * l2_clip, grads.shape)
""",
        # a project helper named clip (it clips by norm) with a norm-named bound
        """
import numpy as np
def clip(v, c):
    return v * min(1.0, c / (np.linalg.norm(v) + 1e-12))
def step(grads, gradient_clip_norm, sigma):
    g = clip(grads, gradient_clip_norm)
    return g + np.random.normal(0, sigma * gradient_clip_norm, g.shape)
""",
        # ordinary ML: gradient value clipping without any noise or DP, and image clamping
        """
import torch
def train_step(model, opt, loss, max_norm=5.0):
    loss.backward()
    for p in model.parameters():
        p.grad.data.clamp_(-1.0, 1.0)
    opt.step()
    x = torch.randn(3).clamp(0, 1)
    return x
""",
    )

    INVALID = (
        # gradient clamped element-wise to the norm bound, then Laplace noise
        """
import torch
def private_step(model, noise_multiplier=1.0, max_grad_norm=1.0):
    for p in model.parameters():
        if p.grad is not None:
            p.grad = torch.clamp(p.grad, min=-max_grad_norm, max=max_grad_norm)  # <-
            p.grad += torch.distributions.laplace.Laplace(0, noise_multiplier).sample(p.grad.size())
""",
        # a DPQuery port: one-sided clamp with the parameter standing for self.l2_norm_clip
        """
import torch
class GaussianSumQuery:
    def __init__(self, l2_norm_clip, noise_multiplier):
        self.l2_norm_clip = l2_norm_clip
        self.noise_multiplier = noise_multiplier
    def accumulate(self, state, grads, bound):
        clipped = [torch.clamp(g, max=bound) for g in grads]  # <-
        return [s + g for s, g in zip(state, clipped)]
    def noised(self, state):
        return [s + torch.normal(0, self.l2_norm_clip * self.noise_multiplier, size=s.shape) for s in state]
""",
        # numpy per-example gradients clipped with np.clip to the l2 bound
        """
import numpy as np
def noisy_sum(per_example_grads, l2_norm_clip, sigma):
    clipped = np.clip(per_example_grads, -l2_norm_clip, l2_norm_clip)  # <-
    return clipped.sum(0) + np.random.normal(0, sigma * l2_norm_clip, clipped.shape[1])
""",
        # TensorFlow clip_by_value on the gradients with a norm-named bound
        """
import tensorflow as tf
def dp_apply(opt, grads, variables, clip_norm, noise_multiplier):
    grads = [tf.clip_by_value(g, -clip_norm, clip_norm) for g in grads]  # <-
    grads = [g + tf.random.normal(tf.shape(g), stddev=noise_multiplier * clip_norm) for g in grads]
    opt.apply_gradients(zip(grads, variables))
""",
    )
