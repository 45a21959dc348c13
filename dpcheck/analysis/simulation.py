"""Random draws that simulate a data set rather than privatise one.

A function that takes no data (every parameter is a knob with a literal default) and adds a random error to
values it drew itself is a data simulator: ``y = b * x + rng.normal(0, err_sd, n)`` with ``x`` drawn a line
earlier. That draw is the model's error term, not privacy noise, whatever its spread is named.
"""
from __future__ import annotations

import libcst as cst

from dpcheck.analysis.syntax import all_params, call_name, number, target_names, value_refs, walk

#: methods of a random generator that draw a sample
_DRAWS = frozenset({
    "normal", "multivariate_normal", "uniform", "standard_normal", "randn", "rand", "random", "binomial",
    "multinomial", "poisson", "choice", "integers", "randint", "exponential", "gamma", "beta", "lognormal",
    "laplace", "dirichlet", "standard_t", "chisquare", "permutation", "random_sample", "bernoulli",
})


def _literal(expr: cst.BaseExpression) -> bool:
    """A number, string, bool/None, or a tuple/list of those (a simulation knob's default)."""
    if number(expr) is not None or isinstance(expr, (cst.SimpleString, cst.ConcatenatedString)):
        return True
    if isinstance(expr, cst.Name):
        return expr.value in ("None", "True", "False")
    if isinstance(expr, (cst.Tuple, cst.List)):
        return all(_literal(el.value) for el in expr.elements)
    return False


def takes_no_data(fn: cst.FunctionDef) -> bool:
    """Every parameter (``self`` aside) has a literal default: the function receives only knobs."""
    params = [p for p in all_params(fn) if p.name.value not in ("self", "cls")]
    return all(p.default is not None and _literal(p.default) for p in params)


def _drawn_names(fn: cst.FunctionDef) -> set[str]:
    """Local names holding a random sample the function drew, or values computed from one."""
    assigns = [sub for sub in walk(fn, into_scopes=False) if isinstance(sub, cst.Assign)]
    drawn: set[str] = set()
    changed = True
    while changed:
        changed = False
        for sub in assigns:
            draws = any(isinstance(n, cst.Call) and isinstance(n.func, cst.Attribute) and call_name(n) in _DRAWS
                        for n in walk(sub.value))
            if not draws and not value_refs(sub.value) & drawn:
                continue
            for target in sub.targets:
                new = target_names(target.target) - drawn
                if new:
                    drawn |= new
                    changed = True
    return drawn


def simulated_error_term(fn: cst.FunctionDef | None, call: cst.Call, parent_of) -> bool:  # type: ignore[no-untyped-def]
    """``call`` is added to (or subtracted from) values the function drew itself, in a function that takes
    no data: a simulated error term, not privacy noise."""
    if fn is None or not takes_no_data(fn):
        return False
    node: cst.CSTNode = call
    parent = parent_of(node)
    while isinstance(parent, cst.Arg) and isinstance(parent_of(parent), cst.Call) \
            and call_name(parent_of(parent)) in ("float", "abs"):
        node = parent_of(parent)
        parent = parent_of(node)
    chain: list[cst.BaseExpression] = []
    while isinstance(parent, cst.BinaryOperation) and isinstance(parent.operator, (cst.Add, cst.Subtract)):
        chain.append(parent.right if parent.left is node else parent.left)
        node = parent
        parent = parent_of(node)
    if not chain:
        return False
    drawn = _drawn_names(fn)
    return any(value_refs(operand) & drawn for operand in chain)
