"""Where a Gaussian draw's standard deviation comes from, by role: the clip bounds a module enforces, the
values it hands an accountant (or gets from a calibration) as the noise multiplier, and what a draw's
std resolves to through locals, ``self`` attributes and a helper's parameter.

Used by DP580 (a noise multiplier handed to the draw as its std while the values were clipped to C)."""
from __future__ import annotations

import libcst as cst

from dpcheck.analysis.clipping import is_clip_bound, is_norm_value, strip_small_add
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


def _ratio_bound(expr: cst.BaseExpression) -> cst.BaseExpression | None:
    """``C / norm`` or ``norm / C`` -> C."""
    expr = strip_small_add(expr)
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Divide):
        if is_norm_value(expr.right) and not is_norm_value(expr.left):
            return expr.left
        if is_norm_value(expr.left) and not is_norm_value(expr.right):
            return expr.right
    return None


def clip_bounds(scope: cst.CSTNode) -> list[tuple[cst.CSTNode, cst.BaseExpression]]:
    """``(clip node, bound)`` of every clip in ``scope``: an L2 clip call, a guard of a norm ratio (``min(1, C/n)``,
    ``(C / n).clamp(max=1)``), or a symmetric range clamp (``np.clip(x, -B, B)``, ``max(-B, min(B, x))``)."""
    out: list[tuple[cst.CSTNode, cst.BaseExpression]] = []
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
            found = _ratio_bound(v)
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
            leaves: Leaves | None = None, depth: int = 0, seen: set[str] | None = None) -> Leaves:
    leaves = Leaves() if leaves is None else leaves
    seen = set() if seen is None else seen
    if depth > 4:
        leaves.opaque = True
        return leaves
    expr = strip_small_add(expr)
    if number(expr) is not None:
        return leaves
    if isinstance(expr, cst.BinaryOperation):
        if isinstance(expr.operator, cst.Power):
            leaves.opaque = True
            return leaves
        resolve(expr.left, fn, cls, fa, leaves, depth + 1, seen)
        resolve(expr.right, fn, cls, fa, leaves, depth + 1, seen)
        return leaves
    if isinstance(expr, cst.UnaryOperation):
        return resolve(expr.expression, fn, cls, fa, leaves, depth + 1, seen)
    if isinstance(expr, cst.Call):
        name = call_name(expr)
        if name in _COUNTS:
            return leaves  # a batch size: ``len(x)``, ``x.size(0)``
        if name in _CASTS and expr.args:
            return resolve(expr.args[0].value, fn, cls, fa, leaves, depth + 1, seen)
        if name == "get" and expr.args and isinstance(expr.func, cst.Attribute):
            k = expr.args[0].value
            if isinstance(k, cst.SimpleString) and isinstance(k.evaluated_value, str):
                leaves.keys.add(k.evaluated_value)
                return leaves
        w = words(name)
        if "multiplier" in w and w & {"noise", "get", "compute", "find", "calibrate", "search"}:
            leaves.calibrated = True
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
                return resolve(values[0], fn, cls, fa, leaves, depth + 1, seen)
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
                sub = resolve(values[0], owner, cls, fa, depth=depth + 1, seen=seen)
                leaves.keys |= sub.keys
                leaves.opaque |= sub.opaque
                leaves.calibrated |= sub.calibrated
            elif len(values) > 1:
                leaves.opaque = True
        return leaves
    leaves.opaque = True
    return leaves
