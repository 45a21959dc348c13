"""DP595: a vector clamped coordinate-wise to [-C, C], then Gaussian noise calibrated to C as if C bounded its L2 norm."""
from __future__ import annotations

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, number, walk, words
from dpcheck.rule import Rule

#: calls that clamp every coordinate into ``[lo, hi]``
_CLAMP_CALLS = frozenset({"clamp", "clamp_", "clip", "clip_", "clip_by_value"})
#: calls that clamp every coordinate into ``[-v, v]`` given ``v``
_VALUE_CLIP_CALLS = frozenset({"clip_grad_value_", "clip_grad_value"})
#: elementwise maximum calls (``w / torch.max(ones, |w| / C)``)
_ELEMENTWISE_MAX = frozenset({"max", "maximum", "fmax"})
#: Gaussian draws (a scale next to them in the statement, or as an argument)
_GAUSS_DRAWS = frozenset({"normal", "normal_", "randn", "randn_like", "gauss", "normalvariate", "gaussian",
                          "random_normal", "standard_normal", "normal_like", "gaussian_noise", "normal_noise"})
#: words of the clamped operand that make it a vector of model values (not a per-record scalar)
_VECTOR_WORDS = frozenset({"grad", "grads", "gradient", "gradients", "weight", "weights", "param", "params",
                           "parameters", "update", "updates", "w", "embedding", "embeddings",
                           "model", "state", "vector", "vec"})
#: words of a noise scale that account for the dimension (``C * sqrt(d)``, ``numel``)
_DIM_WORDS = frozenset({"numel", "dim", "dims", "dimension", "dimensions", "d", "size", "shape", "num_params",
                        "nparams", "n_params", "len"})
#: calls a noise scale may be computed with
_SCALE_CALLS = frozenset({"sqrt", "power", "pow", "float", "int", "log", "exp", "abs", "min", "max", "item"})


def _neg_of(lo: cst.BaseExpression, hi: cst.BaseExpression, code) -> bool:
    """``lo`` is ``-hi`` (``-C``, ``-self.C``, ``-1 * C``)."""
    if isinstance(lo, cst.UnaryOperation) and isinstance(lo.operator, cst.Minus):
        return code(lo.expression).strip() == code(hi).strip()
    return False


class CoordinateClampGaussianL2(Rule):
    id = "DP595"
    name = "coordinate-clamp-gaussian-l2"
    category = "general"
    severity = "error"
    summary = "a vector clamped coordinate-wise to [-C, C] gets Gaussian noise sized for L2 sensitivity C"
    rationale = (
        "The Gaussian mechanism's noise σ·C hides one contribution only if C bounds its L2 norm. "
        "`clamp(w, -C, C)`, `np.clip(w, -C, C)`, `clip_grad_value_(params, C)` or "
        "`w / max(1, |w|/C)` bound every *coordinate* by C: a d-dimensional vector then has L2 norm "
        "up to C·√d, so noise calibrated to C under-protects it by a factor √d (for a model with a "
        "million weights, a thousand). Not reported: a clamp of a scalar or of per-record data values, "
        "noise whose scale accounts for the dimension (`C * sqrt(d)`, `numel`), a module that also "
        "clips the same value by its L2 norm with C, a literal bound the noise does not read. Fix: clip "
        "by the L2 norm (`clip_grad_norm_`, `w * min(1, C/‖w‖)`) or size the noise for C·√d."
    )
    TRIGGERS = ("clamp", "clip")
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        return bool(facts.called & (_CLAMP_CALLS | _VALUE_CLIP_CALLS | _ELEMENTWISE_MAX)) \
            and bool(facts.called & _GAUSS_DRAWS or any(words(c) & {"gaussian", "noise"} for c in facts.called))

    VALID = (
        # twin of the clamp INVALID: the update is clipped by its L2 norm before the noise
        """
import torch
def privatize_update(update, C, noise_multiplier):
    factor = min(1.0, C / (update.norm(2).item() + 1e-12))
    update = update * factor
    return update + torch.normal(0.0, noise_multiplier * C, update.shape)
""",
        # twin of the np.clip INVALID: the noise is sized for the L2 bound C*sqrt(d)
        """
import numpy as np
def dp_weights(weights, C, sigma):
    weights = np.clip(weights, -C, C)
    l2_bound = C * np.sqrt(weights.size)
    return weights + np.random.normal(0, sigma * l2_bound, weights.shape)
""",
        # a scalar per-record value clamped before a Gaussian sum (1-D: the clamp is the L2 bound)
        """
import numpy as np
def dp_sum(values, C, sigma):
    clipped = np.clip(values, -C, C)
    return clipped.sum() + np.random.normal(0, sigma * C)
""",
        # L2 clipping with C, then a coordinate clamp as an extra guard
        """
import torch
def clip_and_noise(model, C, noise_multiplier):
    torch.nn.utils.clip_grad_norm_(model.parameters(), C)
    for p in model.parameters():
        p.grad = p.grad.clamp(-C, C) + torch.randn_like(p.grad) * noise_multiplier * C
""",
        # ordinary ML: gradient value clipping in non-private training, augmentation noise
        """
import torch
def train_step(model, x, opt, clip_value, sigma_aug):
    x = x + sigma_aug * torch.randn_like(x)
    loss = model(x).mean()
    loss.backward()
    torch.nn.utils.clip_grad_value_(model.parameters(), clip_value)
    opt.step()
""",
        # diffusion: the predicted x0 clamped to [-1, 1], Gaussian noise of the sampler
        """
import torch
def p_sample(model, x, t, sigma_t):
    x0 = model(x, t).clamp(-1.0, 1.0)
    return x0 + sigma_t * torch.randn_like(x)
""",
    )

    INVALID = (
        # torch clamp of the weights, Gaussian noise of std sigma*C
        """
import torch
def privatize_update(update, C, noise_multiplier):
    update = torch.clamp(update, -C, C)  # <-
    return update + torch.normal(0.0, noise_multiplier * C, update.shape)
""",
        # numpy clip of each weight, the noise scale taken from the same bound
        """
import numpy as np
def dp_weights(weights, C, sigma):
    weights = np.clip(weights, -C, C)  # <-
    return weights + np.random.normal(0, sigma * C, weights.shape)
""",
        # elementwise rescaling w / max(1, |w|/C) stored on the object; a Gaussian helper sized from C
        """
import torch
class LocalDP:
    def __init__(self, args):
        self.clip_C = args.C
        self.sigma = args.sigma
    def clip(self, state):
        for k in state:
            state[k] = state[k] / torch.max(torch.ones_like(state[k]), torch.abs(state[k]) / self.clip_C)  # <-
        return state
    def noise(self, state):
        std = self.sigma * self.clip_C
        return {k: v + GaussianMechanism.noise_with_std(std, v.shape) for k, v in state.items()}
""",
        # value clipping of every gradient coordinate, noise from a Gaussian helper given the same bound
        """
import torch
def gaussian_grad_noise(model, clip_threshold, rho):
    return [torch.normal(0, clip_threshold / (2 * rho) ** 0.5, p.grad.size()) for p in model.parameters()]
def dp_train(model, args, rho):
    model(args.x).sum().backward()
    torch.nn.utils.clip_grad_value_(model.parameters(), args.clip_threshold)  # <-
    noise = gaussian_grad_noise(model, args.clip_threshold, rho)
    return noise
""",
    )

    def visit_Call(self, node: cst.Call) -> None:
        name = call_name(node)
        fa = self.ctx.analysis
        operand: cst.BaseExpression | None = None
        bound: cst.BaseExpression | None = None
        positional = [a.value for a in node.args if a.keyword is None]
        kw = {a.keyword.value: a.value for a in node.args if a.keyword is not None}
        if name in _CLAMP_CALLS:
            if isinstance(node.func, cst.Attribute) and words(fa.code(node.func.value)) & {"torch", "np", "numpy",
                                                                                          "tf", "jnp"}:
                args = positional
                operand = args[0] if args else None
                rest = args[1:]
            else:
                operand = node.func.value if isinstance(node.func, cst.Attribute) else None
                rest = positional
            lo = rest[0] if rest else kw.get("min", kw.get("a_min", kw.get("clip_value_min")))
            hi = rest[1] if len(rest) > 1 else kw.get("max", kw.get("a_max", kw.get("clip_value_max")))
            if lo is None or hi is None or not _neg_of(lo, hi, fa.code):
                return
            bound = hi
        elif name in _VALUE_CLIP_CALLS:
            operand = positional[0] if positional else kw.get("parameters")
            bound = positional[1] if len(positional) > 1 else kw.get("clip_value")
        elif name in _ELEMENTWISE_MAX and len(positional) == 2:
            # ``w / max(ones, abs(w) / C)``: the call divides its own operand
            ratio = positional[1]
            if not (isinstance(ratio, cst.BinaryOperation) and isinstance(ratio.operator, cst.Divide)
                    and isinstance(ratio.left, cst.Call) and call_name(ratio.left) in ("abs", "absolute", "fabs")):
                return
            parent = fa.index.parents.get(node)
            if not (isinstance(parent, cst.BinaryOperation) and isinstance(parent.operator, cst.Divide)
                    and parent.right is node):
                return
            operand, bound = parent.left, ratio.right
        if operand is None or bound is None or number(bound) is not None:
            return
        if not (words(fa.code(operand).replace(".", "_")) & _VECTOR_WORDS or "parameters()" in fa.code(operand)):
            return
        key = fa.code(bound).strip()
        if self._l2_clipped_with(key):
            return
        noise = self._gaussian_scaled_by(key, fa.enclosing_function(node))
        if noise is None:
            return
        self.report(node, f"`{fa.code(node).strip()[:70]}` bounds each coordinate by `{key}`, not the L2 norm "
                          f"(a d-dimensional vector can reach {key}·√d), but the Gaussian noise "
                          f"(`{noise}`) is calibrated to `{key}` as the L2 sensitivity; clip by the L2 norm or "
                          "size the noise for the coordinate bound times √d")

    def _l2_clipped_with(self, key: str) -> bool:
        """The module also clips by an L2 norm with the same bound (``clip_grad_norm_(ps, C)``, ``C / ‖w‖``)."""
        fa = self.ctx.analysis
        for n in walk(fa.index.module):
            if isinstance(n, cst.Call) and call_name(n) in ("clip_grad_norm_", "clip_grad_norm", "clip_by_norm",
                                                            "clip_by_global_norm") \
                    and any(fa.code(a.value).strip() == key for a in n.args):
                return True
            if isinstance(n, cst.BinaryOperation) and isinstance(n.operator, cst.Divide) \
                    and fa.code(n.left).strip() == key \
                    and any(isinstance(c, cst.Call) and call_name(c) in ("norm", "vector_norm", "l2_norm")
                            for c in walk(n.right)):
                return True
        return False

    def _mentions(self, node: cst.CSTNode, key: str) -> bool:
        """``node`` reads the name, attribute or subscript ``key`` (as a whole expression, not a substring)."""
        fa = self.ctx.analysis
        return any(isinstance(x, (cst.Name, cst.Attribute, cst.Subscript)) and fa.code(x).strip() == key
                   for x in walk(node))

    def _gaussian_scaled_by(self, key: str, where: cst.FunctionDef | None) -> str | None:
        """A Gaussian noise draw (or a Gaussian noise helper) whose statement reads ``key``, directly or
        through a scale assigned from it in the same function, its scale not accounting for the dimension:
        for a local bound, in the clamping function or a helper it calls with the bound; for an attribute
        (``self.C``, ``args.clip``), anywhere in the module. The draw's code, or None."""
        fa = self.ctx.analysis
        tail = key.split(".")[-1]
        local = "." not in key and "[" not in key
        helpers = {call_name(c) for c in walk(where if local and where is not None else fa.index.module)
                   if isinstance(c, cst.Call) and any(fa.code(a.value).strip() == key for a in c.args)}
        for n in walk(fa.index.module):
            if not isinstance(n, cst.Call):
                continue
            cname = call_name(n)
            pieces = words(cname)
            if not (cname in _GAUSS_DRAWS or "gaussian" in pieces
                    or (isinstance(n.func, cst.Attribute) and "gaussian" in words(fa.code(n.func.value))
                        and "noise" in pieces)):
                continue
            if pieces & {"laplace", "clip"}:
                continue
            statement = fa.enclosing_statement(n)
            func = fa.enclosing_function(n)
            if local and func is not where and (func is None or func.name.value not in helpers):
                continue
            scale_nodes: list[cst.CSTNode] = [statement]
            reads = self._mentions(statement, key)
            if not reads and func is not None:
                # a scale computed from the bound (``std = sigma * C``), not a value derived from the clamped data
                sources = [a for a in walk(func, into_scopes=False) if isinstance(a, cst.Assign)
                           and self._mentions(a.value, key)
                           and all(call_name(c) in _SCALE_CALLS for c in walk(a.value) if isinstance(c, cst.Call))]
                derived = {t.target.value for a in sources for t in a.targets if isinstance(t.target, cst.Name)}
                reads = any(isinstance(x, cst.Name) and x.value in derived for x in walk(statement))
                if reads:
                    scale_nodes += [a.value for a in sources]
            if not reads and func is not None:
                # a Gaussian helper given the bound: ``def gaussian_noise(model, clip_threshold, rho)``
                params = {p.name.value for p in func.params.params}
                reads = func.name.value in helpers and tail in params and self._mentions(statement, tail)
            if not reads:
                continue
            if any(isinstance(c, cst.Call) and call_name(c) == "sqrt" and c.args
                   and words(fa.code(c.args[0].value).replace(".", "_")) & _DIM_WORDS
                   for sn in scale_nodes for c in walk(sn)):
                continue
            return fa.code(n).strip()[:60]
        return None
