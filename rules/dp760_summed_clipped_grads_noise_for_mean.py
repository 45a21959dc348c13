"""DP760: clipped per-sample gradients are summed, but the noise added to the sum has the std meant for their mean
(σ·C / batch size)."""
from __future__ import annotations

import ast
import re

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, walk
from dpcheck.rule import Rule

_BATCH = re.compile(r"batch|\blen\(|\.size\(0\)|\.size\(\)\[0\]|shape\[0\]|n_samples|num_samples|\bbs\b|\bb\b|"
                    r"n_examples|num_examples|microbatch")
_CLIP = re.compile(r"clip|max_grad_norm|l2_norm|max_norm|\bC\b", re.IGNORECASE)
_MULT = re.compile(r"sigma|noise|multiplier|\bz\b", re.IGNORECASE)


def _text(module: cst.Module, node: cst.CSTNode) -> str:
    return module.code_for_node(node)


def _einsum_sums_first_axis(call: cst.Call) -> bool:
    """``einsum("i,i...", w, g)`` or ``einsum("b,b...->...", ...)``: the leading (sample) index is summed out."""
    if not call.args or not isinstance(call.args[0].value, cst.SimpleString):
        return False
    spec = call.args[0].value.evaluated_value
    if not isinstance(spec, str):
        return False
    spec = spec.replace(" ", "")
    lhs, _, out = spec.partition("->")
    inputs = lhs.split(",")
    if not inputs or not inputs[0] or not inputs[0][0].isalpha():
        return False
    b = inputs[0][0]
    if "->" in spec:
        return b not in out
    return lhs.count(b) > 1


def _sums_over_samples(module: cst.Module, value: cst.BaseExpression) -> bool:
    """The value is a sum over the sample axis of clipped per-sample gradients."""
    text = _text(module, value)
    for sub in walk(value):
        if not isinstance(sub, cst.Call):
            continue
        name = call_name(sub)
        if name == "einsum" and _einsum_sums_first_axis(sub) and re.search(r"clip|grad_sample|factor|scale", text):
            return True
        if name == "sum" and re.search(r"clip", text, re.IGNORECASE):
            args = [a for a in sub.args if a.keyword is None or a.keyword.value in ("dim", "axis")]
            if isinstance(sub.func, cst.Name) or (isinstance(sub.func, cst.Attribute)
                                                  and call_name(sub) == "sum" and _text(module, sub.func.value)
                                                  in ("torch", "np", "numpy", "tf", "jnp")):
                args = args[1:]
            if args and isinstance(args[0].value, cst.Integer) and args[0].value.value == "0":
                return True
    return False


def _mean_scaled(module: cst.Module, expr: cst.BaseExpression) -> bool:
    """``C * σ / batch_size``: a clip bound times a noise multiplier over a batch size."""
    for sub in walk(expr):
        if isinstance(sub, cst.BinaryOperation) and isinstance(sub.operator, cst.Divide):
            left, right = _text(module, sub.left), _text(module, sub.right)
            if _CLIP.search(left) and _MULT.search(left) and _BATCH.search(right):
                return True
    return False


class SummedClippedGradsNoiseForMean(Rule):
    id = "DP760"
    name = "summed-clipped-grads-noise-for-mean"
    category = "general"
    severity = "error"
    summary = ("the clipped per-sample gradients are summed, but the noise added to the sum has std σ·C/B, the "
               "scale meant for their mean")
    rationale = (
        "DP-SGD either sums the clipped per-sample gradients (sensitivity C) and adds N(0, σ²C²) before dividing "
        "by the batch size B, or averages them (sensitivity C/B) and adds N(0, σ²C²/B²). Summing "
        "(`torch.einsum('i,i...', clip_factor, grad_sample)`, `clipped.sum(0)`, `torch.sum(clipped, dim=0)`) and "
        "then adding noise of std `clip * sigma / batch_size` without dividing the sum by B mixes the two: the "
        "noise is B times too small for the sum's sensitivity, so the effective noise multiplier is σ/B and the "
        "accounted ε does not hold. Reported: a function that binds a sum over the sample axis of clipped "
        "gradients, adds to it a noise term whose scale is a clip bound times a noise multiplier divided by a "
        "batch size, and never divides the sum or the noisy result. Not reported: the sum divided by the batch "
        "size afterwards (then σ·C/B is right), noise of std σ·C on the sum, means. Fix: add N(0, σ²C²) to the "
        "sum and divide by B, or average first and keep σ·C/B."
    )
    TRIGGERS = ("einsum", "sum")
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding needs a sum (``einsum`` or ``sum``) and a division in the file."""
        return facts.calls_any(frozenset({"einsum", "sum"})) and bool(facts.binops(ast.Div))

    @classmethod
    def admits(cls, facts: AstFacts) -> bool:
        return facts.may_have_dp_context and cls.may_report(facts)

    VALID = (
        # twin of the einsum case: noise sized for the sum, then the sum divided by the batch size
        """
import torch
def noisy_grads(model, clip_norm, sigma):
    norms = torch.stack([p.grad_sample.flatten(1).norm(dim=1) for p in model.parameters()], 1).norm(dim=1)
    factor = (clip_norm / (norms + 1e-6)).clamp(max=1.0)
    batch_size = norms.size(0)
    for p in model.parameters():
        summed = torch.einsum("i,i...", factor, p.grad_sample)
        noisy = summed + torch.normal(0.0, clip_norm * sigma, summed.shape)
        p.grad = noisy / batch_size
""",
        # twin of the sum(0) case: the clipped gradients are averaged, so sigma*C/B is the right std
        """
import torch
def private_grad(per_example, max_grad_norm, noise_multiplier):
    norms = per_example.flatten(1).norm(dim=1, keepdim=True)
    clipped = per_example * torch.clamp(max_grad_norm / norms, max=1.0)
    batch_size = per_example.shape[0]
    mean = clipped.mean(0)
    std = max_grad_norm * noise_multiplier / batch_size
    return mean + torch.randn_like(mean) * std
""",
        # twin of the numpy case: the sum and its noise both divided by the batch size
        """
import numpy as np
def dp_update(grads, clip, sigma, rng):
    clipped = np.stack([g * min(1.0, clip / np.linalg.norm(g)) for g in grads])
    total = np.sum(clipped, axis=0)
    noisy = total + rng.normal(0.0, clip * sigma, total.shape)
    return noisy / len(grads)
""",
        # ordinary ML: a class-weighted loss summed over a batch and normalised, no noise
        """
import torch
def weighted_loss(logits, labels, weights, batch_size):
    per_item = torch.nn.functional.cross_entropy(logits, labels, reduction="none")
    total = torch.einsum("i,i->", weights[labels], per_item)
    return total / batch_size
""",
    )

    INVALID = (
        # the einsum sum of clipped per-sample gradients gets the mean's noise std
        """
import torch
def noisy_grads(model, clip_norm, sigma):
    norms = torch.stack([p.grad_sample.flatten(1).norm(dim=1) for p in model.parameters()], 1).norm(dim=1)
    factor = (clip_norm / (norms + 1e-6)).clamp(max=1.0)
    batch_size = norms.size(0)
    std = clip_norm * sigma / batch_size  # <-
    for p in model.parameters():
        summed = torch.einsum("i,i...", factor, p.grad_sample)
        p.grad = summed + torch.normal(0.0, std, summed.shape)
""",
        # sum(0) over the clipped batch, std inline in the draw
        """
import torch
def private_grad(per_example, max_grad_norm, noise_multiplier):
    norms = per_example.flatten(1).norm(dim=1, keepdim=True)
    clipped = per_example * torch.clamp(max_grad_norm / norms, max=1.0)
    total = clipped.sum(dim=0)
    return total + torch.randn_like(total) * (max_grad_norm * noise_multiplier / per_example.shape[0])  # <-
""",
        # numpy: np.sum over axis 0 and an in-place noise add sized for the mean
        """
import numpy as np
def dp_update(grads, clip, sigma, rng):
    clipped = np.stack([g * min(1.0, clip / np.linalg.norm(g)) for g in grads])
    total = np.sum(clipped, axis=0)
    noise_std = clip * sigma / len(grads)  # <-
    total += rng.normal(0.0, noise_std, total.shape)
    return total
""",
        # a method: the std kept on self, an explicit einsum output, and a helper that draws the noise
        """
import torch
class LocalDP:
    def step_noise(self, factor):
        sigma_dp = self.clip_norm * self.noise_multiplier / self.batch_size  # <-
        for p in self.model.parameters():
            g = torch.einsum("b,b...->...", factor, p.grad_sample)
            p.grad = g + make_noise(std=sigma_dp, like=g)
""",
    )

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        module = self.ctx.module
        sums: set[str] = set()
        stds: dict[str, cst.CSTNode] = {}
        for sub in walk(node.body):
            if isinstance(sub, cst.Assign) and len(sub.targets) == 1:
                target = sub.targets[0].target
                tname = _text(module, target)
                if _sums_over_samples(module, sub.value):
                    sums.add(tname)
                elif _mean_scaled(module, sub.value) and re.search(r"sigma|std|noise|scale", tname, re.I):
                    stds[tname] = sub
        if not sums:
            return
        noisy: set[str] = set()
        hits: list[cst.CSTNode] = []

        def noise_of(expr: cst.CSTNode) -> cst.CSTNode | None:
            text = _text(module, expr)
            if not any(isinstance(c, cst.Call) for c in walk(expr)):
                return None
            for name, where in stds.items():
                if re.search(r"(?<![\w.])" + re.escape(name) + r"(?!\w)", text):
                    return where
            if _mean_scaled(module, expr):
                return expr
            return None

        for sub in walk(node.body):
            if isinstance(sub, cst.BinaryOperation) and isinstance(sub.operator, cst.Add):
                for mine, other in ((sub.left, sub.right), (sub.right, sub.left)):
                    if isinstance(mine, (cst.Name, cst.Attribute)) and _text(module, mine) in sums:
                        where = noise_of(other)
                        if where is not None:
                            hits.append(where)
                            parent = self._assign_target(node, sub)
                            if parent:
                                noisy.add(parent)
            elif isinstance(sub, cst.AugAssign) and isinstance(sub.operator, cst.AddAssign) \
                    and _text(module, sub.target) in sums:
                where = noise_of(sub.value)
                if where is not None:
                    hits.append(where)
        if not hits:
            return
        scaled = sums | noisy
        for sub in walk(node.body):
            if isinstance(sub, cst.BinaryOperation) and isinstance(sub.operator, cst.Divide) \
                    and _text(module, sub.left) in scaled:
                return
            if isinstance(sub, cst.AugAssign) and isinstance(sub.operator, cst.DivideAssign) \
                    and _text(module, sub.target) in scaled:
                return
            if isinstance(sub, cst.Call) and call_name(sub) in ("div", "div_", "mul_") and isinstance(
                    sub.func, cst.Attribute) and _text(module, sub.func.value) in scaled:
                return
        where = hits[0]
        self.report(
            where,
            "the clipped per-sample gradients are summed here (sensitivity C), but this noise std is C·σ divided "
            "by the batch size, the scale for their mean, and the sum is never divided: the effective noise "
            "multiplier is σ/B; use std C·σ on the sum and divide by B (or average before adding C·σ/B)",
        )

    @staticmethod
    def _assign_target(fn: cst.FunctionDef, expr: cst.CSTNode) -> str | None:
        for sub in walk(fn.body):
            if isinstance(sub, cst.Assign) and sub.value is expr and len(sub.targets) == 1 \
                    and isinstance(sub.targets[0].target, cst.Name):
                return sub.targets[0].target.value
        return None
