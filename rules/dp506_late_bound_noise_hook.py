"""DP506: a noise hook registered in a loop reads the loop variable late (a Python closure)."""
from __future__ import annotations

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, param_names, target_names, walk
from dpcheck.rule import Rule
from dpcheck.analysis.noisedraws import is_draw

#: calls that store a callback to run later
_REGISTERS = frozenset({"register_hook", "register_full_backward_hook", "register_backward_hook",
                        "register_forward_hook", "register_forward_pre_hook", "register_post_accumulate_grad_hook"})


def _draws_noise(fn: cst.Lambda | cst.FunctionDef) -> bool:
    return any(isinstance(n, cst.Call) and is_draw(n) for n in walk(fn.body))


class LateBoundNoiseHook(Rule):
    id = "DP506"
    name = "late-bound-noise-hook"
    category = "general"
    severity = "error"
    summary = "a noise hook created in a loop reads the loop variable when it runs, i.e. the last one"
    rationale = (
        "`for p in model.parameters(): p.register_hook(lambda grad: grad + s * torch.randn(p.shape))` "
        "stores a closure per parameter, but Python closures look `p` up when they are *called*: by "
        "the backward pass the loop has finished and every hook sees the last parameter. Each "
        "gradient then receives noise of the last parameter's shape, broadcast (or failing) — a "
        "bias-sized tensor broadcast over a weight matrix adds one draw to whole rows, so the "
        "coordinates share noise and the Gaussian mechanism's per-coordinate independence the "
        "accountant assumes does not hold. Not reported: a hook that binds the variable as a default "
        "(`lambda grad, p=p: …`) or uses only its own argument (`torch.randn_like(grad)`), a hook that "
        "draws no noise, code with no DP context. Fix: `torch.randn_like(grad)` or bind `p=p`."
    )
    TRIGGERS = ("register_",)
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding is a call registering a hook."""
        return facts.calls_any(_REGISTERS)

    VALID = (
        """
import torch
def add_noise_hooks(model, sigma, batch_size):
    # differential privacy noise on the gradients
    for parameter in model.parameters():
        parameter.register_hook(lambda grad: grad + (1 / batch_size) * sigma * torch.randn_like(grad))
""",
        # the loop variable bound as a default: evaluated when the lambda is made
        """
import torch
def add_noise_hooks(model, sigma):
    for p in model.parameters():
        p.register_hook(lambda grad, p=p: grad + sigma * torch.randn(p.shape))
""",
        # a hook without noise
        """
def log_hooks(model, epsilon):
    for name, p in model.named_parameters():
        p.register_hook(lambda grad: print(name, grad.norm(), epsilon))
""",
        # a factory binds the value
        """
import torch
def make_hook(shape, sigma):
    return lambda grad: grad + sigma * torch.randn(shape)

def add_noise_hooks(model, sigma, epsilon):
    for p in model.parameters():
        p.register_hook(make_hook(p.shape, sigma))
""",
    )

    INVALID = (
        # civis dpwgan
        """
import torch
def train(self, sigma, batch_size, epsilon):
    # add hooks to introduce noise to gradient for differential privacy
    if sigma is not None:
        for parameter in self.discriminator.parameters():
            parameter.register_hook(  # <-
                lambda grad: grad + (1 / batch_size) * sigma
                * torch.randn(parameter.shape)
            )
""",
        """
import torch
def private(model, noise_multiplier, max_grad_norm):
    for p in model.parameters():
        p.register_hook(lambda g: g + torch.normal(0, noise_multiplier * max_grad_norm, size=p.size()))  # <-
""",
        """
import torch
def attach(model, sigma, epsilon):
    for name, param in model.named_parameters():
        def hook(grad):
            return grad + sigma * torch.randn(param.shape, device=grad.device)
        param.register_hook(hook)  # <-
""",
        """
import numpy as np
import torch
def dp_hooks(layers, noise_scale, epsilon):
    for layer in layers:
        layer.weight.register_hook(lambda g: g + torch.from_numpy(np.random.normal(0, noise_scale, layer.weight.shape)))  # <-
""",
    )

    def visit_Call(self, node: cst.Call) -> None:
        if call_name(node) not in _REGISTERS or not node.args:
            return
        fa = self.ctx.analysis
        loops = [loop for loop in fa.enclosing_loops(node) if isinstance(loop, cst.For)]
        if not loops:
            return
        loop_vars = set().union(*(target_names(loop.target) for loop in loops))
        hook = node.args[0].value
        fn: cst.Lambda | cst.FunctionDef | None = hook if isinstance(hook, cst.Lambda) else None
        if isinstance(hook, cst.Name):
            fn = next((d for loop in loops for d in walk(loop.body) if isinstance(d, cst.FunctionDef)
                       and d.name.value == hook.value), None)
        if fn is None or not _draws_noise(fn):
            return
        bound = set(param_names(fn))
        late = sorted({n.value for n in walk(fn.body) if isinstance(n, cst.Name)} & (loop_vars - bound))
        if not late:
            return
        self.report(node, f"the hook reads the loop variable `{late[0]}` when it runs, after the loop has ended: every "
                          f"hook sees the last `{late[0]}`, so the noise has the wrong shape and is broadcast "
                          f"across coordinates; use the hook's own argument (`torch.randn_like(grad)`) or bind "
                          f"`{late[0]}={late[0]}`")
