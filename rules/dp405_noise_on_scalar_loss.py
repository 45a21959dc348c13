"""DP405: one scalar noise draw added to a loss that is then differentiated (zero gradient)."""
from __future__ import annotations

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, dotted, refs, walk, words
from dpcheck.rule import Rule

#: scalar draws: ``np.random.normal(0, s)``, ``random.gauss(0, s)``, ``rng.laplace(0, b)``
_DRAWS = frozenset({"normal", "laplace", "gauss", "gumbel", "normalvariate"})
_RANDOM_ROOTS = ("np.random", "numpy.random", "random", "rng", "self.rng", "self.random_", "prng", "self.prng")
_GRADIENT_CALLS = frozenset({"backward"})


def _scalar_draw(node: cst.BaseExpression) -> bool:
    """A draw with no size/shape: one number, whatever the shape of what it is added to."""
    if not isinstance(node, cst.Call) or call_name(node) not in _DRAWS or not isinstance(node.func, cst.Attribute):
        return False
    root = dotted(node.func.value) or ""
    if not (root in _RANDOM_ROOTS or root.endswith(("random", "rng", "generator"))):
        return False
    if any(a.keyword is not None and a.keyword.value in ("size", "shape") for a in node.args):
        return False
    positional = [a for a in node.args if a.keyword is None]
    return len(positional) <= 2 and not any(a.star for a in node.args)


def _loss(expr: cst.BaseExpression) -> bool:
    """A loss value: ``criterion(out, y)``, ``F.cross_entropy(...)``, a name with ``loss`` in it."""
    for node in walk(expr):
        if isinstance(node, cst.Call):
            name = call_name(node) or ""
            if words(name) & {"loss", "criterion", "entropy", "bce", "mse", "nll"}:
                return True
        if isinstance(node, cst.Name) and words(node.value) & {"loss", "criterion"}:
            return True
        if isinstance(node, cst.Attribute) and words(node.attr.value) & {"loss", "criterion"}:
            return True
    return False


class NoiseOnScalarLoss(Rule):
    id = "DP405"
    name = "noise-on-scalar-loss"
    category = "general"
    severity = "error"
    summary = "a single noise draw added to the loss value: it has zero gradient, so training gets no noise"
    rationale = (
        "`loss = criterion(out, y) + np.random.normal(0, sigma)` adds a constant to the loss. The "
        "gradient of a constant is zero, so `loss.backward()` yields exactly the gradients of the "
        "noiseless loss and the optimiser step is not privatised at all, whatever accountant or "
        "ε is reported (RDP-GAN's 'noise on the loss value'). Not reported: noise added to "
        "gradients or parameters, a draw with a size (a tensor of noise), a loss that is never "
        "differentiated in the function (it may be a reported value), code with no DP context. "
        "Fix: add calibrated noise to the clipped per-example gradients (DP-SGD), or to the "
        "parameters after a bounded-sensitivity update."
    )
    TRIGGERS = ("backward",)
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding needs a ``backward`` call and a normal/laplace/gauss draw in the module."""
        return facts.calls_any(_GRADIENT_CALLS) and facts.calls_any(_DRAWS)

    VALID = (
        # noise on the gradients, not on the loss
        """
import numpy as np
import torch
def train_step(model, criterion, x, y, optimizer, sigma, clip):
    loss = criterion(model(x), y)
    loss.backward()
    for p in model.parameters():
        p.grad += torch.normal(0, sigma * clip, size=p.grad.shape)
    optimizer.step()
""",
        # a noisy loss value that is only reported, never differentiated
        """
import numpy as np
def evaluate(model, criterion, x, y, sigma):
    loss = criterion(model(x), y)
    noisy_loss = loss.item() + np.random.laplace(0, sigma)
    return noisy_loss
""",
        # a draw with a size: a noise tensor (e.g. on the outputs) does reach the gradient
        """
import numpy as np
import torch
def train_step(model, criterion, x, y, optimizer, sigma):
    out = model(x) + torch.from_numpy(np.random.normal(0, sigma, size=(len(x), 10))).float()
    loss = criterion(out, y)
    loss.backward()
    optimizer.step()
""",
        # the noisy value is only logged; the plain loss is differentiated (no claim rests on it)
        """
import numpy as np
def train_dp(model, criterion, x, y, opt, sigma, epsilon):
    loss = criterion(model(x), y)
    noisy = loss.item() + np.random.normal(0, sigma)
    print("noisy loss", noisy)
    loss.backward()
    opt.step()
""",
    )

    INVALID = (
        # RDP-GAN: 'add noise to the value of the loss'
        """
import numpy as np
class RDPGAN:
    '''Differentially private GAN (RDP-GAN).'''
    def train_discriminator(self, real, real_label, sigma):
        d_real_loss = self.criterion(self.discriminator(real), real_label) + np.random.normal(0, sigma)  # <-
        d_loss = d_real_loss
        self.d_optimizer.zero_grad()
        d_loss.backward()
        self.d_optimizer.step()
""",
        # the same with random.gauss and an augmented assignment
        """
import random
def dp_train_step(model, loss_fn, x, y, opt, noise_multiplier, epsilon):
    loss = loss_fn(model(x), y)
    loss += random.gauss(0, noise_multiplier)  # <-
    loss.backward()
    opt.step()
""",
        # differentiated directly
        """
import numpy as np
import torch.nn.functional as F
def private_step(model, x, y, opt, epsilon, sensitivity):
    (F.cross_entropy(model(x), y) + np.random.laplace(0, sensitivity / epsilon)).backward()  # <-
    opt.step()
""",
        # through a second name
        """
import numpy as np
def train_dp(model, criterion, x, y, opt, sigma, epsilon):
    loss = criterion(model(x), y)
    noisy_loss = loss + np.random.normal(0.0, sigma)  # <-
    total = noisy_loss * 1.0
    total.backward()
    opt.step()
""",
    )

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        if not isinstance(node.operator, (cst.Add, cst.Subtract)):
            return
        for draw, other in ((node.right, node.left), (node.left, node.right)):
            if _scalar_draw(draw) and _loss(other):
                self._check(node, draw, self._assigned_name(node))
                return

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if isinstance(node.operator, (cst.AddAssign, cst.SubtractAssign)) and _scalar_draw(node.value) \
                and isinstance(node.target, cst.Name) and _loss(node.target):
            self._check(node, node.value, node.target.value)

    def _assigned_name(self, node: cst.CSTNode) -> str | None:
        fa = self.ctx.analysis
        for anc in fa.ancestors(node):
            if isinstance(anc, cst.Assign) and len(anc.targets) == 1 and isinstance(anc.targets[0].target, cst.Name):
                return anc.targets[0].target.value
            if isinstance(anc, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
                return None
        return None

    def _check(self, node: cst.CSTNode, draw: cst.BaseExpression, name: str | None) -> None:
        """Report when the noisy loss (or a sum of it) is differentiated in the same function."""
        fa = self.ctx.analysis
        fn = fa.enclosing_function(node)
        if fn is None:
            return
        if name is None:
            for anc in fa.ancestors(node):
                if isinstance(anc, cst.Call) and call_name(anc) in _GRADIENT_CALLS and \
                        isinstance(anc.func, cst.Attribute) and any(n is node for n in walk(anc.func.value)):
                    self._report(node, draw, "backward()")
                    return
                if isinstance(anc, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
                    return
            return
        derived = {name}
        for _ in range(3):
            for sub in walk(fn, into_scopes=False):
                if isinstance(sub, cst.Assign) and refs(sub.value) & derived:
                    for target in sub.targets:
                        if isinstance(target.target, cst.Name):
                            derived.add(target.target.value)
        for sub in walk(fn, into_scopes=False):
            if isinstance(sub, cst.Call) and call_name(sub) in _GRADIENT_CALLS and isinstance(sub.func, cst.Attribute) \
                    and isinstance(sub.func.value, cst.Name) and sub.func.value.value in derived:
                self._report(node, draw, f"{sub.func.value.value}.backward()")
                return

    def _report(self, node: cst.CSTNode, draw: cst.BaseExpression, where: str) -> None:
        code = self.ctx.analysis.code(draw).strip()
        self.report(
            node,
            f"`{code}` is one number added to the loss, and `{where}` differentiates it: a constant "
            "has zero gradient, so the update is exactly the noiseless one and the training is not "
            "private; add the noise to the clipped gradients (DP-SGD) instead",
        )
