"""DP835: a function given ε (and δ) sets its noise level to a literal number and never reads the budget."""
from __future__ import annotations


import libcst as cst

from dpcheck.analysis.astfacts import AstFacts, unread_param
from dpcheck.analysis.syntax import all_params, call_name, interface_only, number, refs, target_names, walk, words
from dpcheck.rule import Rule

_DRAWS = frozenset({"normal", "normal_", "randn", "randn_like", "gauss", "standard_normal", "laplace", "Normal",
                    "Laplace", "gaussian", "normalvariate", "random_normal", "gaussian_noise", "laplace_noise",
                    "add_noise", "add_gaussian_noise", "add_laplace_noise"})
_BUDGET = frozenset({"epsilon", "eps", "delta", "budget"})
_NUMERIC = frozenset({"norm", "adam", "optimizer", "optim", "tol", "tolerance", "machine", "numerical", "stability",
                      "min", "small", "float", "finfo", "step", "lr", "root", "huber", "greedy", "explore"})
#: parameters of an Adam-style optimiser: an ``eps`` beside them is its numerical constant
_OPTIMISER_SIBLINGS = frozenset({"b1", "b2", "beta1", "beta2", "beta_1", "beta_2", "eps_root", "amsgrad",
                                 "momentum"})
#: words of a noise level
_LEVEL = frozenset({"sigma", "std", "stddev", "sd", "scale", "multiplier", "noise", "b", "lam", "lambda"})
_NOT_LEVEL = frozenset({"lr", "learning", "rate", "loss", "weight", "decay", "clip", "bound", "c", "temperature",
                        "dropout", "init", "mean", "mu", "loc"})

#: function names that claim a private release
_DP_NAMED = frozenset({"dp", "private", "privatize", "privatise", "privacy", "noisy", "ldp", "cdp", "sanitize",
                       "sanitise", "mechanism", "perturb", "dpsgd"})


def _level_name(name: str) -> bool:
    w = words(name.split(".")[-1])
    return bool(w & _LEVEL) and not w & _NOT_LEVEL


class LiteralSigmaBudgetUnused(Rule):
    id = "DP835"
    name = "literal-sigma-budget-unused"
    category = "general"
    severity = "error"
    summary = "the noise level is a literal number in a function that takes ε/δ and never reads them"
    rationale = (
        "A DP routine that is handed the privacy budget (`eps`, `delta`, `epsilon`) promises noise calibrated "
        "to it. When its noise level is set to a literal instead (`sigma = 1` with the calibrated "
        "`sigma = sqrt(2 ln(1.25/delta)) * sens / eps` commented out, `noise_std = 0.5`) and the budget is "
        "read nowhere in the function, the released value gets the same noise whatever ε is asked for, and "
        "the noise bears no relation to the clip bound or the sensitivity: the stated (ε, δ) is not what the "
        "code provides, usually far from it. Reported: the assignment of a literal to a noise-level name "
        "(`sigma`, `std`, `noise_scale`, `noise_multiplier`, `b`) that a noise draw in the same function "
        "reads, when a budget parameter of that function is never read. Not reported: an `eps` beside "
        "optimiser constants or with a tiny numerical default, functions that read the budget anywhere, "
        "literals a later statement recomputes. Fix: compute the noise level from ε, δ and the sensitivity, "
        "or drop the parameters and state the noise as fixed (and account it with its true multiplier)."
    )
    TRIGGERS = ("eps", "delta", "budget")
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding needs a noise draw and a function with a budget-named parameter its body never reads."""
        if not facts.calls_any(_DRAWS):
            return False
        return unread_param(facts, _BUDGET)

    @classmethod
    def admits(cls, facts: AstFacts) -> bool:
        return facts.may_have_dp_context and cls.may_report(facts)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        params = all_params(node)
        names = {p.name.value.lower() for p in params}
        if len(names & _OPTIMISER_SIBLINGS) >= 2:
            return
        budget = []
        for p in params:
            w = words(p.name.value)
            if not w & _BUDGET or w & _NUMERIC or p.name.value.startswith("_"):
                continue
            default = number(p.default) if p.default is not None else None
            if default is not None and 0 < default < 1e-3 and "delta" not in w:
                continue
            budget.append(p.name.value)
        if not budget or interface_only(node):
            return
        if not any("delta" in words(p.name.value) for p in params) \
                and not words(node.name.value) & _DP_NAMED:
            return  # an ``epsilon`` alone in a function not named for privacy may be a margin or smoothing
        body = list(walk(node.body, into_scopes=False))
        used = {n.value for n in body if isinstance(n, cst.Name)}
        if used & {"locals", "vars", "kwargs"}:
            return
        unused = [b for b in budget if b not in used]
        if not unused:
            return
        # noise levels read by a draw, directly or multiplied with one
        drawn: set[str] = set()
        for sub in body:
            if isinstance(sub, cst.Call) and call_name(sub) in _DRAWS:
                for a in sub.args:
                    drawn |= refs(a.value)
            elif isinstance(sub, cst.BinaryOperation) and isinstance(sub.operator, cst.Multiply) and any(
                    isinstance(c, cst.Call) and call_name(c) in _DRAWS for c in (sub.left, sub.right)):
                drawn |= refs(sub)
        assigned: dict[str, list[cst.Assign]] = {}
        for sub in body:
            if isinstance(sub, cst.Assign):
                for t in sub.targets:
                    for n in target_names(t.target):
                        assigned.setdefault(n, []).append(sub)
        for name, stmts in assigned.items():
            if name not in drawn or not _level_name(name):
                continue
            value = number(stmts[0].value)
            if value is None or value <= 0:
                continue
            # later statements may only rescale the literal (``sigma = k * sigma``), not recompute it
            if any(name not in refs(later.value) for later in stmts[1:]):
                continue
            self.report(stmts[0], f"`{name}` is a literal {stmts[0].value.value if hasattr(stmts[0].value, 'value') else value} "
                                  f"and the noise draws read it, while `{node.name.value}` takes the budget "
                                  f"`{unused[0]}` and never reads it: the noise is the same for every ε and "
                                  "unrelated to the sensitivity")

    VALID = (
        # twin: σ calibrated from ε, δ and the sensitivity
        """
import math, random
def noisy_gradient(grad_sum, n, c, eps, delta):
    sensitivity = 2 * c / n
    sigma = math.sqrt(2 * math.log(1.25 / delta)) * sensitivity / eps
    return grad_sum / n + random.gauss(0, sigma)
""",
        # twin: the multiplier is solved from the budget
        """
import torch
def private_step(model, clip, epsilon, delta, steps, q):
    noise_multiplier = solve_multiplier(epsilon, delta, steps, q)
    for p in model.parameters():
        p.grad += torch.randn_like(p.grad) * noise_multiplier * clip
""",
        # an optimiser's numerical eps beside its moment decays
        """
import numpy as np
def adam_with_noise(g, m, v, b1, b2, eps):
    std = 0.01
    g = g + np.random.normal(0, std, g.shape)
    return m * b1 + g, v * b2 + g * g, eps
""",
        # ordinary ML: data augmentation with a fixed jitter, the epsilon is a label-smoothing margin
        """
import numpy as np
def augment_batch(images, labels, epsilon):
    noise_std = 0.05
    return images + np.random.normal(0, noise_std, images.shape), labels
""",
    )
    INVALID = (
        """
import math, random
def noisy_gradient(grad_sum, n, c, eps, delta):
    sensitivity = 2 * c / n
    # sigma = math.sqrt(2 * math.log(1.25 / delta)) * sensitivity / eps
    sigma = 1  # <-
    return grad_sum / n + random.gauss(0, sigma)
""",
        """
import torch
def private_step(model, clip, epsilon, delta, steps, q):
    noise_multiplier = 1.1  # <-
    for p in model.parameters():
        p.grad += torch.randn_like(p.grad) * noise_multiplier * clip
""",
        """
import numpy as np
class Client:
    def privatize_update(self, update, epsilon):
        self.noise_scale = 0.5  # <-
        return update + np.random.laplace(0.0, self.noise_scale, update.shape)
""",
        # the literal is only rescaled later (a noise-reuse schedule), still never from the budget
        """
import random
def private_gradient(grad_sum, n, r, eps, delta):
    sigma = 1.0  # <-
    if r > 0:
        sigma = ((1 - r) / (1 + r)) ** 0.5 * sigma
    return grad_sum / n + random.gauss(0, sigma) / n
""",
        """
import numpy as np
def dp_release(hist, epsilon, delta=1e-5):
    std = 2.0  # <-
    return hist + np.random.normal(loc=0.0, scale=std, size=hist.shape)
""",
    )
