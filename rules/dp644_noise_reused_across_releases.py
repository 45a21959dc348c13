"""DP644: one noise draw, made before a loop, added to a different released value in each iteration."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts, call_name as ast_call_name
from dpcheck.analysis.astnames import walk as ast_walk
from dpcheck.analysis.noisedraws import PURE_DRAWS
from dpcheck.analysis.syntax import COMPREHENSIONS, call_name, loop_targets, refs, walk
from dpcheck.rule import Rule

_DRAWS = PURE_DRAWS | {"randn", "randn_like", "normal", "standard_normal", "laplace", "gumbel"}


def _draws(expr: cst.CSTNode) -> bool:
    return any(isinstance(c, cst.Call) and call_name(c) in _DRAWS for c in walk(expr))


class NoiseReusedAcrossReleases(Rule):
    id = "DP644"
    name = "noise-reused-across-releases"
    category = "general"
    severity = "error"
    summary = ("one noise draw, made once before a loop, is added to a different value in each iteration "
               "(`noise = laplace(..)` then `[sums[i] + noise for i in ...]`): the releases share their noise")
    rationale = (
        "Each released statistic needs its own independent noise. Code that draws the noise once — a scalar, a "
        "vector, or a list filled by a loop of draws — and then adds that same draw to every cluster's sum, "
        "every group's count or every query answer in a loop or comprehension releases values whose "
        "differences are exact: `(s_i + z) - (s_j + z) = s_i - s_j`, so the noise hides nothing about how the "
        "statistics differ, and averaging does not help the analyst but the accounting (k releases at ε each) "
        "is wrong anyway. Reported: a name bound in the function to a noise draw (or to a list the function "
        "appends draws to) before a `for` loop or comprehension, never rebound inside it, added whole (not "
        "indexed by the loop variable) to a value that depends on the loop variable. Not reported: noise drawn "
        "inside the loop, noise indexed per iteration (`noise[i]`), a loop whose noised value does not change "
        "(repeated evaluation of one release). Bad: `z = np.random.laplace(0, b, d)` then "
        "`[(X[lab == c].sum(0) + z) for c in range(k)]`. Good: draw inside the comprehension, "
        "`[(X[lab == c].sum(0) + np.random.laplace(0, b, d)) for c in range(k)]`."
    )
    TRIGGERS = ("for ",)
    requires_dp_context = True

    VALID = (
        # twin: a fresh draw for every cluster
        """
import numpy as np
def centres(X, lab, k, b):
    return [(X[lab == c].sum(0) + np.random.laplace(0, b, X.shape[1])) for c in range(k)]
""",
        # twin of the loop: the noise indexed per group
        """
import numpy as np
def noisy_counts(groups, eps):
    z = np.random.laplace(0, 1 / eps, len(groups))
    out = {}
    for i, g in enumerate(groups):
        out[g.name] = len(g.rows) + z[i]
    return out
""",
        # one release evaluated several times: the noised value does not depend on the loop
        """
import numpy as np
def repeat_error(true_count, eps, trials):
    z = np.random.laplace(0, 1 / eps)
    errs = []
    for t in range(trials):
        errs.append(abs(true_count + z - true_count))
    return errs
""",
        # ordinary ML: a fixed noise input fed to a generator at each epoch
        """
import torch
def sample_grid(gen, epochs):
    fixed = torch.randn(16, 100)
    imgs = []
    for ep in range(epochs):
        imgs.append(gen(fixed) + ep)
    return imgs
""",
    )
    INVALID = (
        # a noise vector filled once, added to every cluster's sum
        """
import numpy as np
def dp_kmeans_step(D, labels, k, sens, budget):
    z_sum = []
    for j in range(D.shape[1]):
        z_sum.append(np.random.laplace(0, sens[j] / budget))
    z_cnt = np.random.laplace(0, 1 / budget)
    return np.array([(D[labels == c].sum(0) + z_sum) / (len(D[labels == c]) + z_cnt) for c in range(k)])  # <-
""",
        # one draw added to every group's count in a loop
        """
import numpy as np
def noisy_counts(groups, eps):
    z = np.random.laplace(0, 1 / eps)
    out = {}
    for g in groups:
        out[g.name] = len(g.rows) + z  # <-
    return out
""",
        # torch: one Gaussian draw added to each query answer
        """
import torch
def dp_answer(queries, data, sigma):
    noise = torch.normal(0.0, sigma, (1,))
    return [q(data) + noise for q in queries]  # <-
""",
        # augmented assignment in a loop over histograms
        """
import numpy as np
def release_marginals(marginals, epsilon):
    shared = np.random.laplace(0, 2 / epsilon, marginals[0].shape)
    for m in marginals:
        m += shared  # <-
    return marginals
""",
    )

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding is a name bound to a draw (or to an empty list the function fills with draws) added whole
        (``+``, ``+=``) to something, in a file with a loop or comprehension."""
        if not facts.calls_any(_DRAWS) or not facts.nodes(ast.For, ast.AsyncFor, ast.ListComp, ast.SetComp,
                                                           ast.GeneratorExp, ast.DictComp):
            return False
        noise: set[str] = set()
        for node in facts.nodes(ast.Assign):
            if len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):  # type: ignore[attr-defined]
                value = node.value  # type: ignore[attr-defined]
                if isinstance(value, ast.List) and not value.elts or any(
                        isinstance(c, ast.Call) and ast_call_name(c) in _DRAWS for c in ast_walk(value)):
                    noise.add(node.targets[0].id)  # type: ignore[attr-defined]
        if not noise:
            return False
        for op in facts.binops(ast.Add):
            if any(isinstance(side, ast.Name) and side.id in noise for side in (op.left, op.right)):
                return True
        return any(isinstance(aug.value, ast.Name) and aug.value.id in noise for aug in facts.augassigns(ast.Add))

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        fa = self.ctx.analysis
        noise = self._noise_names(node)
        if not noise:
            return
        for loop in walk(node, into_scopes=False):
            if not isinstance(loop, (cst.For, *COMPREHENSIONS)):
                continue
            loop_vars = loop_targets(loop)
            if not loop_vars:
                continue
            start = fa.line_of(loop)
            body = loop.body if isinstance(loop, cst.For) else loop
            rebound = {n.value for s in walk(body) if isinstance(s, (cst.Assign, cst.AugAssign))
                       for t in ([x.target for x in s.targets] if isinstance(s, cst.Assign) else [s.target])
                       for n in walk(t) if isinstance(n, cst.Name)} if isinstance(loop, cst.For) else set()
            for sub in walk(body):
                pair = self._added(sub)
                if pair is None:
                    continue
                value, other = pair
                name = value.value
                if name not in noise or not self._drawn_before(noise[name], start) or name in rebound \
                        or name in loop_vars:
                    continue
                if not refs(other) & loop_vars:
                    continue
                self.report(sub, f"`{name}` is one noise draw, made before this loop, and it is added to a "
                                 f"value that changes with `{', '.join(sorted(refs(other) & loop_vars))}`: every "
                                 f"release gets the same noise, so their differences are exact; draw fresh noise "
                                 f"inside the loop")
                return

    @staticmethod
    def _added(sub: cst.CSTNode) -> tuple[cst.Name, cst.BaseExpression] | None:
        if isinstance(sub, cst.BinaryOperation) and isinstance(sub.operator, cst.Add):
            if isinstance(sub.right, cst.Name):
                return sub.right, sub.left
            if isinstance(sub.left, cst.Name):
                return sub.left, sub.right
        if isinstance(sub, cst.AugAssign) and isinstance(sub.operator, cst.AddAssign) and isinstance(sub.value, cst.Name):
            return sub.value, sub.target
        return None

    def _noise_names(self, fn: cst.FunctionDef) -> dict[str, list[tuple[int, bool]]]:
        """Each name's bindings in the function (any block, not nested functions): (line, bound to a draw or
        to an empty list the function fills with draws)."""
        fa = self.ctx.analysis
        out: dict[str, list[tuple[int, bool]]] = {}
        appended: set[str] = set()
        for sub in walk(fn, into_scopes=False):
            if isinstance(sub, cst.Call) and isinstance(sub.func, cst.Attribute) and sub.func.attr.value == "append" \
                    and isinstance(sub.func.value, cst.Name) and sub.args and _draws(sub.args[0].value):
                appended.add(sub.func.value.value)
        for sub in walk(fn, into_scopes=False):
            if isinstance(sub, cst.Assign) and len(sub.targets) == 1 and isinstance(sub.targets[0].target, cst.Name):
                name = sub.targets[0].target.value
                noisy = _draws(sub.value) or (name in appended and isinstance(sub.value, cst.List)
                                              and not sub.value.elements)
                out.setdefault(name, []).append((fa.line_of(sub), noisy))
        return {k: v for k, v in out.items() if any(noisy for _, noisy in v)}

    @staticmethod
    def _drawn_before(bindings: list[tuple[int, bool]], start: int) -> bool:
        """The last binding before ``start`` is a draw."""
        before = [b for b in bindings if b[0] < start]
        return bool(before) and max(before)[1]
