"""DP803: a gradient clipped to C is multiplied by the number of examples it averages before the noise."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, dotted, walk, words
from dpcheck.rule import Rule

_DRAWS = frozenset({"normal", "randn", "randn_like", "normal_", "gauss", "laplace", "standard_normal"})
#: words of a name that counts examples
_COUNT = frozenset({"size", "bsz", "bs", "count", "len", "num", "n", "length"})
_COUNT_NOT = frozenset({"step", "lr", "learning", "rate", "norm", "clip", "coef", "factor", "scale", "max",
                        "hidden", "vocab", "embed", "dim", "window", "kernel", "noise", "sigma"})
_ACCUMULATE = frozenset({"add_", "append", "add"})


def _factors(expr: cst.BaseExpression) -> list[cst.BaseExpression]:
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Multiply):
        return _factors(expr.left) + _factors(expr.right)
    return [expr]


def _is_count(expr: cst.BaseExpression) -> bool:
    if isinstance(expr, cst.Call) and call_name(expr) == "len":
        return True
    name = dotted(expr) if isinstance(expr, (cst.Name, cst.Attribute)) else None
    if name is None:
        return False
    pieces = words(name.split(".")[-1])
    return bool(pieces & _COUNT) and not pieces & _COUNT_NOT and (
        bool(pieces & {"batch", "mb", "microbatch", "micro", "sample", "samples", "examples", "example"})
        or name.split(".")[-1] in {"n", "bsz", "bs", "mb_size", "count"})


def _clip_coefficients(body: list[cst.CSTNode]) -> set[str]:
    """Names bound to ``min(1, C / norm)`` (or ``clamp(C / norm, max=1)``): a per-(micro)batch clip factor."""
    out: set[str] = set()
    for sub in body:
        if not isinstance(sub, cst.Assign) or not isinstance(sub.value, cst.Call):
            continue
        name = call_name(sub.value)
        text_words = {w for n in walk(sub.value) if isinstance(n, (cst.Name, cst.Attribute))
                      for d in [dotted(n)] if d for w in words(d.split(".")[-1])}
        if name in {"min", "minimum", "clamp", "clip", "clamp_max"} and "norm" in text_words \
                and text_words & {"clip", "max", "bound", "c", "threshold"} \
                and any(isinstance(n, cst.BinaryOperation) and isinstance(n.operator, cst.Divide)
                        for n in walk(sub.value)):
            out |= {t.target.value for t in sub.targets if isinstance(t.target, cst.Name)}
    return out


class ClippedGradientRescaledByCount(Rule):
    id = "DP803"
    name = "clipped-gradient-rescaled-by-count"
    category = "general"
    severity = "error"
    summary = ("the gradient of a microbatch is clipped to C and then multiplied by the microbatch size before "
               "it is summed and noised with σ·C: one example can move the sum by size·C")
    rationale = (
        "DP-SGD's Gaussian noise σ·C covers a sum in which each term is one example's (or one microbatch's) "
        "gradient clipped to norm C. Code that runs the model on a microbatch of m examples, clips the "
        "resulting MEAN gradient with `coef = min(1, C / norm)` and then accumulates `grad * coef * m` to undo "
        "the averaging adds a term of norm up to m·C per microbatch: every example in it shares that term, "
        "and changing one example can shift it by up to m·C, so the noise is m times too small for the "
        "stated ε (and the README's per-sample clipping does not happen). Reported: in DP code, an "
        "accumulation (`acc.add_(...)`, `acc += ...`, `acc = acc + ...`) of a product of a clip factor bound "
        "to `min(1, C / norm)` and an example count (`mb_size`, `len(batch)`, `batch_size`). Good: clip each "
        "example's gradient (vmap/Opacus GradSampleModule), or treat the microbatch as the unit: add "
        "`grad * coef` (norm ≤ C) and state the guarantee per microbatch."
    )
    TRIGGERS = ("norm",)
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding needs a noise draw, a ``min``/``clamp`` call and a multiplication."""
        return facts.calls_any(_DRAWS) and facts.calls_any({"min", "minimum", "clamp", "clip", "clamp_max"}) \
            and bool(facts.binops(ast.Mult))

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        body = list(walk(node.body, into_scopes=False))
        coefs = _clip_coefficients(body)
        if not coefs:
            return
        for sub in body:
            values: list[cst.BaseExpression] = []
            if isinstance(sub, cst.Call) and isinstance(sub.func, cst.Attribute) \
                    and sub.func.attr.value in _ACCUMULATE:
                values = [a.value for a in sub.args]
            elif isinstance(sub, cst.AugAssign) and isinstance(sub.operator, cst.AddAssign):
                values = [sub.value]
            elif isinstance(sub, cst.Assign) and isinstance(sub.value, cst.BinaryOperation) \
                    and isinstance(sub.value.operator, cst.Add):
                values = [sub.value.right, sub.value.left]
            for value in values:
                factors = _factors(value)
                coef = [f for f in factors if isinstance(f, cst.Name) and f.value in coefs]
                count = [f for f in factors if _is_count(f)]
                if coef and count:
                    self.report(sub, f"the clipped gradient (`{coef[0].value}` bounds it by C) is multiplied by "
                                     "an example count before it is summed: one example can move the sum by "
                                     "count·C while the noise is σ·C; clip per example, or add `grad * coef` "
                                     "and account per microbatch")
                    break

    VALID = (
        # twin: the clipped microbatch gradient is accumulated as is (the microbatch is the unit)
        """
import torch
def dp_step(model, batch, params, max_grad_norm, noise_multiplier, mb):
    acc = [torch.zeros_like(p) for p in params]
    for start in range(0, len(batch), mb):
        model.zero_grad()
        model(batch[start:start + mb]).loss.backward()
        norm = torch.sqrt(sum(p.grad.pow(2).sum() for p in params))
        coef = min(1.0, max_grad_norm / (norm.item() + 1e-6))
        for a, p in zip(acc, params):
            a.add_(p.grad * coef)
    for a in acc:
        a.add_(torch.normal(0.0, noise_multiplier * max_grad_norm, size=a.shape))
    return acc
""",
        # twin of the += case: per-example clipping, then the mean divides by the batch size
        """
import numpy as np
def noisy_mean_grad(per_example_grads, clip, sigma):
    total = np.zeros(per_example_grads.shape[1])
    for g in per_example_grads:
        factor = min(1.0, clip / (np.linalg.norm(g) + 1e-12))
        total += g * factor
    total += np.random.normal(0, sigma * clip, total.shape)
    return total / len(per_example_grads)
""",
        # the count divides the clipped sum (averaging), it does not multiply it
        """
import torch
def average(grads, clip, sigma, batch_size):
    out = torch.zeros_like(grads[0])
    for g in grads:
        scale = torch.clamp(clip / (g.norm() + 1e-6), max=1.0)
        out = out + g * scale / batch_size
    return out + torch.randn_like(out) * sigma * clip / batch_size
""",
        # ordinary ML: gradient accumulation with global-norm clipping, weighted by batch size, no privacy
        """
import torch
def accumulate(models, clip):
    total = None
    for m in models:
        n = m.num_examples
        coef = min(1.0, clip / (m.grad_norm + 1e-6))
        total = m.grad * coef * n if total is None else total + m.grad * coef * n
    return total + torch.randn_like(total) * 0.0
""",
    )

    INVALID = (
        # the mean gradient of a microbatch clipped, then scaled back up by its size
        """
import torch
def dp_step(model, batch, params, max_grad_norm, noise_multiplier, mb):
    acc = [torch.zeros_like(p) for p in params]
    for start in range(0, len(batch), mb):
        end = min(start + mb, len(batch))
        current_mb_size = end - start
        model.zero_grad()
        model(batch[start:end]).loss.backward()
        norm = torch.sqrt(sum(p.grad.pow(2).sum() for p in params))
        coef = min(1.0, max_grad_norm / (norm.item() + 1e-6))
        for a, p in zip(acc, params):
            a.add_(p.grad.detach() * coef * current_mb_size)  # <-
    for a in acc:
        a.add_(torch.normal(0.0, noise_multiplier * max_grad_norm, size=a.shape))
    return acc
""",
        # numpy, += with len() of the chunk
        """
import numpy as np
def private_gradient(chunks, grad_fn, clip, sigma, epsilon):
    total = 0.0
    for chunk in chunks:
        g = grad_fn(chunk)
        factor = min(1.0, clip / (np.linalg.norm(g) + 1e-12))
        total += g * factor * len(chunk)  # <-
    return total + np.random.normal(0, sigma * clip, np.shape(total))
""",
        # torch clamp spelling, acc = acc + ...
        """
import torch
def dp_sgd_update(grads_per_micro, micro_batch_size, max_norm, noise_multiplier):
    acc = torch.zeros_like(grads_per_micro[0])
    for g in grads_per_micro:
        clip_coef = torch.clamp(max_norm / (g.norm() + 1e-6), max=1.0)
        acc = acc + g * clip_coef * micro_batch_size  # <-
    return acc + torch.randn_like(acc) * noise_multiplier * max_norm
""",
        # the count is the batch attribute, appended then summed
        """
import torch
def dp_clipped_terms(self, micro_batches, max_grad_norm, noise_multiplier):
    terms = []
    for mb in micro_batches:
        grad = self.mean_grad(mb)
        scale = min(1.0, max_grad_norm / float(grad.norm()))
        terms.append(grad * scale * mb.batch_size)  # <-
    total = torch.stack(terms).sum(0)
    return total + torch.normal(0.0, noise_multiplier * max_grad_norm, total.shape)
""",
    )
