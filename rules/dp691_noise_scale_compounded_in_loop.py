"""DP691: inside a loop the noise scale is rebound to itself times a per-iteration value (``sigma = S * sigma``),
so the factors of all earlier iterations pile up."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import walk, words
from dpcheck.rule import Rule

#: names of a noise scale (``sigma``, ``noise_std``, ``noise_multiplier``, ``laplace_scale``)
_SCALE_WORDS = frozenset({"sigma", "std", "stddev", "sd"})
_NOISE_WORDS = frozenset({"noise", "laplace", "gaussian", "gauss"})


def _is_scale_name(name: str) -> bool:
    w = words(name)
    return bool(w & _SCALE_WORDS) or (bool(w & {"scale", "multiplier"}) and bool(w & _NOISE_WORDS))


def _bare(expr: cst.BaseExpression) -> cst.BaseExpression:
    """``float(x)`` / ``(x)`` -> x."""
    while isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value in ("float", "abs") \
            and len(expr.args) == 1:
        expr = expr.args[0].value
    return expr


def _factors(expr: cst.BaseExpression) -> list[cst.BaseExpression]:
    expr = _bare(expr)
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Multiply):
        return _factors(expr.left) + _factors(expr.right)
    return [expr]


def _stmt_list(block: cst.CSTNode) -> list[cst.CSTNode]:
    """Simple statements of a loop body in order, entering ``if``/``with``/``try`` but not nested loops or
    scopes."""
    out: list[cst.CSTNode] = []
    for node in walk(block, into_scopes=False):
        if isinstance(node, (cst.Assign, cst.AugAssign, cst.AnnAssign)):
            out.append(node)
    return out


class NoiseScaleCompoundedInLoop(Rule):
    id = "DP691"
    name = "noise-scale-compounded-in-loop"
    category = "general"
    severity = "error"
    summary = ("the noise scale is rebound inside a loop to itself times a per-iteration value (`sigma = S * sigma`): "
               "each later layer/query gets σ times the product of all earlier factors")
    rationale = (
        "Per-layer (or per-query) noise is σ·S_i: the base multiplier σ the accountant is charged with, times "
        "the layer's own clip bound or sensitivity S_i. Writing the product back into the name that holds σ "
        "(`sigma = float(S_value * sigma)` inside `for key in state_dict`) makes the next iteration start from "
        "σ·S_1, then σ·S_1·S_2, and so on: with bounds below 1 the noise shrinks geometrically (above 1 it "
        "blows up), and no iteration after the first gets the σ the accountant assumed. Reported: in a `for` "
        "loop, a noise-scale name (`sigma`, `std`, `noise_multiplier`, `noise_scale`) rebound to a product of "
        "itself and a name assigned earlier in the same loop body, and read again in the loop. Not reported: "
        "a decay by a constant set outside the loop (`sigma = sigma * decay`, a schedule), a name reset from "
        "σ at the start of each iteration. Fix: keep the base σ and use a separate name "
        "(`std = S_value * sigma`)."
    )
    TRIGGERS = ("sigma", "std", "multiplier", "scale")
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding is an assignment ``x = … * x`` (or ``x *= …``) to a noise-scale name inside a loop."""
        loops = facts.nodes(ast.For, ast.While)
        if not loops:
            return False
        for node in facts.nodes(ast.Assign):
            targets = node.targets  # type: ignore[attr-defined]
            if len(targets) == 1 and isinstance(targets[0], ast.Name) and _is_scale_name(targets[0].id):
                value = node.value  # type: ignore[attr-defined]
                if any(isinstance(b, ast.BinOp) and isinstance(b.op, ast.Mult) for b in ast.walk(value)) and any(
                        isinstance(n, ast.Name) and n.id == targets[0].id for n in ast.walk(value)):
                    return True
        for node in facts.augassigns(ast.Mult):
            if isinstance(node.target, ast.Name) and _is_scale_name(node.target.id):
                return True
        return False

    def visit_For(self, node: cst.For) -> None:
        done = self.__dict__.setdefault("_done", set())
        stmts = _stmt_list(node.body)
        assigned_before: set[str] = set()
        for i, stmt in enumerate(stmts):
            name, others = self._compounding(stmt)
            if name is not None and others & assigned_before and self._read_later(stmts[i + 1:], stmt, node, name) \
                    and not self._reset_before(stmts[:i], name) and id(stmt) not in done:
                done.add(id(stmt))
                self.report(
                    stmt,
                    f"`{name}` is rebound to itself times `{sorted(others & assigned_before)[0]}` inside the "
                    "loop: every later iteration multiplies the factors of all earlier ones into the noise scale, "
                    f"so it is no longer the σ the accountant is charged with; keep `{name}` and write the "
                    "product to another name",
                )
            for t in self._targets(stmt):
                assigned_before.add(t)

    @staticmethod
    def _targets(stmt: cst.CSTNode) -> set[str]:
        if isinstance(stmt, cst.Assign):
            return {n.value for t in stmt.targets for n in walk(t.target) if isinstance(n, cst.Name)}
        if isinstance(stmt, (cst.AugAssign, cst.AnnAssign)) and isinstance(stmt.target, cst.Name):
            return {stmt.target.value}
        return set()

    @staticmethod
    def _compounding(stmt: cst.CSTNode) -> tuple[str | None, set[str]]:
        """(scale name, names of the other factors) of ``x = a * x`` / ``x *= a``."""
        if isinstance(stmt, cst.AugAssign) and isinstance(stmt.operator, cst.MultiplyAssign) \
                and isinstance(stmt.target, cst.Name) and _is_scale_name(stmt.target.value):
            return stmt.target.value, {f.value for f in _factors(stmt.value) if isinstance(f, cst.Name)}
        if isinstance(stmt, cst.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0].target, cst.Name):
            name = stmt.targets[0].target.value
            if not _is_scale_name(name):
                return None, set()
            factors = _factors(stmt.value)
            if len(factors) >= 2 and any(isinstance(f, cst.Name) and f.value == name for f in factors):
                return name, {f.value for f in factors if isinstance(f, cst.Name) and f.value != name}
        return None, set()

    @staticmethod
    def _reset_before(stmts: list[cst.CSTNode], name: str) -> bool:
        """An earlier assignment in the body binds ``name`` afresh (not from itself)."""
        for stmt in stmts:
            if isinstance(stmt, cst.Assign) and any(isinstance(t.target, cst.Name) and t.target.value == name
                                                    for t in stmt.targets):
                if not any(isinstance(n, cst.Name) and n.value == name for n in walk(stmt.value)):
                    return True
        return False

    @staticmethod
    def _read_later(stmts: list[cst.CSTNode], stmt: cst.CSTNode, loop: cst.For, name: str) -> bool:
        """``name`` is read after ``stmt`` in the loop (a later statement, a lambda, a call)."""
        seen = False
        for node in walk(loop.body):
            if node is stmt:
                seen = True
                continue
            if seen and isinstance(node, cst.Name) and node.value == name:
                return True
        return False

    VALID = (
        # twin: the per-layer std gets its own name, sigma stays the accountant's multiplier
        """
import numpy as np
def dp_fedavg_sanitize(deltas, norms, sigma, state):
    out = {}
    for key, value in state.items():
        bound = np.median([n[key] for n in norms])
        total = sum(d[key] / max(1.0, n[key] / bound) for d, n in zip(deltas, norms))
        std = float(bound * sigma)
        out[key] = value + (total + np.random.normal(0, std, total.shape)) / len(deltas)
    return out
""",
        # a noise schedule: decay by a constant set outside the loop
        """
import torch
def train(model, loader, opt, noise_multiplier, decay, epochs, clip):
    for epoch in range(epochs):
        for x, y in loader:
            opt.zero_grad()
            model(x).sum().backward()
            for p in model.parameters():
                p.grad += torch.randn_like(p.grad) * noise_multiplier * clip
            opt.step()
        noise_multiplier = noise_multiplier * decay
""",
        # reset from the base at the start of every iteration
        """
import numpy as np
def layer_noise(updates, base_sigma, bounds):
    out = []
    for u, b in zip(updates, bounds):
        sigma = base_sigma
        factor = b * 2.0
        sigma = sigma * factor
        out.append(u + np.random.normal(0, sigma, u.shape))
    return out
""",
        # ordinary ML: an image pyramid rescales a running size
        """
def pyramid(image, levels, ratio):
    scale = 1.0
    out = []
    for i in range(levels):
        step = ratio ** (i + 1)
        scale = scale * step
        out.append(resize(image, scale))
    return out
""",
    )

    INVALID = (
        """
import numpy as np
def dp_fedavg_sanitize(deltas, norms, sigma, state):
    out = {}
    for key, value in state.items():
        bound = np.median([n[key] for n in norms])
        total = sum(d[key] / max(1.0, n[key] / bound) for d, n in zip(deltas, norms))
        sigma = float(bound * sigma)  # <-
        out[key] = value + (total + np.random.normal(0, sigma, total.shape)) / len(deltas)
    return out
""",
        """
import torch
class LayerwiseDP:
    def noisy_update(self, grads, noise_std):
        noisy = []
        for g in grads:
            layer_clip = g.norm().clamp(max=self.max_norm)
            noise_std *= layer_clip  # <-
            noisy.append(g + torch.randn_like(g) * noise_std)
        return noisy
""",
        """
import numpy as np
def release_all(queries, data, noise_multiplier):
    answers = []
    for q in queries:
        sens = q.sensitivity(data)
        if sens > 0:
            noise_multiplier = noise_multiplier * sens  # <-
        answers.append(q(data) + np.random.normal(0, noise_multiplier))
    return answers
""",
        """
import numpy as np
def private_perturb(weights, sigma, epsilon):
    for name in weights:
        S = np.median(np.abs(weights[name]))
        sigma = S * sigma  # <-
        density = lambda x: np.exp(-x * x / (2 * sigma * sigma))
        weights[name] = weights[name] + sample_from(density, weights[name].shape)
    return weights
""",
    )
