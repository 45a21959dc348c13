"""DP596: adaptive clipping updates the clip bound before the round's noise is drawn with it."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.clipping import is_clip_bound
from dpcheck.analysis.noisedraws import PURE_DRAWS
from dpcheck.analysis.syntax import call_name, walk, words
from dpcheck.rule import Rule

#: method calls that overwrite a variable in place (``tf.Variable.assign``)
_ASSIGN_CALLS = frozenset({"assign", "assign_add", "assign_sub", "fill_", "copy_", "mul_", "div_"})


class ClipBoundUpdatedBeforeNoise(Rule):
    id = "DP596"
    name = "clip-bound-updated-before-noise"
    category = "general"
    severity = "error"
    summary = "adaptive clipping moves the clip bound for the next round before this round's noise reads it"
    rationale = (
        "With adaptive clipping (Andrew et al.) a round clips the updates with the current bound C_t, "
        "then updates the bound from the noised clipped fraction. The round's Gaussian noise must be "
        "σ·C_t: the bound the updates were clipped with. Updating `self.clip_norm` (or calling the "
        "method that does) *between* the clipping and the noise draw makes the noise σ·C_{t+1}; when "
        "the bound shrinks, the aggregate of updates of norm up to C_t is released with noise for a "
        "smaller sensitivity and the accountant's guarantee does not hold. Not reported: the update "
        "after the noise, noise drawn from a copy of the bound taken before the update, a bound that "
        "is only read. Fix: add the noise first (or keep the round's bound in a local) and update "
        "the bound afterwards."
    )
    TRIGGERS = ("clip",)
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A clipping call or a division (the clip factor ``C / ‖g‖``), and a noise draw or noise helper."""
        return (bool(facts.binops(ast.Div)) or any("clip" in words(c) for c in facts.called)) \
            and (bool(facts.called & PURE_DRAWS) or any("noise" in words(c) for c in facts.called))

    VALID = (
        # twin of the first INVALID: the noise is added before the bound moves
        """
import math
import numpy as np
class AdaptiveDP:
    def aggregate(self, updates):
        count = 0
        for u in updates:
            count += clip_inputs_inplace(u, self.clip_norm)
        total = sum(updates)
        total = total + np.random.normal(0, self.noise_multiplier * self.clip_norm, total.shape)
        frac = (count + np.random.normal(0, self.count_std)) / len(updates)
        self.clip_norm *= math.exp(-self.lr * (frac - self.target_quantile))
        return total
""",
        # twin of the method-call INVALID: the round's bound kept in a local before the update
        """
import numpy as np
class AdaptiveDP:
    def _geometric_update(self, frac):
        self.clipping_norm = self.clipping_norm * np.exp(-self.lr * (frac - self.target))
    def _add_noise(self, agg, clip):
        return agg + np.random.normal(0, self.noise_multiplier * clip, agg.shape)
    def aggregate(self, updates):
        clip = self.clipping_norm
        hits = sum(clip_update(u, clip) for u in updates)
        self._geometric_update((hits + np.random.normal(0, self.count_std)) / len(updates))
        return self._add_noise(sum(updates), clip)
""",
        # a bound only read; ordinary training with gradient clipping and augmentation noise
        """
import torch
def train_step(model, x, opt, max_grad_norm, noise_std):
    x = x + noise_std * torch.randn_like(x)
    model(x).sum().backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
    opt.step()
""",
        # twin of the torch INVALID: the noise drawn with the round's bound, then the bound moves
        """
import torch
class DPAdaptiveOptimizer:
    def step(self, per_sample_grads, params):
        norms = per_sample_grads.flatten(1).norm(dim=1)
        factor = torch.clamp(self.clip_bound / (norms + 1e-6), max=1.0)
        summed = (per_sample_grads * factor.view(-1, 1)).sum(0)
        summed += torch.randn_like(summed) * self.noise_multiplier * self.clip_bound
        unclipped = (norms <= self.clip_bound).float().sum() + torch.normal(0.0, self.count_std, ())
        self.clip_bound = self.clip_bound * torch.exp(-self.eta * (unclipped / len(norms) - self.q))
        return summed
""",
        # twin of the TensorFlow INVALID: the reducer reads a copy of the round's bound
        """
import tensorflow as tf
class DPAdaClipOptimizer:
    def grads(self, jacobian):
        round_clip = tf.identity(self._l2_norm_clip)
        clipped = tf.vectorized_map(lambda g: clip_gradients(g, round_clip), jacobian)
        beta = tf.reduce_mean(tf.vectorized_map(lambda g: unclipped(g, round_clip), jacobian))
        self._l2_norm_clip.assign(next_bound(beta, self._l2_norm_clip))
        def reduce(g):
            s = tf.reduce_sum(g, axis=0)
            return s + tf.random.normal(tf.shape(s), stddev=round_clip * self._noise_multiplier)
        return tf.nest.map_structure(reduce, clipped)
""",
    )

    INVALID = (
        # the bound multiplied in place between the clipping and the noise
        """
import math
import numpy as np
class AdaptiveDP:
    def aggregate(self, updates):
        count = 0
        for u in updates:
            count += clip_inputs_inplace(u, self.clip_norm)
        frac = (count + np.random.normal(0, self.count_std)) / len(updates)
        self.clip_norm *= math.exp(-self.lr * (frac - self.target_quantile))
        total = sum(updates)
        return total + np.random.normal(0, self.noise_multiplier * self.clip_norm, total.shape)  # <-
""",
        # the update and the noise each behind a method of the class
        """
import numpy as np
class AdaptiveDP:
    def _geometric_update(self, frac):
        self.clipping_norm = self.clipping_norm * np.exp(-self.lr * (frac - self.target))
    def _add_noise(self, agg):
        return agg + np.random.normal(0, self.noise_multiplier * self.clipping_norm, agg.shape)
    def aggregate(self, updates):
        hits = sum(clip_update(u, self.clipping_norm) for u in updates)
        self._geometric_update((hits + np.random.normal(0, self.count_std)) / len(updates))
        return self._add_noise(sum(updates))  # <-
""",
        # TensorFlow: the bound variable reassigned, then a nested reducer draws noise with it
        """
import tensorflow as tf
class DPAdaClipOptimizer:
    def grads(self, jacobian):
        clipped = tf.vectorized_map(lambda g: clip_gradients(g, self._l2_norm_clip), jacobian)
        beta = tf.reduce_mean(tf.vectorized_map(lambda g: unclipped(g, self._l2_norm_clip), jacobian))
        self._l2_norm_clip.assign(next_bound(beta, self._l2_norm_clip))
        def reduce(g):
            s = tf.reduce_sum(g, axis=0)
            std = self._l2_norm_clip * self._noise_multiplier
            return s + tf.random.normal(tf.shape(s), stddev=std)  # <-
        return tf.nest.map_structure(reduce, clipped)
""",
        # torch per-sample clipping, geometric update of the bound, then the noise on the summed gradient
        """
import torch
class DPAdaptiveOptimizer:
    def step(self, per_sample_grads, params):
        norms = per_sample_grads.flatten(1).norm(dim=1)
        factor = torch.clamp(self.clip_bound / (norms + 1e-6), max=1.0)
        summed = (per_sample_grads * factor.view(-1, 1)).sum(0)
        unclipped = (norms <= self.clip_bound).float().sum() + torch.normal(0.0, self.count_std, ())
        self.clip_bound = self.clip_bound * torch.exp(-self.eta * (unclipped / len(norms) - self.q))
        summed += torch.randn_like(summed) * self.noise_multiplier * self.clip_bound  # <-
        return summed
""",
    )

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        fa = self.ctx.analysis
        outer = fa.enclosing_function(node)
        if outer is not None and fa.enclosing_class(node) is fa.enclosing_class(outer):
            return  # closures are read with their outer function (a method of a nested class is its own)
        if fa.enclosing_class(node) is None:
            methods: dict[str, cst.FunctionDef] = {}
        else:  # the module's methods by name: a base class in the module may hold the update or the noise
            methods = self._module_methods()
        order = {n: i for i, n in enumerate(walk(node))}
        owner = fa.enclosing_class(node)
        statements = [n for n in order if isinstance(n, (cst.BaseSmallStatement, cst.BaseCompoundStatement))
                      and fa.enclosing_class(n) is owner  # not the methods of a class defined in the function
                      and not isinstance(n, (cst.FunctionDef, cst.ClassDef, cst.If, cst.For, cst.While, cst.With,
                                             cst.Try))]
        for key in self._bounds(node, methods):
            clip_at = min((order[s] for s in statements if self._clips(s, key, methods)), default=None)
            if clip_at is None:
                continue
            update_at = min((order[s] for s in statements if order[s] > clip_at and self._updates(s, key, methods)),
                            default=None)
            if update_at is None:
                continue
            for s in statements:
                if order[s] > update_at and self._noises(s, key, methods, node):
                    self.report(s, f"the clip bound `{key}` is updated for the next round after the clipping and "
                                   "before this noise reads it: "
                                   "the round's updates were clipped with the old bound, so the noise σ·C uses a "
                                   "bound other than their sensitivity; add the noise first or keep the round's "
                                   "bound in a local")
                    break

    def _module_methods(self) -> dict[str, cst.FunctionDef]:
        cached = getattr(self, "_methods", None)
        if cached is None:
            cached = {}
            for c in walk(self.ctx.analysis.index.module):
                if isinstance(c, cst.ClassDef):
                    for m in c.body.body:
                        if isinstance(m, cst.FunctionDef):
                            cached.setdefault(m.name.value, m)
            self._methods = cached
        return cached

    def _bounds(self, func: cst.FunctionDef, methods: dict[str, cst.FunctionDef]) -> set[str]:
        """Attributes used as a clip bound in ``func``: named like one, or passed to a clipping call."""
        fa = self.ctx.analysis
        out: set[str] = set()
        for n in walk(func):
            if isinstance(n, cst.Attribute) and is_clip_bound(n) and not words(n.attr.value) & {"fn", "func", "mode"}:
                out.add(fa.code(n).strip())
            if isinstance(n, cst.Call) and "clip" in words(call_name(n)):
                out |= {fa.code(a.value).strip() for a in n.args if isinstance(a.value, cst.Attribute)
                        and isinstance(a.value.value, cst.Name) and a.value.value.value == "self"}
        return out

    def _reads(self, node: cst.CSTNode, key: str) -> bool:
        fa = self.ctx.analysis
        return any(isinstance(x, cst.Attribute) and fa.code(x).strip() == key for x in walk(node))

    def _method(self, call: cst.Call, methods: dict[str, cst.FunctionDef]) -> cst.FunctionDef | None:
        f = call.func
        if isinstance(f, cst.Attribute) and isinstance(f.value, cst.Name) and f.value.value == "self":
            return methods.get(f.attr.value)
        return None

    def _clips(self, stmt: cst.CSTNode, key: str, methods: dict[str, cst.FunctionDef]) -> bool:
        for c in walk(stmt):
            if isinstance(c, cst.Call) and "clip" in words(call_name(c)) and any(self._reads(a, key) for a in c.args):
                return True
            if isinstance(c, cst.BinaryOperation) and isinstance(c.operator, cst.Divide) \
                    and self.ctx.analysis.code(c.left).strip() == key \
                    and any(isinstance(n, cst.Name) and words(n.value) & {"norm", "norms"} or
                            isinstance(n, cst.Call) and words(call_name(n)) & {"norm", "norms"} for n in walk(c.right)):
                return True  # the clip factor ``C / ‖g‖``
        return False

    def _assigns(self, stmt: cst.CSTNode, key: str) -> bool:
        fa = self.ctx.analysis
        if isinstance(stmt, cst.AugAssign):
            return fa.code(stmt.target).strip() == key
        if isinstance(stmt, cst.Assign):
            return any(fa.code(t.target).strip() == key for t in stmt.targets)
        if isinstance(stmt, cst.Expr) and isinstance(stmt.value, cst.Call) and call_name(stmt.value) in _ASSIGN_CALLS:
            f = stmt.value.func
            return isinstance(f, cst.Attribute) and fa.code(f.value).strip() == key
        return False

    def _updates(self, stmt: cst.CSTNode, key: str, methods: dict[str, cst.FunctionDef]) -> bool:
        if self._assigns(stmt, key):
            return True
        for c in walk(stmt):
            m = self._method(c, methods) if isinstance(c, cst.Call) else None
            if m is not None and any(self._assigns(s, key) for s in walk(m)):
                return True
        return False

    def _noises(self, stmt: cst.CSTNode, key: str, methods: dict[str, cst.FunctionDef],
                func: cst.FunctionDef) -> bool:
        """A noise draw (or a noise helper) reads the bound: in the statement, through a local of the same
        (possibly nested) function assigned from it, or inside a ``self.`` method the statement calls."""
        fa = self.ctx.analysis
        for c in walk(stmt):
            if not isinstance(c, cst.Call):
                continue
            name = call_name(c)
            if name in PURE_DRAWS or "noise" in words(name) or "stdv" in words(name):
                if self._reads(stmt, key):
                    return True
                scope = fa.enclosing_function(c) or func
                derived = {t.target.value for a in walk(scope, into_scopes=False) if isinstance(a, cst.Assign)
                           and self._reads(a.value, key) for t in a.targets if isinstance(t.target, cst.Name)}
                if any(isinstance(x, cst.Name) and x.value in derived for a in c.args for x in walk(a)):
                    return True
            m = self._method(c, methods)
            if m is not None and "noise" in words(m.name.value) and self._reads(m, key):
                return True
        return False
