"""DP513: DP-SGD noise that does not match the clipping: σ where σ·C is meant, or every parameter tensor
clipped to C on its own while the noise is σ·C for the whole gradient."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.clipping import GAUSS_DRAWS, is_clip_bound, is_norm_value
from dpcheck.analysis.noisedraws import zero_centred
from dpcheck.analysis.syntax import call_name, last_name, loop_iter, loop_targets, number, undotted, walk, words
from dpcheck.rule import Rule

_MULTIPLIER_WORDS = frozenset({"sigma", "multiplier", "z"})
_STD_WORDS = frozenset({"std", "stddev", "scale", "var", "variance", "stdev", "sd"})
#: a name for the noise's standard deviation (``std_dev``, ``noise_scale``)
_NOISE_STD = frozenset({"std", "stddev", "noise"})
_CLIP_CALLS = frozenset({"clip_grad_norm_", "clip_grad_norm", "clip_by_norm"})
_PARAM_WORDS = frozenset({"params", "parameters", "grads", "gradients", "layers", "weights", "tensors",
                          "variables", "vars"})


def _clip(expr: cst.CSTNode) -> tuple[cst.BaseExpression, cst.BaseExpression] | None:
    """``(clipped, bound)`` of an L2 clip: ``g / max(1, n / C)``, ``g * min(1, C / n)``,
    ``clip_grad_norm_(g, C)``, ``tf.clip_by_norm(g, C)``."""
    if isinstance(expr, cst.Call) and call_name(expr) in _CLIP_CALLS and len(expr.args) >= 2:
        bound = next((a.value for a in expr.args if a.keyword is not None and a.keyword.value in (
            "max_norm", "clip_norm")), expr.args[1].value)
        return expr.args[0].value, bound
    if not isinstance(expr, cst.BinaryOperation):
        return None
    guard = expr.right if isinstance(expr.operator, (cst.Divide, cst.Multiply)) else None
    if not isinstance(guard, cst.Call) or call_name(guard) not in ("max", "maximum", "min", "minimum", "clamp"):
        return None
    for arg in guard.args:
        ratio = arg.value
        if isinstance(ratio, cst.BinaryOperation) and isinstance(ratio.operator, cst.Divide):
            if isinstance(expr.operator, cst.Divide) and is_norm_value(ratio.left) and not is_norm_value(ratio.right):
                return expr.left, ratio.right
            if isinstance(expr.operator, cst.Multiply) and is_norm_value(ratio.right) \
                    and not is_norm_value(ratio.left):
                return expr.left, ratio.left
    return None


def _gauss_std(call: cst.Call) -> cst.BaseExpression | None:
    """The std of a zero-centred Gaussian draw (``normal(0, s, …)``, ``normal(mean=0, std=s)``)."""
    if call_name(call) not in GAUSS_DRAWS or not zero_centred(call):
        return None
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value in ("std", "scale", "stddev", "sigma"):
            return arg.value
    positional = [a.value for a in call.args if a.keyword is None and not a.star]
    return positional[1] if len(positional) >= 2 else None


def _multiplier_only(expr: cst.BaseExpression) -> bool:
    """A bare noise multiplier: ``sigma``, ``self.noise_multiplier``, ``args.z`` (not ``noise_std``)."""
    if not isinstance(expr, (cst.Name, cst.Attribute)):
        return False
    pieces = words(last_name(expr) or "")
    return bool(pieces & _MULTIPLIER_WORDS) and not pieces & _STD_WORDS and not is_clip_bound(expr)


def _ast_has_clip(facts: AstFacts) -> bool:
    for call in facts.calls:
        func = call.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
        if name in _CLIP_CALLS or name in ("max", "maximum", "min", "minimum", "clamp") and any(
                isinstance(a, ast.BinOp) and isinstance(a.op, ast.Div) for a in call.args):
            return True
    return False


class ClipNoiseMismatch(Rule):
    id = "DP513"
    name = "clip-noise-mismatch"
    category = "general"
    severity = "error"
    summary = ("DP-SGD noise that does not match the clipping: std σ where σ·C is meant, or each parameter "
               "tensor clipped to C separately while the noise is σ·C for the whole gradient")
    rationale = (
        "After clipping each example's gradient to L2 norm C, the sum has sensitivity C and the "
        "Gaussian mechanism with noise multiplier σ adds N(0, σ²C²). Two mismatches undo the σ the "
        "accountant charges. (1) The std is the multiplier alone: `g / max(1, norm / C)` followed by "
        "`g + torch.normal(0, sigma, g.shape)` adds σ, which is σ·C only when C = 1, so the "
        "effective multiplier is σ/C (σ = 4 with C = 70 is 0.057). (2) Per-tensor clipping: a loop "
        "(or comprehension) over the parameter tensors that clips each one to C "
        "(`for p in model.parameters(): g = p.grad / max(1, p.grad.norm() / C)`, "
        "`[tf.clip_by_norm(g, C) for g in grads]`) bounds each tensor, so one example's whole gradient "
        "can have norm √L·C for L tensors, while the noise is σ·C. Not reported: a std that is "
        "assigned from the clip bound or a product anywhere in the module (`self.sigma = z * C`), a "
        "draw multiplied by C, a clip bound of 1, per-layer bounds (`C / sqrt(L)`, `clip[i]`), a "
        "global norm (`clip_grad_norm_(model.parameters(), C)`, `clip_by_global_norm`), functions "
        "without a Gaussian draw, code with no DP context. Fix: noise std σ·C; clip the "
        "concatenated gradient (global norm) or give each tensor C/√L."
    )
    TRIGGERS = ("norm",)

    @classmethod
    def applies_to(cls, source: str) -> bool:
        """A norm (the clip) and a Gaussian draw's name."""
        return "norm" in source and ("normal" in source or "randn" in source or "gauss" in source)
    #: a norm clip followed by Gaussian noise named for a multiplier is DP-SGD by itself
    requires_dp_context = False

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding needs an L2 clip (``clip_grad_norm_``/``clip_by_norm``, ``max``/``min`` of a ratio, or an
        ``if`` comparison guarding a rescale) and a Gaussian draw in the file."""
        guarded = any(isinstance(n.test, ast.Compare) for n in facts.nodes(ast.If))
        return (_ast_has_clip(facts) or guarded) and bool(facts.calls_any({
            "normal", "randn", "randn_like", "gauss", "random_normal", "normal_", "standard_normal"}))

    VALID = (
        # the guarded clip of the whole update (global norm), then σ·C per tensor
        """
import numpy as np
def privatize_update(weights, clip_norm, noise_multiplier):
    total = np.sqrt(sum(np.sum(d ** 2) for d in weights))
    out = []
    for d in weights:
        if total > clip_norm:
            d = d * clip_norm / total
        out.append(d + np.random.normal(0, noise_multiplier * clip_norm, d.shape))
    return out
""",
        # a coefficient from the global norm, applied per tensor
        """
import torch
def noisy_grads(model, C, noise_multiplier):
    total = torch.norm(torch.stack([p.grad.norm() for p in model.parameters()]))
    for p in model.parameters():
        coef = min(C / (total + 1e-6), 1.0)
        p.grad = p.grad * coef + noise_multiplier * C * torch.randn_like(p.grad)
""",
        # per-tensor guard with per-layer bound C/√L
        """
import numpy as np
def clip_layers_np(weights, clip, sigma):
    per_layer = clip / np.sqrt(len(weights))
    out = []
    for w in weights:
        n = np.linalg.norm(w)
        if n > per_layer:
            w = w * per_layer / n
        out.append(w + np.random.normal(0, sigma * clip, w.shape))
    return out
""",
        # σ·C
        """
import torch
def dp_step(model, C, sigma, lr):
    for p in model.parameters():
        g = p.grad_sample.sum(0)
        p.data -= lr * (g + torch.normal(0, sigma * C, g.shape))
""",
        # the std bound to the product in __init__
        """
import torch
class Client:
    def __init__(self, args):
        self.C = args.clip
        self.sigma = args.noise_multiplier * args.clip
    def step(self, grads):
        total = torch.cat([g.flatten() for g in grads]).norm()
        out = []
        for g in grads:
            g = g / max(1, total / self.C)
            out.append(g + torch.normal(0, self.sigma, size=g.shape))
        return out
""",
        # a global clip, then σ·C
        """
import torch
def private_step(model, max_grad_norm, noise_multiplier):
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
    for p in model.parameters():
        p.grad += torch.normal(0, noise_multiplier * max_grad_norm, p.grad.shape)
""",
        # per-layer bounds C/√L
        """
import math, torch
def clip_layers(model, C, sigma):
    params = list(model.parameters())
    c_layer = C / math.sqrt(len(params))
    for p in params:
        p.grad = p.grad / max(1, p.grad.norm() / c_layer)
        p.grad += torch.normal(0, sigma * C, p.grad.shape)
""",
        # the unit draw scaled by σ and by the clip bound (DP-FedSAC spelling)
        """
import torch
def aggregate(deltas, c_fixed, sigma_t):
    clipped = [d * min(1.0, c_fixed / (d.norm(2).item() + 1e-8)) for d in deltas]
    agg = torch.stack(clipped).sum(dim=0)
    agg.add_(torch.randn_like(agg) * sigma_t * c_fixed)
    return agg
""",
        # the multiplier was turned into a std earlier in the function (σ = C·z)
        """
import torch
def privatize(flat, C, noise_multiplier):
    flat = flat * min(1.0, C / (flat.norm() + 1e-12))
    sigma = C * noise_multiplier
    return flat + torch.randn_like(flat) * sigma
""",
        # the draw multiplied by C
        """
import numpy as np
def noisy_sum(g, clip, sigma):
    g = g / max(1, np.linalg.norm(g) / clip)
    return g + clip * np.random.normal(0, sigma, g.shape)
""",
    )

    INVALID = (
        # DP-GNNs: a global-norm clip per example, then a unit draw scaled by the multiplier alone
        """
import torch
def train_step(model, losses, clip_norm, noise_multiplier):
    for loss in losses:
        loss.backward(retain_graph=True)
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=clip_norm)
    for p in model.parameters():
        noise = torch.randn_like(p.grad) * (noise_multiplier)  # <-
        p.grad = (p.grad + noise) / len(losses)
""",
        # numpy: the multiplier times a standard normal after a ratio clip
        """
import numpy as np
def privatize(update, C, sigma):
    update = update * min(1.0, C / np.linalg.norm(update))
    return update + sigma * np.random.standard_normal(update.shape)  # <-
""",
        # a per-tensor clip guarded by an if, numpy, noise std named for the std
        """
import numpy as np
def privatize_update(weights, clip_norm, noise_multiplier):
    out = []
    for d in weights:
        n = np.linalg.norm(d)
        if n > clip_norm:
            d = d * clip_norm / n  # <-
        std_dev = noise_multiplier * clip_norm
        out.append(d + np.random.normal(0, std_dev, d.shape))
    return out
""",
        # a clip coefficient per tensor through a local name, noise scaled outside the draw
        """
import torch
def noisy_grads(model, C, noise_scale):
    for p in model.parameters():
        coef = min(C / (p.grad.norm() + 1e-6), 1.0)
        p.grad = p.grad * coef + noise_scale * torch.randn_like(p.grad)  # <-
""",
        # the comparison written the other way round, division form, module-level script
        """
import torch
for name, g in grads.items():
    g_norm = torch.linalg.vector_norm(g)
    if max_norm < g_norm:
        g = g / (g_norm / max_norm)  # <-
    grads[name] = g + torch.normal(0.0, sigma * max_norm, g.shape)
""",
        # NicoleStrel DP-SGD-FL update.py: per-tensor clip to C, then noise with std sigma alone
        """
import torch
def update_weights(self, model, image, label):
    loss = self.criterion(model(image), label)
    loss.backward()
    for param in model.parameters():
        grad = param.grad.detach().clone()
        norm = torch.norm(grad)
        grad_clipped = grad / max(1, norm / self.C)  # <-
        grad_clipped += torch.normal(0, self.sigma, size=grad_clipped.shape)  # <-
        param.data.add_(-self.lr, grad_clipped)
""",
        """
import numpy as np
def privatize(grad, clip_norm, noise_multiplier):
    grad = grad * min(1.0, clip_norm / np.linalg.norm(grad))
    return grad + np.random.normal(0, noise_multiplier, grad.shape)  # <-
""",
        # per-tensor clipping in a comprehension, noise σ·C
        """
import tensorflow as tf
def dp_grads(tape, loss, variables, l2_norm_clip, noise_multiplier):
    grads = tape.gradient(loss, variables)
    clipped = [tf.clip_by_norm(g, l2_norm_clip) for g in grads]  # <-
    return [g + tf.random.normal(tf.shape(g), stddev=noise_multiplier * l2_norm_clip) for g in clipped]
""",
        """
import torch
def clip_and_noise(model, max_grad_norm, noise_multiplier):
    for name, p in model.named_parameters():
        torch.nn.utils.clip_grad_norm_(p, max_grad_norm)  # <-
        p.grad += torch.normal(0, noise_multiplier * max_grad_norm, p.grad.shape)
""",
    )

    def visit_Call(self, node: cst.Call) -> None:
        std = _gauss_std(node)
        if std is None:
            std = self._unit_draw_factor(node)
        if std is not None and _multiplier_only(std):
            self._bare_multiplier(node, std)
        if call_name(node) in _CLIP_CALLS:
            self._per_tensor(node)

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        if not isinstance(node.operator, (cst.Divide, cst.Multiply)):
            return
        if isinstance(node.right, cst.Call):
            self._per_tensor(node)
        elif isinstance(node.right, cst.Name):
            self._per_tensor_factor(node)
        if not isinstance(self.ctx.analysis.parent(node), cst.BinaryOperation):
            self._per_tensor_guarded(node)

    def _per_tensor_factor(self, node: cst.BinaryOperation) -> None:
        """``g * coef`` with ``coef = min(C / norm, 1)`` assigned in the same loop body."""
        assert isinstance(node.right, cst.Name)
        fa = self.ctx.analysis
        loop = next(iter(fa.enclosing_loops(node, comprehensions=False)), None)
        if loop is None:
            return
        values = [sub.value for sub in walk(loop.body, into_scopes=False) if isinstance(sub, cst.Assign)
                  and len(sub.targets) == 1 and isinstance(sub.targets[0].target, cst.Name)
                  and sub.targets[0].target.value == node.right.value]
        if len(values) == 1 and isinstance(values[0], cst.Call):
            self._per_tensor(node, node.with_changes(right=values[0]))

    def _per_tensor_guarded(self, node: cst.BinaryOperation) -> None:
        """``if norm > C: g = g * C / norm`` (or ``g * (C / norm)``, ``g / (norm / C)``) in a loop over tensors."""
        fa = self.ctx.analysis
        guard = next((a for a in fa.ancestors(node) if isinstance(a, cst.If)), None)
        if guard is None or not isinstance(guard.test, cst.Comparison) or len(guard.test.comparisons) != 1:
            return
        op = guard.test.comparisons[0].operator
        left, right = guard.test.left, guard.test.comparisons[0].comparator
        if isinstance(op, (cst.LessThan, cst.LessThanEqual)):
            left, right = right, left
        elif not isinstance(op, (cst.GreaterThan, cst.GreaterThanEqual)):
            return
        norm, bound = last_name(left), last_name(right)
        if not norm or not bound or not isinstance(left, cst.Name):
            return
        leaves = [n for n in walk(node) if isinstance(n, (cst.Name, cst.Attribute))
                  and not isinstance(fa.parent(n), cst.Attribute)]
        names = [last_name(n) for n in leaves]
        if norm not in names or bound not in names or len(leaves) != 3:
            return
        clipped = next((n for n in leaves if last_name(n) not in (norm, bound)), None)
        if clipped is None:
            return  # ``norm * bound / norm``: no tensor is rescaled
        self._per_tensor(node, clip=(clipped, right), norm=norm)

    # -- (1) σ where σ·C is meant ----------------------------------------------------------------
    def _bare_multiplier(self, draw: cst.Call, std: cst.BaseExpression) -> None:
        fa = self.ctx.analysis
        fn = fa.enclosing_function(draw)
        if fn is None:
            return
        clips = [c for n in walk(fn, into_scopes=False) if (c := _clip(n)) is not None]
        bounds = [b for _, b in clips if number(b) != 1]
        if not bounds:
            return
        if self._scaled_elsewhere(std, bounds) or self._draw_times_bound(draw, fn, bounds):
            return
        bound = fa.code(bounds[0]).strip()
        self.report(draw, f"the Gaussian std is `{fa.code(std).strip()}` alone, but the gradient was clipped to "
                          f"`{bound}`: the sum's sensitivity is `{bound}`, so the noise must be σ·{bound}; as "
                          f"written the effective noise multiplier is σ/{bound}")

    def _unit_draw_factor(self, node: cst.Call) -> cst.BaseExpression | None:
        """``torch.randn_like(g) * sigma``, ``sigma * np.random.standard_normal(n)``: a unit Gaussian scaled by one
        factor of the product it stands in (the factor that is a bare multiplier, if any)."""
        name = call_name(node)
        if name not in ("randn", "randn_like", "standard_normal") and not (
                name == "normal" and _gauss_std(node) is None and not any(
                    a.keyword is not None and a.keyword.value in ("std", "scale", "stddev", "sigma")
                    for a in node.args) and len([a for a in node.args if a.keyword is None]) < 2):
            return None
        fa = self.ctx.analysis
        parent = fa.parent(node)
        if not (isinstance(parent, cst.BinaryOperation) and isinstance(parent.operator, cst.Multiply)):
            return None
        other = parent.right if parent.left is node else parent.left
        return other if _multiplier_only(other) else None

    def _scaled_elsewhere(self, std: cst.BaseExpression, bounds: list[cst.BaseExpression]) -> bool:
        """Is the std's name bound anywhere in the module to a product, a call, or a value using a bound?"""
        name = last_name(std)
        bound_names = {last_name(b) for b in bounds}
        for sub in walk(self.ctx.module):
            if isinstance(sub, cst.Assign) and any(last_name(t.target) == name for t in sub.targets):
                value = sub.value
            elif isinstance(sub, (cst.AugAssign, cst.AnnAssign)) and last_name(sub.target) == name:
                value = sub.value
            else:
                continue
            if value is None:
                continue
            if isinstance(value, (cst.BinaryOperation, cst.Call)) and not (
                    isinstance(value, cst.Call) and call_name(value) in ("float", "int", "get")):
                return True
            if any(isinstance(n, (cst.Name, cst.Attribute)) and (last_name(n) in bound_names or is_clip_bound(n))
                   for n in walk(value)):
                return True
        return False

    def _draw_times_bound(self, draw: cst.Call, fn: cst.FunctionDef, bounds: list[cst.BaseExpression]) -> bool:
        """``C * normal(0, sigma)``, or the drawn name later multiplied by a bound."""
        fa = self.ctx.analysis
        bound_names = {last_name(b) for b in bounds}
        for anc in fa.ancestors(draw):
            if isinstance(anc, cst.BinaryOperation) and isinstance(anc.operator, cst.Multiply):
                if any(isinstance(n, (cst.Name, cst.Attribute)) and (last_name(n) in bound_names or is_clip_bound(n))
                       for n in (anc.left, anc.right)):
                    return True
            if isinstance(anc, (cst.BaseSmallStatement, cst.BaseCompoundStatement)):
                break
        return False

    # -- (2) per-tensor clipping -----------------------------------------------------------------
    def _per_tensor(self, node: cst.CSTNode, shape: cst.CSTNode | None = None, *,
                    clip: tuple[cst.BaseExpression, cst.BaseExpression] | None = None,
                    norm: str | None = None) -> None:
        shape = node if shape is None else shape
        clip = _clip(shape) if clip is None else clip
        if clip is None:
            return
        clipped, bound = clip
        if number(bound) is not None or isinstance(bound, cst.Subscript):
            return
        if words(last_name(bound) or "") & {"layer", "tensor", "per", "param"}:
            return
        fa = self.ctx.analysis
        loop = next((lp for lp in fa.enclosing_loops(node, comprehensions=True)
                     if self._over_tensors(lp)), None)
        if loop is None:
            return
        targets = {t.split(".")[-1] for t in loop_targets(loop)}
        tensor_names = targets | self._derived(loop, targets)
        if not any(isinstance(n, cst.Name) and n.value in tensor_names for n in walk(clipped)):
            return
        if norm is not None:
            norm_expr = undotted(norm)
            if norm_expr is None or not self._norm_of_loop_tensor(norm_expr, loop, tensor_names):
                return
        elif isinstance(shape, cst.BinaryOperation) and not self._norm_of_loop_tensor(shape, loop, tensor_names):
            return
        scope = fa.enclosing_function(node) or self.ctx.module
        if not self._noised(scope, last_name(bound)):
            return
        self.report(node, f"each tensor of `{fa.code(loop_iter(loop)).strip()}` is clipped to "
                          f"`{fa.code(bound).strip()}` on its own: one example's whole gradient can then have norm "
                          f"√L·{fa.code(bound).strip()} for L tensors, while the noise is calibrated to "
                          f"{fa.code(bound).strip()}; clip the global norm, or each tensor to C/√L")

    @staticmethod
    def _over_tensors(loop: cst.CSTNode) -> bool:
        it = loop_iter(loop)
        if it is None:
            return False
        while isinstance(it, cst.Call) and call_name(it) in ("enumerate", "zip", "list", "tuple", "reversed"):
            if not it.args:
                return False
            it = it.args[0].value
        if isinstance(it, cst.Call):
            name = call_name(it)
            if name in ("parameters", "named_parameters", "trainable_variables", "values", "items"):
                if name in ("values", "items") and isinstance(it.func, cst.Attribute):
                    return bool(words(last_name(it.func.value) or "") & _PARAM_WORDS)
                return True
            return False
        return bool(words(last_name(it) or "") & _PARAM_WORDS)

    @staticmethod
    def _derived(loop: cst.CSTNode, targets: set[str]) -> set[str]:
        """Names assigned in the loop body from the loop variables (``grad = param.grad.clone()``)."""
        out: set[str] = set()
        body = loop.body if isinstance(loop, cst.For) else loop
        for sub in walk(body, into_scopes=False):
            if isinstance(sub, cst.Assign) and len(sub.targets) == 1 and isinstance(sub.targets[0].target, cst.Name):
                if any(isinstance(n, cst.Name) and n.value in targets | out for n in walk(sub.value)):
                    out.add(sub.targets[0].target.value)
        return out

    @staticmethod
    def _norm_of_loop_tensor(node: cst.CSTNode, loop: cst.CSTNode, names: set[str]) -> bool:
        """The norm in the guard is the loop tensor's own (not a global norm computed before the loop)."""
        guard = node.right if isinstance(node, cst.BinaryOperation) else node
        for n in walk(guard):
            if isinstance(n, cst.Call) and call_name(n) in ("norm", "vector_norm") and any(
                    isinstance(m, cst.Name) and m.value in names for m in walk(n)):
                return True
        body = loop.body if isinstance(loop, cst.For) else loop
        guard_names = {n.value for n in walk(guard) if isinstance(n, cst.Name)}
        for sub in walk(body, into_scopes=False):
            if isinstance(sub, cst.Assign) and len(sub.targets) == 1 and isinstance(sub.targets[0].target, cst.Name) \
                    and sub.targets[0].target.value in guard_names and any(
                        isinstance(n, cst.Call) and call_name(n) in ("norm", "vector_norm") for n in walk(sub.value)) \
                    and any(isinstance(m, cst.Name) and m.value in names for m in walk(sub.value)):
                return True
        return False

    def _noised(self, fn: cst.CSTNode, bound: str | None) -> bool:
        """A Gaussian draw in the function whose arguments (or the factor scaling it) name the clip bound, a
        noise multiplier or a noise std."""
        fa = self.ctx.analysis
        for n in walk(fn, into_scopes=False):
            if isinstance(n, cst.Call) and (call_name(n) in GAUSS_DRAWS or call_name(n) in (
                    "randn", "randn_like", "normal_")):
                scaled: cst.CSTNode = n
                parent = fa.parent(n)
                if isinstance(parent, cst.BinaryOperation) and isinstance(parent.operator, cst.Multiply):
                    scaled = parent
                for m in walk(scaled):
                    if isinstance(m, (cst.Name, cst.Attribute)) and (
                            last_name(m) == bound or words(last_name(m) or "") & (_MULTIPLIER_WORDS | _NOISE_STD)):
                        return True
        return False
