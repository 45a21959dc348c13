"""DP107: a hand-written per-example clipping whose factor is not min(1, C/‖g‖)."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, number, walk, words
from dpcheck.rule import Rule
from dpcheck.analysis.clipping import (
    ident,
    assigned_name, guarded, is_clip_bound, is_norm_value, name_uses, strip_small_add, under_comparison,
)

_DIVIDE_CALLS = frozenset({"div", "div_", "divide", "true_divide", "truediv"})
#: library clipping calls: their first argument must be the noise-free gradient
_QUANTILES = frozenset({"median", "quantile", "percentile", "nanmedian", "nanquantile", "nanpercentile"})
_CLIP_CALLS = frozenset({"clip_by_norm", "clip_by_global_norm", "clip_grad_norm_", "clip_grad_norm",
                         "clip_by_average_norm"})
_NOISE_DRAWS = frozenset({
    "normal", "normal_", "randn", "randn_like", "laplace", "gaussian", "random_normal", "add_noise", "gauss",
})


class ClipFactor(Rule):
    id = "DP107"
    name = "clip-factor"
    category = "general"
    severity = "error"
    summary = "per-example clipping factor inverted to ‖g‖/C, squared, taken from the records' norms, or applied after the noise"
    rationale = (
        "DP-SGD bounds each example's contribution by clipping its gradient to norm C: "
        "g · min(1, C/‖g‖) (equivalently g / max(1, ‖g‖/C)). The Gaussian noise is calibrated to "
        "that bound. A hand-written factor that inverts the ratio — `g * (norm / clip)`, "
        "`g / (clip / norm)` — multiplies a large gradient by ‖g‖/C, so one outlier's gradient "
        "grows instead of being bounded and the noise no longer covers it: the guarantee is void. "
        "Applying `clip / norm` without the min scales every gradient to norm exactly C "
        "(small ones up): the bound holds, so it is not reported (normalisation is a utility choice). "
        "Clipping a gradient that already carries the noise (`tf.clip_by_norm(g + noise, C)`) cuts "
        "the noise with the gradient: the noise no longer matches a bounded contribution. "
        "`max(1, grad**2 / C)` squares the gradient where its norm belongs. "
        "A clipping bound read off the records' norms (`np.quantile(norms, 0.5)`, `np.median(norms)`) "
        "and used as the bound or the noise scale is a non-private statistic of the data. "
        "Not reported: a factor bounded by `min`/`max`/`clamp`/`clip`/`where`, one applied only "
        "under an `if` that compares the norm with the bound, a rescaling `C/‖g‖` in a function that "
        "adds no noise (a deliberate normalisation on a non-private path), code with no DP context. "
        "Fix: `g * min(1.0, C / (norm + 1e-6))`, `factor.clamp(max=1.0)` or `g / max(1, norm / C)`. "
        "Also reported (h44-Q1): a factor ‖g‖/bound (the bound a clip, a median or a threshold) capped at 1 "
        "from above (`f[f > 1] = 1`) and then divided by — the wrong way round of `g / max(1, ‖g‖/C)`: long "
        "updates stay unclipped. Bad: `f = norms / C; f[f > 1] = 1; g / f`. Good: `f[f < 1] = 1; g / f`."
    )
    TRIGGERS = ("norm",)
    requires_dp_context = True

    @classmethod
    def applies_to(cls, source: str) -> bool:
        """A finding divides a clipping bound (``clip``, ``max_norm``, ``C``) and a norm, or clips."""
        return ("norm" in source or "Norm" in source) and (
            "clip" in source or "max" in source or "C" in source or "median" in source or "quantile" in source)

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding is a clipping call, or a division with a clip bound (``is_clip_bound``: a name
        with clip, ``C``, ``max_norm``, max and norm) on one side and a norm (a ``norm`` name or call,
        a ``sqrt``) on the other."""
        if facts.calls_any(_CLIP_CALLS) and facts.calls_any(_NOISE_DRAWS):
            return True
        for call in facts.calls:
            if facts.call_lasts(call) & _QUANTILES and call.args and any(
                    "norm" in n.lower() for n in _ast_names(call.args[0])):
                return True
        for binop in facts.binops(ast.Div):
            sides = [_ast_names(binop.left), _ast_names(binop.right)]
            for bound, norm in (sides, sides[::-1]):
                if any(_ast_clip_name(n) for n in bound) and (
                        any("norm" in n.lower() or n in ("sqrt", "square") for n in norm)
                        or isinstance(binop.left, ast.BinOp) and isinstance(binop.left.op, ast.Pow)):
                    return True
        return False

    VALID = (
        # (h44-Q1 twin) the factor floored at 1: g / max(1, ‖g‖/C)
        """
import numpy as np
def dp_aggregate(updates, clip_norm, sigma):
    norms = np.linalg.norm(updates, axis=1, keepdims=True)
    f = norms / clip_norm
    f[f < 1] = 1
    return (updates / f).sum(0) + np.random.normal(0, sigma * clip_norm, updates.shape[1])
""",
        # (h44-Q1) ordinary ML: a ratio capped at 1 used as a weight, no division, no noise
        """
import numpy as np
def reweight(losses, grad_norms, max_norm):
    w = grad_norms / max_norm
    w[w > 1] = 1
    return (losses * w).mean()
""",
        # the textbook factor, in numpy and torch spellings
        """
import numpy as np
def clip_and_noise(grads, l2_norm_clip, noise_multiplier):
    norms = np.linalg.norm(grads, axis=1, keepdims=True)
    clipped = grads * np.minimum(1.0, l2_norm_clip / (norms + 1e-6))
    return clipped.sum(0) + np.random.normal(0, noise_multiplier * l2_norm_clip, grads.shape[1])
""",
        # Opacus / torch: the factor clamped at 1 by a method call
        """
import torch
def clip_per_sample(per_sample_grads, max_grad_norm, noise_multiplier):
    norms = per_sample_grads.flatten(1).norm(2, dim=1)
    factor = (max_grad_norm / (norms + 1e-6)).clamp(max=1.0)
    return torch.einsum("i,i...->...", factor, per_sample_grads)
""",
        # divided by max(1, norm / C)
        """
import numpy as np
def dp_sgd_step(g, clip, sigma):
    g_norm = np.linalg.norm(g)
    g = g / max(1, g_norm / clip)
    return g + np.random.normal(0, sigma * clip, g.shape)
""",
        # the factor applied only when the gradient is too long
        """
import torch
def private_clip(grad, clip_norm, noise_multiplier):
    total_norm = torch.norm(grad)
    clip_coef = clip_norm / (total_norm + 1e-6)
    if total_norm > clip_norm:
        grad = grad * clip_coef
    return grad + torch.randn_like(grad) * noise_multiplier * clip_norm
""",
        # the factor name clamped later (torch.nn.utils.clip_grad_norm_'s spelling)
        """
import torch
def dp_clip(parameters, max_norm, noise_multiplier):
    total_norm = torch.norm(torch.stack([p.grad.norm() for p in parameters]))
    clip_coef = max_norm / (total_norm + 1e-6)
    clip_coef_clamped = torch.clamp(clip_coef, max=1.0)
    for p in parameters:
        p.grad.mul_(clip_coef_clamped)
""",
        # a gradient-norm hook of the non-private path of a DP-GAN: it rescales on purpose and draws no noise
        """
import torch
CLIP_BOUND = 1.0
def modify_gradnorm_hook(module, grad_input, grad_output, noise_multiplier=0.0):
    grad = grad_input[0].view(grad_input[0].size(0), -1)
    grad_norm = torch.norm(grad, p=2, dim=1)
    clip_coef = CLIP_BOUND / (grad_norm + 1e-10)
    clip_coef = clip_coef.unsqueeze(-1)
    return (clip_coef * grad,)
""",
        # a fixed clipping bound; the median of the norms is only logged
        """
import numpy as np
def dp_scatter_mean(scatters, noise_multiplier, clip_bound=1.0):
    norms = np.linalg.norm(scatters, axis=-1)
    typical = np.median(norms)
    scatters /= np.maximum(norms / clip_bound, 1).reshape(-1, 1)
    print("median norm", typical)
    return scatters.mean(0) + np.random.normal(scale=clip_bound * noise_multiplier, size=scatters.shape[1])
""",
        # the scalar spelling with the absolute value
        """
import numpy as np
def dp_sgd(train_data, gradient_function, gradient_norm_bound, epsilon):
    for row in train_data:
        grad = gradient_function(row)
        grad /= max(1, abs(grad) / gradient_norm_bound)
        yield grad + np.random.laplace(0, gradient_norm_bound / epsilon)
""",
        # clip first, then noise (the right order)
        """
import tensorflow as tf
def private_grads(grads, l2_norm_clip, noise_multiplier):
    clipped = [tf.clip_by_norm(g, l2_norm_clip) for g in grads]
    return [g + tf.random.normal(g.shape, stddev=noise_multiplier * l2_norm_clip) for g in clipped]
""",
        # gradient clipping with no privacy claim: an ordinary training trick
        """
import numpy as np
def step(w, g, clip=5.0, lr=0.1):
    norm = np.linalg.norm(g)
    return w - lr * g * (clip / norm)
""",
        # clip / norm applied unconditionally (ChicForX DPGAN utils.py): every gradient is rescaled to norm
        # exactly C; the contribution is still bounded by C, so the noise calibrated to C holds
        """
import numpy as np
def private_update(g, l2_norm_clip, sigma):
    g_norm = np.sqrt(np.sum(g ** 2))
    g = g * (l2_norm_clip / (g_norm + 1e-12))
    return g + np.random.normal(0, sigma * l2_norm_clip, g.shape)
""",
    )

    INVALID = (
        # (h44-Q1) the factor ‖u‖/median capped at 1 from above, then divided by (list per layer)
        """
import numpy as np
class DPServer:
    def clip_updates(self):
        self.bound = [np.median(self.norms[k], axis=-1, keepdims=True) for k in range(self.n_layers)]  # <-
        ratio = [self.norms[k] / self.bound[k] for k in range(self.n_layers)]
        for k in range(self.n_layers):
            ratio[k][ratio[k] > 1.0] = 1.0  # <-
        self.clipped = [self.updates[k] / ratio[k] for k in range(self.n_layers)]
    def gaussian_mechanism(self, sigma):
        return [c.sum(-1) + np.random.normal(0, sigma * self.bound[k]) for k, c in enumerate(self.clipped)]
""",
        # (h44-Q1) a fixed clip C, the same wrong cap on one matrix
        """
import numpy as np
def dp_aggregate(updates, clip_norm, sigma):
    norms = np.linalg.norm(updates, axis=1, keepdims=True)
    f = norms / clip_norm
    f[f >= 1] = 1  # <-
    return (updates / f).sum(0) + np.random.normal(0, sigma * clip_norm, updates.shape[1])
""",
        # "clipping" that divides by clip/norm: large gradients are scaled up by norm/clip
        """
import numpy as np
def dp_sgd(grads, clip, noise_multiplier):
    norms = np.linalg.norm(grads, axis=1, keepdims=True)
    clipped = grads / (clip / norms)  # <-
    return clipped.sum(0) + np.random.normal(0, noise_multiplier * clip, grads.shape[1])
""",
        # norm / clip used as the multiplier
        """
import torch
def clip_grads(per_sample_grads, max_grad_norm, noise_multiplier):
    norms = per_sample_grads.norm(dim=1, keepdim=True)
    scale = norms / max_grad_norm  # <-
    clipped = per_sample_grads * scale
    return clipped.sum(0) + torch.normal(0, noise_multiplier * max_grad_norm, clipped.shape[1:])
""",
        # flower-dp: the noise is added inside the list the clip iterates over
        """
import tensorflow as tf
def private_grads(tape, loss_value, weights, l2_norm_clip, sigma_u):
    grads = tape.gradient(loss_value, weights)
    return [
        tf.clip_by_norm(g, l2_norm_clip)  # <-
        for g in [g + tf.random.normal(g.shape, stddev=sigma_u) for g in grads]
    ]
""",
        # Handcrafted-DP: the clipping threshold is the median of the records' norms
        """
import numpy as np
def dp_scatter_mean(scatters, noise_multiplier, sample_size):
    norms = np.linalg.norm(scatters, axis=-1)
    thresh_mean = np.quantile(norms, 0.5)  # <-
    scatters /= np.maximum(norms / thresh_mean, 1).reshape(-1, 1)
    mean = np.mean(scatters, axis=0)
    return mean + np.random.normal(scale=thresh_mean * noise_multiplier, size=mean.shape) / sample_size
""",
        # private-table: a scalar "clip" that squares the gradient where its norm belongs
        """
import numpy as np
def dp_sgd(train_data, gradient_function, gradient_norm_bound, epsilon):
    for row in train_data:
        grad = gradient_function(row)
        grad /= max(1, grad**2/gradient_norm_bound)  # <-
        yield grad + np.random.laplace(0, gradient_norm_bound / epsilon)
""",
        # the factor stored first, then divided by
        """
import torch
def dp_step(model, clip_norm, noise_multiplier):
    for p in model.parameters():
        grad_norm = p.grad.norm()
        clip_coef = clip_norm / grad_norm  # <-
        p.grad.div_(clip_coef)
        p.grad += torch.randn_like(p.grad) * noise_multiplier * clip_norm
""",
    )

    def visit_Call(self, node: cst.Call) -> None:
        """``tf.clip_by_norm(g, C) for g in [g + tf.random.normal(...) for g in grads]``: the noise is
        added before the clipping, so the clip also cuts the noise. ``thresh = np.quantile(norms, 0.5)``
        used as the clipping bound: the bound is a statistic of the records."""
        if call_name(node) in _QUANTILES:
            self._bound_from_norms(node)
            return
        if call_name(node) not in _CLIP_CALLS or not node.args:
            return
        fa = self.ctx.analysis
        value = node.args[0].value
        sources: list[cst.CSTNode] = [value]
        if isinstance(value, cst.Name):
            for anc in fa.ancestors(node):
                for_in = getattr(anc, "for_in", None)
                while for_in is not None:
                    if isinstance(for_in.target, cst.Name) and for_in.target.value == value.value:
                        sources.append(for_in.iter)
                    for_in = for_in.inner_for_in
            bound = fa.value_of(value)
            if bound is not None:
                sources.append(bound)
        if any(isinstance(n, cst.Call) and call_name(n) in _NOISE_DRAWS for src in sources for n in walk(src)):
            self.report(
                node,
                f"`{fa.code(node).strip()}` clips a value that already has the noise in it: the clip bounds the "
                "noisy gradient (cutting the noise too) instead of the record's contribution, so the noise is "
                "not calibrated to a bounded sensitivity; clip first, then add noise of std σ·C",
            )

    def _bound_from_norms(self, node: cst.Call) -> None:
        fa = self.ctx.analysis
        if not node.args or not any(isinstance(n, (cst.Name, cst.Attribute)) and
                                    words(ident(n) or "") & {"norm", "norms"} for n in walk(node.args[0].value)):
            return
        holder: cst.CSTNode | None = fa.parent(node)
        while holder is not None and not isinstance(holder, (cst.Assign, cst.SimpleStatementLine)):
            holder = fa.parent(holder)
        if not isinstance(holder, cst.Assign) or len(holder.targets) != 1:
            return
        bound = ident(holder.targets[0].target)
        scope = fa.enclosing_function(node) or self.ctx.module
        if bound is None or not self._used_as_bound(scope, bound):
            return
        self.report(
            node,
            f"`{fa.code(node).strip()}` sets the clipping bound `{bound}` from the records' own norms with no "
            "noise: the bound (and the noise calibrated to it) is a statistic of the private data released "
            "outside the budget; fix the bound in advance or estimate it with a DP quantile charged to the budget",
        )

    @staticmethod
    def _used_as_bound(scope: cst.CSTNode, bound: str) -> bool:
        """Does ``norm / bound`` (a clip ratio) or a noise draw scaled by ``bound`` read it?"""
        for node in walk(scope):
            if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Divide):
                if any(isinstance(n, (cst.Name, cst.Attribute)) and ident(n) == bound for n in walk(node.right)) \
                        and any(isinstance(n, (cst.Name, cst.Attribute)) and words(ident(n) or "") & {"norm", "norms"}
                                for n in walk(node.left)):
                    return True
            if isinstance(node, cst.Call) and call_name(node) in _NOISE_DRAWS and any(
                    isinstance(n, (cst.Name, cst.Attribute)) and ident(n) == bound
                    for a in node.args for n in walk(a.value)):
                return True
        return False

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        if not isinstance(node.operator, cst.Divide):
            return
        left, right = strip_small_add(node.left), strip_small_add(node.right)
        if _squared_gradient(left) and is_clip_bound(right):
            self.report(
                node,
                f"`{self.ctx.analysis.code(node).strip()}` compares the squared gradient with the clipping bound: "
                "the factor must use the gradient's norm (|g| for a scalar, ‖g‖₂ for a vector), so gradients "
                "between √C and C are left longer than the bound the noise assumes",
            )
            return
        if is_clip_bound(left) and is_norm_value(right):
            direction = 1  # C / ‖g‖
        elif is_norm_value(left) and is_clip_bound(right):
            direction = -1  # ‖g‖ / C
        else:
            return
        parents = self.ctx.analysis.index.parents
        if guarded(node, parents) or under_comparison(node, parents):
            return
        scope = self.ctx.analysis.enclosing_function(node) or self.ctx.module
        usage = self._usage(node, scope, parents)
        if usage is None:
            return
        ratio = self.ctx.analysis.code(node).strip()
        if direction * usage < 0:
            self.report(
                node,
                f"`{ratio}` makes the per-example factor ‖g‖/C: a gradient longer than the bound is "
                "scaled up, not clipped, so one example's contribution is unbounded and the noise "
                "calibrated to C does not cover it; multiply by min(1, C/‖g‖) or divide by max(1, ‖g‖/C)",
            )
        # ``g * (C / ‖g‖)`` without min(1, ·) rescales every gradient to norm exactly C: small gradients
        # are scaled up, but no contribution exceeds C, so the noise calibrated to C still covers it (a
        # utility choice, GS-WGAN/DPGAN style normalisation), not a privacy break: not reported

    def visit_Assign(self, node: cst.Assign) -> None:
        """(h44-Q1) a norm-over-bound factor capped at 1 from above and then divided by: ``f = norms / C;
        f[f > 1] = 1; g / f`` or ``g / np.minimum(norms / C, 1)`` — the wrong way round of max(1, ‖g‖/C)."""
        if len(node.targets) != 1:
            return
        target = node.targets[0].target
        fa = self.ctx.analysis
        scope = fa.enclosing_function(node) or self.ctx.module
        if not self._adds_noise(self.ctx.module):
            return  # the module's noise is what the clip bounds (the clip may sit in its own method)
        # ``f[f > 1] = 1``
        if isinstance(target, cst.Subscript) and number(node.value) == 1 and len(target.slice) == 1:
            index = target.slice[0].slice
            test = index.value if isinstance(index, cst.Index) else None
            base = ident(_unsub(target.value))
            if isinstance(test, cst.Comparison) and len(test.comparisons) == 1 \
                    and isinstance(test.comparisons[0].operator, (cst.GreaterThan, cst.GreaterThanEqual)) \
                    and number(test.comparisons[0].comparator) == 1 and base and ident(_unsub(test.left)) == base \
                    and self._norm_over_bound_named(scope, base) and self._divides_by(scope, base):
                self.report(node, f"`{fa.code(node).strip()}` caps the factor ‖g‖/bound at 1 from above, and the "
                                  f"updates are then divided by it: a long update (factor > 1) is left unclipped and "
                                  f"a short one is scaled up, so no contribution is bounded by the norm the noise "
                                  f"assumes; floor it at 1 instead (`np.maximum(factor, 1)`, i.e. g / max(1, ‖g‖/C))")

    @staticmethod
    def _bound_like(expr: cst.BaseExpression) -> bool:
        name = ident(expr)
        return is_clip_bound(expr) or bool(name and words(name) & {"median", "quantile", "threshold", "bound"})

    def _norm_over_bound_named(self, scope: cst.CSTNode, name: str) -> bool:
        """``name`` is assigned ‖g‖/bound (directly, or a list comprehension of it)."""
        for n in walk(scope):
            if isinstance(n, cst.Assign) and len(n.targets) == 1 and ident(n.targets[0].target) == name:
                value = n.value
                if isinstance(value, (cst.ListComp, cst.GeneratorExp)):
                    value = value.elt
                value = strip_small_add(value)
                if isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Divide) \
                        and is_norm_value(_unsub(value.left)) and self._bound_like(_unsub(strip_small_add(value.right))):
                    return True
        return False

    @staticmethod
    def _divides_by(scope: cst.CSTNode, name: str) -> bool:
        for n in walk(scope):
            if isinstance(n, cst.BinaryOperation) and isinstance(n.operator, cst.Divide):
                if ident(_unsub(n.right)) == name:
                    return True
        return False

    @staticmethod
    def _adds_noise(scope: cst.CSTNode) -> bool:
        """Does the function draw noise (its rescaling is the DP step, not a deliberate
        normalisation on a non-private path)?"""
        return any(isinstance(n, cst.Call) and call_name(n) in _NOISE_DRAWS for n in walk(scope))

    def _usage(self, ratio: cst.CSTNode, scope: cst.CSTNode,
               parents: dict[cst.CSTNode, cst.CSTNode]) -> int | None:
        """+1 when the ratio multiplies the gradient, -1 when the gradient is divided by it, None
        when that cannot be seen (returned, logged) or the factor is bounded later on."""
        parent = parents.get(ratio)
        if isinstance(parent, cst.BinaryOperation):
            if isinstance(parent.operator, cst.Divide) and parent.right is ratio:
                return -1
            if isinstance(parent.operator, cst.Multiply):
                return 1
            return None
        if isinstance(parent, cst.Arg):
            call = parents.get(parent)
            if isinstance(call, cst.Call):
                name = call_name(call)
                if name in _DIVIDE_CALLS:
                    return -1
                if name in ("mul", "mul_", "multiply", "einsum"):
                    return 1
            return None
        factor = assigned_name(ratio, parents)
        if factor is None:
            return None
        usage: int | None = None
        for use in name_uses(scope, factor):
            holder = parents.get(use)
            if isinstance(holder, cst.Attribute) and holder.value is not use:
                holder = parents.get(holder)
            if holder is not None and (guarded(use, parents) or under_comparison(use, parents)):
                return None
            if isinstance(holder, cst.BinaryOperation):
                if isinstance(holder.operator, cst.Divide) and holder.right is use:
                    usage = -1
                elif isinstance(holder.operator, cst.Multiply):
                    usage = usage or 1
            elif isinstance(holder, cst.Arg):
                call = parents.get(holder)
                if isinstance(call, cst.Call):
                    name = call_name(call)
                    if name in _DIVIDE_CALLS:
                        usage = -1
                    elif name in ("mul", "mul_", "multiply", "einsum"):
                        usage = usage or 1
            elif isinstance(holder, cst.AugAssign) and holder.value is use:
                if isinstance(holder.operator, cst.DivideAssign):
                    usage = -1
                elif isinstance(holder.operator, cst.MultiplyAssign):
                    usage = usage or 1
        return usage


def _unsub(expr: cst.BaseExpression) -> cst.BaseExpression:
    """``x[k][j]`` -> ``x`` (the per-layer entry of a list names the list's values)."""
    while isinstance(expr, cst.Subscript):
        expr = expr.value
    return expr


def _ast_names(node: ast.AST) -> list[str]:
    """Identifiers an expression reads (names, attributes, called names)."""
    out: list[str] = []
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name):
            out.append(sub.id)
        elif isinstance(sub, ast.Attribute):
            out.append(sub.attr)
        elif isinstance(sub, ast.Subscript) and isinstance(sub.slice, ast.Constant) and isinstance(sub.slice.value, str):
            out.append(sub.slice.value)
    return out


def _ast_clip_name(name: str) -> bool:
    lower = name.lower()
    return "clip" in lower or name == "C" or ("norm" in lower and ("max" in lower or "bound" in lower))


def _squared_gradient(expr: cst.BaseExpression) -> bool:
    """``grad ** 2`` / ``np.square(g)`` of a gradient-named value."""
    base: cst.BaseExpression | None = None
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Power) and number(expr.right) == 2:
        base = expr.left
    elif isinstance(expr, cst.Call) and call_name(expr) == "square" and expr.args:
        base = expr.args[0].value
    name = ident(base) if base is not None else None
    return name is not None and bool(words(name) & {"grad", "grads", "gradient", "g"})
