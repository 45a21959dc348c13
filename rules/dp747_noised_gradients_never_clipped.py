"""DP747: noise added to the gradients an optimizer or tape returns, in a module that never clips a gradient."""
from __future__ import annotations

import ast
import re

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, dotted, target_names, walk, words
from dpcheck.rule import Rule

#: calls that return the (batch) gradients of a loss
_GRAD_CALLS = frozenset({"compute_gradients", "gradient", "gradients", "grad"})
#: calls that return noise
_DRAWS = frozenset({"normal", "random_normal", "randn", "randn_like", "normal_", "laplace", "Laplace", "Normal",
                    "standard_normal", "gauss", "truncated_normal"})
#: calls that bound a gradient (norm clipping, or a norm the code divides by)
_CLIPS = frozenset({"clip_by_norm", "clip_by_global_norm", "clip_grad_norm_", "clip_grad_norm", "clip_by_average_norm",
                    "clip_grad_value_", "norm", "global_norm", "l2_normalize", "vector_norm"})
#: element-wise clips count only when they are applied to a gradient, not to the weights (WGAN weight clipping)
_VALUE_CLIPS = frozenset({"clip_by_value", "clip", "clamp", "clamp_"})
_GRAD_WORDS = frozenset({"g", "grad", "grads", "gradient", "gradients", "gv", "gvs", "dw", "gw"})
#: a per-example DP library does the clipping
_DP_LIBS = re.compile(r"tensorflow_privacy|opacus|DPKeras|DPAdam|DPGradientDescent|dp_optimizer|make_private|"
                      r"jax_privacy|pyvacy|per_example|vmap")
_CLAIM = re.compile(r"(?i)\bdp\b|dp_|_dp|privacy|private|epsilon|differential")


def _grad_call(node: cst.CSTNode) -> bool:
    if not isinstance(node, cst.Call):
        return False
    name = call_name(node)
    if name not in _GRAD_CALLS:
        return False
    if name == "grad":  # torch.autograd.grad / jax.grad of a loss, not any .grad() helper
        full = dotted(node.func) or ""
        return full.endswith("autograd.grad")
    return isinstance(node.func, cst.Attribute)


def _mentions(expr: cst.CSTNode, names: set[str]) -> bool:
    return any((dotted(n) or "") in names for n in walk(expr) if isinstance(n, (cst.Name, cst.Attribute)))


class NoisedGradientsNeverClipped(Rule):
    id = "DP747"
    name = "noised-gradients-never-clipped"
    category = "general"
    severity = "error"
    summary = ("Gaussian noise is added to the gradients compute_gradients / tape.gradient / autograd.grad return "
               "and applied, but no gradient is ever clipped: the noise is calibrated to no sensitivity")
    rationale = (
        "DP-SGD's noise σ·C hides one record only because every per-example gradient is clipped to norm C first. "
        "Taking the batch gradient of the loss (`opt.compute_gradients(loss)`, `tape.gradient(loss, vars)`, "
        "`torch.autograd.grad(loss, params)`), adding `normal(0, σ·c)` to each tensor (directly or through a "
        "helper that draws the noise) and applying it, in a module that never clips a gradient, bounds nothing: "
        "a record's gradient can be arbitrarily large and the noise (often with a constant 'sensitivity' of 1) "
        "gives no ε. WGAN weight clipping (`clip_by_value` on the variables) is not gradient clipping. "
        "Reported: the noise draw or noise-helper call applied to a gradient from such a call, in code with a "
        "DP claim, when the module calls no norm clipping (`clip_by_norm`, `clip_by_global_norm`, "
        "`clip_grad_norm_`, a gradient norm) and no element-wise clip of a gradient, and uses no DP library. "
        "Fix: compute per-example gradients, clip each to norm C, sum, add N(0, σ²C²) and divide by the batch."
    )
    TRIGGERS = ("compute_gradients", "gradient", "autograd.grad")
    requires_dp_context = False

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A gradient call and a noise draw, and no norm clip among the calls."""
        if not facts.calls_any(_GRAD_CALLS) or not facts.calls_any(_DRAWS):
            return False
        return not facts.calls_any(_CLIPS - {"norm"})

    @classmethod
    def admits(cls, facts: AstFacts) -> bool:
        return cls.may_report(facts)

    def visit_Module(self, node: cst.Module) -> None:
        src = self.ctx.source
        if _DP_LIBS.search(src) or not _CLAIM.search(src):
            return
        calls = [c for c in walk(node) if isinstance(c, cst.Call)]
        for c in calls:
            name = call_name(c)
            if name in _CLIPS:
                return
            if name in _VALUE_CLIPS and c.args and any(words((dotted(n) or "").split(".")[-1]) & _GRAD_WORDS
                                                       for n in walk(c.args[0].value)
                                                       if isinstance(n, (cst.Name, cst.Attribute))):
                return
        helpers: set[str] = set()
        for fn in walk(node):
            if isinstance(fn, cst.FunctionDef) and any(isinstance(c, cst.Call) and call_name(c) in _DRAWS
                                                       for c in walk(fn.body)):
                helpers.add(fn.name.value)
        for fn in walk(node):
            if isinstance(fn, cst.FunctionDef):
                self._function(fn, helpers)

    def _function(self, fn: cst.FunctionDef, helpers: set[str]) -> None:
        body = list(walk(fn.body, into_scopes=False))
        grads: set[str] = set()
        for sub in body:
            if isinstance(sub, cst.Assign) and any(_grad_call(c) for c in walk(sub.value)):
                for t in sub.targets:
                    grads |= target_names(t.target)
        if not grads:
            return
        # names derived from the gradients: loop targets over them, ``g = gv[0]``
        changed = True
        while changed:
            changed = False
            for sub in body:
                new: set[str] = set()
                if isinstance(sub, cst.For) and _mentions(sub.iter, grads):
                    new = target_names(sub.target)
                elif isinstance(sub, cst.CompFor) and _mentions(sub.iter, grads):
                    new = target_names(sub.target)
                elif isinstance(sub, cst.Assign) and _mentions(sub.value, grads) and not any(
                        isinstance(c, cst.Call) and (call_name(c) in _DRAWS or call_name(c) in helpers)
                        for c in walk(sub.value)):
                    for t in sub.targets:
                        new |= target_names(t.target)
                if new - grads:
                    grads |= new
                    changed = True
        for sub in body:
            if not isinstance(sub, cst.Call):
                continue
            name = call_name(sub)
            if name in helpers and any(_mentions(a.value, grads) for a in sub.args):
                self.report(sub, f"`{name}` adds noise to the batch gradient, but nothing in the module clips a "
                                 "gradient: the noise is calibrated to no sensitivity and gives no ε; clip each "
                                 "per-example gradient to norm C and draw noise of std σ·C")
                return
        for sub in body:
            if isinstance(sub, cst.BinaryOperation) and isinstance(sub.operator, cst.Add) and (
                    (_mentions(sub.left, grads) and any(isinstance(c, cst.Call) and call_name(c) in _DRAWS
                                                         for c in walk(sub.right)))
                    or (_mentions(sub.right, grads) and any(isinstance(c, cst.Call) and call_name(c) in _DRAWS
                                                            for c in walk(sub.left)))):
                self.report(sub, "noise is added to the batch gradient, but nothing in the module clips a "
                                 "gradient: the noise is calibrated to no sensitivity and gives no ε; clip each "
                                 "per-example gradient to norm C and draw noise of std σ·C")
                return

    VALID = (
        # twin: the gradients are clipped by their global norm before the noise
        """
import tensorflow as tf
class DPTrainer:
    def build(self, loss, variables, sigma, clip):
        opt = tf.train.RMSPropOptimizer(1e-3)
        gvs = opt.compute_gradients(loss, var_list=variables)
        grads, _ = tf.clip_by_global_norm([g for g, v in gvs], clip)
        noisy = [g + tf.random_normal(tf.shape(g), stddev=sigma * clip) for g in grads]
        return opt.apply_gradients(zip(noisy, variables))
""",
        # twin: per-example gradients clipped by norm in a tape loop
        """
import tensorflow as tf
def dp_step(model, opt, xs, ys, sigma, clip):
    summed = None
    for x, y in zip(xs, ys):
        with tf.GradientTape() as tape:
            loss = model.loss(x, y)
        grads = tape.gradient(loss, model.trainable_variables)
        grads = [tf.clip_by_norm(g, clip) for g in grads]
        summed = grads if summed is None else [a + b for a, b in zip(summed, grads)]
    noisy = [g + tf.random.normal(g.shape, stddev=sigma * clip) for g in summed]
    opt.apply_gradients(zip(noisy, model.trainable_variables))
""",
        # a DP library does the clipping
        """
import tensorflow as tf
from tensorflow_privacy import DPKerasAdamOptimizer
def step(model, opt, x, y, eps):
    with tf.GradientTape() as tape:
        loss = model.loss(x, y)
    grads = tape.gradient(loss, model.trainable_variables)
    grads = [g + tf.random.normal(g.shape, stddev=0.0) for g in grads]
    opt.apply_gradients(zip(grads, model.trainable_variables))
""",
        # ordinary ML: gradient noise for exploration (Neelakantan et al.), no privacy claim
        """
import tensorflow as tf
def noisy_sgd(opt, loss, variables, eta, step):
    gvs = opt.compute_gradients(loss, var_list=variables)
    noisy = [(g + tf.random_normal(tf.shape(g), stddev=eta / (1 + step) ** 0.55), v) for g, v in gvs]
    return opt.apply_gradients(noisy)
""",
    )

    INVALID = (
        # TF1: compute_gradients, a noise helper per tensor, WGAN weight clipping only
        """
import tensorflow as tf
class DPGAN:
    def dpnoise(self, tensor, batch_size):
        return tensor + tf.random_normal(tf.shape(tensor), stddev=self.sigma * self.cg) / batch_size
    def build(self, d_loss, d_vars):
        opt = tf.train.RMSPropOptimizer(5e-4)
        gvs = opt.compute_gradients(d_loss, var_list=d_vars)
        dp_gvs = []
        for gv in gvs:
            g = gv[0]
            if g is not None:
                g = self.dpnoise(g, self.batch_size)  # <-
            dp_gvs.append((g, gv[1]))
        self.d_clip = [v.assign(tf.clip_by_value(v, -0.01, 0.01)) for v in d_vars]
        return opt.apply_gradients(dp_gvs)
""",
        # TF2 tape: noise added inline to every gradient, for an epsilon the caller passes
        """
import tensorflow as tf
def private_step(model, opt, x, y, noise_std, epsilon):
    with tf.GradientTape() as tape:
        loss = model.loss(x, y)
    grads = tape.gradient(loss, model.trainable_variables)
    grads = [g + tf.random.normal(g.shape, stddev=noise_std) for g in grads]  # <-
    opt.apply_gradients(zip(grads, model.trainable_variables))
""",
        # torch autograd.grad, noise on each batch gradient before a manual update
        """
import torch
def dp_update(params, loss, lr, sigma):
    grads = torch.autograd.grad(loss, params)
    for p, g in zip(params, grads):
        p.data -= lr * (g + sigma * torch.randn_like(g))  # <-
""",
        # gradients unpacked from (grad, var) pairs, noise through a module-level helper
        """
import numpy as np
import tensorflow as tf
def gaussian_noise(t, sigma):
    return t + tf.random.normal(tf.shape(t), stddev=sigma)
def train_private(opt, loss, variables, sigma, epsilon):
    pairs = opt.compute_gradients(loss, variables)
    noisy = [(gaussian_noise(g, sigma), v) for g, v in pairs]  # <-
    return opt.apply_gradients(noisy)
""",
    )
