"""DP642: privacy noise cast to an integer type before it is added to real-valued model state."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.noisedraws import PURE_DRAWS, last_assignment
from dpcheck.analysis.syntax import call_name, dotted, walk, words
from dpcheck.rule import Rule

#: tensor/array methods that truncate to an integer type
_INT_METHODS = frozenset({"long", "int", "short"})
_INT_TYPES = frozenset({"long", "int", "int8", "int16", "int32", "int64", "short", "LongTensor", "IntTensor",
                        "uint8"})
#: names of real-valued model state (weights, gradients, updates)
_MODEL_WORDS = frozenset({"grad", "grads", "gradient", "gradients", "weight", "weights", "param", "params",
                          "parameter", "parameters", "state", "sd", "model", "update", "updates", "embedding",
                          "embeddings", "theta", "coef", "w"})
#: a function named as a noise mechanism (outside a module with DP context)
_HELPER_WORDS = frozenset({"noise", "gaussian", "laplace", "dp", "private", "privacy", "privatize", "perturb"})
_DRAWS = PURE_DRAWS | {"randn", "randn_like", "normal", "standard_normal", "normal_"}


def _int_cast(expr: cst.BaseExpression) -> cst.BaseExpression | None:
    """The operand of an integer cast: ``n.long()``, ``n.int().cuda()``, ``n.to(torch.long)``,
    ``n.astype(int)``, ``n.type(torch.LongTensor)``, ``int(n)``; else None."""
    cur = expr
    # device moves after the cast: ``noise.long().cuda()``, ``.to(device)``
    while isinstance(cur, cst.Call) and isinstance(cur.func, cst.Attribute) and cur.func.attr.value in (
            "cuda", "cpu", "to") and not any(_int_type(a.value) for a in cur.args):
        cur = cur.func.value
    if not isinstance(cur, cst.Call):
        return None
    if isinstance(cur.func, cst.Name) and cur.func.value == "int" and len(cur.args) == 1:
        return cur.args[0].value
    if not isinstance(cur.func, cst.Attribute):
        return None
    method = cur.func.attr.value
    if method in _INT_METHODS and not cur.args:
        return cur.func.value
    if method in ("to", "astype", "type") and cur.args and _int_type(cur.args[0].value):
        return cur.func.value
    return None


def _int_type(expr: cst.BaseExpression) -> bool:
    if isinstance(expr, cst.SimpleString):
        return expr.value.strip("'\"") in _INT_TYPES
    name = dotted(expr) if isinstance(expr, (cst.Name, cst.Attribute)) else None
    return bool(name) and name.split(".")[-1] in _INT_TYPES


def _model_name(expr: cst.BaseExpression) -> bool:
    """``sd[key]``, ``p.grad``, ``weights``, ``self.model.weight``: real-valued model state."""
    while isinstance(expr, cst.Subscript):
        expr = expr.value
    name = dotted(expr) if isinstance(expr, (cst.Name, cst.Attribute)) else None
    return bool(name) and bool(words(name) & _MODEL_WORDS)


class NoiseCastToInteger(Rule):
    id = "DP642"
    name = "noise-cast-to-integer"
    category = "general"
    severity = "error"
    summary = ("Gaussian/Laplace noise cast to an integer type (`noise.long()`, `.astype(int)`, `int(noise)`) "
               "before it is added to real-valued model state: a std below 1 truncates to no noise at all")
    rationale = (
        "Casting a noise draw to an integer type truncates it toward zero. Added to real-valued weights, "
        "gradients or updates, the truncated noise is 0 whenever |z| < 1 — for the usual stds (σ·C/B is often "
        "1e-3) that is every coordinate — so the model is released exactly while the code reports its ε; even "
        "for larger stds the noise distribution is no longer the Gaussian/Laplace the accountant analyses, and "
        "the released values keep the exact fractional part of the private ones. Reported: an integer cast "
        "(`.long()`, `.int()`, `.short()`, `.to(torch.long)`, `.type(torch.LongTensor)`, `.astype(int)`, "
        "`int(·)`) of a noise draw, or of a name the function binds to one, that is added (`+`, `+=`, `add_`) to "
        "model state (a `state_dict` entry, a gradient, weights, parameters, an update). Not reported: noise "
        "rounded and added to an integer count (post-processing of a noisy count), casts of indices or seeds, "
        "code outside DP context unless the function is named as a noise helper (`add_gaussian_noise_model`). "
        "Bad: `sd[k] += (torch.randn(sd[k].size()) * std).long()`. Good: `sd[k] += torch.randn(sd[k].size()) * std` "
        "(cast the state's dtype, not the noise's: `noise.to(sd[k].dtype)`)."
    )
    TRIGGERS = ("long()", "int()", "short()", "astype", "int(", ".to(", ".type(")
    requires_dp_context = False

    @classmethod
    def admits(cls, facts: AstFacts) -> bool:
        """A draw in the file; the file has DP context or the function is a noise helper (checked per site:
        a DP project's `add_gaussian_noise_model` may sit in a utilities module with no DP word of its own)."""
        return facts.calls_any(_DRAWS)

    VALID = (
        # twin: the noise keeps the state's float dtype
        """
import torch
def add_gaussian_noise_model(model, std_scalar):
    sd = model.state_dict()
    for key in sd:
        noise = torch.randn(sd[key].size()) * std_scalar
        sd[key] += noise.to(sd[key].dtype).cuda()
    model.load_state_dict(sd)
    return model
""",
        # a noisy integer count: rounding the Laplace noise is post-processing
        """
import numpy as np
def noisy_count(rows, epsilon):
    count = len(rows)
    return count + int(np.round(np.random.laplace(0, 1 / epsilon)))
""",
        # twin of the numpy case: float noise on float weights
        """
import numpy as np
def privatize_update(weights, sigma, clip):
    z = np.random.normal(0, sigma * clip, weights.shape)
    return weights + z
""",
        # ordinary ML: a random integer index from a normal draw (no DP context word on the value)
        """
import torch
def sample_positions(length, epsilon_greedy):
    jitter = torch.randn(8).long()
    return torch.arange(8) + jitter
""",
    )
    INVALID = (
        # a model's state dict perturbed with truncated noise
        """
import torch
def add_gaussian_noise_model(model, std_scalar):
    sd = model.state_dict()
    for key in sd:
        noise = torch.randn(sd[key].size()) * std_scalar
        sd[key] += noise.long().cuda()  # <-
    model.load_state_dict(sd)
    return model
""",
        # numpy: DP noise cast with astype(int) before it reaches the weights
        """
import numpy as np
def privatize_update(weights, sigma, clip):
    z = np.random.normal(0, sigma * clip, weights.shape)
    return weights + z.astype(int)  # <-
""",
        # in place on a gradient, the cast written with .to(torch.int64)
        """
import torch
def dp_step(params, noise_multiplier, max_norm, batch_size):
    for p in params:
        p.grad.add_(torch.normal(0.0, noise_multiplier * max_norm, p.grad.shape).to(torch.int64))  # <-
""",
        # a scalar Laplace draw truncated with int() before it is added to a weight
        """
import numpy as np
def perturb_weight(w, sensitivity, epsilon):
    w = w + int(np.random.laplace(0, sensitivity / epsilon))  # <-
    return w
""",
    )

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding is a cast to an integer type: ``.long()``, ``int(…)``, ``astype``/``to``/``type`` of an int type."""
        return any(facts.call_lasts(c) & (_INT_METHODS | {"astype", "to", "type"}) for c in facts.calls)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if isinstance(node.operator, cst.AddAssign):
            self._check(node, node.target, node.value)

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        if isinstance(node.operator, (cst.Add, cst.Subtract)):
            self._check(node, node.left, node.right)
            self._check(node, node.right, node.left)

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Attribute) and node.func.attr.value in ("add_", "add") and len(node.args) >= 1:
            self._check(node, node.func.value, node.args[0].value)

    def _check(self, site: cst.CSTNode, target: cst.BaseExpression, added: cst.BaseExpression) -> None:
        inner = _int_cast(added)
        if inner is None or not _model_name(target) or not self._noise(site, inner):
            return
        fn = self.ctx.analysis.enclosing_function(site)
        if not self.ctx.analysis.has_dp_code() and not (fn is not None and words(fn.name.value) & _HELPER_WORDS):
            return
        if any(isinstance(c, cst.Call) and call_name(c) in ("round", "rint", "floor", "ceil") for c in walk(inner)):
            return  # rounded on purpose: a discretised mechanism, another question
        self.report(site, f"the noise `{self.ctx.analysis.code(added).strip()}` is cast to an integer type before "
                          f"it is added to `{self.ctx.analysis.code(target).strip()}`: the cast truncates every "
                          f"draw with |z| < 1 to 0, so for a small std the model state is released without noise; "
                          f"add the float noise (cast it to the state's dtype, not to an integer)")

    def _noise(self, site: cst.CSTNode, expr: cst.BaseExpression) -> bool:
        if any(isinstance(c, cst.Call) and call_name(c) in _DRAWS for c in walk(expr)):
            return True
        fa = self.ctx.analysis
        fn = fa.enclosing_function(site)
        for n in walk(expr):
            if isinstance(n, cst.Name):
                value = last_assignment(fn or self.ctx.module, n.value, fa.line_of(site) + 1, fa.line_of)
                if value is not None and any(isinstance(c, cst.Call) and call_name(c) in _DRAWS
                                             for c in walk(value)):
                    return True
        return False
