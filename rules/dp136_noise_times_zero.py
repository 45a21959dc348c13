"""DP136: the privacy noise is multiplied by a literal zero, so nothing is added."""
from __future__ import annotations

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.noisedraws import PURE_DRAWS
from dpcheck.analysis.syntax import call_name, walk, words
from dpcheck.rule import Rule

#: names in a draw's arguments that calibrate it as privacy noise
_CALIBRATION_WORDS = frozenset({"sigma", "multiplier", "clip", "clipping", "sensitivity", "sens", "epsilon", "eps",
                                "privacy", "dp", "budget", "rho", "delta"})


def _zero(node: cst.BaseExpression) -> bool:
    """A literal ``0`` / ``0.0`` (possibly parenthesised)."""
    if isinstance(node, cst.Integer):
        return node.evaluated_value == 0
    if isinstance(node, cst.Float):
        return node.evaluated_value == 0.0
    return False


def _factors(node: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The operands of a chain of ``*`` and ``/`` (``0*1/k * draw`` -> ``0``, ``1``, ``k``, ``draw``); a divisor
    is kept too, but only the left-most operand of a ``/`` can be the zero that wipes the product."""
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, (cst.Multiply, cst.Divide)):
        return _factors(node.left) + _factors(node.right)
    return [node]


def _calibrated_draw(node: cst.BaseExpression) -> cst.Call | None:
    for sub in walk(node):
        if isinstance(sub, cst.Call) and call_name(sub) in PURE_DRAWS:
            names = {n.value for a in sub.args for n in walk(a.value) if isinstance(n, cst.Name)}
            names |= {n.attr.value for a in sub.args for n in walk(a.value) if isinstance(n, cst.Attribute)}
            if any(words(n) & _CALIBRATION_WORDS for n in names):
                return sub
    return None


class NoiseTimesZero(Rule):
    id = "DP136"
    name = "noise-times-zero"
    category = "general"
    severity = "error"
    summary = "a privacy-noise draw calibrated to σ/ε/the clip bound is multiplied by a literal 0: no noise is added"
    rationale = (
        "A Gaussian or Laplace draw whose scale is computed from the noise multiplier, the clipping bound or ε "
        "is the mechanism's noise; multiplying it by a literal `0` (`0 * np.random.normal(0, sigma * clip)`, "
        "`noise * 0.0`) turns it into zeros, so the released update or statistic is the exact value while the "
        "run still reports its ε (a debugging switch left in). Reported: a product with a literal zero factor "
        "and a noise draw whose arguments name σ, the multiplier, the clip bound, the sensitivity or ε. "
        "Not reported: a zero-initialised tensor without a draw, a draw with only literal knobs (augmentation, "
        "diffusion), a scale factor that is a variable (a schedule that may be 0), code with no DP context. "
        "Fix: remove the zero factor (or make noise-off an explicit, non-private mode that reports no ε)."
    )
    TRIGGERS = ("0",)
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        return bool(facts.called & PURE_DRAWS)

    VALID = (
        # twin: the layer-wise Gaussian noise scaled by 1/k
        """
import numpy as np
def sanitize(updates, k, noise_multiplier, l2_norm_clip):
    noise = [1 / k * np.random.normal(0.0, noise_multiplier * l2_norm_clip, size=u.shape) for u in updates]
    return [u / k + n for u, n in zip(updates, noise)]
""",
        # twin: the noise kept, scaled by its sensitivity
        """
import numpy as np
def release(count, epsilon):
    return count + 1.0 * np.random.laplace(0, 1 / epsilon)
""",
        # a zero-initialised buffer and an augmentation draw with literal knobs
        """
import torch
def augment(x, sigma_aug=0.1):
    buf = torch.zeros_like(x) * 0
    return x + buf + 0 * x.mean() + torch.randn_like(x) * 0.1
""",
        # a noise schedule factor that is a variable (warm-up may make it 0 on purpose)
        """
import torch
def noisy_grad(g, sigma, clip, warmup):
    return g + warmup * torch.normal(0, sigma * clip, g.shape)
""",
        # diffusion: a zero-weighted term without a privacy scale
        """
import torch
def q_sample(x0, t, alphas):
    noise = torch.randn_like(x0)
    return alphas[t].sqrt() * x0 + 0 * noise
""",
    )

    INVALID = (
        # the client-level Gaussian noise zeroed by a leading 0 factor
        """
import numpy as np
def sanitize(updates, k, noise_multiplier, l2_norm_clip):
    noise = [0 * 1 / k * np.random.normal(0.0, noise_multiplier * l2_norm_clip, size=u.shape) for u in updates]  # <-
    return [u / k + n for u, n in zip(updates, noise)]
""",
        # a Laplace draw times 0.0 on the right
        """
import numpy as np
def release(count, epsilon, sensitivity):
    return count + np.random.laplace(0, sensitivity / epsilon) * 0.0  # <-
""",
        # torch gradient noise switched off by a zero factor
        """
import torch
def private_step(model, sigma, max_norm):
    for p in model.parameters():
        p.grad += 0.0 * torch.normal(0, sigma * max_norm, p.grad.shape)  # <-
""",
        # a named noise term zeroed on the release line (the draw itself is calibrated)
        """
import numpy as np
def noisy_mean(values, epsilon, clip):
    total = np.clip(values, -clip, clip).sum()
    return (total + 0 * np.random.normal(0, 2 * clip / epsilon)) / len(values)  # <-
""",
    )

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        if not isinstance(node.operator, cst.Multiply):
            return
        parent = self.ctx.analysis.parent(node)
        if isinstance(parent, cst.BinaryOperation) and isinstance(parent.operator, (cst.Multiply, cst.Divide)):
            return  # reported at the top of the chain
        factors = _factors(node)
        if not any(_zero(f) for f in factors):
            return
        draw = next((d for f in factors if (d := _calibrated_draw(f)) is not None), None)
        if draw is None:
            return
        self.report(node, f"the privacy noise `{self.ctx.analysis.code(draw).strip()[:60]}` is multiplied by a "
                          "literal 0, so no noise is added and the value is released exactly while the run "
                          "still claims its ε; remove the zero factor")
