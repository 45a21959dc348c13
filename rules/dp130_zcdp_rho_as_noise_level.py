"""DP130: the zCDP budget ρ (or ε of a discrete sampler) passed as the noise sampler's variance or scale."""
from __future__ import annotations

import libcst as cst

from dpcheck.analysis.syntax import call_name, last_name, words
from dpcheck.rule import Rule

#: discrete samplers (Canonne-Kamath-Steinke, OpenDP, diffprivlib ports): first positional is σ² or the scale
_DISCRETE = frozenset({"sample_dgauss", "sample_discrete_gaussian", "discrete_gaussian_sample", "sample_dlaplace",
                       "sample_discrete_laplace", "discrete_laplace_sample", "dgauss", "dlaplace"})
#: Gaussian/Laplace draws whose second positional is the std or scale
_CONTINUOUS = frozenset({"normal", "laplace", "gauss"})
_LEVEL_KEYWORDS = frozenset({"sigma2", "sigma_sq", "sigma_squared", "variance", "var", "scale", "std", "stddev",
                             "sigma"})


def _budget_kind(expr: cst.BaseExpression) -> str | None:
    """``rho``, ``self.rho``, ``rho_i`` → "ρ"; ``epsilon``/``eps`` → "ε" (discrete samplers only)."""
    if not isinstance(expr, (cst.Name, cst.Attribute)):
        return None
    pieces = words(last_name(expr) or "")
    if pieces & {"lambda", "lam", "scale", "sigma", "std", "noise", "var", "variance", "b", "inv"}:
        return None  # ``lambda_rho = 2 * gamma / eps_1``: a scale named after the budget it serves
    if "rho" in pieces or "ρ" in pieces:
        return "ρ"
    if pieces & {"epsilon", "eps"}:
        return "ε"
    return None


class ZcdpRhoAsNoiseLevel(Rule):
    id = "DP130"
    name = "budget-as-noise-level"
    category = "general"
    severity = "error"
    summary = "the privacy budget ρ (zCDP) is passed as a noise sampler's variance or scale, so noise grows with ρ"
    rationale = (
        "Under ρ-zCDP a sensitivity-Δ query needs Gaussian (or discrete Gaussian) noise of variance "
        "σ² = Δ²/(2ρ): the noise shrinks as the budget grows. Passing ρ itself as the variance "
        "(`sample_dgauss(rho)`, `np.random.normal(0, rho)`) inverts that: ρ = 0.1 adds noise of variance 0.1 "
        "where 5 is needed, and the claimed ρ-zCDP does not hold. The same holds for a discrete Laplace or "
        "discrete Gaussian sampler given ε as its scale (Δ/ε needed). Reported: a ρ-named value as the "
        "variance/std/scale of a Gaussian or Laplace draw, or as the first argument (or a σ²/scale keyword) of "
        "a discrete sampler, or an ε-named value there for a discrete sampler. Not reported: `1 / (2 * rho)`, "
        "`sens / eps`, a σ computed by a calibration helper. Fix: `sample_dgauss(sens ** 2 / (2 * rho))`."
    )
    TRIGGERS = ("rho", "dgauss", "dlaplace", "discrete_gaussian", "discrete_laplace", "ρ")
    requires_dp_context = False

    VALID = (
        # twin: σ² = 1/(2ρ) for a sensitivity-1 count
        """
from dgauss import sample_dgauss
def discrete_gaussian(counts, rho):
    for i in range(len(counts)):
        counts[i] += sample_dgauss(1 / (2 * rho))
""",
        # twin: a continuous Gaussian with std sqrt(Δ²/(2ρ))
        """
import numpy as np
def gaussian_zcdp(value, sens, rho):
    return value + np.random.normal(0, np.sqrt(sens ** 2 / (2 * rho)))
""",
        # twin: the discrete Laplace scale Δ/ε
        """
def discrete_laplace(counts, epsilon, sensitivity=1):
    return [c + sample_dlaplace(sensitivity / epsilon) for c in counts]
""",
        # ordinary ML code: Adam's eps, a kernel sigma, a correlation rho used as a mixing weight
        """
import numpy as np
def rbf(x, y, sigma=1.0, eps=1e-8, rho=0.9):
    k = np.exp(-np.sum((x - y) ** 2) / (2 * sigma ** 2 + eps))
    return rho * k + (1 - rho) * np.random.normal(0, sigma)
""",
        # a scale named after the budget it serves (SVT's threshold noise λ_ρ = 2Δ/ε₁)
        """
import numpy as np
def threshold(tau, gamma, eps_1):
    lambda_rho = gamma * 2.0 / eps_1
    return tau + np.random.laplace(scale=lambda_rho)
""",
    )

    INVALID = (
        # census top-down: ρ handed to the discrete Gaussian sampler as σ²
        """
from dgauss import sample_dgauss
def discrete_gaussian(counts, rho):
    for i in range(len(counts)):
        counts[i] += sample_dgauss(rho)  # <-
""",
        # a continuous Gaussian whose std is ρ
        """
import numpy as np
def gaussian_zcdp(value, sens, rho):
    return value + np.random.normal(0, rho)  # <-
""",
        # a discrete Laplace sampler given ε as its scale
        """
def discrete_laplace(counts, epsilon, sensitivity=1):
    return [c + sample_dlaplace(epsilon) for c in counts]  # <-
""",
        # keyword form, the budget kept on the object
        """
class Release:
    def __init__(self, rho):
        self.rho = rho
    def noisy(self, count):
        return count + sample_discrete_gaussian(sigma2=self.rho)  # <-
""",
    )

    def visit_Call(self, node: cst.Call) -> None:
        name = call_name(node) or ""
        discrete = name in _DISCRETE
        if not discrete and name not in _CONTINUOUS:
            return
        level: cst.BaseExpression | None = None
        for arg in node.args:
            if arg.keyword is not None and arg.keyword.value in _LEVEL_KEYWORDS:
                level = arg.value
        positional = [a.value for a in node.args if a.keyword is None and not a.star]
        if level is None:
            at = 0 if discrete else 1
            level = positional[at] if len(positional) > at else None
        if level is None:
            return
        kind = _budget_kind(level)
        if kind is not None and isinstance(level, cst.Name):
            bound = self.ctx.analysis.value_of(level)
            if bound is not None and not isinstance(bound, (cst.Name, cst.Attribute, cst.Subscript)):
                kind = None  # a local computed by a formula is a calibrated level, not the budget itself
        if kind is None or kind == "ε" and not discrete:
            return  # ε as a continuous scale: DP114's finding
        fa = self.ctx.analysis
        self.report(node, f"the privacy budget `{fa.code(level).strip()}` ({kind}) is the noise level of "
                          f"`{name}`: the noise grows with the budget instead of shrinking; a sensitivity-Δ "
                          f"query needs σ² = Δ²/(2ρ) under zCDP (scale Δ/ε for Laplace)")
