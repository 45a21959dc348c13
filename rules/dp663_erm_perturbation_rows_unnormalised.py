"""DP663: objective/output perturbation (Chaudhuri et al.) sized for ||x_i|| <= 1 on rows nothing normalises."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts, call_name as ast_call_name
from dpcheck.analysis.astnames import walk as ast_walk
from dpcheck.analysis.syntax import call_name, param_names, refs, scope_assignments, walk, words
from dpcheck.rule import Rule

_DATA = frozenset({"data", "x", "X", "features", "inputs", "samples", "points", "examples", "train", "xs"})
_BUDGET = frozenset({"eps", "epsilon", "epsilonp", "budget"})
_REG = frozenset({"lambda", "Lambda", "lam", "lmbda", "lmbd", "reg", "regularization", "regularizer", "l2", "alpha",
                  "penalty"})
#: a solver of the regularised loss (a model's ``fit``/``train`` is not: those are ML pipelines, whose λ and ε are
#: often unrelated hyperparameters)
_SOLVERS = frozenset({"minimize", "fmin_l_bfgs_b", "fmin_bfgs", "fmin", "fmin_cg", "fmin_tnc", "least_squares",
                      "gradient_descent"})
_NOISE = frozenset({"noise", "noisevector", "gamma", "laplace", "normal", "perturb", "perturbation"})
#: calls that bound or normalise the rows
_BOUND_CALLS = frozenset({"clip", "clamp", "clip_by_norm", "normalize", "normalise", "normalize_rows", "l2_normalize",
                          "minmax_scale", "MinMaxScaler", "Normalizer", "maxabs_scale", "MaxAbsScaler", "project",
                          "project_to_ball", "clip_rows", "scale_rows"})


def _last(call: cst.Call) -> str:
    return (call_name(call) or "").split(".")[-1]


def _w(name: str) -> frozenset[str]:
    return words(name) | {name, name.lower()}


class ErmPerturbationRowsUnnormalised(Rule):
    id = "DP663"
    name = "erm-perturbation-rows-unnormalised"
    category = "general"
    severity = "error"
    summary = ("objective or output perturbation (noise sized 2/(n·λ·ε), or ε' = ε − 2·log(1 + c/(n·λ))) trains on "
               "data rows that nothing normalises to ||x_i|| ≤ 1 or checks")
    rationale = (
        "Chaudhuri, Monteleoni and Sarwate's output perturbation (noise of norm ~ Gamma(d, 2/(n·λ·ε))) and objective "
        "perturbation (ε' = ε − 2·log(1 + c/(n·λ)), a random linear term b·w/n) are ε-DP only when every feature "
        "vector has ||x_i|| ≤ 1: the sensitivity of the regularised minimiser, 2/(n·λ), and the curvature bound c "
        "are derived from it. A trainer that takes `data` and minimises the perturbed loss without dividing each "
        "row by its norm (or by a public bound), clipping it, or rejecting rows with norm above 1 adds noise too "
        "small for real features (a row of norm 10 moves the minimiser ten times further). Reported: the call of "
        "such a trainer (a function with a data, a budget and a regularisation parameter, a solver call and a "
        "noise draw whose scale reads λ and ε) from another function, or the trainer's noise when nothing calls "
        "it, in a module that never normalises, clips or checks the rows. Bad: `lr_output_train(data, labels, "
        "eps, lam)` with `scale = n * lam * eps / 2` on raw rows. Good: `data = data / np.maximum(1, "
        "np.linalg.norm(data, axis=1, keepdims=True))` first. Fix: project every row onto the unit ball (or "
        "assert ||x_i|| ≤ 1) before training."
    )
    TRIGGERS = ("ambda", "lam", "reg", "alpha", "penalty")

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding needs a module with no bounding call (by its name as written, as ``_normalises`` reads it)
        and a function (not ``__init__``) with a data, a budget and a regularisation parameter that calls a
        solver."""
        if any(ast_call_name(c) in _BOUND_CALLS for c in facts.calls):
            return False
        if not any(facts.call_lasts(c) & _SOLVERS for c in facts.calls):
            return False
        for fn in facts.functions:
            params = [a.arg for a in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs)]
            if fn.name == "__init__" or not any(_w(p) & _DATA for p in params) \
                    or not any(_w(p) & _BUDGET for p in params) or not any(_w(p) & _REG for p in params):
                continue
            if any(isinstance(c, ast.Call) and facts.call_lasts(c) & _SOLVERS for c in ast_walk(fn)):
                return True
        return False

    INVALID = (
        # output perturbation: a gamma-norm noise vector added to the minimiser
        """
import numpy as np
from scipy.optimize import minimize
def ball_noise(rate, dim):
    u = np.random.normal(0, 1, dim)
    return u / np.linalg.norm(u) * np.random.gamma(dim, 1 / rate)
def output_perturbed(data, y, epsilon, lam):
    n, d = data.shape
    rate = n * lam * epsilon / 2
    w = minimize(lambda w: np.mean(np.log1p(np.exp(-y * data.dot(w)))) + lam / 2 * w.dot(w), np.zeros(d)).x
    return w + ball_noise(rate, d)
def private_logistic(data, y, epsilon=1.0, lam=0.01):
    return output_perturbed(data, y, epsilon, lam)  # <-
""",
        # objective perturbation with the epsilon-prime formula
        """
import numpy as np
from scipy import optimize
def objective_perturbed(X, t, eps, reg, c=0.25):
    n, d = X.shape
    eps_p = eps - 2 * np.log(1 + c / (n * reg))
    b = np.random.gamma(d, 2 / eps_p) * np.random.standard_normal(d)
    loss = lambda w: np.mean(np.logaddexp(0, -t * X.dot(w))) + reg / 2 * w.dot(w) + b.dot(w) / n
    return optimize.minimize(loss, np.zeros(d)).x
def run(X, t, eps):
    w = objective_perturbed(X, t, eps, 1e-2)  # <-
    return w
""",
        # a class method trainer, with Laplace noise per coordinate
        """
import numpy as np
from scipy.optimize import fmin_l_bfgs_b
class PrivateSVM:
    def train(self, features, labels, epsilon, penalty):
        n = len(labels)
        scale = 2.0 / (n * penalty * epsilon)
        w, _, _ = fmin_l_bfgs_b(lambda w: self.loss(w, features, labels, penalty), np.zeros(features.shape[1]),
                                approx_grad=True)
        return w + np.random.laplace(0, scale, w.shape)  # <-
""",
        # no caller: the trainer's noise is reported
        """
import numpy as np
from scipy.optimize import minimize
def erm_output(inputs, targets, eps, lmbda):
    m = inputs.shape[0]
    w = minimize(lambda v: np.sum((inputs @ v - targets) ** 2) / m + lmbda * v @ v, np.zeros(inputs.shape[1])).x
    noise = np.random.laplace(0, 2 / (m * lmbda * eps), w.shape)  # <-
    return w + noise
""",
    )
    VALID = (
        # twin: rows projected onto the unit ball first
        """
import numpy as np
from scipy.optimize import minimize
def ball_noise(rate, dim):
    u = np.random.normal(0, 1, dim)
    return u / np.linalg.norm(u) * np.random.gamma(dim, 1 / rate)
def output_perturbed(data, y, epsilon, lam):
    n, d = data.shape
    rate = n * lam * epsilon / 2
    w = minimize(lambda w: np.mean(np.log1p(np.exp(-y * data.dot(w)))) + lam / 2 * w.dot(w), np.zeros(d)).x
    return w + ball_noise(rate, d)
def private_logistic(data, y, epsilon=1.0, lam=0.01):
    data = data / np.maximum(1.0, np.linalg.norm(data, axis=1, keepdims=True))
    return output_perturbed(data, y, epsilon, lam)
""",
        # twin: the rows' norms are checked
        """
import numpy as np
from scipy import optimize
def objective_perturbed(X, t, eps, reg, c=0.25):
    if np.any(np.linalg.norm(X, axis=1) > 1):
        raise ValueError("rows must have norm at most 1")
    n, d = X.shape
    eps_p = eps - 2 * np.log(1 + c / (n * reg))
    b = np.random.gamma(d, 2 / eps_p) * np.random.standard_normal(d)
    loss = lambda w: np.mean(np.logaddexp(0, -t * X.dot(w))) + reg / 2 * w.dot(w) + b.dot(w) / n
    return optimize.minimize(loss, np.zeros(d)).x
def run(X, t, eps):
    return objective_perturbed(X, t, eps, 1e-2)
""",
        # twin: sklearn's Normalizer on the features
        """
import numpy as np
from scipy.optimize import fmin_l_bfgs_b
from sklearn.preprocessing import normalize
class PrivateSVM:
    def train(self, features, labels, epsilon, penalty):
        features = normalize(features)
        n = len(labels)
        scale = 2.0 / (n * penalty * epsilon)
        w, _, _ = fmin_l_bfgs_b(lambda w: self.loss(w, features, labels, penalty), np.zeros(features.shape[1]),
                                approx_grad=True)
        return w + np.random.laplace(0, scale, w.shape)
""",
        # ordinary ML: ridge regression with a noisy initialisation, no budget
        """
import numpy as np
from scipy.optimize import minimize
def ridge(X, y, alpha=1.0, noise=0.01):
    w0 = np.random.normal(0, noise, X.shape[1])
    return minimize(lambda w: np.sum((X @ w - y) ** 2) + alpha * w @ w, w0).x
""",
    )

    def visit_Module(self, node: cst.Module) -> None:
        if self._normalises(node):
            return
        fa = self.ctx.analysis
        trainers: dict[str, tuple[cst.FunctionDef, int, cst.CSTNode]] = {}
        for fn in walk(node):
            if not isinstance(fn, cst.FunctionDef) or fn.name.value == "__init__":
                continue
            params = param_names(fn)
            shift = 1 if params and params[0] in ("self", "cls") else 0
            data = next((p for p in params if _w(p) & _DATA), None)
            budget = {p for p in params if _w(p) & _BUDGET}
            reg = {p for p in params if _w(p) & _REG}
            if data is None or not budget or not reg:
                continue
            if not any(isinstance(c, cst.Call) and _last(c) in _SOLVERS for c in walk(fn)):
                continue
            assigns = scope_assignments(fn, fa.line_of)
            derived: set[str] = set()
            for _, target, value in assigns:  # names of a scale that reads λ and ε (and n)
                r = refs(value)
                if r & reg and r & budget or r & derived:
                    derived.add(target)
            site = None
            for c in walk(fn, into_scopes=False):
                if not isinstance(c, cst.Call) or not words(_last(c)) | {_last(c).lower()} & _NOISE:
                    continue
                r = set().union(*(refs(a.value) for a in c.args)) if c.args else set()
                if r & derived or r & reg and r & budget:
                    site = c
                    break
            if site is None:
                continue
            trainers[fn.name.value] = (fn, params.index(data) - shift, site)
        for name, (fn, index, site) in trainers.items():
            called = False
            for call in walk(node):
                if not (isinstance(call, cst.Call) and _last(call) == name) or fa.enclosing_function(call) is fn:
                    continue
                called = True
                self.report(call, self._message(name))
            if not called:
                self.report(fa.enclosing_statement(site), self._message(name))

    @staticmethod
    def _normalises(node: cst.Module) -> bool:
        for sub in walk(node):
            if isinstance(sub, cst.Call) and _last(sub) in _BOUND_CALLS:
                return True
            if isinstance(sub, cst.Comparison) and any(isinstance(c, cst.Call) and _last(c) == "norm"
                                                        for c in walk(sub)):
                return True
            if isinstance(sub, cst.BinaryOperation) and isinstance(sub.operator, cst.Divide) \
                    and any(isinstance(c, cst.Call) and _last(c) in ("norm", "maximum", "max")
                            and any(isinstance(a.value, cst.Name) and _w(a.value.value) & _DATA for a in c.args)
                            for c in walk(sub.right)):
                return True
        return False

    @staticmethod
    def _message(name: str) -> str:
        return (f"`{name}` sizes its objective/output perturbation for rows with ||x_i|| ≤ 1 (sensitivity 2/(n·λ)), "
                "but nothing in this module normalises, clips or checks the rows, so real features break the bound "
                "and the noise is too small; divide each row by max(1, ||x_i||) (or assert the norm bound) first")
