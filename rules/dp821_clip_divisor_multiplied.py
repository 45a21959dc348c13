"""DP821: the clipping divisor max(1, ‖g‖/C) is multiplied into the gradient instead of dividing it."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, dotted, number, refs, walk, words
from dpcheck.rule import Rule

_MAXES = frozenset({"max", "maximum", "fmax", "clamp", "clip", "clamp_min", "clamp_", "clip_"})
_GRAD_WORDS = frozenset({"grad", "grads", "gradient", "gradients", "g", "update", "updates", "delta", "deltas"})
_MUL_CALLS = frozenset({"mul", "mul_", "multiply"})


def _last(call: cst.Call) -> str:
    return (call_name(call) or "").split(".")[-1]


def _is_norm_ratio(expr: cst.BaseExpression) -> bool:
    """``norm / C`` (the numerator a norm: a norm-named value or a norm call)."""
    if not (isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Divide)):
        return False
    left = expr.left
    for sub in walk(left):
        if isinstance(sub, cst.Call) and _last(sub) in ("norm", "vector_norm", "global_norm"):
            return True
    return any(words(n.split(".")[-1]) & {"norm", "norms"} or n.split(".")[-1].lower() in ("l2", "nrm")
               for n in refs(left))


def _is_one(expr: cst.BaseExpression) -> bool:
    if number(expr) == 1.0:
        return True
    # ``torch.tensor(1.0)``, ``torch.ones_like(x)``
    if isinstance(expr, cst.Call) and _last(expr) in ("tensor", "ones_like", "constant", "float32", "array"):
        return bool(expr.args) and number(expr.args[0].value) == 1.0 or _last(expr) == "ones_like"
    return False


def _is_divisor(expr: cst.BaseExpression) -> bool:
    """``max(1, norm / C)``, ``np.maximum(1.0, norm / C)``, ``torch.clamp(norm / C, min=1)``,
    ``(norm / C).clamp(min=1)``."""
    if not isinstance(expr, cst.Call):
        return False
    last = _last(expr)
    if last not in _MAXES:
        return False
    args = list(expr.args)
    if last in ("max", "maximum", "fmax"):
        if isinstance(expr.func, cst.Attribute) and not dotted(expr.func.value) and len(args) == 0:
            return False
        values = [a.value for a in args if a.keyword is None]
        if isinstance(expr.func, cst.Attribute) and dotted(expr.func) is None and len(values) == 1:
            return False
        return len(values) == 2 and any(_is_one(v) for v in values) and any(_is_norm_ratio(v) for v in values)
    # clamp / clip with a lower bound of 1
    lower = [a.value for a in args if a.keyword is not None and a.keyword.value in ("min", "a_min", "min_value")]
    if last == "clamp_min":
        lower = [a.value for a in args if a.keyword is None][-1:]
    subject: cst.BaseExpression | None = None
    if isinstance(expr.func, cst.Attribute) and isinstance(expr.func.value, (cst.BinaryOperation,)):
        subject = expr.func.value
        positional = [a.value for a in args if a.keyword is None]
        if not lower and positional and last != "clamp_min":
            lower = positional[:1]
    else:
        positional = [a.value for a in args if a.keyword is None]
        if positional:
            subject = positional[0]
            if not lower and len(positional) >= 2 and last != "clamp_min":
                lower = [positional[1]]
    return subject is not None and _is_norm_ratio(subject) and any(number(v) == 1.0 for v in lower)


_SHAPES = frozenset({"view", "reshape", "unsqueeze", "expand_as", "view_as", "to", "expand_dims", "reshape_as"})


def _unwrap(expr: cst.BaseExpression) -> cst.BaseExpression:
    """``scale.view(-1, 1)``, ``scale[:, None]``, ``tf.reshape(scale, ...)`` -> ``scale``."""
    while True:
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value in _SHAPES \
                and dotted(expr.func.value) is not None:
            expr = expr.func.value
        elif isinstance(expr, cst.Call) and _last(expr) in ("reshape", "expand_dims") and expr.args \
                and not isinstance(expr.func, cst.Name) and dotted(expr.args[0].value) is not None:
            expr = expr.args[0].value
        elif isinstance(expr, cst.Subscript):
            expr = expr.value
        else:
            return expr


def _gradient_like(expr: cst.BaseExpression, bound: set[str] | frozenset[str] = frozenset()) -> bool:
    for name in refs(expr):
        if name in bound:
            return True
        pieces = name.split(".")
        if "grad" in pieces or words(pieces[-1]) & _GRAD_WORDS:
            return True
    return False


class ClipDivisorMultiplied(Rule):
    id = "DP821"
    name = "clip-divisor-multiplied"
    category = "general"
    severity = "error"
    summary = "the clipping divisor max(1, ‖g‖/C) multiplies the gradient, so large gradients grow instead of shrinking"
    rationale = (
        "DP-SGD clips each example's gradient to norm C as g / max(1, ‖g‖/C) (equivalently g · min(1, C/‖g‖)). "
        "The noise σ·C is calibrated to that bound. Multiplying by the divisor — `clip_div = max(1, norm / C)` "
        "then `grad * clip_div` — leaves small gradients alone and multiplies a large one by ‖g‖/C, so its norm "
        "becomes ‖g‖²/C: one record's contribution is unbounded and the noise covers nothing. Reported: a "
        "product (`*`, `*=`, `.mul(_)`) of a gradient-like value with a factor `max(1, norm/C)`, "
        "`np.maximum(1, norm/C)`, `torch.clamp(norm/C, min=1)` or `(norm/C).clamp(min=1)`, held in a name or "
        "written inline. Not reported: a division by that factor, a product with `min(1, C/norm)`. "
        "Fix: `grad / max(1, norm / C)`."
    )
    TRIGGERS = ("norm",)
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding multiplies by a ``max``/``maximum``/``clamp``/``clip`` of a division: the file needs a
        product (or ``*=``/``mul``), a division and such a call."""
        if not facts.binops(ast.Div):
            return False
        if not (facts.binops(ast.Mult) or facts.augassigns(ast.Mult) or facts.calls_any(_MUL_CALLS)):
            return False
        return facts.calls_any(_MAXES)

    @classmethod
    def admits(cls, facts: AstFacts) -> bool:
        return facts.may_have_dp_context and cls.may_report(facts)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        divisors: set[str] = set()
        body = list(walk(node.body, into_scopes=False))
        for sub in body:
            if isinstance(sub, cst.Assign) and _is_divisor(sub.value):
                for t in sub.targets:
                    name = dotted(t.target)
                    if name:
                        divisors.add(name)

        # loop variables over a gradient list (``for u in update``, ``[g * f for g in grads]``)
        bound: set[str] = set()
        for sub in walk(node.body):
            if isinstance(sub, (cst.For, cst.CompFor)) and _gradient_like(sub.iter):
                bound |= {n.value for n in walk(sub.target) if isinstance(n, cst.Name)}

        def is_factor(expr: cst.BaseExpression) -> bool:
            expr = _unwrap(expr)
            return (dotted(expr) in divisors) or _is_divisor(expr)

        nested = {id(n) for fd in walk(node.body) if isinstance(fd, (cst.FunctionDef, cst.ClassDef))
                  for n in walk(fd)}
        for sub in walk(node.body):
            if id(sub) in nested:
                continue
            if isinstance(sub, cst.BinaryOperation) and isinstance(sub.operator, cst.Multiply):
                for factor, other in ((sub.left, sub.right), (sub.right, sub.left)):
                    if is_factor(factor) and _gradient_like(other, bound):
                        self._flag(sub, factor)
                        break
            elif isinstance(sub, cst.AugAssign) and isinstance(sub.operator, cst.MultiplyAssign):
                if is_factor(sub.value) and _gradient_like(sub.target, bound):
                    self._flag(sub, sub.value)
            elif isinstance(sub, cst.Call) and _last(sub) in _MUL_CALLS and isinstance(sub.func, cst.Attribute):
                if sub.args and is_factor(sub.args[0].value) and _gradient_like(sub.func.value, bound):
                    self._flag(sub, sub.args[0].value)

    def _flag(self, node: cst.CSTNode, factor: cst.BaseExpression) -> None:
        code = self.ctx.analysis.code(factor).strip()
        self.report(node, f"the gradient is multiplied by the clipping divisor `{code}` (= max(1, ‖g‖/C)): a large "
                          "gradient grows to ‖g‖²/C instead of being clipped to C, so the noise calibrated to C "
                          "bounds nothing; divide by it (`g / max(1, norm / C)`)")

    VALID = (
        # twin: the divisor divides
        """
import torch
def clip_and_accumulate(params, acc, bound):
    total_norm = 0.0
    for p in params:
        total_norm += p.grad.data.norm(2) ** 2
    total_norm = torch.sqrt(total_norm)
    clip_div = max(1.0, total_norm / bound)
    for p, a in zip(params, acc):
        a.add_(p.grad.data / clip_div)
    return acc, torch.normal(0, bound, size=(1,))
""",
        # twin: the factor is min(1, C/norm) and multiplies
        """
import numpy as np
def clip_rows(grads, clip_norm, sigma):
    norms = np.linalg.norm(grads, axis=1, keepdims=True)
    factor = np.minimum(1.0, clip_norm / norms)
    clipped = grads * factor
    return clipped.sum(0) + np.random.normal(0, sigma * clip_norm, grads.shape[1])
""",
        # twin of the clamp spelling: divide by the clamped ratio
        """
import torch
def clip_per_sample(per_sample_grads, max_norm, noise_multiplier):
    norms = per_sample_grads.flatten(1).norm(dim=1)
    scale = torch.clamp(norms / max_norm, min=1.0)
    clipped = per_sample_grads / scale.view(-1, 1)
    return clipped.sum(0) + torch.randn_like(clipped[0]) * noise_multiplier * max_norm
""",
        # ordinary ML: a learning-rate warmup factor max(1, step / warmup) multiplies the loss
        """
import torch
def scaled_loss(loss, step, warmup, grad_norm):
    factor = max(1.0, step / warmup)
    return loss * factor
""",
        # twin of the TensorFlow case: the divisor divides
        """
import tensorflow as tf
def clip_update(update, l2_clip, noise_multiplier):
    norm = tf.linalg.global_norm(update)
    divisor = tf.maximum(1.0, norm / l2_clip)
    clipped = [u / divisor for u in update]
    return [c + tf.random.normal(tf.shape(c), stddev=noise_multiplier * l2_clip) for c in clipped]
""",
    )

    INVALID = (
        # the divisor is multiplied into each parameter's gradient
        """
import torch
class ManualDPSGD:
    def clip_one(self, params, acc, bound):
        grad_norm = 0.0
        for p in params:
            grad_norm += p.grad.data.norm(2) ** 2
        grad_norm = torch.sqrt(grad_norm)
        clip_div = max(1.0, grad_norm / bound)
        for p, a in zip(params, acc):
            a.add_(p.grad.data * clip_div)  # <-
    def noise(self, acc, bound, sigma):
        return [a + torch.normal(0, sigma * bound, size=a.shape) for a in acc]
""",
        # numpy rows, np.maximum factor applied with *=
        """
import numpy as np
def clip_rows(grads, clip_norm, sigma):
    norms = np.linalg.norm(grads, axis=1, keepdims=True)
    grads *= np.maximum(1.0, norms / clip_norm)  # <-
    return grads.sum(0) + np.random.normal(0, sigma * clip_norm, grads.shape[1])
""",
        # torch clamp(min=1) of the ratio, multiplied through mul
        """
import torch
def clip_per_sample(per_sample_grads, max_norm, noise_multiplier):
    norms = per_sample_grads.flatten(1).norm(dim=1)
    scale = (norms / max_norm).clamp(min=1.0)
    clipped = per_sample_grads.mul(scale.view(-1, 1))  # <-
    return clipped.sum(0) + torch.randn_like(clipped[0]) * noise_multiplier * max_norm
""",
        # TensorFlow: tf.maximum of the global norm ratio, applied to each tensor of the update
        """
import tensorflow as tf
def clip_update(update, l2_clip, noise_multiplier):
    norm = tf.linalg.global_norm(update)
    divisor = tf.maximum(1.0, norm / l2_clip)
    clipped = [u * divisor for u in update]  # <-
    return [c + tf.random.normal(tf.shape(c), stddev=noise_multiplier * l2_clip) for c in clipped]
""",
    )
