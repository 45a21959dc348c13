"""DP643: a privacy parameter of a function overwritten with a literal before the function reads it."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import number, param_names, walk, words
from dpcheck.rule import Rule

#: parameter names that calibrate the noise or the bound it covers
_PRIVACY = frozenset({"eps", "epsilon", "delta", "beta", "sensitivity", "sens", "sigma", "rho", "budget",
                      "multiplier", "clip"})
#: words that make the name an optimiser's or a model's hyperparameter, not a privacy parameter
_NOT_PRIVACY = frozenset({"adam", "momentum", "lr", "learning", "decay", "kl", "vae", "init", "tol", "norm",
                          "stability", "smoothing", "label", "loss", "schedule", "ema"})


def _literal(expr: cst.BaseExpression) -> bool:
    """A number or arithmetic of numbers (``1.0 / 6.0``, ``2 ** -3``)."""
    if number(expr) is not None:
        return True
    if isinstance(expr, cst.BinaryOperation):
        return _literal(expr.left) and _literal(expr.right)
    if isinstance(expr, cst.UnaryOperation):
        return _literal(expr.expression)
    return False


class PrivacyParameterOverwritten(Rule):
    id = "DP643"
    name = "privacy-parameter-overwritten"
    category = "general"
    severity = "error"
    summary = ("a function's privacy parameter (ε, δ, the smooth-sensitivity β, a sensitivity or noise "
               "multiplier) is unconditionally overwritten with a literal before it is read: the caller's value "
               "is ignored")
    rationale = (
        "A mechanism or calibration helper that takes ε, δ, β (the smoothing of a smooth-sensitivity bound), "
        "a sensitivity, σ or a clip bound as a parameter and then sets it to a constant (`beta = 1.0 / 6.0`, "
        "`epsilon = 1`) before any use computes its noise for the constant, not for the value its caller passed "
        "and accounts: a smooth bound computed with β = 1/6 is too small for any ε < 1 (β must be ε/6 there), a "
        "fixed ε makes the noise ignore the budget split the caller made. Reported: a parameter named as such "
        "assigned a numeric literal (or arithmetic of literals) by a statement of the function's own body — not "
        "inside an `if`, loop, `try` or `with` — before any line that reads it. Not reported: a default filled "
        "in under a test (`if eps is None: eps = 1.0`), a parameter read before it is reassigned, optimiser or "
        "model hyperparameters (`adam_beta`, `kl_beta`, `momentum`). Bad: `def smooth_sens(G, D, beta): ... "
        "beta = 1.0 / 6.0`. Good: use the `beta` passed in (drop the assignment), or make the constant a "
        "default (`def smooth_sens(G, D, beta=1/6)`)."
    )
    TRIGGERS = ("eps", "delta", "beta", "sens", "sigma", "rho", "budget", "multiplier", "clip")
    requires_dp_context = True

    VALID = (
        # twin: the β passed in is used
        """
import numpy as np
def smooth_bound(counts, d, beta):
    c = 1 + np.arange(len(counts)) + counts
    return np.max(np.exp(-beta * np.arange(len(counts))) * c)
def release(counts, d, epsilon):
    return np.random.laplace(0, 2 * smooth_bound(counts, d, epsilon / 6) / epsilon)
""",
        # a default filled in under a test
        """
import numpy as np
def laplace_release(x, sensitivity, epsilon=None):
    if epsilon is None:
        epsilon = 1.0
    return x + np.random.laplace(0, sensitivity / epsilon)
""",
        # read first, then reset (a budget spent)
        """
import numpy as np
def spend(x, epsilon):
    out = x + np.random.laplace(0, 1 / epsilon)
    epsilon = 0.0
    return out, epsilon
""",
        # ordinary ML: an Adam beta overwritten (a hyperparameter, not a privacy parameter)
        """
import torch
def make_optimizer(model, adam_beta, epsilon_dp):
    adam_beta = 0.9
    return torch.optim.Adam(model.parameters(), betas=(adam_beta, 0.999)), epsilon_dp
""",
    )
    INVALID = (
        # the smooth-sensitivity β passed in is replaced by a constant
        """
import numpy as np
def smooth_bound(counts, d, beta):
    c = 1 + np.arange(len(counts)) + counts
    beta = 1.0 / 6.0  # <-
    return np.max(np.exp(-beta * np.arange(len(counts))) * c)
def release(counts, d, epsilon):
    return np.random.laplace(0, 2 * smooth_bound(counts, d, epsilon / 6) / epsilon)
""",
        # a mechanism that fixes ε whatever the caller passes
        """
import numpy as np
def laplace_release(x, sensitivity, epsilon):
    epsilon = 1  # <-
    return x + np.random.laplace(0, sensitivity / epsilon)
""",
        # a method: the noise multiplier argument overwritten
        """
import torch
class DPStep:
    def noise(self, grad, noise_multiplier, clip):
        noise_multiplier = 0.5  # <-
        return grad + torch.normal(0, noise_multiplier * clip, grad.shape)
""",
        # δ pinned inside a Gaussian calibration
        """
import math
def gaussian_sigma(sens, epsilon, delta):
    delta = 1e-5  # <-
    return sens * math.sqrt(2 * math.log(1.25 / delta)) / epsilon
""",
    )

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding is a function assigning a literal to one of its own parameters."""
        for fn in facts.functions:
            params = {a.arg for a in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs)}
            for stmt in fn.body:
                if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id in params
                                                        for t in stmt.targets):
                    return True
        return False

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        params = [p for p in param_names(node) if p not in ("self", "cls")]
        wanted = {p for p in params if words(p) & _PRIVACY and not words(p) & _NOT_PRIVACY}
        if not wanted or not isinstance(node.body, cst.IndentedBlock):
            return
        fa = self.ctx.analysis
        for stmt in node.body.body:
            if not isinstance(stmt, cst.SimpleStatementLine):
                continue
            for small in stmt.body:
                if not isinstance(small, cst.Assign) or len(small.targets) != 1:
                    continue
                target = small.targets[0].target
                if not isinstance(target, cst.Name) or target.value not in wanted or not _literal(small.value):
                    continue
                line = fa.line_of(small)
                if self._read_before(node, target.value, line):
                    wanted.discard(target.value)
                    continue
                self.report(small, f"the parameter `{target.value}` is overwritten with "
                                   f"`{fa.code(small.value).strip()}` before it is read: the value the caller "
                                   f"passes (and accounts for) is ignored and the noise is calibrated to the "
                                   f"constant; use the parameter (or make the constant its default)")
                wanted.discard(target.value)

    def _read_before(self, fn: cst.FunctionDef, name: str, line: int) -> bool:
        fa = self.ctx.analysis
        for n in walk(fn.body):
            if isinstance(n, cst.Name) and n.value == name and fa.line_of(n) < line:
                return True
        return False
