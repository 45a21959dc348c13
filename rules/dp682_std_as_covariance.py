"""DP682: a multivariate Gaussian draw takes the noise std times the identity as its covariance."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, target_names, walk, words
from dpcheck.rule import Rule

_MVN = frozenset({"multivariate_normal", "MultivariateNormal", "MultivariateNormalFullCovariance"})
_COV_KEYWORDS = frozenset({"cov", "covariance_matrix", "covariance"})
_IDENTITY = frozenset({"eye", "identity", "ones", "diag", "diagflat"})
_STD_WORDS = frozenset({"std", "stddev", "stdev", "sigma", "scale"})
_VARIANCE_WORDS = frozenset({"var", "variance", "cov", "covariance", "sq", "squared", "sigma2", "var2"})


def _std_factor(expr: cst.BaseExpression) -> str | None:
    """The std-named factor of ``sigma * np.eye(d)`` / ``np.eye(d) * noise_scale`` / ``np.diag(sigma * ones)``."""
    if isinstance(expr, cst.Call) and call_name(expr) in {"diag", "diagflat"} and expr.args:
        return _std_factor(expr.args[0].value) or _std_name(expr.args[0].value)
    if not (isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Multiply)):
        return None
    for a, b in ((expr.left, expr.right), (expr.right, expr.left)):
        if isinstance(b, cst.Call) and call_name(b) in _IDENTITY:
            return _std_name(a)
    return None


def _std_name(expr: cst.BaseExpression) -> str | None:
    if isinstance(expr, cst.Name):
        name = expr.value
    elif isinstance(expr, cst.Attribute):
        name = expr.attr.value
    else:
        return None
    w = words(name)
    if w & _STD_WORDS and not w & _VARIANCE_WORDS:
        return name
    return None


class StdAsCovariance(Rule):
    id = "DP682"
    name = "std-as-covariance"
    category = "general"
    severity = "error"
    summary = ("a multivariate Gaussian noise draw gets `σ·I` as its covariance: its standard deviation is √σ, "
               "not the calibrated σ")
    rationale = (
        "`np.random.multivariate_normal(mean, cov)`, `rng.multivariate_normal` and torch's "
        "`MultivariateNormal(loc, covariance_matrix=...)` take a covariance matrix, whose diagonal is the "
        "variance σ². A Gaussian mechanism that calibrates the standard deviation σ (σ = Δ·√(2 ln(1.25/δ))/ε, a "
        "`noise_scale`, a `sigma`) and passes `σ * np.eye(d)` draws noise of standard deviation √σ: for σ > 1 that "
        "is far less noise than the (ε, δ) claim needs (σ = 100 gives std 10). Reported: a multivariate-normal "
        "call in DP code whose covariance is a std-named value (`sigma`, `std`, `noise_scale`; not `var`, "
        "`sigma2`, `sigma_sq`) times an identity (`eye`, `identity`, `diag`), written in the call or bound to a "
        "name first. Fix: pass `sigma**2 * np.eye(d)`, or draw `sigma * standard_normal(d)`."
    )
    TRIGGERS = ("multivariate_normal", "MultivariateNormal")
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding needs a multivariate-normal call and an identity-matrix call."""
        return facts.calls_any(_MVN) and facts.calls_any(_IDENTITY)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        bound: dict[str, str] = {}
        for sub in walk(node.body, into_scopes=False):
            if isinstance(sub, cst.Assign):
                std = _std_factor(sub.value)
                if std:
                    for t in sub.targets:
                        for name in target_names(t.target):
                            bound[name] = std
            if not (isinstance(sub, cst.Call) and call_name(sub) in _MVN):
                continue
            cov = None
            positional = [a for a in sub.args if a.keyword is None]
            for a in sub.args:
                if a.keyword is not None and a.keyword.value in _COV_KEYWORDS:
                    cov = a.value
            if cov is None and len(positional) >= 2:
                cov = positional[1].value
            if cov is None:
                continue
            std = _std_factor(cov) or (bound.get(cov.value) if isinstance(cov, cst.Name) else None)
            if std:
                self.report(sub, f"`{std}` is a standard deviation but is passed as the covariance (`{std}·I`): "
                                 f"the noise's std is √{std}; use `{std}**2 * I`")

    VALID = (
        # twin: the variance on the diagonal
        """
import numpy as np
def perturb(theta, sensitivity, epsilon, delta):
    sigma = sensitivity * np.sqrt(2 * np.log(1.25 / delta)) / epsilon
    d = theta.shape[0]
    return theta + np.random.multivariate_normal(np.zeros(d), sigma ** 2 * np.eye(d))
""",
        # twin: the name says variance
        """
import numpy as np
def perturb(theta, sensitivity, epsilon, delta, rng):
    noise_var = 2 * np.log(1.25 / delta) * (sensitivity / epsilon) ** 2
    cov = noise_var * np.eye(theta.shape[0])
    return theta + rng.multivariate_normal(np.zeros(theta.shape[0]), cov)
""",
        # twin: std times a standard normal vector
        """
import numpy as np
def perturb(theta, noise_scale, rng):
    return theta + noise_scale * rng.standard_normal(theta.shape[0])
""",
        # ordinary ML: sampling a Gaussian prior with a variance hyper-parameter
        """
import numpy as np
def sample_prior(d, prior_variance):
    return np.random.multivariate_normal(np.zeros(d), prior_variance * np.eye(d))
""",
    )
    INVALID = (
        # the calibrated std goes on the covariance diagonal
        """
import numpy as np
def perturb(theta, sensitivity, epsilon, delta):
    sigma = sensitivity * np.sqrt(2 * np.log(1.25 / delta)) / epsilon
    d = theta.shape[0]
    return theta + np.random.multivariate_normal(np.zeros(d), sigma * np.eye(d))  # <-
""",
        # covariance bound to a name first, generator API
        """
import numpy as np
def objective_noise(d, epsilon, delta, rng):
    noise_scale = 4.0 * np.sqrt(2 * np.log(2 / delta)) / epsilon
    cov = np.eye(d) * noise_scale
    return rng.multivariate_normal(np.zeros(d), cov)  # <-
""",
        # torch, keyword covariance
        """
import torch
def private_embedding(x, noise_std):
    d = x.shape[-1]
    dist = torch.distributions.MultivariateNormal(torch.zeros(d), covariance_matrix=noise_std * torch.eye(d))  # <-
    return x + dist.sample()
""",
        # diagonal built from a std vector
        """
import numpy as np
def perturb_weights(w, sigma, epsilon):
    return w + np.random.multivariate_normal(np.zeros(len(w)), np.diag(sigma * np.ones(len(w))))  # <-
""",
    )
