"""DP405: one scalar noise draw added to a loss that is then differentiated (zero gradient)."""
from __future__ import annotations

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, dotted, refs, walk, words
from dpcheck.rule import Rule

#: scalar draws: ``np.random.normal(0, s)``, ``random.gauss(0, s)``, ``rng.laplace(0, b)``
_DRAWS = frozenset({"normal", "laplace", "gauss", "gumbel", "normalvariate"})
_RANDOM_ROOTS = ("np.random", "numpy.random", "random", "rng", "self.rng", "self.random_", "prng", "self.prng")
_GRADIENT_CALLS = frozenset({"backward", "gradient", "grad"})


def _scalar_draw(node: cst.BaseExpression) -> bool:
    """A draw with no size/shape (one number), or one shaped like the loss (``tf.shape(loss)``,
    ``torch.randn_like(loss)``): either way a constant added to a scalar loss."""
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, (cst.Multiply, cst.Divide)):
        return _scalar_draw(node.left) or _scalar_draw(node.right)
    if not isinstance(node, cst.Call) or not isinstance(node.func, cst.Attribute):
        return False
    name = call_name(node)
    root = dotted(node.func.value) or ""
    if name in ("randn_like", "normal_like") and node.args and _loss(node.args[0].value):
        return True
    if name not in _DRAWS and not (name == "randn" and root == "torch"):
        return False
    if not (root in _RANDOM_ROOTS or root.endswith(("random", "rng", "generator")) or root == "torch"):
        return False
    shaped = [a for a in node.args if a.keyword is not None and a.keyword.value in ("size", "shape")]
    if shaped:
        return all(_loss(a.value) for a in shaped)
    positional = [a for a in node.args if a.keyword is None]
    if root.endswith(("tf.random", "tensorflow.random")) or name == "randn":
        return bool(positional) and all(_loss(a.value) for a in positional[:1])
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
        "ε is reported (RDP-GAN's 'noise on the loss value'). The same holds for a draw shaped like "
        "the loss (`tf.random.normal(tf.shape(loss))`, `torch.randn_like(loss)`), a draw through a "
        "local name, `tape.gradient(loss, vars)` / `torch.autograd.grad(loss, …)`, and a loss helper "
        "that returns `loss + noise` to a caller that differentiates it. Not reported: noise added to "
        "gradients or parameters, a draw with a size (a tensor of noise), a loss that is never "
        "differentiated in the function (it may be a reported value), code with no DP context. "
        "Fix: add calibrated noise to the clipped per-example gradients (DP-SGD), or to the "
        "parameters after a bounded-sensitivity update."
    )
    TRIGGERS = ("backward", "gradient", "grad(")
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding needs a ``backward`` call and a normal/laplace/gauss draw in the module."""
        return facts.calls_any(_GRADIENT_CALLS) and facts.calls_any(_DRAWS | {"randn", "randn_like", "normal_like"})

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
        # a helper's noisy loss that its caller only logs; the gradient comes from the clean loss
        """
import tensorflow as tf
def noisy_loss_for_report(loss, sigma):
    noise = tf.random.normal(tf.shape(loss), stddev=sigma)
    return loss + noise
def dp_train_step(tape, model, x, y, opt, epsilon, sigma):
    loss = tf.reduce_mean(tf.keras.losses.mse(y, model(x)))
    shown = noisy_loss_for_report(loss, sigma)
    tf.print(shown)
    grads = tape.gradient(loss, model.trainable_variables)
    opt.apply_gradients(zip(grads, model.trainable_variables))
""",
        # noise shaped like the logits, inside the loss: it reaches the gradient
        """
import torch
def dp_step(model, criterion, x, y, params, sigma, epsilon):
    logits = model(x)
    noise = torch.randn_like(logits) * sigma
    loss = criterion(logits + noise, y)
    return torch.autograd.grad(loss, params)
""",
        # noise on the gradients returned by the tape
        """
import tensorflow as tf
def private_step(tape, loss, variables, noise_multiplier, l2_clip):
    grads = tape.gradient(loss, variables)
    return [g + tf.random.normal(tf.shape(g), stddev=noise_multiplier * l2_clip) for g in grads]
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
        # TensorFlow: a loss helper returns loss + noise shaped like the (scalar) loss; the caller's tape differentiates it
        """
import tensorflow as tf
def critic_loss(real, fake, epsilon, delta):
    loss = tf.reduce_mean(fake) - tf.reduce_mean(real)
    noise = tf.random.normal(tf.shape(loss), stddev=2.0 / epsilon)
    return loss + 0.5 * noise  # <-
def train_critic(critic, real, fake, opt, epsilon, delta):
    with tf.GradientTape() as tape:
        c_loss = critic_loss(critic(real), critic(fake), epsilon, delta)
    grads = tape.gradient(c_loss, critic.trainable_variables)
    opt.apply_gradients(zip(grads, critic.trainable_variables))
""",
        # torch.autograd.grad of a loss plus randn_like(loss)
        """
import torch
def dp_grads(model, criterion, x, y, sigma, epsilon):
    loss = criterion(model(x), y)
    noisy = loss + sigma * torch.randn_like(loss)  # <-
    return torch.autograd.grad(noisy, list(model.parameters()))
""",
        # a method returns the noisy loss, the caller calls backward on it
        """
import numpy as np
class PrivateTrainer:
    def compute_loss(self, x, y):
        return self.loss_fn(self.model(x), y) + np.random.laplace(0, self.sensitivity / self.epsilon)  # <-
    def step(self, x, y):
        l = self.compute_loss(x, y)
        l.backward()
        self.opt.step()
""",
    )

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        if not isinstance(node.operator, (cst.Add, cst.Subtract)):
            return
        for draw, other in ((node.right, node.left), (node.left, node.right)):
            if self._draw(draw) and _loss(other):
                self._check(node, draw, self._assigned_name(node))
                return

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if isinstance(node.operator, (cst.AddAssign, cst.SubtractAssign)) and self._draw(node.value) \
                and isinstance(node.target, cst.Name) and _loss(node.target):
            self._check(node, node.value, node.target.value)

    def _draw(self, expr: cst.BaseExpression) -> bool:
        """A scalar draw, inline or through a local name (``noise = tf.random.normal(...)``)."""
        if _scalar_draw(expr):
            return True
        if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, (cst.Multiply, cst.Divide)):
            return self._draw(expr.left) or self._draw(expr.right)
        if isinstance(expr, cst.Name):
            value = self.ctx.analysis.value_of(expr)
            return value is not None and _scalar_draw(value)
        return False

    def _assigned_name(self, node: cst.CSTNode) -> str | None:
        fa = self.ctx.analysis
        for anc in fa.ancestors(node):
            if isinstance(anc, cst.Assign) and len(anc.targets) == 1 and isinstance(anc.targets[0].target, cst.Name):
                return anc.targets[0].target.value
            if isinstance(anc, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
                return None
        return None

    def _check(self, node: cst.CSTNode, draw: cst.BaseExpression, name: str | None) -> None:
        """Report when the noisy loss (or a sum of it) is differentiated: here, or by the caller
        of a function that returns it."""
        fa = self.ctx.analysis
        fn = fa.enclosing_function(node)
        if fn is None:
            return
        if name is None:
            for anc in fa.ancestors(node):
                if isinstance(anc, cst.Call) and call_name(anc) in _GRADIENT_CALLS and any(n is node for n in walk(anc)):
                    self._report(node, draw, fa.code(anc.func).strip() + "()")
                    return
                if isinstance(anc, cst.Return) and any(n is node for n in walk(anc)):
                    self._returned(node, draw, fn)
                    return
                if isinstance(anc, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
                    return
            return
        where = self._differentiated(fn, {name})
        if where:
            self._report(node, draw, where)
        elif any(isinstance(r.value, cst.Name) and r.value.value in self._derived(fn, {name}) for r in fa.returns_of(fn)):
            self._returned(node, draw, fn)

    @staticmethod
    def _derived(fn: cst.FunctionDef, names: set[str]) -> set[str]:
        derived = set(names)
        for _ in range(3):
            for sub in walk(fn, into_scopes=False):
                if isinstance(sub, cst.Assign) and refs(sub.value) & derived:
                    for target in sub.targets:
                        if isinstance(target.target, cst.Name):
                            derived.add(target.target.value)
        return derived

    def _differentiated(self, fn: cst.FunctionDef, names: set[str]) -> str | None:
        """``name.backward()``, ``tape.gradient(name, …)``, ``autograd.grad(name, …)`` in ``fn``."""
        derived = self._derived(fn, names)
        for sub in walk(fn, into_scopes=False):
            if not isinstance(sub, cst.Call) or call_name(sub) not in _GRADIENT_CALLS or not isinstance(sub.func, cst.Attribute):
                continue
            if call_name(sub) == "backward":
                if isinstance(sub.func.value, cst.Name) and sub.func.value.value in derived:
                    return f"{sub.func.value.value}.backward()"
            elif sub.args and sub.args[0].keyword is None and refs(sub.args[0].value) & derived:
                return self.ctx.analysis.code(sub).strip().split("\n")[0]
        return None

    def _returned(self, node: cst.CSTNode, draw: cst.BaseExpression, fn: cst.FunctionDef) -> None:
        """``fn`` returns the noisy loss: report when a caller in this module differentiates it."""
        fa = self.ctx.analysis
        for call in fa.nodes(cst.Call):
            if call_name(call) != fn.name.value:  # type: ignore[arg-type]
                continue
            caller = fa.enclosing_function(call)
            assigned = self._assigned_name(call)
            if caller is None or caller is fn or assigned is None:
                continue
            where = self._differentiated(caller, {assigned})
            if where:
                self._report(node, draw, f"{where} (in `{caller.name.value}`, on what `{fn.name.value}` returns)")
                return

    def _report(self, node: cst.CSTNode, draw: cst.BaseExpression, where: str) -> None:
        code = self.ctx.analysis.code(draw).strip()
        self.report(
            node,
            f"`{code}` is one number added to the loss, and `{where}` differentiates it: a constant "
            "has zero gradient, so the update is exactly the noiseless one and the training is not "
            "private; add the noise to the clipped gradients (DP-SGD) instead",
        )
