"""DP755: a clip of each tensor in a loop is bound back to the loop variable and dropped (a no-op clip)."""
from __future__ import annotations

import ast
import re

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.clipping import is_clip_bound
from dpcheck.analysis.syntax import call_name, walk, words
from dpcheck.rule import Rule

#: words of a call that returns a clipped / projected copy of its argument
_CLIP_WORDS = frozenset({"clip", "clipping", "clamp", "project", "projection", "renorm", "truncate"})


#: a gradient set from a noisy value (``param.grad = noisy_grad``, ``p.grad += noise``): DP training even where
#: the file names no ε (a secure-aggregation noise study)
_NOISY_GRAD = re.compile(r"\.grad\b[^\n]*?(?:\+=|=)[^\n]*nois|nois\w*grad", re.I)


def _loop_names(target: cst.BaseExpression) -> set[str]:
    if isinstance(target, cst.Name):
        return {target.value}
    if isinstance(target, (cst.Tuple, cst.List)):
        return {e.value.value for e in target.elements if isinstance(e.value, cst.Name)}
    return set()


def _reads(expr: cst.CSTNode, name: str) -> bool:
    return any(isinstance(n, cst.Name) and n.value == name for n in walk(expr))


class ClipRebindsLoopVariable(Rule):
    id = "DP755"
    name = "clip-rebinds-loop-variable"
    category = "general"
    severity = "error"
    summary = ("each tensor is clipped inside `for p in …:` as `p = clip(p, C)`, which only rebinds the loop "
               "variable: the model's tensors (or the gradient list) keep their unclipped values")
    rationale = (
        "DP-SGD's noise and a bounded-weight (or bounded-gradient) sensitivity argument hold only if the clip "
        "reaches the values that are used. Inside `for param in model.parameters():`, `param = clip(param, c)` "
        "(or `g = torch.clamp(g, -C, C)`, `g = g * min(1, C / g.norm())` in `for g in grads:`) computes a "
        "clipped copy and binds it to the loop variable; the next iteration rebinds it again, and the tensor "
        "in the model or the list is never changed. The clip silently does nothing, so the sensitivity the "
        "noise was calibrated for is not enforced. Reported: a loop whose body assigns a clip of the loop "
        "variable (a call named for clipping/clamping/projection, or the variable scaled by a clip ratio) "
        "back to that variable and never reads the variable afterwards in the body, in DP code. Not "
        "reported: in-place clips (`p.clamp_(…)`, `p.data = …`, `clip_grad_norm_`), a clipped value that is "
        "used later in the body (appended, written to `grads[i]`, summed), code with no DP context. Fix: "
        "write the clip back (`param.data.copy_(clip(param.data, c))`, `grads[i] = clip(g, C)`) or use an "
        "in-place operation."
    )
    TRIGGERS = ("clip", "clamp", "project", "renorm", "truncate")
    #: DP context, or a gradient noised in the module (checked per finding)
    requires_dp_context = False

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A ``for`` loop whose body assigns a call or an arithmetic result to the loop's own name."""
        for loop in facts.nodes(ast.For):
            target = loop.target  # type: ignore[attr-defined]
            names = {target.id} if isinstance(target, ast.Name) else {
                e.id for e in getattr(target, "elts", []) if isinstance(e, ast.Name)}
            if not names:
                continue
            for stmt in ast.walk(loop):
                if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 \
                        and isinstance(stmt.targets[0], ast.Name) and stmt.targets[0].id in names \
                        and isinstance(stmt.value, (ast.Call, ast.BinOp)):
                    return True
        return False

    @classmethod
    def admits(cls, facts: AstFacts) -> bool:
        return (facts.may_have_dp_context or bool(_NOISY_GRAD.search(facts.source))) and cls.may_report(facts)

    VALID = (
        # the clipped copy is written back to the list by index
        """
import torch
def private_grads(grads, C, sigma):
    for i, g in enumerate(grads):
        g = g * min(1.0, C / (g.norm() + 1e-12))
        grads[i] = g + torch.normal(0.0, sigma * C, g.shape)
    return grads
""",
        # weight clipping done in place on .data before the noisy gradient step
        """
import torch
def dp_epoch(model, loader, loss_fn, opt, model_c, sigma):
    for xb, yb in loader:
        opt.zero_grad()
        loss_fn(model(xb), yb).backward()
        for p in model.parameters():
            p.grad += torch.normal(0.0, sigma, p.grad.shape)
        opt.step()
        for param in model.parameters():
            param.data = param.data * min(1.0, model_c / param.data.norm())
""",
        # the clipped value is used in the rest of the body (summed into the noisy total)
        """
import numpy as np
def noisy_sum(rows, clip, epsilon):
    total = 0.0
    for x in rows:
        x = np.clip(x, -clip, clip)
        total += x
    return total + np.random.laplace(0.0, 2 * clip / epsilon)
""",
        # ordinary ML: WGAN critic weights clamped in place, no privacy
        """
def critic_step(critic, opt, loss, c):
    loss.backward()
    opt.step()
    for p in critic.parameters():
        p.data.clamp_(-c, c)
""",
        # ordinary ML: a GAN critic's weights "clamped" by rebinding (a bug, but no privacy is claimed)
        """
import torch
def critic_step(critic, opt, loss, c):
    z = torch.randn(64, 100)
    loss.backward()
    opt.step()
    for p in critic.parameters():
        p = torch.clamp(p, -c, c)
""",
        # twin: the clipped rows are written back by index before the noisy sum
        """
import numpy as np
def private_mean(X, bound, epsilon):
    for i, row in enumerate(X):
        X[i] = np.clip(row, -bound, bound)
    return (X.sum(axis=0) + np.random.laplace(0.0, 2 * bound / epsilon, X.shape[1])) / len(X)
""",
    )

    INVALID = (
        # the model's weights "clipped" after the noisy step by rebinding the loop variable
        """
import torch
def private_epoch(model, loader, loss_fn, opt, model_c, sigma, epsilon):
    for xb, yb in loader:
        opt.zero_grad()
        loss_fn(model(xb), yb).backward()
        for p in model.parameters():
            p.grad += torch.normal(0.0, sigma, p.grad.shape)
        opt.step()
        for param in model.parameters():
            param = project_to_ball(param, model_c)  # <-
""",
        # gradients clamped into a copy bound to the loop variable, then the list is noised unclipped
        """
import torch
def privatize(grads, C, noise_multiplier, epsilon):
    for g in grads:
        g = torch.clamp(g, -C, C)  # <-
    return [g + torch.normal(0.0, noise_multiplier * C, g.shape) for g in grads]
""",
        # scaled by the clip ratio into the loop variable over (name, tensor) pairs, never written back
        """
import torch
def dp_update(named_grads, clip_norm, sigma, epsilon):
    for name, grad in named_grads.items():
        grad = grad * min(1.0, clip_norm / (grad.norm() + 1e-6))  # <-
    return {k: v + sigma * clip_norm * torch.randn_like(v) for k, v in named_grads.items()}
""",
        # numpy rows clipped into the loop variable, then the unclipped matrix is summed and noised
        """
import numpy as np
def private_mean(X, bound, epsilon):
    for row in X:
        row = np.clip(row, -bound, bound)  # <-
    return (X.sum(axis=0) + np.random.laplace(0.0, 2 * bound / epsilon, X.shape[1])) / len(X)
""",
        # a secure-sum study with no ε in the file: the gradient is replaced by a noisy one, then the
        # weights are projected by rebinding the loop variable
        """
import torch
def train(model, loader, opt, model_c, mu):
    for x, y in loader:
        for param in model.parameters():
            param.grad = noisy_gradient(param, x, y, mu)
        opt.step()
        for param in model.parameters():
            param = clip_by_l2(param, model_c)  # <-
""",
    )

    def visit_For(self, node: cst.For) -> None:
        names = _loop_names(node.target)
        if not names or not (self.ctx.analysis.in_dp_context(node) or _NOISY_GRAD.search(self.ctx.source)):
            return
        body = list(walk(node.body, into_scopes=False))
        for pos, stmt in enumerate(body):
            if not (isinstance(stmt, cst.Assign) and len(stmt.targets) == 1
                    and isinstance(stmt.targets[0].target, cst.Name)):
                continue
            name = stmt.targets[0].target.value
            if name not in names or not self._clips(stmt.value, name):
                continue
            end = pos + len(list(walk(stmt, into_scopes=False)))
            if any(isinstance(n, cst.Name) and n.value == name for n in body[end:]):
                continue  # the clipped copy is used later in the body
            self.report(stmt, f"`{self.ctx.analysis.code(stmt).strip()[:70]}` binds the clipped copy to the "
                              f"loop variable `{name}` only: the tensor in `{self.ctx.analysis.code(node.iter).strip()[:50]}` "
                              "keeps its unclipped value, so the bound the noise and the accountant assume is "
                              "never enforced; write it back (`.data.copy_(…)`, `xs[i] = …`) or clip in place")

    @staticmethod
    def _clips(value: cst.BaseExpression, name: str) -> bool:
        if not _reads(value, name):
            return False
        if isinstance(value, cst.Call):
            cname = call_name(value)
            return not cname.endswith("_") and bool(words(cname) & _CLIP_WORDS)
        if isinstance(value, cst.BinaryOperation) and isinstance(value.operator, (cst.Multiply, cst.Divide)):
            sides = (value.left, value.right)
            if not any(isinstance(s, cst.Name) and s.value == name for s in sides):
                return False
            other = value.right if isinstance(value.left, cst.Name) and value.left.value == name else value.left
            has_minmax = any(isinstance(n, cst.Call) and call_name(n) in ("min", "max", "minimum", "maximum",
                                                                           "clamp", "clip") for n in walk(other))
            has_bound = any(isinstance(n, (cst.Name, cst.Attribute)) and is_clip_bound(n) for n in walk(other))
            return has_minmax and has_bound
        return False
