"""DP756: the gradient clip runs only when a bound is set, its default switches it off, and the noise is added anyway."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, dotted, number, walk, words
from dpcheck.rule import Rule

_CLIP_WORDS = frozenset({"clip", "clipping", "clamp"})
_DRAWS = frozenset({"normal", "randn", "randn_like", "normal_", "laplace", "standard_normal", "gauss",
                    "random_normal", "poisson"})
#: what the noise is added to: a gradient or an update
_GRAD_WORDS = frozenset({"grad", "grads", "gradient", "gradients", "update", "updates", "delta"})


def _off(value: cst.BaseExpression | None) -> bool:
    """A default that switches the option off: ``None``, ``False``, ``0``, a negative number."""
    if value is None:
        return False
    if isinstance(value, cst.Name) and value.value in ("None", "False"):
        return True
    n = number(value)
    return n is not None and n <= 0


class ClipOffByDefaultNoiseOn(Rule):
    id = "DP756"
    name = "clip-off-by-default-noise-on"
    category = "general"
    severity = "error"
    summary = ("the per-example clip runs only under `if c > 0:` (or `if clip is not None:`) and the bound's "
               "default switches it off, while the gradient noise is added unconditionally")
    rationale = (
        "DP-SGD's noise σ·C protects one record only if each example's gradient is clipped to C. Scripts that "
        "make clipping optional (`parser.add_argument('--c', default=-1)`, 'no clip if <= 0', `clip=None`) and "
        "guard the clip with `if args.c > 0:` while adding the Gaussian noise outside that guard run, with the "
        "default settings, noisy but unclipped training: the sensitivity is unbounded, and the ε the paper or "
        "the log reports (computed from σ alone) does not hold. Reported: an `if` whose test reads a bound "
        "(`args.c > 0`, `clip is not None`, `args.max_grad_norm`) and whose body clips with that bound, where "
        "the bound's default (its `add_argument` default, or the function parameter's default) is None, False, "
        "0 or negative, and a noise draw added to a gradient in the same function is not under a guard on the "
        "same bound (nor under a flag that is off by default). Not reported: a positive default, noise guarded "
        "by the same test, code with no DP context. Fix: make clipping mandatory when noise is added (refuse "
        "c <= 0 with noise on), or give the bound a positive default."
    )
    TRIGGERS = ("clip", "clamp")
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """An ``if`` and a noise draw in a file whose text reads ``default=`` or a parameter default."""
        return bool(facts.nodes(ast.If)) and facts.calls_any(_DRAWS)

    VALID = (
        # the clip has a positive default: clipping runs unless the user turns it off
        """
import argparse, torch
p = argparse.ArgumentParser()
p.add_argument("--c", type=float, default=1.0)
p.add_argument("--sigma", type=float, default=1.0)
args = p.parse_args()
def dp_step(model, args, epsilon):
    for param in model.parameters():
        if args.c > 0:
            param.grad_sample = clip_rows(param.grad_sample, args.c)
        param.grad = param.grad_sample.mean(0) + torch.normal(0, args.sigma * args.c, param.shape)
""",
        # the noise is under the same guard as the clip: no clip, no noise, no DP claimed
        """
import torch
def dp_step(model, sigma, epsilon, clip=None):
    for param in model.parameters():
        if clip is not None:
            param.grad_sample = clip_rows(param.grad_sample, clip)
            param.grad = param.grad_sample.mean(0) + torch.normal(0, sigma * clip, param.shape)
""",
        # ordinary ML: optional gradient-norm clipping with a data-augmentation noise, no DP
        """
import argparse, torch
p = argparse.ArgumentParser()
p.add_argument("--max_grad_norm", type=float, default=0)
args = p.parse_args()
def train(model, loader, opt):
    for x, y in loader:
        x = x + 0.05 * torch.randn_like(x)
        model.loss(x, y).backward()
        if args.max_grad_norm > 0:
            torch.nn.utils.clip_grad_norm_(model.parameters(), args.max_grad_norm)
        opt.step()
""",
        # the noise flag is off by default too: the default run is plain training, not a DP claim
        """
import argparse, torch
p = argparse.ArgumentParser()
p.add_argument("--c", type=float, default=-1)
p.add_argument("--perturb", type=int, default=0)
args = p.parse_args()
def step(model, epsilon):
    for param in model.parameters():
        if args.c > 0:
            param.grad = clip_rows(param.grad_sample, args.c).mean(0)
        if args.perturb:
            param.grad += torch.normal(0, args.sigma, param.shape)
""",
    )

    INVALID = (
        # argparse: clipping "not done if <= 0" with default -1, noise always added to the gradient
        """
import argparse, torch
p = argparse.ArgumentParser()
p.add_argument("--c", type=float, default=-1)
p.add_argument("--sigma", type=float, default=1.0)
args = p.parse_args()
def dp_step(model, epsilon):
    for param in model.parameters():
        if args.c > 0:  # <-
            param.grad_sample = clip_rows(param.grad_sample, args.c)
        param.grad = param.grad_sample.mean(0) + torch.normal(0, args.sigma, param.shape)
""",
        # a function parameter defaulting to None guards the clip; the noise is unconditional
        """
import torch
def private_update(grads, sigma, epsilon, clip_norm=None):
    if clip_norm is not None:  # <-
        grads = [g * min(1.0, clip_norm / g.norm()) for g in grads]
    return [g + torch.randn_like(g) * sigma for g in grads]
""",
        # a truthiness test on a bound defaulting to 0, Laplace noise on the update
        """
import argparse
import numpy as np
ap = argparse.ArgumentParser()
ap.add_argument("--clip_bound", type=float, default=0.0)
args = ap.parse_args()
def local_update(delta, epsilon):
    if args.clip_bound:  # <-
        delta = np.clip(delta, -args.clip_bound, args.clip_bound)
    noisy_update = delta + np.random.laplace(0, 1.0 / epsilon, delta.shape)
    return noisy_update
""",
        # flag under a noise switch that is on by default
        """
import argparse, torch
p = argparse.ArgumentParser()
p.add_argument("--max_grad_norm", type=float, default=None)
p.add_argument("--add_noise", type=int, default=1)
args = p.parse_args()
def step(model, sigma, epsilon):
    for param in model.parameters():
        if args.max_grad_norm is not None:  # <-
            param.grad = clip_rows(param.grad_sample, args.max_grad_norm).sum(0)
        if args.add_noise:
            param.grad += torch.normal(0, sigma, param.shape)
""",
    )

    def visit_If(self, node: cst.If) -> None:
        bound = self._tested_bound(node.test)
        if bound is None or not self._clips_with(node.body, bound):
            return
        if not _off(self._default(node, bound)):
            return
        fa = self.ctx.analysis
        scope = fa.enclosing_function(node) or fa.index.module
        for call in walk(scope):
            if not (isinstance(call, cst.Call) and call_name(call) in _DRAWS):
                continue
            stmt = call
            while stmt is not None and not isinstance(stmt, cst.SimpleStatementLine):
                stmt = fa.parent(stmt)
            if stmt is None or not words("_".join(dotted(n) or "" for n in walk(stmt)
                                                  if isinstance(n, (cst.Name, cst.Attribute)))) & _GRAD_WORDS:
                continue
            if self._guarded(call, bound, node):
                continue
            self.report(node, f"the clip under `if {fa.code(node.test).strip()}:` is off by default "
                              f"(`{bound}` defaults to {fa.code(self._default(node, bound)).strip()}), while "
                              f"`{fa.code(call.func).strip()}(…)` noise is added to the gradient regardless: "
                              "the default run is noisy but unclipped, so no per-record bound backs the noise "
                              "or the ε reported; require the clip whenever noise is added")
            return

    @staticmethod
    def _tested_bound(test: cst.BaseExpression) -> str | None:
        """``args.c > 0``, ``clip is not None``, ``args.max_grad_norm`` → the bound's dotted name."""
        if isinstance(test, (cst.Name, cst.Attribute)):
            return dotted(test)
        if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
            op, right = test.comparisons[0].operator, test.comparisons[0].comparator
            left = test.left
            if isinstance(left, (cst.Name, cst.Attribute)) and (
                    isinstance(op, (cst.GreaterThan, cst.GreaterThanEqual)) and number(right) == 0
                    or isinstance(op, (cst.IsNot, cst.NotEqual)) and isinstance(right, cst.Name)
                    and right.value in ("None", "False")):
                return dotted(left)
        return None

    @staticmethod
    def _clips_with(body: cst.CSTNode, bound: str) -> bool:
        """The body clips a gradient with the bound: a clip call given it, or a ratio ``bound / norm``."""
        for n in walk(body):
            if isinstance(n, cst.Call) and words(call_name(n)) & _CLIP_WORDS \
                    and any(dotted(a.value) == bound or any(dotted(s) == bound for s in walk(a.value)
                                                            if isinstance(s, (cst.Name, cst.Attribute)))
                            for a in n.args):
                return True
            if isinstance(n, cst.BinaryOperation) and isinstance(n.operator, cst.Divide) \
                    and dotted(n.left) == bound and any(isinstance(c, cst.Call) and "norm" in call_name(c)
                                                        for c in walk(n.right)):
                return True
        return False

    def _default(self, node: cst.CSTNode, bound: str) -> cst.BaseExpression | None:
        """The bound's default: ``add_argument('--name', default=…)`` for ``args.name``, else the enclosing
        function's parameter default."""
        fa = self.ctx.analysis
        if "." in bound:
            head, attr = bound.rsplit(".", 1)
            if head.split(".")[0] == "self":
                return None
            for call in walk(fa.index.module):
                if not (isinstance(call, cst.Call) and call_name(call) == "add_argument"):
                    continue
                flags = [a.value.evaluated_value for a in call.args if a.keyword is None
                         and isinstance(a.value, cst.SimpleString)]
                dest = next((a.value.evaluated_value for a in call.args if a.keyword and a.keyword.value == "dest"
                             and isinstance(a.value, cst.SimpleString)), None)
                names = {f.lstrip("-").replace("-", "_") for f in flags if isinstance(f, str)}
                if dest == attr or (dest is None and attr in names):
                    default = next((a.value for a in call.args if a.keyword and a.keyword.value == "default"), None)
                    if default is None:
                        # no default: argparse gives None, unless the option is a flag or required
                        keys = {a.keyword.value: a.value for a in call.args if a.keyword}
                        if "required" in keys or "action" in keys:
                            return None
                        return cst.Name("None")
                    return default
            return None
        fn = fa.enclosing_function(node)
        while fn is not None:
            for p in (*fn.params.params, *fn.params.kwonly_params):
                if p.name.value == bound:
                    return p.default
            fn = fa.enclosing_function(fn)
        return None

    def _guarded(self, call: cst.CSTNode, bound: str, clip_if: cst.If) -> bool:
        """The draw is under a test of the same bound, or under a flag that is off by default."""
        fa = self.ctx.analysis
        cur = fa.parent(call)
        while cur is not None and not isinstance(cur, (cst.FunctionDef, cst.Module)):
            if isinstance(cur, cst.If):
                if cur is clip_if:
                    return True
                tested = {dotted(n) for n in walk(cur.test) if isinstance(n, (cst.Name, cst.Attribute))}
                if bound in tested:
                    return True
                flag = self._tested_bound(cur.test)
                if flag is not None and _off(self._default(cur, flag)):
                    return True
            cur = fa.parent(cur)
        return False
