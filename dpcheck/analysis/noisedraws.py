"""Helpers shared by the DP50x rules (noise order, truncated noise, classical Gaussian, budget loops)."""
from __future__ import annotations

import re

import libcst as cst

from dpcheck.analysis.syntax import call_name, last_name, number, walk, words
from dpcheck.analysis.vocabulary import NOISE_DRAWS, STRONG_NOISE_DRAWS

#: draws that are noise by themselves (not helpers such as ``add_noise(x)`` that return a noisy value)
PURE_DRAWS = (NOISE_DRAWS | STRONG_NOISE_DRAWS | {"normal_noise", "laplace_noise", "gaussian_noise"}) - {
    "add_noise", "sample", "rvs",
}
EPS_WORDS = frozenset({"epsilon", "eps"})


#: parameter names a noise helper gives its scale
_SCALE_PARAMS = frozenset({"scale", "b", "beta", "std", "stddev", "sigma", "lam", "lambda", "lambd", "lamda", "noise",
                           "lap", "laplace", "var", "variance", "sd", "width", "spread"})


def user_helper_without_scale(call: cst.Call, callee: cst.FunctionDef | None, index: int) -> bool:
    """``laplace(value, epsilon)`` runs the module's own ``def laplace(val, epsilon)``: its argument at
    ``index`` is whatever that helper names it, not a library draw's scale."""
    if callee is None:
        return False
    params = [p.name.value for p in (*callee.params.posonly_params, *callee.params.params)]
    if params and params[0] in ("self", "cls") and isinstance(call.func, cst.Attribute):
        params = params[1:]
    if any(a.keyword is not None and a.keyword.value == "scale" for a in call.args):
        return "scale" not in params
    return index >= len(params) or not words(params[index]) & _SCALE_PARAMS


def is_draw(expr: cst.BaseExpression) -> bool:
    """A random draw, possibly scaled: ``np.random.normal(0, s, d)``, ``s * torch.randn(n)``."""
    if isinstance(expr, cst.Call):
        return call_name(expr) in PURE_DRAWS
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, (cst.Multiply, cst.Divide)):
        return is_draw(expr.left) or is_draw(expr.right)
    return False


def zero_centred(call: cst.Call) -> bool:
    """A draw centred on 0: ``normal(0, s)``, ``normal(scale=s)``, ``randn(n)``, ``torch.normal(0.0, s)``,
    ``normal(torch.zeros_like(x), s)`` (not ``normal(mean, s)``, which perturbs a value)."""
    name = call_name(call)
    if name not in ("normal", "laplace", "gumbel", "Normal", "Laplace", "gauss", "normalvariate"):
        return True
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value in ("loc", "mean", "mu"):
            return _zero(arg.value)
    positional = [a.value for a in call.args if a.keyword is None and not a.star]
    keywords = {a.keyword.value for a in call.args if a.keyword is not None}
    if not positional or "stddev" in keywords:
        # tf.random.normal(shape, mean=0.0, stddev=…): the positional argument is the shape
        return True
    if len(positional) == 1 and not keywords & {"scale", "std", "stddev", "sigma"}:
        # one positional argument: numpy reads it as loc, torch/tf as a shape or mean; a name is a value
        return number(positional[0]) is not None or not isinstance(positional[0], (cst.Name, cst.Attribute))
    return _zero(positional[0])


def _zero(expr: cst.BaseExpression) -> bool:
    if number(expr) == 0:
        return True
    return isinstance(expr, cst.Call) and call_name(expr) in ("zeros", "zeros_like", "zeros_like_")


def adds_draw(expr: cst.BaseExpression) -> bool:
    """``x + draw`` (or ``draw + x``) anywhere at the top of ``expr``'s sums."""
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, (cst.Add, cst.Subtract)):
        return is_draw(expr.left) or is_draw(expr.right) or adds_draw(expr.left) or adds_draw(expr.right)
    return False


def last_assignment(fn: cst.CSTNode, name: str, before_line: int, line_of) -> cst.BaseExpression | None:
    """The value of the last plain ``name = value`` in ``fn`` on a line before ``before_line``."""
    found: tuple[int, cst.BaseExpression] | None = None
    for node in walk(fn, into_scopes=False):
        if not isinstance(node, cst.Assign) or len(node.targets) != 1:
            continue
        target = node.targets[0].target
        if not isinstance(target, cst.Name) or target.value != name:
            continue
        line = line_of(node)
        if line < before_line and (found is None or line >= found[0]):
            found = (line, node.value)
    return found[1] if found else None


def is_eps(expr: cst.CSTNode) -> bool:
    name = last_name(expr)
    return name is not None and bool(words(name) & EPS_WORDS)


def is_one(expr: cst.CSTNode) -> bool:
    return number(expr) == 1


_ACCOUNTANT_CHARGE = re.compile(
    r"(?i)(accountant|compute_rdp|get_privacy_spent|accumulate_privacy_spending|compute_log_moment|"
    r"compute_dp_sgd_privacy|compute_eps|get_epsilon|privacy_spent|^rdp_|_rdp$|make_private)")


def charges_accountant(call: cst.Call) -> bool:
    """A call that composes a noise multiplier into a moments/RDP/PRV accountant: ``compute_rdp(q, σ, …)``,
    ``GaussianMomentsAccountant(…)``, ``accountant.accumulate_privacy_spending(…, σ, …)``,
    ``accountant.step(noise_multiplier=σ, …)``."""
    name = call_name(call)
    if _ACCOUNTANT_CHARGE.search(name):
        return True
    return name == "step" and any(a.keyword is not None and a.keyword.value in ("noise_multiplier", "sigma")
                                  for a in call.args)
