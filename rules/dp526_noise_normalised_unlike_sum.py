"""DP526: noise divided by the batch size added to a sum of clipped gradients that is never divided."""
from __future__ import annotations

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.clipping import GUARD_CALLS, NORM_CALLS
from dpcheck.analysis.noisedraws import PURE_DRAWS
from dpcheck.analysis.syntax import call_name, number, walk
from dpcheck.rule import Rule

#: calls that bound a vector's norm (the DP-SGD clip whose sum the noise protects)
_CLIP_CALLS = frozenset({"clip_grad_norm_", "clip_grad_norm", "clip_by_norm", "clip_by_global_norm"}) | NORM_CALLS
#: in-place scalings of a tensor
_SCALE_METHODS = frozenset({"div_", "mul_", "div", "mul", "true_divide_"})
#: calls whose value is a sum over the examples' axis
_SUM_CALLS = frozenset({"sum", "reduce_sum", "nansum"})


def _key(expr: cst.BaseExpression) -> str | None:
    """``param.grad.data`` -> ``param.grad``; ``self.acc`` -> ``self.acc``; anything else -> None."""
    parts: list[str] = []
    cur: cst.BaseExpression = expr
    while isinstance(cur, cst.Attribute):
        if cur.attr.value != "data":
            parts.append(cur.attr.value)
        cur = cur.value
    if not isinstance(cur, cst.Name):
        return None
    parts.append(cur.value)
    return ".".join(reversed(parts))


def _copied(expr: cst.BaseExpression) -> cst.BaseExpression:
    """``x.clone()``, ``x.detach()``, ``x.copy()`` -> ``x`` (the same values)."""
    while isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) \
            and expr.func.attr.value in ("clone", "detach", "copy", "float", "double") and not expr.args:
        expr = expr.func.value
    return expr


def _top_divided(expr: cst.BaseExpression) -> bool:
    """A division in the arithmetic of ``expr`` outside any call's arguments (``g / n``, ``s * (1 / n)``;
    not the clip ratio inside ``min(1, C / norm)``); a receiver's arithmetic counts (``(g / n).sum(0)``)."""
    if isinstance(expr, cst.BinaryOperation):
        if isinstance(expr.operator, cst.Divide):
            # ``g / max(1, ‖g‖ / C)`` is the clip, not a mean
            return not (isinstance(expr.right, cst.Call) and call_name(expr.right) in GUARD_CALLS)
        return _top_divided(expr.left) or _top_divided(expr.right)
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute):
        return _top_divided(expr.func.value)
    return False


def _is_test(path: str) -> bool:
    path = path.replace("\\", "/")
    stem = path.rsplit("/", 1)[-1]
    return stem.startswith("test_") or stem.endswith("_test.py") or "/tests/" in f"/{path}"


class NoiseNormalisedUnlikeSum(Rule):
    id = "DP526"
    name = "noise-normalised-unlike-sum"
    category = "general"
    severity = "error"
    summary = ("noise divided by the batch size is added to the sum of the clipped gradients, which is never "
               "divided: the noise is B times too small for the noise multiplier the accountant charges")
    rationale = (
        "DP-SGD releases either the sum of the B clipped per-example gradients plus N(0, σ²C²), or that noisy sum "
        "divided by B. Both operands must be normalised alike: the mean needs noise σC/B, the sum σC. A hand-written "
        "optimizer that accumulates the clipped gradients into a buffer (`acc.add_(p.grad)`, `acc += g` in the "
        "loop over examples, `g.sum(0)`), copies the buffer into `.grad` and then adds `noise / batch_size` "
        "without ever dividing the buffer adds the mean's noise to the sum: the effective noise multiplier is σ/B "
        "while the accountant is run with σ. Reported: a noise draw (a sampler call, or a helper of the module "
        "that returns one) divided by a non-constant, added (`+`, `+=`, `add_`) to a value that holds a sum "
        "accumulated in the module (or a sum call over examples), in a module that clips by a norm, when neither "
        "the sum nor the noisy result is divided or scaled anywhere after. Not reported: the sum divided by the "
        "same count (`(s + noise) / B`, `s / B + noise / B`, `grad.div_(B)` after), a buffer accumulated from "
        "already divided terms (`acc.add_(g / B)`), noise divided by a √ (DP509), tests. Fix: add N(0, σ²C²) to "
        "the sum and divide the noisy sum by B (or divide both)."
    )
    TRIGGERS = ("/",)
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding is a noise draw divided by something, in a module that clips by a norm."""
        return bool(facts.called & _CLIP_CALLS) and bool(facts.binops(__import__("ast").Div))

    VALID = (
        # the noisy sum divided by the batch size
        """
import torch
def private_grad(model, per_example, clip, sigma, batch_size):
    for p in model.parameters():
        p.accum = torch.zeros_like(p)
    for g in per_example:
        torch.nn.utils.clip_grad_norm_(g, clip)
        for p, gp in zip(model.parameters(), g):
            p.accum.add_(gp)
    for p in model.parameters():
        p.grad = p.accum.clone()
        p.grad += torch.normal(0, sigma * clip, p.grad.shape)
        p.grad.div_(batch_size)
""",
        # both operands divided by B
        """
import numpy as np
def noisy_mean(grads, clip, sigma):
    B = len(grads)
    total = np.zeros_like(grads[0])
    for g in grads:
        total += g / max(1.0, np.linalg.norm(g) / clip)
    return total / B + np.random.normal(0, sigma * clip, total.shape) / B
""",
        # the buffer holds a mean already (each term divided when accumulated)
        """
import torch
class Sanitizer:
    def collect(self, params, clip, n):
        torch.nn.utils.clip_grad_norm_(params, clip)
        for p in params:
            p.acc.add_(p.grad / n)
    def release(self, params, clip, sigma, n):
        for p in params:
            p.grad = p.acc.clone()
            p.grad += torch.randn_like(p.grad) * sigma * clip / n
""",
        # the per-example matrix averaged, not summed
        """
import torch
def step(per_sample, clip, sigma):
    norms = per_sample.norm(dim=1, keepdim=True)
    clipped = per_sample * torch.clamp(clip / norms, max=1.0)
    mean = clipped.mean(0)
    return mean + torch.normal(0.0, sigma * clip, mean.shape) / per_sample.shape[0]
""",
    )

    INVALID = (
        # an optimizer whose clip method fills a buffer and whose noise method divides only the noise
        """
import torch
def _draw(sigma, clip, ref):
    return torch.normal(0, sigma * clip, ref.shape)
class PrivateSGD(torch.optim.SGD):
    def clip_sample(self, clip):
        torch.nn.utils.clip_grad_norm_(self.param_groups[0]['params'], clip)
        for group in self.param_groups:
            for p, buf in zip(group['params'], group['buffers']):
                buf.add_(p.grad.data)
    def noise(self, sigma, clip, lot):
        for group in self.param_groups:
            for p, buf in zip(group['params'], group['buffers']):
                p.grad.data = buf.clone()
                z = _draw(sigma, clip, p)
                p.grad += z / lot  # <-
""",
        # a running sum in a loop over examples, noise scaled down by the count
        """
import numpy as np
def dp_gradient(examples, clip, noise_multiplier):
    total = 0
    for g in examples:
        total += g * min(1.0, clip / np.linalg.norm(g))
    noise = np.random.normal(0, noise_multiplier * clip, total.shape)
    return total + noise / len(examples)  # <-
""",
        # a sum over the examples' axis with the noise divided by the batch size
        """
import torch
def privatize(per_sample, max_norm, noise_multiplier, batch):
    factors = (max_norm / (per_sample.norm(dim=1) + 1e-6)).clamp(max=1.0)
    summed = (per_sample * factors[:, None]).sum(dim=0)
    summed.add_(torch.randn_like(summed) * noise_multiplier * max_norm / batch)  # <-
    return summed
""",
        # an attribute buffer filled in one method, noised in another
        """
import numpy as np
class LocalTrainer:
    def accumulate(self, g, clip):
        self.running += g / max(1.0, np.linalg.norm(g) / clip)
    def privatized(self, noise_multiplier, clip, lot_size):
        eta = np.random.normal(0.0, noise_multiplier * clip, self.running.shape)
        return self.running + eta / lot_size  # <-
""",
    )

    def visit_Module(self, node: cst.Module) -> None:
        if _is_test(self.ctx.path):
            return
        self._clips = any(isinstance(c, cst.Call) and call_name(c) in _CLIP_CALLS for c in walk(node))
        if not self._clips:
            return
        self._helpers = {f.name.value for f in walk(node) if isinstance(f, cst.FunctionDef) and self._returns_draw(f)}
        self._accumulators, self._scaled = self._buffers(node)
        for fn in walk(node):
            if isinstance(fn, cst.FunctionDef):
                self._function(fn)

    @staticmethod
    def _returns_draw(fn: cst.FunctionDef) -> bool:
        for ret in walk(fn, into_scopes=False):
            if isinstance(ret, cst.Return) and ret.value is not None and any(
                    isinstance(c, cst.Call) and call_name(c) in PURE_DRAWS for c in walk(ret.value)):
                return True
        return False

    def _buffers(self, module: cst.Module) -> tuple[set[str], set[str]]:
        """Keys accumulated with undivided terms (``acc.add_(g)``, ``acc += g``), and keys scaled in place."""
        acc: set[str] = set()
        scaled: set[str] = set()
        for sub in walk(module):
            target: cst.BaseExpression | None = None
            term: cst.BaseExpression | None = None
            if isinstance(sub, cst.Call) and isinstance(sub.func, cst.Attribute):
                method = sub.func.attr.value
                if method in _SCALE_METHODS:
                    key = _key(sub.func.value)
                    if key:
                        scaled.add(key)
                if method == "add_" and sub.args:
                    target, term = sub.func.value, sub.args[0].value
            elif isinstance(sub, cst.AugAssign):
                key = _key(sub.target)
                if isinstance(sub.operator, (cst.DivideAssign, cst.MultiplyAssign)) and key:
                    scaled.add(key)
                if isinstance(sub.operator, cst.AddAssign):
                    target, term = sub.target, sub.value
            if target is None or term is None:
                continue
            key = _key(target)
            fn = self.ctx.analysis.enclosing_function(sub)
            if key is None or self._noise_term(term, fn) is not None or self._noisy(term) \
                    or (fn is not None and self._noise_name(term, fn)):
                continue
            if _top_divided(term):
                scaled.add(key)  # a mean accumulated term by term
                continue
            acc.add(key)
        return acc, scaled

    def _noisy(self, expr: cst.BaseExpression) -> bool:
        return any(isinstance(c, cst.Call) and (call_name(c) in PURE_DRAWS or call_name(c) in self._helpers)
                   for c in walk(expr))

    def _noise_term(self, expr: cst.BaseExpression, fn: cst.FunctionDef | None = None) -> str | None:
        """The divisor's code when ``expr`` is noise divided by a non-constant (``z / B``, ``randn(..) * s / B``)."""
        if not (isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Divide)):
            return None
        divisor = expr.right
        if number(divisor) is not None or any(isinstance(c, cst.Call) and call_name(c) == "sqrt"
                                              for c in walk(divisor)) or "**" in self.ctx.analysis.code(divisor):
            return None
        if self._noisy(expr.left) or (fn is not None and self._noise_name(expr.left, fn)):
            return self.ctx.analysis.code(divisor).strip()
        return None

    def _noise_name(self, expr: cst.BaseExpression, fn: cst.FunctionDef) -> bool:
        """A name (or a product with one) bound in ``fn`` to a draw or a helper that returns one."""
        for name in walk(expr):
            if not isinstance(name, cst.Name):
                continue
            for stmt in walk(fn, into_scopes=False):
                if isinstance(stmt, cst.Assign) and len(stmt.targets) == 1 \
                        and isinstance(stmt.targets[0].target, cst.Name) \
                        and stmt.targets[0].target.value == name.value and self._noisy(stmt.value):
                    return True
        return False

    def _function(self, fn: cst.FunctionDef) -> None:
        fa = self.ctx.analysis
        copies: dict[str, str] = {}  # a target key -> the accumulator it was copied from
        stmts = [s for s in walk(fn, into_scopes=False)]
        for idx, sub in enumerate(stmts):
            if isinstance(sub, cst.Assign) and len(sub.targets) == 1:
                key = _key(sub.targets[0].target)
                src = _key(_copied(sub.value))
                if key and src and src in self._accumulators:
                    copies[key] = src
                continue
            site, target, added = self._noise_add(sub)
            if site is None or target is None or added is None:
                continue
            divisor = self._noise_term(added, fn)
            if divisor is None:
                continue
            key = _key(target)
            summed = self._sum_value(target, fn) if key is None else (
                key in self._accumulators or key in copies or self._sum_bound(key, fn))
            if not summed:
                continue
            origin = copies.get(key, key) if key else None
            if key and (key in self._scaled or (origin and origin in self._scaled)):
                continue
            if self._divided_after(fn, sub, key, stmts[idx + 1:]):
                continue
            shown = fa.code(target).strip()
            self.report(site, f"`{shown}` holds the sum of the clipped gradients (never divided by the batch size), "
                              f"but the noise added to it is divided by `{divisor}`: the sum's sensitivity is C, so "
                              f"its noise must be σ·C; noise σ·C/B makes the effective noise multiplier σ/B while "
                              f"the accountant charges σ. Add the undivided noise to the sum and divide the result "
                              f"(or divide the sum too)")

    def _noise_add(self, sub: cst.CSTNode) -> tuple[cst.CSTNode | None, cst.BaseExpression | None,
                                                    cst.BaseExpression | None]:
        """(site, the value noise is added to, the added term) for ``t += n``, ``t.add_(n)``, ``t + n``."""
        if isinstance(sub, cst.AugAssign) and isinstance(sub.operator, cst.AddAssign):
            return sub, sub.target, sub.value
        if isinstance(sub, cst.Call) and isinstance(sub.func, cst.Attribute) and sub.func.attr.value == "add_" \
                and len(sub.args) == 1:
            return sub, sub.func.value, sub.args[0].value
        if isinstance(sub, cst.BinaryOperation) and isinstance(sub.operator, cst.Add):
            if self._noisy(sub.left) and not self._noisy(sub.right):
                return sub, sub.right, sub.left
            return sub, sub.left, sub.right
        return None, None, None

    def _sum_value(self, expr: cst.BaseExpression, fn: cst.FunctionDef) -> bool:
        """A sum over examples written in place: ``x.sum(0)``, ``torch.sum(x, dim=0)``, ``sum(grads)``."""
        expr = _copied(expr)
        return isinstance(expr, cst.Call) and call_name(expr) in _SUM_CALLS and not _top_divided(expr)

    def _sum_bound(self, key: str, fn: cst.FunctionDef) -> bool:
        """``key`` is bound in ``fn`` to a sum call (``summed = (g * f).sum(dim=0)``)."""
        for stmt in walk(fn, into_scopes=False):
            if isinstance(stmt, cst.Assign) and len(stmt.targets) == 1 and _key(stmt.targets[0].target) == key:
                if self._sum_value(stmt.value, fn):
                    return True
        return False

    def _divided_after(self, fn: cst.FunctionDef, site: cst.CSTNode, key: str | None,
                       later: list[cst.CSTNode]) -> bool:
        """The noisy value (its key, or the expression holding the site) is divided or scaled afterwards."""
        fa = self.ctx.analysis
        for anc in fa.ancestors(site):
            if isinstance(anc, cst.BinaryOperation) and isinstance(anc.operator, (cst.Divide, cst.Multiply)):
                return True
            if isinstance(anc, cst.Call) and call_name(anc) in _SCALE_METHODS:
                return True
            if isinstance(anc, (cst.BaseSmallStatement, cst.BaseCompoundStatement)):
                holder = anc
                break
        else:
            holder = None
        names = {key} if key else set()
        if isinstance(holder, cst.Assign) and len(holder.targets) == 1:
            held = _key(holder.targets[0].target)
            if held:
                names.add(held)
        if isinstance(holder, cst.Return):
            return False
        for sub in later:
            if isinstance(sub, cst.Call) and isinstance(sub.func, cst.Attribute) \
                    and sub.func.attr.value in _SCALE_METHODS and _key(sub.func.value) in names:
                return True
            if isinstance(sub, cst.AugAssign) and isinstance(sub.operator, (cst.DivideAssign, cst.MultiplyAssign)) \
                    and _key(sub.target) in names:
                return True
            if isinstance(sub, cst.BinaryOperation) and isinstance(sub.operator, (cst.Divide, cst.Multiply)) \
                    and (_key(sub.left) in names or _key(sub.right) in names):
                return True
        return False

