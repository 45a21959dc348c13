"""DP520: the clipping bound is set from the private gradients' own norms (no noise on the way)."""
from __future__ import annotations

import re

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.clipping import NORM_CALLS, is_clip_bound, is_norm_value
from dpcheck.analysis.noisedraws import PURE_DRAWS
from dpcheck.analysis.syntax import call_name, walk, words
from dpcheck.rule import Rule

#: words of a name derived from a clip bound that is not the bound (a factor, a mask, a count)
_NOT_BOUND = frozenset({"coef", "coeff", "coefs", "coefficient", "factor", "factors", "ratio", "scale", "mask",
                        "frac", "fraction", "count", "counts", "num", "clipped", "rate", "lr", "mult", "multiplier",
                        "flag", "fn", "func", "type", "mode", "idx", "index", "indices", "percent", "percentage",
                        "quantile", "target", "history", "hist", "log", "norms"})
_GRAD_WORDS = frozenset({"grad", "grads", "gradient", "gradients", "jacobian", "jac"})
#: words of a call that takes an order statistic of its argument (``np.percentile``, ``get_percentile``)
_QUANTILE_WORDS = frozenset({"percentile", "quantile", "median", "nanpercentile", "nanquantile", "nanmedian"})
#: clipping calls whose second positional argument (or ``max_norm``/``clip_norm`` keyword) is the bound
_CLIP_BOUND_KW = frozenset({"max_norm", "clip_norm", "clip_value", "max_grad_norm", "l2_norm_clip", "norm_bound"})


def _clip_helper(name: str) -> bool:
    """A function named for the clip bounds it computes: ``estimate_clipping_thresholds``, ``get_clip_norm``."""
    pieces = words(name)
    return bool(pieces & {"clip", "clipping"}) and bool(pieces & {"threshold", "thresholds", "bound", "bounds",
                                                                  "norm", "norms", "value", "values", "level"}) \
        and not pieces & {"apply", "grad", "grads", "gradient", "gradients", "by", "clip_by"}


def _reads_gradient(code: str) -> bool:
    pieces = words(code.replace(".", "_").replace("(", "_").replace(")", "_").replace("[", "_").replace("]", "_"))
    return bool(pieces & _GRAD_WORDS) or "grad_sample" in code


class ClipBoundFromGradients(Rule):
    id = "DP520"
    name = "clip-bound-from-gradients"
    category = "general"
    severity = "error"
    summary = "the clipping bound C is set from the private gradients' own norms (median, max, a multiple of ‖g‖) without noise"
    rationale = (
        "DP-SGD's noise σ·C hides one record only if C is fixed before the data are looked at (or "
        "set by a differentially private estimate). A bound computed from the current gradients — "
        "`C = median(per-example norms)`, `self.l2_norm_clip = total_norm * w`, "
        "`max_grad_norm = max(norms)`, a helper `estimate_clipping_thresholds(...)` that returns a percentile of "
        "the per-example norms and whose result scales the noise std — is a function of the records: one record changes C, so it "
        "changes both the clip and the noise scale, and the bound it is meant to enforce is whatever "
        "that record's gradient was. The accountant's sensitivity C no longer holds (a record whose "
        "norm sets C to 40 contributes 40 while the noise may be drawn for 20). Not reported: a "
        "bound updated from a noised count or quantile (adaptive clipping with its own Gaussian "
        "noise), a bound computed from public data, clip *factors* `min(1, C/‖g‖)`, a data-dependent "
        "bound that never reaches a noise draw (per-layer shares of C by one example's own norms, "
        "used only to clip it), code with no "
        "noise draw in the module or no DP context. Fix: fix C in advance, take it from public data, "
        "or estimate the quantile privately (Andrew et al.) and account for that release."
    )
    TRIGGERS = ("norm", "clip")
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding is an assignment in a module that draws noise and takes a norm."""
        return bool(facts.called & PURE_DRAWS) and bool(facts.called & (NORM_CALLS | {"sqrt"}))

    VALID = (
        # a fixed bound, the clip factor computed from the norm
        """
import torch
def clip_and_noise(grads, max_grad_norm, sigma):
    total_norm = torch.norm(torch.stack([g.norm() for g in grads]))
    clip_coef = min(max_grad_norm / (total_norm + 1e-6), 1.0)
    return [g * clip_coef + sigma * max_grad_norm * torch.randn_like(g) for g in grads]
""",
        # adaptive clipping: the bound follows a noised fraction of unclipped examples
        """
import torch
def update_clip(per_sample_grads, clip, target, lr, sigma_b):
    norms = per_sample_grads.flatten(1).norm(dim=1)
    noisy_frac = ((norms <= clip).sum() + torch.normal(0.0, sigma_b, ())) / len(norms)
    clip = clip * torch.exp(-lr * (noisy_frac - target))
    return clip
""",
        # a bound taken from public gradients
        """
import numpy as np
def pick_clip(public_grads, grads, sigma):
    clip = np.median([np.linalg.norm(g) for g in public_grads])
    clipped = [g * min(1, clip / np.linalg.norm(g)) for g in grads]
    return sum(clipped) + np.random.normal(0, sigma * clip, clipped[0].shape)
""",
        # per-layer shares of C by the example's own layer norms, used only to clip (the total stays ≤ C)
        """
import torch
def clip_example(model, l2_norm_clip, noise_multiplier):
    layer_norms = [p.grad.norm(2) for p in model.parameters()]
    total = sum(n ** 2 for n in layer_norms)
    for p, norm in zip(model.parameters(), layer_norms):
        layer_clip = (norm ** 2 / total) ** 0.5 * l2_norm_clip
        p.accum += p.grad * min(1.0, layer_clip / (norm + 1e-6))
def noise(model, l2_norm_clip, noise_multiplier):
    for p in model.parameters():
        p.grad = p.accum + l2_norm_clip * noise_multiplier * torch.randn_like(p.accum)
""",
        # role twin of the stored-bound INVALID: the bound passed to clip_grad_norm_ stays the configured one;
        # the per-task norms are only logged
        """
import numpy as np
import torch
class DPMeta:
    def __init__(self, args):
        self.T = args.clip_init
        self.norm_history = []
    def total_norm(self):
        return torch.norm(torch.stack([p.grad.norm() for p in self.net.parameters() if p.grad is not None]))
    def step(self, losses):
        for loss in losses:
            loss.backward()
            self.norm_history.append(self.total_norm())
            for p in self.net.parameters():
                torch.nn.utils.clip_grad_norm_(p, self.T)
        std = self.T * self.noise_multiplier
        for p in self.net.parameters():
            p.grad += torch.FloatTensor(p.shape).normal_(0, std)
        print("median norm", np.median(self.norm_history))
""",
        # a bound from a percentile of public warm-up norms read from a file of the public run
        """
import json
import numpy as np
import torch
class DPTrainer:
    def __init__(self, cfg):
        self.T = cfg.clip
    def step(self, params):
        for p in params:
            torch.nn.utils.clip_grad_norm_(p, self.T)
            p.grad += torch.randn_like(p.grad) * self.T * self.noise_multiplier
def lr_from_history(path):
    return np.percentile(json.load(open(path))["losses"], 50)
""",
        # ordinary ML: a median of losses sets a Huber delta; no clip bound
        """
import torch
def huber_step(model, losses, x):
    delta = torch.median(losses.detach())
    grad_norm = torch.norm(torch.stack([p.grad.norm() for p in model.parameters()]))
    return torch.nn.functional.huber_loss(x, x + torch.randn_like(x), delta=delta.item()), grad_norm
""",
        # twin of the threshold helper: the helper returns the configured per-layer bounds
        """
import torch
import numpy as np
def estimate_clip_thresholds(model, per_layer_grads, base_clip):
    limits = {}
    for layer, g in per_layer_grads.items():
        flat = g.reshape(g.shape[0], -1)
        sizes = torch.linalg.norm(flat, dim=1)
        below = float((sizes <= base_clip).float().mean()) + np.random.normal(0, 0.05)
        limits[layer] = base_clip * np.exp(-0.2 * (below - 0.5))
    return limits
def noisy_sum(per_layer_grads, model, base_clip, noise_multiplier):
    limits = estimate_clip_thresholds(model, per_layer_grads, base_clip)
    out = {}
    for layer, g in per_layer_grads.items():
        std = limits[layer] * noise_multiplier
        out[layer] = g.sum(0) + torch.normal(0.0, std, g.shape[1:])
    return out
""",
        # ordinary ML: a helper picks a gradient-clip value for plain training from the norms; no noise anywhere
        # near it (the module's only draw is a data augmentation)
        """
import numpy as np
import torch
def pick_clip_value(grads):
    norms = [torch.linalg.norm(g.flatten()).item() for g in grads]
    value = float(np.percentile(norms, 90))
    return value
def augment(x):
    return x + torch.normal(0.0, 0.1, x.shape)
""",
        # the norm only logged; the bound stays the configured one
        """
import torch
def step(model, max_grad_norm, sigma, log):
    grad_norm = torch.norm(torch.stack([p.grad.norm() for p in model.parameters()]))
    log["grad_norm"] = grad_norm
    for p in model.parameters():
        p.grad += torch.normal(0, sigma * max_grad_norm, p.grad.shape)
""",
    )

    INVALID = (
        # a bound named by its role only (passed to clip_grad_norm_), reset to a percentile of the
        # per-task norms the module collects, and scaling the noise through a local
        """
import numpy as np
import torch
class DPMeta:
    def __init__(self, args):
        self.T = args.clip_init
        self.norm_history = []
    def total_norm(self):
        return torch.norm(torch.stack([p.grad.norm() for p in self.net.parameters() if p.grad is not None]))
    def step(self, losses):
        for loss in losses:
            loss.backward()
            self.norm_history.append(self.total_norm())
            for p in self.net.parameters():
                torch.nn.utils.clip_grad_norm_(p, self.T)
        std = self.T * self.noise_multiplier
        for p in self.net.parameters():
            p.grad += torch.FloatTensor(p.shape).normal_(0, std)
        candidate = np.percentile(self.norm_history, 60)
        if candidate < self.T:
            self.T = candidate  # <-
""",
        # norms logged by an earlier private run, read back and their median made the bound
        """
import json
import numpy as np
import torch
def load_quantile(path, q):
    return np.percentile(json.load(open(path))["norms"], q)
class DPTrainer:
    def __init__(self, cfg):
        self.T = cfg.clip
        self.T = load_quantile("runs/grad_norms.json", 50)  # <-
    def step(self, params):
        for p in params:
            torch.nn.utils.clip_grad_norm_(p, self.T)
            p.grad += torch.randn_like(p.grad) * self.T * self.noise_multiplier
    def log(self, params):
        return [p.grad.norm() for p in params]
""",
        # per-layer bounds proportional to each layer's share of the gradient norm
        """
import torch
def layer_bounds(model, l2_norm_clip, noise_multiplier):
    layer_norms = [p.grad.norm(2) for p in model.parameters()]
    total = sum(n ** 2 for n in layer_norms)
    bounds = []
    for norm in layer_norms:
        layer_clip = (norm ** 2 / total) ** 0.5 * l2_norm_clip  # <-
        bounds.append(layer_clip)
    for p, b in zip(model.parameters(), bounds):
        p.grad += b * noise_multiplier * torch.randn_like(p.grad)
""",
        # the median of the per-example norms becomes C
        """
import torch
def dp_step(per_sample_grads, sigma):
    norms = per_sample_grads.flatten(1).norm(dim=1)
    C = torch.median(norms)  # <-
    clipped = per_sample_grads * torch.clamp(C / norms, max=1.0).view(-1, 1)
    return clipped.sum(0) + torch.normal(0.0, sigma * C, clipped.shape[1:])
""",
        # a multiple of the running gradient norm, stored on the optimizer
        """
import torch
class Opt:
    def accumulate(self, params, w):
        total = 0.0
        for p in params:
            total += p.grad.data.norm(2).item() ** 2
        total = total ** 0.5
        self.l2_norm_clip = total * w  # <-
    def noise(self, params):
        for p in params:
            p.grad.add_(self.l2_norm_clip * self.sigma * torch.randn_like(p.grad))
""",
        # numpy: the largest gradient norm of the batch
        """
import numpy as np
def private_mean_gradient(gradients, sigma):
    norms = [np.linalg.norm(g) for g in gradients]
    clip_bound = max(norms)  # <-
    total = sum(g / max(1.0, np.linalg.norm(g) / clip_bound) for g in gradients)
    return (total + np.random.normal(0, sigma * clip_bound, total.shape)) / len(gradients)
""",
        # TensorFlow: a percentile of the per-example norms
        """
import tensorflow as tf
import tensorflow_probability as tfp
def sanitize(per_example_grads, noise_multiplier):
    norms = tf.norm(per_example_grads, axis=1)
    l2_clip = tfp.stats.percentile(norms, 75.0)  # <-
    clipped = tf.clip_by_norm(per_example_grads, l2_clip, axes=[1])
    return tf.reduce_sum(clipped, 0) + tf.random.normal(tf.shape(clipped)[1:], stddev=noise_multiplier * l2_clip)
""",
    )

    INVALID = INVALID + (
        # a helper estimates per-layer bounds as a percentile of the per-example norms; the noise std uses them
        """
import numpy as np
import torch
def estimate_clip_thresholds(per_layer_grads, pct):
    limits = {}
    for layer, g in per_layer_grads.items():
        flat = g.reshape(g.shape[0], -1)
        sizes = torch.linalg.norm(flat, dim=1)
        cut = float(np.percentile(sizes.detach().numpy(), pct))  # <-
        limits[layer] = max(cut, 1e-6)
    return limits
def noisy_sum(per_layer_grads, pct, noise_multiplier):
    limits = estimate_clip_thresholds(per_layer_grads, pct)
    out = {}
    for layer, g in per_layer_grads.items():
        std = limits[layer] * noise_multiplier
        out[layer] = g.sum(0) + torch.normal(0.0, std, g.shape[1:])
    return out
""",
        # JAX: a helper returns the largest per-example gradient norm, which scales the Gaussian noise
        """
import jax
import jax.numpy as jnp
def get_clip_bound(per_example_grads):
    flat = jnp.concatenate([jnp.reshape(leaf, (leaf.shape[0], -1))
                            for leaf in jax.tree_util.tree_leaves(per_example_grads)], axis=1)
    biggest = jnp.max(jnp.linalg.norm(flat, axis=1))  # <-
    return biggest
def privatise(key, per_example_grads, total, noise_multiplier):
    c = get_clip_bound(per_example_grads)
    return total + c * noise_multiplier * jax.random.normal(key, total.shape)
""",
    )

    def visit_Assign(self, node: cst.Assign) -> None:
        bound = next((t.target for t in node.targets if self._bound_target(t.target)), None)
        if bound is None:
            self._helper_bound(node)
            return
        text = self.ctx.analysis.code(node.value)
        if "public" in text.lower() or any(isinstance(n, cst.Call) and call_name(n) in PURE_DRAWS
                                           for n in walk(node.value)):
            return
        norm = self._gradient_norm(node.value, node, set(), 0)
        if norm and self._scales_noise(bound, node):
            self.report(node, f"the clipping bound `{self.ctx.analysis.code(bound).strip()}` is computed from the "
                              f"gradients' own norms (`{norm}`): it depends on the records, so one record changes "
                              "both the clip and the noise σ·C and no fixed per-record sensitivity holds; fix C in "
                              "advance, take it from public data, or estimate it privately and account for it")

    def _helper_bound(self, node: cst.Assign) -> None:
        """A local of a helper that computes the clip bounds (``def estimate_clipping_thresholds(...)``,
        ``def get_clip_norm(...)``) which the helper returns (itself, or stored in the dict or list it
        returns), set from the gradients' norms, while the helper's result scales a noise draw in the module."""
        fa = self.ctx.analysis
        if len(node.targets) != 1 or not isinstance(node.targets[0].target, cst.Name):
            return
        fn = fa.enclosing_function(node)
        if fn is None or not _clip_helper(fn.name.value):
            return
        local = node.targets[0].target.value
        if words(local) & _NOT_BOUND - {"quantile"} or is_norm_value(node.value) or not self._returned(local, fn):
            return  # the per-example norms themselves are not the bound; a statistic of them is
        text = fa.code(node.value)
        if "public" in text.lower() or any(isinstance(n, cst.Call) and call_name(n) in PURE_DRAWS
                                           for n in walk(node.value)):
            return
        norm = self._gradient_norm(node.value, node, set(), 0)
        if norm and self._helper_scales_noise(fn.name.value):
            norm = " ".join(norm.split())
            self.report(node, f"`{local}`, the clipping bound `{fn.name.value}` returns, is computed from the "
                              f"gradients' own norms (`{norm}`): it depends on the records, so one record changes "
                              "both the clip and the noise σ·C and no fixed per-record sensitivity holds; fix C in "
                              "advance, take it from public data, or estimate it privately and account for it")

    @staticmethod
    def _returned(local: str, fn: cst.FunctionDef) -> bool:
        """``return local``, or ``local`` stored into a container (``out[k] = max(local, eps)``,
        ``out.append(local)``) the function returns."""
        names = {local}
        for _ in range(2):
            for sub in walk(fn.body, into_scopes=False):
                if isinstance(sub, cst.Assign) and any(isinstance(n, cst.Name) and n.value in names
                                                       for n in walk(sub.value)):
                    for t in sub.targets:
                        if isinstance(t.target, cst.Subscript) and isinstance(t.target.value, cst.Name):
                            names.add(t.target.value.value)
                        elif isinstance(t.target, cst.Name):
                            names.add(t.target.value)
                elif isinstance(sub, cst.Call) and call_name(sub) in ("append", "extend") \
                        and isinstance(sub.func, cst.Attribute) and isinstance(sub.func.value, cst.Name) \
                        and any(isinstance(n, cst.Name) and n.value in names for a in sub.args for n in walk(a)):
                    names.add(sub.func.value.value)
        return any(isinstance(sub, cst.Return) and sub.value is not None
                   and any(isinstance(n, cst.Name) and n.value in names for n in walk(sub.value))
                   for sub in walk(fn.body, into_scopes=False))

    def _helper_scales_noise(self, helper: str) -> bool:
        """The module assigns ``helper(...)`` to a name that a noise draw's statement reads, directly or through
        one assignment in the same function (``std = bounds[k] * sigma`` then ``normal(0, std)``)."""
        fa = self.ctx.analysis
        for sub in walk(fa.index.module):
            if not (isinstance(sub, cst.Assign) and isinstance(sub.value, cst.Call) and call_name(sub.value) == helper):
                continue
            names = {n.value for t in sub.targets for n in walk(t.target) if isinstance(n, cst.Name)}
            scope = fa.enclosing_function(sub) or fa.index.module
            for a in walk(scope, into_scopes=False):
                if isinstance(a, cst.Assign) and a is not sub and any(
                        isinstance(n, cst.Name) and n.value in names for n in walk(a.value)):
                    names |= {n.value for t in a.targets for n in walk(t.target) if isinstance(n, cst.Name)}
            for call in walk(scope, into_scopes=False):
                if isinstance(call, cst.Call) and call_name(call) in PURE_DRAWS:
                    statement = fa.enclosing_statement(call)
                    if statement is not None and any(isinstance(n, cst.Name) and n.value in names
                                                     for n in walk(statement)):
                        return True
        return False

    def _bound_target(self, target: cst.BaseExpression) -> bool:
        if not isinstance(target, (cst.Name, cst.Attribute)):
            return False
        if not is_clip_bound(target) and not (isinstance(target, cst.Attribute)
                                              and self.ctx.analysis.code(target).strip() in self._role_bounds()):
            return False
        name = target.value if isinstance(target, cst.Name) else target.attr.value
        return not words(name) & _NOT_BOUND

    def _role_bounds(self) -> frozenset[str]:
        """Attributes the module passes as the bound of a clipping call (``clip_grad_norm_(p, self.S)``,
        ``clip_by_norm(g, self.bound)``): a clip bound by role, whatever its name."""
        cached = getattr(self, "_role_bound_keys", None)
        if cached is None:
            fa = self.ctx.analysis
            keys: set[str] = set()
            for n in walk(fa.index.module):
                if not isinstance(n, cst.Call) or "clip" not in words(call_name(n)) \
                        or "value" in words(call_name(n)):
                    continue
                args = [a for a in n.args if a.keyword is None]
                picked = [a.value for a in n.args if a.keyword is not None and a.keyword.value in _CLIP_BOUND_KW]
                if len(args) >= 2 and not picked:
                    picked = [args[1].value]
                keys |= {fa.code(v).strip() for v in picked if isinstance(v, cst.Attribute)}
            cached = self._role_bound_keys = frozenset(keys)
        return cached

    def _gradient_norm(self, expr: cst.BaseExpression, at: cst.CSTNode, seen: set[str], depth: int) -> str | None:
        """The gradient norm ``expr`` is computed from (a norm call over a gradient, or a name the enclosing
        function assigns such a norm to), through names assigned in the same function, no noise on the way."""
        fa = self.ctx.analysis
        for sub in walk(expr):
            if isinstance(sub, cst.Call) and call_name(sub) in NORM_CALLS \
                    and (_reads_gradient(fa.code(expr)) or self._norm_of_gradient(sub)):
                return fa.code(sub).strip()[:60]
            if isinstance(sub, cst.Call) and words(call_name(sub)) & _QUANTILE_WORDS \
                    and self._module_norms_gradients() and any(self._names_norms(a.value) for a in sub.args):
                return fa.code(sub).strip()[:60]  # ``np.percentile(self.norm_list, q)``, ``get_percentile("norms.json")``
            if isinstance(sub, cst.Attribute) and not is_clip_bound(sub) and is_norm_value(sub) \
                    and self._module_norms_gradients() and self._collects_norms(fa.code(sub).strip()):
                return fa.code(sub).strip()  # ``self.norm_list`` the module appends gradient norms to
            if isinstance(sub, cst.Name) and sub.value not in seen and depth < 4 and not is_clip_bound(sub):
                seen.add(sub.value)
                if is_norm_value(sub) and self._module_norms_gradients():
                    return sub.value  # ``perlayer_norm``, ``total_norm``: a norm in a module that takes gradients' norms
                for value in self._assigned(sub.value, at):
                    if any(isinstance(n, cst.Call) and call_name(n) in PURE_DRAWS for n in walk(value)):
                        return None  # a noised quantity: private estimation
                    found = self._gradient_norm(value, at, seen, depth + 1)
                    if found:
                        return found
        return None

    @staticmethod
    def _names_norms(arg: cst.BaseExpression) -> bool:
        """An argument that holds norms by its name or by the file it names (``norm_list``,
        ``"./logs/clip_norms.json"``): an order statistic of it is a statistic of the norms."""
        for n in walk(arg):
            if isinstance(n, (cst.Name, cst.Attribute)) and not is_clip_bound(n) and is_norm_value(n):
                return True
            if isinstance(n, cst.SimpleString) and re.search(r"norms?(?![a-z])", n.value.lower()):
                return True
        return False

    def _collects_norms(self, key: str) -> bool:
        """The module appends a gradient norm to the attribute ``key`` (``self.norm_list.append(self.grad_norm())``)."""
        fa = self.ctx.analysis
        for n in walk(fa.index.module):
            if isinstance(n, cst.Call) and call_name(n) in ("append", "extend") and isinstance(n.func, cst.Attribute) \
                    and fa.code(n.func.value).strip() == key and n.args:
                arg = n.args[0].value
                text = fa.code(arg)
                if any(isinstance(c, cst.Call) and "norm" in words(call_name(c)) for c in walk(arg)) \
                        and (_reads_gradient(text) or self._module_norms_gradients()):
                    return True
        return False

    def _assigned(self, name: str, at: cst.CSTNode) -> list[cst.BaseExpression]:
        """Values assigned (``=``, ``+=``, loop targets excluded) to ``name`` in the function around ``at``."""
        fa = self.ctx.analysis
        scope = fa.enclosing_function(at) or fa.index.module
        out: list[cst.BaseExpression] = []
        for sub in walk(scope, into_scopes=False):
            if isinstance(sub, cst.Assign) and any(isinstance(t.target, cst.Name) and t.target.value == name
                                                   for t in sub.targets):
                out.append(sub.value)
            elif isinstance(sub, cst.AugAssign) and isinstance(sub.target, cst.Name) and sub.target.value == name:
                out.append(sub.value)
            elif isinstance(sub, (cst.For, cst.CompFor)) and isinstance(sub.target, cst.Name) \
                    and sub.target.value == name:
                out.append(sub.iter)  # ``for norm in per_layer_norms``: each element of the iterable
            elif isinstance(sub, (cst.For, cst.CompFor)) and isinstance(sub.target, cst.Tuple) \
                    and any(isinstance(e.value, cst.Name) and e.value.value == name for e in sub.target.elements):
                out.append(sub.iter)  # ``for layer, g in grads.items()``
        return out

    def _scales_noise(self, bound: cst.BaseExpression, at: cst.Assign) -> bool:
        """The bound reaches a noise draw's statement: an attribute read next to a draw anywhere in the module,
        a local through the lists it is appended to and the loops and assignments that read it. (A bound only
        used to clip one example — per-layer shares of C by the example's own norms — still bounds it by C.)"""
        fa = self.ctx.analysis
        if isinstance(bound, cst.Attribute):
            scope: cst.CSTNode = fa.index.module
            key = fa.code(bound).strip()

            def hit(stmt: cst.CSTNode) -> bool:
                if key in fa.code(stmt):
                    return True
                # ``noise_size = self.S * sigma`` then ``.normal_(0, noise_size)`` in the same function
                func = fa.enclosing_function(stmt)
                if func is None:
                    return False
                locals_ = {t.target.value for a in walk(func, into_scopes=False) if isinstance(a, cst.Assign)
                           and key in fa.code(a.value) for t in a.targets if isinstance(t.target, cst.Name)}
                return any(isinstance(n, cst.Name) and n.value in locals_ for n in walk(stmt))
        else:
            scope = fa.enclosing_function(at) or fa.index.module
            names = {bound.value}  # type: ignore[attr-defined]
            for _ in range(3):
                for sub in walk(scope, into_scopes=False):
                    if isinstance(sub, cst.Call) and call_name(sub) in ("append", "extend", "insert") \
                            and isinstance(sub.func, cst.Attribute) and isinstance(sub.func.value, cst.Name) \
                            and any(isinstance(n, cst.Name) and n.value in names for a in sub.args for n in walk(a)):
                        names.add(sub.func.value.value)
                    elif isinstance(sub, (cst.For, cst.CompFor)) and any(
                            isinstance(n, cst.Name) and n.value in names for n in walk(sub.iter)):
                        names |= {n.value for n in walk(sub.target) if isinstance(n, cst.Name)}
                    elif isinstance(sub, cst.Assign) and sub is not at and any(
                            isinstance(n, cst.Name) and n.value in names for n in walk(sub.value)):
                        names |= {n.value for t in sub.targets for n in walk(t.target) if isinstance(n, cst.Name)}
            hit = lambda stmt: any(isinstance(n, cst.Name) and n.value in names for n in walk(stmt))  # noqa: E731
        for sub in walk(scope, into_scopes=isinstance(bound, cst.Attribute)):
            if isinstance(sub, cst.Call) and call_name(sub) in PURE_DRAWS:
                statement = fa.enclosing_statement(sub)
                if statement is not None and statement is not at and hit(statement):
                    return True
        return False

    def _norm_of_gradient(self, call: cst.Call) -> bool:
        """A norm call over a gradient: by its text (``p.grad.norm()``), or over a local the function assigns
        from one (``flat = grad.reshape(B, -1)`` then ``torch.linalg.norm(flat, dim=1)``)."""
        fa = self.ctx.analysis
        if _reads_gradient(fa.code(call)):
            return True
        operands = [a.value for a in call.args if a.keyword is None][:1]
        if isinstance(call.func, cst.Attribute):
            operands.append(call.func.value)
        for op in operands:
            if not isinstance(op, cst.Name):
                continue
            for value in self._assigned(op.value, call):  # two steps: ``flat = g.reshape(..)``, ``for _, g in grads``
                if _reads_gradient(fa.code(value)) or any(
                        isinstance(n, cst.Name) and any(_reads_gradient(fa.code(v)) for v in self._assigned(n.value, call))
                        for n in walk(value) if n is not value):
                    return True
        return False

    def _module_norms_gradients(self) -> bool:
        """The module takes the norm of a gradient somewhere (``p.grad.norm(2)``, ``torch.norm(grads)``)."""
        cached = getattr(self, "_norms_gradients", None)
        if cached is None:
            fa = self.ctx.analysis
            cached = any(isinstance(n, cst.Call) and call_name(n) in NORM_CALLS and self._norm_of_gradient(n)
                         for n in walk(fa.index.module))
            self._norms_gradients = cached
        return cached
