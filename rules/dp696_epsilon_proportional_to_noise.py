"""DP696: a reported ε is computed as a product with the noise level in the numerator (ε ∝ σ): more noise reports
more privacy loss, and the value is not a privacy bound."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.resolver import product_factors
from dpcheck.analysis.syntax import call_name, dotted, walk, words
from dpcheck.rule import Rule

_BUDGET = frozenset({"epsilon", "eps"})
_NUMERIC = frozenset({"norm", "adam", "optimizer", "optim", "tol", "tolerance", "machine", "numerical", "stability",
                      "small", "float", "finfo", "attack", "adv", "adversarial", "pgd", "fgsm", "std", "sd", "step"})
#: names of a noise level (std, multiplier, scale)
_LEVEL = frozenset({"sigma", "noise"})
#: calls an ε handed to is reported (logged, printed, saved)
_REPORTING = frozenset({"print", "info", "log", "write", "dump", "dumps", "add_scalar", "log_metrics", "append",
                        "format", "warning", "debug", "jsonify"})
_DRAWS = frozenset({"normal", "laplace", "gauss", "Normal", "Laplace", "randn", "randn_like", "standard_normal"})


_UNWRAP = frozenset({"float", "abs"})


def _factors_of(expr: cst.BaseExpression) -> list[tuple[cst.BaseExpression, int]]:
    return product_factors(expr, _UNWRAP)


def _level(expr: cst.CSTNode) -> bool:
    name = dotted(expr)
    return name is not None and bool(words(name.rsplit(".", 1)[-1]) & _LEVEL)


def _proportional(value: cst.BaseExpression) -> str | None:
    """The noise level ``value`` multiplies (a factor in the numerator, none in a denominator, and a
    product of at least two factors)."""
    factors = _factors_of(value)
    if len(factors) < 2:
        return None
    up = [f for f, sign in factors if sign > 0 and _level(f)]
    down = any(sign < 0 and any(_level(n) for n in walk(f) if isinstance(n, (cst.Name, cst.Attribute)))
               for f, sign in factors)
    if not up or down:
        return None
    # an exponent or a log around the product is another formula (``exp(-sigma * t)``)
    return dotted(up[0])


def _budget_target(name: str) -> bool:
    pieces = words(name.rsplit(".", 1)[-1])
    return bool(pieces & _BUDGET) and not pieces & (_NUMERIC | _LEVEL)


class EpsilonProportionalToNoise(Rule):
    id = "DP696"
    name = "epsilon-proportional-to-noise"
    category = "general"
    severity = "error"
    summary = ("an ε that is returned, printed or logged is computed as a product with the noise level "
               "in the numerator (`eps = T * q * noise_scale`): more noise reports more privacy loss")
    rationale = (
        "Every privacy bound falls as the noise grows: the Gaussian mechanism's ε is Δ·√(2 ln(1.25/δ))/σ, a "
        "moments/RDP accountant's ε for T subsampled steps grows with q·√T and shrinks with σ. A reported "
        "ε computed as `T * (batch_size / n) * noise_scale` (often the inverse of a calibration that set "
        "`noise_scale = epsilon / (T * q)`, so it returns the requested ε by construction) is no bound at "
        "all: it ignores δ and the clip bound and says doubling the noise doubles the loss. Reported: an "
        "assignment to an ε-named value (or a returned expression next to one) that is a product with a "
        "noise-named factor (`sigma`, `noise_scale`, `noise_multiplier`) in its numerator and none in a "
        "denominator, when that value is returned, printed or logged. Not reported: σ in a denominator "
        "(`sens / sigma`), a value named ε that is itself a noise level fed to a draw or to a σ (some code "
        "calls a σ·C·√T product `epsilon_1`), code with no DP context. Fix: report the ε of an accountant "
        "(RDP/PRV) for the noise multiplier, sampling rate, steps and δ."
    )
    TRIGGERS = ("eps",)
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding needs an assignment to an ε-named name whose value multiplies a noise-named name."""
        for node in facts.nodes(ast.Assign):
            if not any(isinstance(t, ast.Name) and words(t.id) & _BUDGET for t in node.targets):  # type: ignore[attr-defined]
                continue
            value = node.value  # type: ignore[attr-defined]
            if isinstance(value, ast.BinOp) and any(isinstance(n, ast.Name) and words(n.id) & _LEVEL
                                                    or isinstance(n, ast.Attribute) and words(n.attr) & _LEVEL
                                                    for n in ast.walk(value)):
                return True
        return False

    @classmethod
    def admits(cls, facts: AstFacts) -> bool:
        return facts.may_have_dp_context and cls.may_report(facts)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        fa = self.ctx.analysis
        stmts = list(walk(node.body, into_scopes=False))
        for i, stmt in enumerate(stmts):
            if not (isinstance(stmt, cst.Assign) and len(stmt.targets) == 1
                    and isinstance(stmt.targets[0].target, cst.Name)):
                continue
            name = stmt.targets[0].target.value
            if not _budget_target(name):
                continue
            level = _proportional(stmt.value)
            if level is None:
                continue
            drawn = {t for s in stmts if isinstance(s, cst.Assign) and isinstance(s.value, cst.Call)
                     and call_name(s.value) in _DRAWS for t in (dotted(x.target) for x in s.targets) if t}
            if any(dotted(f) in drawn for f, _ in _factors_of(stmt.value)):
                continue  # a unit draw times a std: the reparameterised sample, not a budget
            later = stmts[i + 1:]
            used_as_level = False
            reported = False
            for n in later:
                if isinstance(n, cst.Assign) and any(isinstance(m, cst.Name) and m.value == name for m in walk(n.value)):
                    if any(words(dotted(t.target) or "") & (_LEVEL | {"std", "scale"}) for t in n.targets):
                        used_as_level = True
                if isinstance(n, cst.Call) and any(isinstance(m, cst.Name) and m.value == name
                                                   for a in n.args for m in walk(a.value)):
                    if call_name(n) in _DRAWS:
                        used_as_level = True
                    elif call_name(n) in _REPORTING:
                        reported = True
                if isinstance(n, cst.Return) and n.value is not None and any(
                        isinstance(m, cst.Name) and m.value == name for m in walk(n.value)):
                    reported = True
            if used_as_level or not reported:
                continue
            code = " ".join(fa.code(stmt.value).split())
            self.report(stmt, f"`{name} = {code[:70]}` grows with the noise level `{level}`: more noise reports "
                              "more privacy loss, so this is no privacy bound (with σ set from ε it just returns "
                              "the requested ε); report the ε of an accountant for σ, q, T and δ")

    VALID = (
        # twin: the Gaussian mechanism's ε falls as σ grows
        """
import math
def spent(noise_std, clip, delta):
    epsilon_spent = clip * math.sqrt(2 * math.log(1.25 / delta)) / noise_std
    return epsilon_spent, delta
""",
        # twin: an accountant's ε for the run
        """
from opacus.accountants import RDPAccountant
def train(model, loader, noise_multiplier, steps, delta):
    acct = RDPAccountant()
    acct.history = [(noise_multiplier, loader.batch_size / len(loader.dataset), steps)]
    epsilon_actual = acct.get_epsilon(delta)
    print("epsilon", epsilon_actual)
    return model, epsilon_actual
""",
        # a value named epsilon that is a noise level: it sets the next σ
        """
import math, numpy as np
def two_stage(sigma_1, C, T):
    epsilon_1 = sigma_1 * C * math.sqrt(T)
    sigma_2 = epsilon_1 / math.sqrt(T)
    return np.random.normal(0, sigma_2)
""",
        # ordinary ML: a VAE's reparameterisation noise times the posterior std
        """
import torch
def reparameterize(mu, logvar):
    sigma = torch.exp(0.5 * logvar)
    eps = torch.randn_like(sigma)
    sample_eps = eps * sigma
    return mu + sample_eps
""",
    )

    INVALID = (
        """
import torch
def train(model, loader, epochs, epsilon, delta):
    steps = epochs * len(loader)
    q = loader.batch_size / len(loader.dataset)
    noise_scale = epsilon / (steps * q)
    run(model, loader, noise_scale)
    epsilon_actual = steps * q * noise_scale  # <-
    return model, epsilon_actual, delta
""",
        """
def privacy_cost(T, batch_size, n, sigma, delta):
    eps = T * (batch_size / n) * sigma  # <-
    return eps, delta
""",
        """
import logging
class Trainer:
    def finish(self):
        total_epsilon = self.rounds * self.sample_rate * self.noise_multiplier  # <-
        logging.info("spent epsilon %.3f", total_epsilon)
""",
        """
import math
def report_budget(noise_std, clip, steps):
    achieved_eps = noise_std * math.sqrt(steps) / clip  # <-
    print(f"achieved eps={achieved_eps:.2f}")
""",
    )
