"""DP501: Gaussian noise added to a gradient that is clipped afterwards (DP-SGD in the wrong order)."""
from __future__ import annotations

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import COMPREHENSIONS, call_name, dotted, last_name, walk, words
from dpcheck.rule import Rule
from dpcheck.analysis.noisedraws import adds_draw, is_draw, last_assignment

#: norm clips of a tensor or of a model's gradients
_NORM_CLIPS = frozenset({
    "clip_by_norm", "clip_by_global_norm", "clip_grad_norm_", "clip_grad_norm", "clip_by_average_norm",
})
#: clips of a model's gradients in place (their argument is the parameters, not the noisy value)
_IN_PLACE = frozenset({"clip_grad_norm_", "clip_grad_norm"})


def _clip_call(name: str) -> bool:
    pieces = words(name)
    return name in _NORM_CLIPS or ("clip" in pieces and bool(pieces & {"grad", "grads", "gradient", "gradients"}))


def _noisy_grad_statement(node: cst.CSTNode) -> bool:
    """``p.grad += draw``, ``p.grad.add_(draw)``, ``p.grad = p.grad + draw``."""
    if isinstance(node, cst.AugAssign) and isinstance(node.operator, cst.AddAssign):
        return last_name(node.target) == "grad" and is_draw(node.value)
    if isinstance(node, cst.Assign) and len(node.targets) == 1:
        return last_name(node.targets[0].target) == "grad" and adds_draw(node.value)
    if isinstance(node, cst.Call) and call_name(node) == "add_" and isinstance(node.func, cst.Attribute):
        return last_name(node.func.value) == "grad" and any(is_draw(a.value) for a in node.args)
    return False


def _model_root(expr: cst.BaseExpression) -> str | None:
    """``G.parameters()`` -> ``G``; ``self.netD.parameters()`` -> ``self.netD``."""
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and call_name(expr) in (
            "parameters", "named_parameters"):
        return dotted(expr.func.value)
    return None


class NoiseBeforeClip(Rule):
    id = "DP501"
    name = "noise-before-clip"
    category = "general"
    severity = "error"
    summary = "noise is added to a gradient that is clipped afterwards: the clip removes the noise's guarantee"
    rationale = (
        "DP-SGD clips each gradient to norm C and *then* adds N(0, σ²C²): the clip bounds one record's "
        "influence and the noise, calibrated to that bound, hides it. Adding the noise first and "
        "clipping the noisy gradient (`tf.clip_by_norm(g + tf.random.normal(...), C)`, or "
        "`p.grad += noise` followed by `clip_grad_norm_`) inverts this: the clean gradient's norm "
        "is never bounded before the noise, and the clip then rescales the noise with the signal, "
        "so with a large gradient the released update is mostly the record's own direction. "
        "Not reported: noise added after the clip, a value clip (`np.clip`) of a noisy release "
        "(post-processing), code with no DP context. "
        "Fix: clip the clean (per-example) gradient, then add the noise to the clipped sum."
    )
    TRIGGERS = ("clip",)
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding is a call of a gradient or norm clip."""
        return any(_clip_call(name) for name in facts.called)

    VALID = (
        # flower-dp's intent, in the right order
        """
import tensorflow as tf
def private_step(self, grads):
    clipped = [tf.clip_by_norm(g, self.l2_norm_clip) for g in grads]
    return [g + tf.random.normal(g.shape, stddev=self.sigma) for g in clipped]
""",
        """
import torch
def dp_step(model, optimizer, noise_multiplier, max_grad_norm):
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
    for p in model.parameters():
        p.grad += torch.normal(0, noise_multiplier * max_grad_norm, size=p.grad.shape)
    optimizer.step()
""",
        # a noisy release clamped to its range: post-processing
        """
import numpy as np
def dp_mean(x, epsilon, lo, hi):
    noisy = np.clip(x, lo, hi).mean() + np.random.laplace(0, (hi - lo) / (len(x) * epsilon))
    return np.clip(noisy, lo, hi)
""",
        # per-example clip, then noise on the sum
        """
import torch
def dp_sgd_grad(per_example_grads, clip_norm, sigma):
    clipped = [clip_gradient(g, clip_norm) for g in per_example_grads]
    total = torch.stack(clipped).sum(0)
    return total + sigma * clip_norm * torch.randn_like(total)
""",
        # a GAN: D's gradients get noise; G's fresh gradients are clipped afterwards
        """
import torch
def train_step(D, G, optD, optG, lossD, lossG, max_grad_norm, noise_multiplier):
    optD.zero_grad()
    lossD.backward()
    torch.nn.utils.clip_grad_norm_(D.parameters(), max_grad_norm)
    for p in D.parameters():
        p.grad.add_(torch.randn_like(p.grad) * noise_multiplier * max_grad_norm)
    optD.step()
    optG.zero_grad()
    lossG.backward()
    torch.nn.utils.clip_grad_norm_(G.parameters(), max_grad_norm)
    optG.step()
""",
    )

    INVALID = (
        # flower-dp tf/client.py: the comprehension adds the noise, the outer one clips
        """
import tensorflow as tf
def train_step(self, grads):
    # differentially private step
    grads_prime = [
        tf.clip_by_norm(g, self.l2_norm_clip)  # <-
        for g in [g + tf.random.normal(g.shape, stddev=self.sigma_u) for g in grads]
    ]
    self.optimizer.apply_gradients(zip(grads_prime, self.net.trainable_weights))
""",
        """
import torch
def dp_step(model, optimizer, noise_multiplier, max_grad_norm):
    for p in model.parameters():
        p.grad += torch.normal(0, noise_multiplier * max_grad_norm, size=p.grad.shape)
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)  # <-
    optimizer.step()
""",
        """
import tensorflow as tf
def dp_gradient(grad, sigma, clip):
    noisy = grad + tf.random.normal(tf.shape(grad), stddev=sigma * clip)
    return tf.clip_by_norm(noisy, clip)  # <-
""",
        """
import torch
def private_grad(grad, sigma, C):
    return clip_gradient(grad + sigma * C * torch.randn_like(grad), C)  # <-
""",
        """
import torch
def dp_sgd_update(model, sigma, clip_norm):
    for p in model.parameters():
        p.grad.add_(torch.randn_like(p.grad) * sigma * clip_norm)
    torch.nn.utils.clip_grad_norm_(model.parameters(), clip_norm)  # <-
""",
    )

    def visit_Call(self, node: cst.Call) -> None:
        name = call_name(node)
        if not _clip_call(name):
            return
        if name in _IN_PLACE:
            if self._noise_on_grads_before(node):
                self.report(node, "the gradients received noise earlier in this function and are clipped here: the clip "
                                  "bounds the noisy gradient, not the record's contribution, and rescales the noise "
                                  "with it; clip first, then add the noise")
            return
        positional = [a.value for a in node.args if a.keyword is None and not a.star]
        if not positional or not self._noisy(positional[0], node):
            return
        code = self.ctx.analysis.code(positional[0]).strip()
        self.report(node, f"`{code}` already holds the noise when it is clipped here: the clip bounds the noisy "
                          f"gradient, not the record's contribution, and rescales the noise with it; clip the "
                          f"clean gradient, then add the noise")

    def _noisy(self, expr: cst.BaseExpression, at: cst.Call) -> bool:
        if adds_draw(expr):
            return True
        if not isinstance(expr, cst.Name):
            return False
        fa = self.ctx.analysis
        for anc in fa.ancestors(at):
            if isinstance(anc, COMPREHENSIONS):
                for_in: cst.CompFor | None = anc.for_in
                while for_in is not None:
                    if isinstance(for_in.target, cst.Name) and for_in.target.value == expr.value:
                        source = for_in.iter
                        return isinstance(source, (cst.ListComp, cst.GeneratorExp)) and adds_draw(source.elt)
                    for_in = for_in.inner_for_in
            if isinstance(anc, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
                break
        fn = fa.enclosing_function(at)
        if fn is None:
            return False
        value = last_assignment(fn, expr.value, fa.line_of(at), fa.line_of)
        return value is not None and adds_draw(value)

    def _noise_on_grads_before(self, at: cst.Call) -> bool:
        fa = self.ctx.analysis
        fn = fa.enclosing_function(at)
        if fn is None:
            return False
        line = fa.line_of(at)
        clipped = _model_root(at.args[0].value) if at.args else None
        nodes = list(walk(fn, into_scopes=False))
        for n in nodes:
            if not (_noisy_grad_statement(n) and fa.line_of(n) < line):
                continue
            noised = next((_model_root(loop.iter) for loop in fa.enclosing_loops(n) if isinstance(loop, cst.For)), None)
            if clipped and noised and clipped != noised:
                continue  # another model's gradients were noised (a GAN's D, then G's clip)
            start = fa.line_of(n)
            if any(isinstance(m, cst.Call) and call_name(m) == "zero_grad" and start < fa.line_of(m) < line for m in nodes):
                continue  # the noisy gradients were cleared before this clip
            return True
        return False
