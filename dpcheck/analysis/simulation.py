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


#: annotations of a parameter that can only hold a knob (a size, a seed, a scenario name), never records
_SCALAR_TYPES = frozenset({"int", "float", "str", "bool", "None", "Optional", "Union", "Literal"})


def _knob(param: cst.Param) -> bool:
    """A parameter declared a scalar (``n: int``, ``seed: Optional[int] = None``) or defaulting to a literal."""
    if param.annotation is not None:
        named = {n.value for n in walk(param.annotation.annotation) if isinstance(n, cst.Name)}
        return bool(named) and named <= _SCALAR_TYPES
    return param.default is not None and _literal(param.default)


def _reads_files(fn: cst.FunctionDef) -> bool:
    """Does ``fn`` open, load, read or fetch something (records from disk or a network)?"""
    for node in walk(fn):
        if isinstance(node, cst.Call):
            name = call_name(node)
            if name == "open" or name.startswith(("read", "load", "fetch")):
                return True
    return False


def simulator(fn: cst.FunctionDef | None) -> bool:
    """Does ``fn`` make its data up? It takes only knobs (every parameter but ``self`` a declared scalar or a
    literal default), draws random values and reads no file: whatever it returns is a synthetic data set
    (a simulated network, a toy regression), so a statistic of it is nobody's record."""
    if fn is None:
        return False
    params = [p for p in all_params(fn) if p.name.value not in ("self", "cls")]
    if not params or not all(_knob(p) for p in params) or _reads_files(fn):
        return False
    return any(isinstance(n, cst.Call) and isinstance(n.func, cst.Attribute) and call_name(n) in _DRAWS
               for n in walk(fn.body))
