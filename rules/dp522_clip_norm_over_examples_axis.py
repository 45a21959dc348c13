"""DP522: a matrix of per-example rows clipped by one norm over the whole matrix (no axis)."""
from __future__ import annotations

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.clipping import NORM_CALLS, is_clip_bound
from dpcheck.analysis.noisedraws import PURE_DRAWS
from dpcheck.analysis.syntax import call_name, number, walk, words
from dpcheck.rule import Rule

_AXIS_KEYS = frozenset({"axis", "axes", "dim", "dims"})
_ROW_REDUCTIONS = frozenset({"sum", "reduce_sum", "mean", "reduce_mean", "nansum"})


def _keywords(call: cst.Call) -> set[str]:
    return {a.keyword.value for a in call.args if a.keyword is not None}


def _positional(call: cst.Call) -> list[cst.BaseExpression]:
    return [a.value for a in call.args if a.keyword is None and not a.star]


class ClipNormOverExamplesAxis(Rule):
    id = "DP522"
    name = "clip-norm-over-examples-axis"
    category = "general"
    severity = "error"
    summary = "a matrix whose rows are examples is clipped by one norm over the whole matrix, not row by row"
    rationale = (
        "Per-example clipping bounds each row of the per-example gradient matrix: "
        "`tf.clip_by_norm(x, C, axes=[1])`, `x * min(1, C / ‖x_i‖)` with the norm taken along the "
        "feature axis. `tf.clip_by_norm(x, C)` without `axes`, `x.norm()` or `np.linalg.norm(x)` "
        "without an axis take one norm over the whole matrix: the batch is shrunk as a block, and a "
        "single row — one record — can still carry up to C of the total while the others carry "
        "nothing, or, scaled back per tensor, the bound is √(#tensors)·C rather than C. The same "
        "function then sums the rows (`reduce_sum(x, 0)`, `x.sum(0)`) or reads the number of "
        "examples from `shape(x)[0]` and adds noise σ·C as if each row had been clipped. Not "
        "reported: a norm with an axis/dim, a clip of a single gradient vector (no rows summed), "
        "code with no noise in the function or no DP context. Fix: clip along the example axis "
        "(`axes=[1]`, `dim=1, keepdim=True`)."
    )
    TRIGGERS = ("norm",)
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding is a norm or norm clip in a module that also reduces over rows."""
        return bool(facts.called & (NORM_CALLS | {"clip_by_norm"})) and bool(
            facts.called & (_ROW_REDUCTIONS | {"shape", "slice"}) or ".shape[0]" in facts.source)

    VALID = (
        # TF: the per-example rows clipped along axis 1
        """
import tensorflow as tf
def sanitize(x, l2norm_bound, sigma):
    x = tf.clip_by_norm(x, clip_norm=l2norm_bound, axes=[1])
    return tf.reduce_sum(x, 0) + tf.random.normal(tf.shape(x)[1:], stddev=sigma * l2norm_bound)
""",
        # torch: row norms with dim=1
        """
import torch
def privatize(per_sample, clip, noise_multiplier):
    norms = per_sample.norm(dim=1, keepdim=True)
    per_sample = per_sample * torch.clamp(clip / norms, max=1.0)
    return per_sample.sum(0) + torch.normal(0.0, noise_multiplier * clip, per_sample.shape[1:])
""",
        # one example's gradient vector, clipped as a whole (no rows to sum)
        """
import numpy as np
def noisy_example_grad(g, clip, sigma):
    g = g / max(1.0, np.linalg.norm(g) / clip)
    return g + np.random.normal(0, sigma * clip, g.shape)
""",
        # a whole-matrix norm only logged; rows clipped separately
        """
import numpy as np
def private_sum(G, clip, sigma, log):
    log["frobenius"] = np.linalg.norm(G)
    G = G / np.maximum(1.0, np.linalg.norm(G, axis=1, keepdims=True) / clip)
    return G.sum(axis=0) + np.random.normal(0, sigma * clip, G.shape[1])
""",
        # twin: the norm is taken per example (over every axis but the first)
        """
import torch
class PrivateOptimizer(torch.optim.Optimizer):
    def clip_and_average(self, per_sample):
        out = {}
        for k, g in per_sample.items():
            norms = g.flatten(1).norm(dim=1).clamp(min=1e-12)
            factor = (self.max_grad_norm / norms).clamp(max=1.0)
            out[k] = (g * factor.view(-1, *([1] * (g.dim() - 1)))).mean(0)
        return out
class PrivateSGD(PrivateOptimizer):
    def step(self, per_sample):
        grads = self.clip_and_average(per_sample)
        return {k: g + torch.normal(0.0, self.sigma * self.max_grad_norm, g.shape) for k, g in grads.items()}
""",
        # ordinary ML: a module with augmentation noise, a batch-mean of a weight normalised by its norm
        """
import torch
class Block(torch.nn.Module):
    def forward(self, x):
        x = x + torch.normal(0.0, 0.1, x.shape)
        return (x / max(1, torch.norm(x) / self.max_norm)).mean(0)
""",
    )

    INVALID = (
        # TF: clip_by_norm without axes on the per-example matrix
        """
import tensorflow as tf
def sanitize(per_example, l2_clip, noise_multiplier):
    clipped = tf.clip_by_norm(per_example, l2_clip)  # <-
    total = tf.reduce_sum(clipped, axis=0)
    return total + tf.random.normal(tf.shape(total), stddev=noise_multiplier * l2_clip)
""",
        # torch: one norm over the whole per-sample tensor
        """
import torch
def privatize(per_sample, clip, noise_multiplier):
    scale = min(1.0, clip / (per_sample.norm() + 1e-6))
    per_sample = per_sample * scale  # <-
    return per_sample.sum(dim=0) + torch.normal(0.0, noise_multiplier * clip, per_sample.shape[1:])
""",
        # numpy: the Frobenius norm of the rows' matrix
        """
import numpy as np
def private_mean(G, clip, noise_multiplier):
    G = G / max(1.0, np.linalg.norm(G) / clip)  # <-
    n = G.shape[0]
    return (G.sum(axis=0) + np.random.normal(0, noise_multiplier * clip, G.shape[1])) / n
""",
        # TF: the number of examples read from the clipped tensor's first axis
        """
import tensorflow as tf
def sanitize(x, eps_delta, sigma, l2norm_bound, accountant):
    x = tf.clip_by_norm(x, clip_norm=l2norm_bound)  # <-
    num_examples = tf.slice(tf.shape(x), [0], [1])
    accountant.accumulate_privacy_spending(eps_delta, sigma, num_examples)
    return add_gaussian_noise(x, sigma * l2norm_bound)
""",
        # a DP optimizer's clip step: each parameter's per-sample tensor scaled by one norm over all examples,
        # then averaged over the examples; the subclass adds the noise
        """
import torch
class PrivateOptimizer(torch.optim.Optimizer):
    def clip_and_average(self, per_sample):
        return {k: (g / max(1, torch.norm(g) / self.max_grad_norm)).mean(0) for k, g in per_sample.items()}  # <-
class PrivateSGD(PrivateOptimizer):
    def step(self, per_sample):
        grads = self.clip_and_average(per_sample)
        return {k: g + torch.normal(0.0, self.sigma * self.max_grad_norm, g.shape) for k, g in grads.items()}
""",
    )

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if not self._noises(node):
            return
        rows = self._row_names(node)
        if not rows:
            return
        for sub in walk(node, into_scopes=False):
            clipped = self._whole_clip(sub)
            if not clipped:
                continue
            statement = self.ctx.analysis.enclosing_statement(sub)
            results = {n.value for t in statement.targets for n in walk(t.target) if isinstance(n, cst.Name)} \
                if isinstance(statement, cst.Assign) and statement.value is sub else set()
            if clipped in rows or results & rows:
                self.report(sub, f"`{clipped}` holds one row per example (its rows are summed or counted here), but "
                                 "this clips it by a single norm over the whole matrix: no row is bounded by C on "
                                 "its own, so the noise σ·C does not match a per-example bound; clip along the "
                                 "example axis (`axes=[1]`, `dim=1`)")

    def _noises(self, fn: cst.FunctionDef) -> bool:
        """The function draws noise, or it is a method and its module does (a DP optimizer's clip step, noised by
        the subclasses' ``step``)."""
        owner = self.ctx.analysis.index.parents.get(fn)
        while owner is not None and not isinstance(owner, (cst.ClassDef, cst.Module, cst.FunctionDef)):
            owner = self.ctx.analysis.index.parents.get(owner)
        scope: cst.CSTNode = self.ctx.analysis.module if isinstance(owner, cst.ClassDef) else fn
        for sub in walk(scope):
            if isinstance(sub, cst.Call) and (call_name(sub) in PURE_DRAWS
                                              or words(call_name(sub)) & {"noise", "gaussian", "laplace"}):
                return True
        return False

    def _row_names(self, fn: cst.FunctionDef) -> set[str]:
        """Names the function sums over axis 0 or whose first dimension it reads as a count of examples."""
        out: set[str] = set()
        fa = self.ctx.analysis
        for sub in walk(fn, into_scopes=False):
            if isinstance(sub, cst.Call) and call_name(sub) in _ROW_REDUCTIONS:
                args = _positional(sub)
                receiver = sub.func.value if isinstance(sub.func, cst.Attribute) else None
                axis = next((a.value for a in sub.args if a.keyword is not None and a.keyword.value in _AXIS_KEYS),
                            None)
                if isinstance(receiver, cst.Name) and receiver.value not in ("np", "tf", "torch", "jnp") \
                        or isinstance(receiver, cst.BinaryOperation):
                    target, axis = receiver, axis if axis is not None else (args[0] if args else None)
                else:
                    target = args[0] if args else None
                    axis = axis if axis is not None else (args[1] if len(args) > 1 else None)
                if isinstance(target, cst.Name) and axis is not None and number(axis) == 0:
                    out.add(target.value)
                elif isinstance(target, cst.BinaryOperation) and isinstance(target.operator, (cst.Multiply, cst.Divide)) \
                        and axis is not None and number(axis) == 0:
                    # ``(grad / max(1, torch.norm(grad) / C)).mean(0)``: the scaled rows are averaged
                    out |= {side.value for side in (target.left, target.right) if isinstance(side, cst.Name)}
            if isinstance(sub, cst.Subscript) and isinstance(sub.value, (cst.Attribute, cst.Call)) \
                    and len(sub.slice) == 1 and isinstance(sub.slice[0].slice, cst.Index) \
                    and number(sub.slice[0].slice.value) == 0:
                shape = sub.value
                held = shape.value if isinstance(shape, cst.Attribute) and shape.attr.value == "shape" else (
                    _positional(shape)[0] if isinstance(shape, cst.Call) and call_name(shape) == "shape"
                    and _positional(shape) else None)
                if isinstance(held, cst.Name):
                    out.add(held.value)
            if isinstance(sub, cst.Call) and call_name(sub) == "slice" and len(_positional(sub)) >= 2:
                first, begin = _positional(sub)[0], _positional(sub)[1]
                if isinstance(first, cst.Call) and call_name(first) == "shape" and _positional(first) \
                        and isinstance(_positional(first)[0], cst.Name) and "[0]" in fa.code(begin).replace(" ", ""):
                    out.add(_positional(first)[0].value)  # type: ignore[attr-defined]
        return out

    def _whole_clip(self, node: cst.CSTNode) -> str | None:
        """The name clipped by one norm over all its entries: ``clip_by_norm(x, C)`` without axes,
        ``x * factor`` / ``x / factor`` with the factor a ratio of a bound and an axis-free norm of ``x``."""
        fa = self.ctx.analysis
        if isinstance(node, cst.Call) and call_name(node) == "clip_by_norm":
            args = _positional(node)
            if args and isinstance(args[0], cst.Name) and not _keywords(node) & _AXIS_KEYS and len(args) < 3:
                return args[0].value
            return None
        if not (isinstance(node, cst.BinaryOperation) and isinstance(node.operator, (cst.Multiply, cst.Divide))):
            return None
        for x, factor in ((node.left, node.right), (node.right, node.left)):
            if not isinstance(x, cst.Name) or is_clip_bound(x):
                continue
            seen: list[cst.BaseExpression] = [factor]
            for ref in walk(factor):
                if isinstance(ref, cst.Name) and ref.value != x.value:
                    value = fa.value_of(ref)
                    if value is not None:
                        seen.append(value)
            bound = any(is_clip_bound(n) for e in seen for n in walk(e) if isinstance(n, (cst.Name, cst.Attribute)))
            if bound and any(self._whole_norm(n, x.value) for e in seen for n in walk(e) if isinstance(n, cst.Call)):
                return x.value
        return None

    @staticmethod
    def _whole_norm(call: cst.Call, name: str) -> bool:
        """``x.norm()``, ``x.norm(2)``, ``torch.norm(x)``, ``np.linalg.norm(x)``, ``tf.norm(x)``: no axis."""
        if call_name(call) not in NORM_CALLS or _keywords(call) & (_AXIS_KEYS | {"keepdim", "keepdims"}):
            return False
        args = _positional(call)
        receiver = call.func.value if isinstance(call.func, cst.Attribute) else None
        if isinstance(receiver, cst.Name) and receiver.value == name:
            return len(args) <= 1
        return bool(args) and isinstance(args[0], cst.Name) and args[0].value == name and len(args) <= 2
