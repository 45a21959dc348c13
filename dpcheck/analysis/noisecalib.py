"""Where a Gaussian draw's standard deviation comes from, by role: the clip bounds a module enforces, the
values it hands an accountant (or gets from a calibration) as the noise multiplier, and what a draw's
std resolves to through locals, ``self`` attributes and a helper's parameter.

Used by DP580 (a noise multiplier handed to the draw as its std while the values were clipped to C)."""
from __future__ import annotations

import libcst as cst

from dpcheck.analysis.clipping import NORM_CALLS, is_norm_value, strip_small_add
from dpcheck.analysis.noisedraws import zero_centred
from dpcheck.analysis.syntax import call_name, dotted, last_name, number, param_names, walk, words

#: L2 clip calls and the position of their bound
NORM_CLIP_CALLS = {"clip_grad_norm_": 1, "clip_grad_norm": 1, "clip_by_norm": 1, "clip_by_global_norm": 1}
_NORM_CLIP_KEYWORDS = ("max_norm", "clip_norm")
#: calls that bound a ratio or a value (``min(1, C / n)``, ``np.clip(x, -B, B)``, ``max(-B, min(B, x))``)
_RANGE_CALLS = frozenset({"min", "max", "minimum", "maximum", "clamp", "clamp_", "clip", "clip_", "fmin", "fmax",
                          "clamp_max", "clamp_min", "clip_by_value"})
#: Gaussian draws that take a std (and the keywords naming it)
GAUSS_STD_DRAWS = frozenset({"normal", "gauss", "normalvariate", "random_normal", "normal_", "Normal"})
_STD_KEYWORDS = ("std", "scale", "stddev", "sigma")
#: unit Gaussian draws scaled by a product
UNIT_DRAWS = frozenset({"randn", "randn_like", "standard_normal"})
#: accountant / calibration calls taking the noise multiplier at a position
_ACCOUNTANT_POSITION = {"compute_rdp": 1, "apply_dp_sgd_analysis": 1, "compute_rdp_sample_without_replacement": 1,
                        "compute_dp_sgd_privacy": 2, "compute_heterogeneous_rdp": 1, "_compute_rdp": 1}
#: keywords that hand a value to an accountant or engine as the noise multiplier
_MULTIPLIER_KEYWORDS = frozenset({"noise_multiplier", "noise_multiplier_list", "noise_multipliers", "z"})
#: words of a std, a variance or a scale (a value already in the units of the data)
STD_WORDS = frozenset({"std", "stddev", "stdev", "sd", "scale", "var", "variance", "noise_std"})
#: words of a bound or a sensitivity
BOUND_WORDS = frozenset({"clip", "clipping", "clipnorm", "sensitivity", "sens", "bound", "norm", "c", "threshold",
                         "l2", "max", "delta_f", "gamma", "lipschitz", "range"})
#: calls that give a size (a batch size divides the std of a mean)
_COUNTS = frozenset({"len", "size", "numel", "count_nonzero"})
#: casts that keep a value's role
_CASTS = frozenset({"float", "int", "abs", "Tensor", "tensor", "as_tensor", "constant", "float32", "float64"})


def key(expr: cst.CSTNode | None) -> str | None:
    return last_name(expr) if expr is not None else None


def is_bound_key(name: str, bounds: set[str]) -> bool:
    if name in bounds:
        return True
    w = words(name)
    return bool(w & BOUND_WORDS) and not w & {"multiplier", "sigma"}


def norm_clip_bound(call: cst.Call) -> cst.BaseExpression | None:
    index = NORM_CLIP_CALLS.get(call_name(call))
    if index is None:
        return None
    for a in call.args:
        if a.keyword is not None and a.keyword.value in _NORM_CLIP_KEYWORDS:
            return a.value
    positional = [a.value for a in call.args if a.keyword is None and not a.star]
    return positional[index] if len(positional) > index else None


def _ratio_bound(expr: cst.BaseExpression, norm_names: frozenset[str] = frozenset()) -> cst.BaseExpression | None:
    """``C / norm`` or ``norm / C`` -> C (a norm: a norm call, a norm-named value, or a name assigned from one)."""
    def is_norm(e: cst.BaseExpression) -> bool:
        e = strip_small_add(e)
        return is_norm_value(e) or (isinstance(e, cst.Name) and e.value in norm_names)

    expr = strip_small_add(expr)
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Divide):
        if is_norm(expr.right) and not is_norm(expr.left):
            return _broadcast(expr.left)
        if is_norm(expr.left) and not is_norm(expr.right):
            return expr.right
    return None


def norm_names(scope: cst.CSTNode) -> frozenset[str]:
    """Names assigned from a norm (``l2 = torch.norm(out, dim=1)``, ``n = np.sqrt(np.sum(g ** 2))``)."""
    out: set[str] = set()
    for s in walk(scope):
        if isinstance(s, cst.Assign) and len(s.targets) == 1 and isinstance(s.targets[0].target, cst.Name):
            if any(isinstance(c, cst.Call) and (call_name(c) in NORM_CALLS or call_name(c) == "sqrt" and any(
                    isinstance(d, cst.Call) and call_name(d) == "sum" for d in walk(c))) for c in walk(s.value)):
                out.add(s.targets[0].target.value)
    return frozenset(out)


def _broadcast(expr: cst.BaseExpression) -> cst.BaseExpression:
    """``C * torch.ones_like(n)`` -> ``C`` (a bound broadcast to the norms' shape)."""
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Multiply):
        for a, b in ((expr.left, expr.right), (expr.right, expr.left)):
            if isinstance(b, cst.Call) and call_name(b) in ("ones_like", "ones", "new_ones", "full_like"):
                return a
    return expr


def clip_bounds(scope: cst.CSTNode) -> list[tuple[cst.CSTNode, cst.BaseExpression]]:
    """``(clip node, bound)`` of every clip in ``scope``: an L2 clip call, a guard of a norm ratio (``min(1, C/n)``,
    ``(C / n).clamp(max=1)``), or a symmetric range clamp (``np.clip(x, -B, B)``, ``max(-B, min(B, x))``)."""
    out: list[tuple[cst.CSTNode, cst.BaseExpression]] = []
    norms = norm_names(scope)
    for n in walk(scope):
        if not isinstance(n, cst.Call):
            continue
        b = norm_clip_bound(n)
        if b is not None:
            out.append((n, b))
            continue
        name = call_name(n)
        if name not in _RANGE_CALLS:
            continue
        operands = [a.value for a in n.args]
        if isinstance(n.func, cst.Attribute):
            operands.append(n.func.value)
        found = None
        for v in operands:
            found = _ratio_bound(v, norms)
            if found is not None:
                break
        if found is None:
            negs = {key(v.expression) for v in operands if isinstance(v, cst.UnaryOperation)
                    and isinstance(v.operator, cst.Minus)} - {None}
            found = next((v for v in operands if isinstance(v, (cst.Name, cst.Attribute, cst.Subscript))
                          and key(v) in negs), None)
            if found is None:
                # ``max(-B, min(B, x))``: the outer call holds ``-B``, the inner one ``B``
                for v in operands:
                    if isinstance(v, cst.Call) and call_name(v) in _RANGE_CALLS:
                        found = next((w.value for w in v.args if isinstance(w.value, (cst.Name, cst.Attribute))
                                      and key(w.value) in negs), None)
                        if found is not None:
                            break
        if found is not None:
            out.append((n, found))
    return out


def multiplier_keys(module: cst.Module, source: str) -> set[str]:
    """Names the module treats as a noise multiplier: handed to an accountant or engine as one, returned by a
    calibration (``get_noise_multiplier``), or named so (``noise_multiplier``; ``sigma``/``z`` only in a module
    that runs an accountant)."""
    out: set[str] = set()
    accountant = any(w in source for w in ("rdp", "accountant", "Accountant", "privacy_spent", "compute_epsilon",
                                           "noise_multiplier", "get_epsilon", "prv_accountant", "autodp"))
    for n in walk(module):
        if isinstance(n, cst.Call):
            for a in n.args:
                if a.keyword is not None and a.keyword.value in _MULTIPLIER_KEYWORDS:
                    k = key(a.value)
                    if k:
                        out.add(k)
            if call_name(n) == "add_argument" and _help_says_multiplier(n):
                flag = next((a.value.evaluated_value for a in n.args if a.keyword is None
                             and isinstance(a.value, cst.SimpleString) and isinstance(a.value.evaluated_value, str)
                             and a.value.evaluated_value.startswith("--")), None)
                dest = next((a.value.evaluated_value for a in n.args if a.keyword is not None
                             and a.keyword.value == "dest" and isinstance(a.value, cst.SimpleString)), None)
                name = dest if isinstance(dest, str) else flag.lstrip("-").replace("-", "_") if flag else None
                if name:
                    out.add(name)
            pos = _ACCOUNTANT_POSITION.get(call_name(n))
            positional = [a.value for a in n.args if a.keyword is None and not a.star]
            if pos is not None and len(positional) > pos:
                k = key(positional[pos])
                if k:
                    out.add(k)
        elif isinstance(n, cst.Assign) and isinstance(n.value, cst.Call):
            w = words(call_name(n.value))
            if ("multiplier" in w and w & {"noise", "get", "compute", "find", "calibrate", "search"}) or ("sigma" in w and w & {"get", "compute", "find", "calibrate", "search", "optimal"}):
                for t in n.targets:
                    k = key(t.target)
                    if k:
                        out.add(k)
        elif isinstance(n, (cst.Name, cst.Attribute, cst.Subscript)):
            k = key(n)
            if k:
                w = words(k)
                if {"noise", "multiplier"} <= w or {"noise", "mult"} <= w or w == {"multiplier"} or (
                        accountant and (k in ("sigma", "z", "noise_sigma", "dp_sigma", "sigma_dp")
                                        or w in ({"noise", "sigma"}, {"dp", "sigma"}))):
                    out.add(k)
    return {k for k in out if not words(k) & STD_WORDS}


def _help_says_multiplier(call: cst.Call) -> bool:
    for a in call.args:
        if a.keyword is not None and a.keyword.value == "help" and isinstance(a.value, (cst.SimpleString,
                                                                                       cst.ConcatenatedString)):
            text = (a.value.evaluated_value or "") if isinstance(a.value, cst.SimpleString) else ""
            if isinstance(a.value, cst.ConcatenatedString):
                text = "".join(p.evaluated_value or "" for p in (a.value.left, a.value.right)
                               if isinstance(p, cst.SimpleString))
            text = str(text).lower()
            return "multiplier" in text and ("noise" in text or "sigma" in text)
    return False


def gauss_std(call: cst.Call) -> cst.BaseExpression | None:
    """The std argument of a zero-centred Gaussian draw that takes one."""
    name = call_name(call)
    if name not in GAUSS_STD_DRAWS or not zero_centred(call):
        return None
    for a in call.args:
        if a.keyword is not None and a.keyword.value in _STD_KEYWORDS:
            return a.value
    d = dotted(call.func) or ""
    if d.startswith(("tf.", "tensorflow.", "K.", "keras.", "jax.", "jr.", "random.normal")) and name != "gauss":
        if not d.startswith("random.normal"):
            return None
    if name == "random_normal":
        return None
    positional = [a.value for a in call.args if a.keyword is None and not a.star]
    return positional[1] if len(positional) >= 2 else None


def is_unit_draw(call: cst.Call) -> bool:
    name = call_name(call)
    if name in UNIT_DRAWS:
        return True
    if name in ("normal", "random_normal") and not any(
            a.keyword is not None and a.keyword.value in _STD_KEYWORDS for a in call.args):
        d = dotted(call.func) or ""
        return d.startswith(("tf.", "tensorflow.", "jax.", "jr.", "random.normal", "K.", "keras.")) or name == "random_normal"
    return False


def product_factors(node: cst.CSTNode, parent_of) -> list[cst.BaseExpression]:
    """The other factors of the product ``node`` sits in (``randn(n) * sigma / B`` -> sigma, B)."""
    out: list[cst.BaseExpression] = []
    cur = node
    while True:
        parent = parent_of(cur)
        if isinstance(parent, cst.BinaryOperation) and isinstance(parent.operator, cst.Multiply):
            out.append(parent.right if parent.left is cur else parent.left)
        elif isinstance(parent, cst.BinaryOperation) and isinstance(parent.operator, cst.Divide) and parent.left is cur:
            out.append(parent.right)
        else:
            return out
        cur = parent


class Leaves:
    """What a std expression is made of: names (by key), parameters of the function it is in, calls that are
    not casts (opaque), and powers (a variance)."""

    def __init__(self) -> None:
        self.keys: set[str] = set()
        self.params: set[str] = set()
        self.opaque = False
        self.calibrated = False  # a calibration call returning a multiplier


def resolve(expr: cst.BaseExpression, fn: cst.FunctionDef | None, cls: cst.ClassDef | None, fa,
            leaves: Leaves | None = None, depth: int = 0, seen: set[str] | None = None, *,
            transparent: bool = False) -> Leaves:
    """The names ``expr`` is built from. With ``transparent``, math calls and powers are looked through (only the
    names of a formula matter)."""
    leaves = Leaves() if leaves is None else leaves
    seen = set() if seen is None else seen
    if depth > 4:
        leaves.opaque = True
        return leaves
    expr = strip_small_add(expr)
    if number(expr) is not None:
        return leaves
    if isinstance(expr, cst.BinaryOperation):
        if isinstance(expr.operator, cst.Power) and not transparent:
            leaves.opaque = True
            return leaves
        resolve(expr.left, fn, cls, fa, leaves, depth + 1, seen, transparent=transparent)
        resolve(expr.right, fn, cls, fa, leaves, depth + 1, seen, transparent=transparent)
        return leaves
    if isinstance(expr, cst.UnaryOperation):
        return resolve(expr.expression, fn, cls, fa, leaves, depth + 1, seen, transparent=transparent)
    if isinstance(expr, cst.Call):
        name = call_name(expr)
        if name in _COUNTS:
            return leaves  # a batch size: ``len(x)``, ``x.size(0)``
        if name in _CASTS and expr.args:
            return resolve(expr.args[0].value, fn, cls, fa, leaves, depth + 1, seen, transparent=transparent)
        if name == "get" and expr.args and isinstance(expr.func, cst.Attribute):
            k = expr.args[0].value
            if isinstance(k, cst.SimpleString) and isinstance(k.evaluated_value, str):
                leaves.keys.add(k.evaluated_value)
                return leaves
        w = words(name)
        if "multiplier" in w and w & {"noise", "get", "compute", "find", "calibrate", "search"}:
            leaves.calibrated = True
            return leaves
        if transparent and name in MATH_CALLS:
            for a in expr.args:
                resolve(a.value, fn, cls, fa, leaves, depth + 1, seen, transparent=True)
            return leaves
        leaves.opaque = True
        return leaves
    if isinstance(expr, cst.Name):
        name = expr.value
        if name in seen:
            return leaves
        seen.add(name)
        if fn is not None:
            values = [s.value for s in walk(fn, into_scopes=False) if isinstance(s, cst.Assign) and len(s.targets) == 1
                      and isinstance(s.targets[0].target, cst.Name) and s.targets[0].target.value == name]
            values += [s.value for s in walk(fn, into_scopes=False) if isinstance(s, cst.AnnAssign)
                       and s.value is not None and isinstance(s.target, cst.Name) and s.target.value == name]
            augmented = any(isinstance(s, cst.AugAssign) and isinstance(s.target, cst.Name) and s.target.value == name
                            for s in walk(fn, into_scopes=False))
            if augmented or len(values) > 1:
                leaves.opaque = True
                return leaves
            if values:
                leaves.keys.add(name)
                return resolve(values[0], fn, cls, fa, leaves, depth + 1, seen, transparent=transparent)
            if name in param_names(fn):
                leaves.keys.add(name)
                leaves.params.add(name)
                return leaves
        leaves.keys.add(name)
        return leaves
    if isinstance(expr, cst.Subscript) and key(expr) is None and any(
            isinstance(e.slice, cst.Index) and number(e.slice.value) is not None for e in expr.slice):
        return leaves  # ``x.shape[0]``: a size
    if isinstance(expr, (cst.Attribute, cst.Subscript)):
        k = key(expr)
        if k is None:
            leaves.opaque = True
            return leaves
        leaves.keys.add(k)
        if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self" \
                and cls is not None and k not in seen:
            seen.add(k)
            values = [s.value for s in walk(cls) if isinstance(s, cst.Assign) and len(s.targets) == 1
                      and isinstance(s.targets[0].target, cst.Attribute)
                      and isinstance(s.targets[0].target.value, cst.Name)
                      and s.targets[0].target.value.value == "self" and s.targets[0].target.attr.value == k]
            if len(values) == 1:
                owner = fa.enclosing_function(values[0])
                sub = resolve(values[0], owner, cls, fa, depth=depth + 1, seen=seen, transparent=transparent)
                leaves.keys |= sub.keys
                leaves.opaque |= sub.opaque
                leaves.calibrated |= sub.calibrated
            elif len(values) > 1:
                leaves.opaque = True
        return leaves
    leaves.opaque = True
    return leaves


# --------------------------------------------------------------------------- DP581: a bound never applied

#: math calls a noise formula is built with (transparent when only the names in a formula matter)
MATH_CALLS = frozenset({"sqrt", "log", "exp", "log1p", "pow", "square", "ceil", "floor"})
#: calls that only show, store or convert a value: passing the bound to them applies nothing
_NEUTRAL_CALLS = frozenset({
    "print", "format", "info", "debug", "warning", "warn", "error", "log", "str", "repr", "float", "int", "bool",
    "add_argument", "get", "getattr", "setattr", "append", "write", "set_description", "add_scalar", "log_metrics",
    "Tensor", "tensor", "as_tensor", "sqrt", "exp", "log1p", "pow", "square", "round", "abs", "dumps", "dump",
    "join", "update", "set_postfix", "pprint", "savetxt", "Namespace", "to", "item", "ceil", "floor", "cast",
    "constant", "full", "full_like", "ones_like", "array", "asarray",
})


def clip_key(name: str) -> bool:
    """A name for the bound a clip enforces: ``clip``, ``l2_norm_clip``, ``max_grad_norm``, ``C``, ``w_clip``,
    ``clip_bound``, ``max_contribution``."""
    w = words(name)
    if w & {"clip", "clipping", "clipnorm", "contribution", "contributions"}:
        return True
    if "bound" in w and not w & {"upper", "lower", "lo", "hi", "min", "error", "confidence"}:
        return True
    if name in ("C", "max_norm", "maxnorm", "max_grad_norm"):
        return True
    return "norm" in w and bool(w & {"max", "bound"})


def laplace_scale(call: cst.Call) -> cst.BaseExpression | None:
    """The scale of a zero-centred Laplace draw (``laplace(0, b, n)``, ``laplace(scale=b)``, ``Laplace(0, b)``)."""
    if call_name(call) not in ("laplace", "Laplace") or not zero_centred(call):
        return None
    for a in call.args:
        if a.keyword is not None and a.keyword.value in ("scale", "b", "beta"):
            return a.value
    positional = [a.value for a in call.args if a.keyword is None and not a.star]
    return positional[1] if len(positional) >= 2 else None


def noised_partner(draw: cst.Call, fn: cst.FunctionDef, fa) -> cst.BaseExpression | None:  # type: ignore[no-untyped-def]
    """The value the draw is added to: ``x + draw``, ``x += draw``, ``x.add_(draw)``, or ``noise = draw`` then
    ``x + noise`` in the same function."""
    top: cst.CSTNode = draw
    while isinstance(fa.parent(top), cst.BinaryOperation) and isinstance(
            fa.parent(top).operator, (cst.Multiply, cst.Divide)):
        top = fa.parent(top)
    parent = fa.parent(top)
    if isinstance(parent, cst.BinaryOperation) and isinstance(parent.operator, (cst.Add, cst.Subtract)):
        return parent.right if parent.left is top else parent.left
    if isinstance(parent, cst.AugAssign) and isinstance(parent.operator, (cst.AddAssign, cst.SubtractAssign)):
        return parent.target
    if isinstance(parent, cst.Arg):
        call = fa.parent(parent)
        if isinstance(call, cst.Call) and call_name(call) in ("add_", "add", "add_n") and isinstance(call.func, cst.Attribute):
            return call.func.value
    if isinstance(parent, cst.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0].target, cst.Name):
        name = parent.targets[0].target.value
        for n in walk(fn):
            if isinstance(n, cst.BinaryOperation) and isinstance(n.operator, cst.Add):
                for side, other in ((n.left, n.right), (n.right, n.left)):
                    if isinstance(side, cst.Name) and side.value == name:
                        return other
            if isinstance(n, cst.AugAssign) and isinstance(n.value, cst.Name) and n.value.value == name:
                return n.target
            if isinstance(n, cst.Call) and call_name(n) in ("add_", "add") and isinstance(n.func, cst.Attribute) \
                    and any(isinstance(a.value, cst.Name) and a.value.value == name for a in n.args):
                return n.func.value
    return None


def bound_applied(module: cst.Module, name: str, fa) -> bool:  # type: ignore[no-untyped-def]
    """Is the bound ``name`` used anywhere in ``module`` other than to size noise, to be stored or to be shown:
    a call that receives it (a clip, a helper, an engine), a comparison, an assert, a ``min``/``max``?"""
    from dpcheck.analysis.noisedraws import PURE_DRAWS
    norms = norm_names(module)
    for n in walk(module):
        if not isinstance(n, (cst.Name, cst.Attribute, cst.Subscript)) or key(n) != name:
            continue
        if isinstance(n, cst.Name) and isinstance(fa.parent(n), cst.Attribute) and fa.parent(n).attr is n:
            continue  # the ``clip`` of ``self.clip`` is visited as the attribute
        node: cst.CSTNode = n
        while True:
            parent = fa.parent(node)
            if parent is None or isinstance(parent, (cst.SimpleStatementLine, cst.BaseCompoundStatement, cst.Module)):
                if isinstance(parent, (cst.If, cst.While)) and node is parent.test:
                    return True
                break
            if isinstance(parent, (cst.Assign, cst.AnnAssign, cst.AugAssign)):
                if node is not getattr(parent, "value", None):
                    break  # the target of an assignment
            if isinstance(parent, (cst.Param, cst.FormattedStringExpression, cst.ImportAlias)):
                break
            if isinstance(parent, (cst.Comparison, cst.Assert, cst.IfExp)):
                return True
            if isinstance(parent, cst.BinaryOperation) and isinstance(parent.operator, cst.Divide) and any(
                    is_norm_value(side) or (isinstance(strip_small_add(side), cst.Name)
                                            and strip_small_add(side).value in norms)
                    for side in (parent.left, parent.right) if side is not node):
                return True  # the clip factor ``C / ‖g‖``
            if isinstance(parent, cst.BinaryOperation) and isinstance(parent.operator, (cst.Multiply, cst.Divide)) \
                    and any(isinstance(c, cst.Call) and (call_name(c) in _DRAW_CALLS_ALL or call_name(c) in PURE_DRAWS)
                            for c in walk(parent)):
                break  # a factor of the noise: ``sigma * C * normal(...)``
            if isinstance(parent, cst.Call) and node is not parent.func:
                name_ = call_name(parent)
                if name_ in PURE_DRAWS or name_ in _DRAW_CALLS_ALL or name_ in _NEUTRAL_CALLS:
                    if name_ in _DRAW_CALLS_ALL or name_ in PURE_DRAWS:
                        break
                else:
                    return True
            node = parent
    return False


_DRAW_CALLS_ALL = frozenset({"normal", "gauss", "normalvariate", "random_normal", "normal_", "Normal", "randn",
                             "randn_like", "standard_normal", "laplace", "Laplace", "laplace_noise",
                             "gaussian_noise"})


def bound_multiplicity(expr: cst.BaseExpression, fn: cst.FunctionDef | None, cls: cst.ClassDef | None, fa,  # type: ignore[no-untyped-def]
                       bounds: set[str], depth: int = 0) -> int:
    """How many times a clip bound is a factor of the product ``expr`` (through a local or a ``self`` attribute
    assigned once): ``z * C * C`` -> 2, ``sigma * C ** 2`` -> 2; a square root or a bound in a divisor -> 0."""
    if depth > 4:
        return 0
    expr = strip_small_add(expr)
    if isinstance(expr, cst.BinaryOperation):
        if isinstance(expr.operator, cst.Multiply):
            return bound_multiplicity(expr.left, fn, cls, fa, bounds, depth + 1) + bound_multiplicity(
                expr.right, fn, cls, fa, bounds, depth + 1)
        if isinstance(expr.operator, cst.Divide):
            if bound_multiplicity(expr.right, fn, cls, fa, bounds, depth + 1):
                return 0
            return bound_multiplicity(expr.left, fn, cls, fa, bounds, depth + 1)
        if isinstance(expr.operator, cst.Power) and number(expr.right) == 2:
            return 2 * bound_multiplicity(expr.left, fn, cls, fa, bounds, depth + 1)
        return 0
    if isinstance(expr, cst.Call):
        if call_name(expr) in _CASTS and expr.args:
            return bound_multiplicity(expr.args[0].value, fn, cls, fa, bounds, depth + 1)
        return 0
    k = key(expr)
    if k is None:
        return 0
    if isinstance(expr, cst.Name) and fn is not None:
        values = [s.value for s in walk(fn, into_scopes=False) if isinstance(s, cst.Assign) and len(s.targets) == 1
                  and isinstance(s.targets[0].target, cst.Name) and s.targets[0].target.value == k]
        if len(values) == 1:
            return bound_multiplicity(values[0], fn, cls, fa, bounds, depth + 1)
    if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self" \
            and cls is not None and k not in bounds:
        values = [s.value for s in walk(cls) if isinstance(s, cst.Assign) and len(s.targets) == 1
                  and isinstance(s.targets[0].target, cst.Attribute) and s.targets[0].target.attr.value == k
                  and isinstance(s.targets[0].target.value, cst.Name) and s.targets[0].target.value.value == "self"]
        if len(values) == 1:
            return bound_multiplicity(values[0], fa.enclosing_function(values[0]), cls, fa, bounds, depth + 1)
    return 1 if k in bounds else 0
