"""DP836: the clipped value is computed into a copy that nothing applies; the noise goes onto the unclipped
parameters or gradients."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, dotted, refs, target_names, walk, words
from dpcheck.rule import Rule

_DRAWS = frozenset({"normal", "normal_", "randn", "randn_like", "gauss", "standard_normal", "laplace", "Normal",
                    "Laplace", "gaussian", "normal_like", "random_normal"})
#: calls that read only the shape/dtype/device of their argument
_SHAPE_CALLS = frozenset({"randn_like", "rand_like", "normal_like", "zeros_like", "ones_like", "empty_like",
                          "full_like", "size", "dim", "numel"})
_SHAPE_ATTRS = frozenset({"shape", "size", "dtype", "device", "ndim"})
#: words of a clip bound / clip factor
_CLIP = frozenset({"clip", "clipping", "clipped", "bound", "threshold", "thr", "maxnorm", "max"})
_FACTOR = frozenset({"rate", "factor", "coef", "coeff", "ratio", "scale"})
#: where the clipped value should go: parameters, gradients, updates
_TARGET = frozenset({"data", "g", "grad", "grads", "gradient", "gradients", "param", "params", "parameter", "weight",
                     "weights", "update", "updates", "delta", "diff"})


def _clip_expr(expr: cst.BaseExpression) -> bool:
    """``p.data / clip_rate``, ``C * p.grad / (norm + ...)``, ``g * min(1, C / norm)``, ``g / max(1, norm / C)``."""
    if not isinstance(expr, cst.BinaryOperation) or not isinstance(expr.operator, (cst.Divide, cst.Multiply)):
        return False
    names = refs(expr)
    if not any(words(n) & _TARGET for n in names):
        return False
    has_norm = any("norm" in n.lower() for n in names)
    has_clip = any(words(n) & _CLIP for n in names)
    has_factor = any(words(n) & _FACTOR and words(n) & (_CLIP | {"clip"}) for n in names)
    minmax = any(isinstance(c, cst.Call) and call_name(c) in {"min", "max", "minimum", "maximum"}
                 for c in walk(expr))
    return has_factor or (has_clip and (has_norm or minmax))


class ClippedCopyDiscarded(Rule):
    id = "DP836"
    name = "clipped-copy-discarded"
    category = "general"
    severity = "error"
    summary = "the clipped parameters/gradients are computed into a copy that is only used for its shape or never read"
    rationale = (
        "DP-SGD and DP federated updates must apply the clipped value: the noise is calibrated to the clip "
        "bound only if what is noised and released is the clipped tensor. Code that computes "
        "`param_data = param.data / clip_rate` and then adds `torch.randn_like(param_data) * std` to "
        "`param.data` (or steps the optimizer on the raw gradient) uses the clipped copy only for its shape: "
        "the released weights or gradients are unclipped, their sensitivity is unbounded and the noise "
        "protects nothing. Reported: a name bound to a clipping expression (a parameter, gradient or update "
        "divided by a clip factor, scaled by `min(1, C / norm)`, or multiplied by the bound over the norm) in "
        "a function that draws noise, when every later read of that name only takes its shape "
        "(`randn_like`, `zeros_like`, `.shape`, `.size()`) or there is no read at all. Fix: write the "
        "clipped value back (`param.data.copy_(clipped)`, `p.grad = clipped`) before adding noise and "
        "stepping, and clip the gradient (per example), not the weights."
    )
    TRIGGERS = ("clip", "bound")
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding needs a noise draw and a division or multiplication whose operands name a clip bound."""
        if not facts.calls_any(_DRAWS):
            return False
        return any(words(n) & _CLIP for n in facts.identifiers)

    @classmethod
    def admits(cls, facts: AstFacts) -> bool:
        return facts.may_have_dp_context and cls.may_report(facts)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        body = list(walk(node.body, into_scopes=False))
        if not any(isinstance(s, cst.Call) and call_name(s) in _DRAWS for s in body):
            return
        clipped: dict[str, cst.Assign] = {}
        bound: dict[str, int] = {}
        for sub in body:
            if isinstance(sub, cst.Assign):
                for t in sub.targets:
                    for n in target_names(t.target):
                        bound[n] = bound.get(n, 0) + 1
                        if isinstance(t.target, cst.Name) and _clip_expr(sub.value):
                            clipped[n] = sub
            elif isinstance(sub, (cst.AugAssign, cst.AnnAssign)):
                for n in target_names(sub.target):
                    bound[n] = bound.get(n, 0) + 2
        if not clipped:
            return
        # every read of each clipped name: which ones only take its shape
        parents: dict[int, cst.CSTNode] = {}
        for sub in body:
            for child in sub.children:
                parents[id(child)] = sub
        for name, stmt in clipped.items():
            if bound.get(name, 0) != 1:
                continue
            reads = [s for s in body if isinstance(s, cst.Name) and s.value == name
                     and not any(s is t for t in walk(stmt.targets[0].target))]
            if any(not self._shape_only(r, parents) for r in reads):
                continue
            self.report(stmt, f"`{name}` holds the clipped value but is {'only used for its shape' if reads else 'never read'}: "
                              "the noise is added to (and the step applies) the unclipped tensor, so the "
                              "clip bounds nothing and the noise calibrated to it covers no sensitivity")

    @staticmethod
    def _shape_only(name: cst.Name, parents: dict[int, cst.CSTNode]) -> bool:
        parent = parents.get(id(name))
        if isinstance(parent, cst.Arg):
            call = parents.get(id(parent))
            return isinstance(call, cst.Call) and call_name(call) in _SHAPE_CALLS
        if isinstance(parent, cst.Attribute) and parent.value is name:
            return parent.attr.value in _SHAPE_ATTRS
        return False

    VALID = (
        # twin: the clipped copy is written back before the noise
        """
import torch
def dp_local_update(model, loader, clip_bound, noise_std, opt):
    for x, y in loader:
        opt.zero_grad()
        model(x, y).backward()
        norm = torch.sqrt(sum(p.grad.pow(2).sum() for p in model.parameters()))
        for p in model.parameters():
            clip_rate = max(1, norm / clip_bound)
            clipped = p.grad / clip_rate
            p.grad = clipped + torch.randn_like(clipped) * noise_std
        opt.step()
""",
        # twin: the clipped update is returned with noise
        """
import numpy as np
def privatize_update(update, clip, sigma):
    clipped_update = update * min(1.0, clip / np.linalg.norm(update))
    return clipped_update + np.random.normal(0, sigma * clip, clipped_update.shape)
""",
        # twin: the clipped gradient is what the accumulator sums
        """
import torch
def dp_grad(per_sample, max_norm, sigma):
    total = 0
    for g in per_sample:
        g_clipped = g * min(1.0, max_norm / (g.norm() + 1e-6))
        total = total + g_clipped
    return total + torch.normal(0.0, sigma * max_norm, total.shape)
""",
        # ordinary ML: weight normalisation in a denoising model, the noise is data augmentation
        """
import torch
def normalise_and_corrupt(weights, x, max_norm):
    w = weights.data / max(1.0, weights.data.norm() / max_norm)
    weights.data.copy_(w)
    return x + torch.randn_like(x) * 0.1
""",
    )
    INVALID = (
        """
import torch
def dp_local_update(model, loader, clip_bound, noise_std, opt):
    for x, y in loader:
        opt.zero_grad()
        model(x, y).backward()
        norm = torch.sqrt(sum(p.data.pow(2).sum() for p in model.parameters()))
        with torch.no_grad():
            for p in model.parameters():
                clip_rate = max(1, norm / clip_bound)
                clipped = p.data / clip_rate  # <-
                p.data.add_(torch.randn_like(clipped) * noise_std)
        opt.step()
""",
        """
import numpy as np
def privatize_update(update, clip, sigma):
    clipped_update = update * min(1.0, clip / np.linalg.norm(update))  # <-
    return update + np.random.normal(0, sigma * clip, clipped_update.shape)
""",
        """
import torch
def dp_grad(per_sample, max_norm, sigma):
    total = 0
    for g in per_sample:
        g_clipped = g * min(1.0, max_norm / (g.norm() + 1e-6))  # <-
        total = total + g
    return total + torch.normal(0.0, sigma * max_norm, total.shape)
""",
        """
import torch
def add_dp_noise(model, clipping_bound, noise_stddev):
    norm = torch.sqrt(sum(torch.sum(w.data ** 2) for w in model.parameters()))
    with torch.no_grad():
        for w in model.parameters():
            w_data = (clipping_bound * w.data) / (norm + 1e-6)  # <-
            w.data.add_(torch.randn_like(w_data) * noise_stddev)
""",
    )
