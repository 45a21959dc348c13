"""Value resolution inside one module, and the expression shapes of noise calibration and PATE accountant arithmetic.

The scanned code is never imported. Values are followed syntactically inside one module, over the
shared analysis core's bindings (``ctx.analysis``): a name leads to every expression assigned to
it in the enclosing function (else at module level), ``self.x``/``cls.x`` to every
``self.x = …`` in the class, and a call of a function or method defined in the module to its
``return`` expressions. Names, numbers and import aliases come from :mod:`dpcheck.analysis`.
"""
from __future__ import annotations

import ast
import functools
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import libcst as cst

from dpcheck.analysis import FileAnalysis
from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.astfacts import dotted as ast_dotted
from dpcheck.analysis.astfacts import last_name as ast_last_name_dp1
from dpcheck.analysis.astfacts import number as ast_number
from dpcheck.analysis.astfacts import reach_cut
from dpcheck.analysis.syntax import call_name, dotted, number, param_names
from dpcheck.codetext import code_only

NUMERIC_ROOTS = frozenset(
    {"numpy", "math", "cmath", "torch", "scipy", "tensorflow", "jax", "mpmath", "sympy", "cupy"}
)
LOG_NAMES = frozenset({"log", "log1p", "log2", "log10", "logsumexp", "logaddexp"})
EXP_NAMES = frozenset({"exp", "expm1"})
ABS_NAMES = frozenset({"abs", "absolute", "fabs"})
POW_NAMES = frozenset({"pow", "power", "float_power"})
E_NAMES = frozenset({"math.e", "np.e", "numpy.e", "torch.e", "e"})


# ---------------------------------------------------------------- names and imports
def qualify(name: str, aliases: dict[str, str]) -> str:
    head, _, rest = name.partition(".")
    full = aliases.get(head, head)
    return f"{full}.{rest}" if rest else full


def call_parts(call: cst.Call, aliases: dict[str, str]) -> tuple[str | None, str]:
    """(qualified dotted name or None for ``expr.method``, last name component)."""
    func = call.func
    name = dotted(func)
    if name is not None:
        full = qualify(name, aliases)
        return full, full.rsplit(".", 1)[-1]
    if isinstance(func, cst.Attribute):
        return None, func.attr.value
    return None, ""


def is_math_call(call: cst.Call, aliases: dict[str, str], names: frozenset[str]) -> bool:
    """A numeric library function in ``names`` (``np.log``, ``from math import log``, ``t.log()``)."""
    full, last = call_parts(call, aliases)
    if last not in names:
        return False
    if full is None or "." not in full:
        return True  # method on an expression, builtin or bare imported name
    root = full.split(".")[0]
    if root in NUMERIC_ROOTS:
        return True
    # method on a local variable (tensor.log()), not on an unrelated imported module
    head = dotted(call.func)
    return head is not None and head.split(".")[0] not in aliases


# ---------------------------------------------------------------- literals and shapes
def strip_unary(node: cst.BaseExpression) -> cst.BaseExpression:
    while isinstance(node, cst.UnaryOperation) and isinstance(node.operator, (cst.Minus, cst.Plus)):
        node = node.expression
    return node


def product_factors(node: cst.BaseExpression, unwrap: frozenset[str] = frozenset()
                    ) -> list[tuple[cst.BaseExpression, int]]:
    """Factors of a product/quotient as (factor, +1 numerator / -1 denominator); a one-argument call
    named in ``unwrap`` (``float``, ``abs``) is looked through."""
    node = strip_unary(node)
    if isinstance(node, cst.BinaryOperation):
        if isinstance(node.operator, (cst.Multiply, cst.MatrixMultiply)):
            return product_factors(node.left, unwrap) + product_factors(node.right, unwrap)
        if isinstance(node.operator, cst.Divide):
            return product_factors(node.left, unwrap) + [(f, -s) for f, s in product_factors(node.right, unwrap)]
        if isinstance(node.operator, cst.Power) and (number(node.right) or 0) < 0:
            return [(f, -s) for f, s in product_factors(node.left, unwrap)]
    if unwrap and isinstance(node, cst.Call) and call_name(node) in unwrap and len(node.args) == 1:
        return product_factors(node.args[0].value, unwrap)
    return [(node, 1)]


def sum_terms(node: cst.BaseExpression) -> list[cst.BaseExpression]:
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, (cst.Add, cst.Subtract)):
        return sum_terms(node.left) + sum_terms(node.right)
    return [node]


def is_one_minus(node: cst.CSTNode) -> bool:
    """``1 - x`` (the ``1−q`` of the moment term)."""
    return (
        isinstance(node, cst.BinaryOperation)
        and isinstance(node.operator, cst.Subtract)
        and number(node.left) == 1.0
    )


def arg(call: cst.Call, index: int, keyword: str | tuple[str, ...]) -> cst.BaseExpression | None:
    keywords = (keyword,) if isinstance(keyword, str) else keyword
    for a in call.args:
        if a.keyword is not None and a.keyword.value in keywords:
            return a.value
    positional = [a for a in call.args if a.keyword is None and not a.star]
    return positional[index].value if index < len(positional) else None


# ---------------------------------------------------------------- DP parameter names
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def name_tokens(name: str) -> list[str]:
    return [t for t in re.split(r"[_\W\d]+", _CAMEL.sub("_", name).lower()) if t]


def last_name(node: cst.CSTNode) -> str | None:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return node.attr.value
    if isinstance(node, cst.Subscript):
        # params["delta"], self.cfg['epsilon']
        for el in node.slice:
            if isinstance(el.slice, cst.Index) and isinstance(el.slice.value, cst.SimpleString):
                return el.slice.value.evaluated_value if isinstance(el.slice.value.evaluated_value, str) else None
    return None


def has_token(node: cst.CSTNode, tokens: frozenset[str]) -> bool:
    name = last_name(node)
    return name is not None and (name in tokens or any(t in tokens for t in name_tokens(name)))


# ---------------------------------------------------------------- value resolution
@dataclass(frozen=True)
class Scope:
    func: cst.FunctionDef | None = None
    cls: cst.ClassDef | None = None


MODULE_SCOPE = Scope()
Bindings = dict[str, list[tuple[cst.BaseExpression, Scope]]]


_VALUE_KINDS = frozenset({"assign", "augassign"})


class _Index:
    """Functions, methods, assignments and calls of one module keyed the DP1 rules' way
    (``Scope`` = innermost function and class), read off the shared core index (no walk)."""

    def __init__(self, fa: FileAnalysis) -> None:
        core = fa.index
        self._core = core
        self._scopes: dict[cst.CSTNode, Scope] = {}
        self.functions: dict[str, cst.FunctionDef] = {}
        self.methods: dict[int, dict[str, cst.FunctionDef]] = {}
        self.class_attrs: dict[int, Bindings] = {}
        self.local: dict[int, Bindings] = {}
        self.returns: dict[int, list[cst.BaseExpression]] = {}
        self.params: dict[int, list[str]] = {}
        self.module_env: Bindings = {}
        for fn in core.nodes(cst.FunctionDef):
            owner = core.owner[fn]
            if type(owner) is cst.Module:
                self.functions[fn.name.value] = fn  # type: ignore[attr-defined]
            elif type(owner) is cst.ClassDef:
                self.methods.setdefault(id(owner), {})[fn.name.value] = fn  # type: ignore[attr-defined]
            self.local[id(fn)] = {}
            self.params[id(fn)] = param_names(fn)  # type: ignore[arg-type]
            self.returns[id(fn)] = [r.value for r in core.returns.get(fn, ()) if r.value is not None]  # type: ignore[misc]
        for scope, per_name in core.bindings.items():
            at = self.scope(scope)
            env = self.module_env if at.func is None else self.local.setdefault(id(at.func), {})
            for name, found in per_name.items():
                if "." in name:
                    continue
                values = [(b.value, at) for b in found if b.kind in _VALUE_KINDS and b.value is not None]
                if values:
                    env.setdefault(name, []).extend(values)
        for cls, per_attr in core.self_attrs.items():
            attrs = self.class_attrs.setdefault(id(cls), {})
            for attr, found in per_attr.items():
                values = [(b.value, self.scope(b.scope)) for b in found if b.kind in _VALUE_KINDS and b.value is not None]
                if values:
                    attrs[attr] = values
        self._calls: dict[str, list[tuple[cst.Call, Scope]]] | None = None

    def scope(self, node: cst.CSTNode) -> Scope:
        """The ``Scope`` of a core scope (function, class, lambda or module)."""
        known = self._scopes.get(node)
        if known is None:
            core = self._core
            func = node if type(node) is cst.FunctionDef else core.enclosing_function(node)
            cls = node if type(node) is cst.ClassDef else core.enclosing_class(node)
            known = self._scopes[node] = Scope(func, cls)  # type: ignore[arg-type]
        return known

    @property
    def all_calls(self) -> list[tuple[cst.Call, Scope]]:
        return [(c, self.scope(self._core.owner[c])) for c in self._core.nodes(cst.Call)]  # type: ignore[misc]

    @property
    def calls(self) -> dict[str, list[tuple[cst.Call, Scope]]]:
        if self._calls is None:
            self._calls = {}
            for call, scope in self.all_calls:
                name = dotted(call.func)
                if name is not None:
                    self._calls.setdefault(name.rsplit(".", 1)[-1], []).append((call, scope))
        return self._calls

    @property
    def products(self) -> list[tuple[cst.BinaryOperation, Scope]]:
        core = self._core
        return [(b, self.scope(core.scope_of(b))) for b in core.nodes(cst.BinaryOperation)  # type: ignore[misc]
                if type(b.operator) is cst.Multiply]  # type: ignore[attr-defined]


class Resolver:
    """Values names, ``self`` attributes and local calls may hold, the DP1 way, over the core."""

    def __init__(self, fa: FileAnalysis) -> None:
        self.fa = fa
        self.module = fa.module
        #: absolute imports only: a relatively imported ``log`` stays a bare name
        self.aliases = {k: v for k, v in fa.index.imports.items() if not v.startswith(".")}
        self._index: _Index | None = None

    @property
    def index(self) -> _Index:
        if self._index is None:
            self._index = _Index(self.fa)
        return self._index

    def referents(self, node: cst.CSTNode, scope: Scope) -> list[tuple[cst.BaseExpression, Scope]]:
        idx = self.index
        if isinstance(node, cst.Name):
            if scope.func is not None:
                bound = idx.local.get(id(scope.func), {}).get(node.value)
                if bound:
                    return bound
            return idx.module_env.get(node.value, [])
        if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name):
            if node.value.value in ("self", "cls") and scope.cls is not None:
                return idx.class_attrs.get(id(scope.cls), {}).get(node.attr.value, [])
            return []
        if isinstance(node, cst.Call):
            target = self.called_function(node, scope)
            if target is not None:
                fn, cls = target
                return [(r, Scope(fn, cls)) for r in idx.returns.get(id(fn), [])]
        return []

    def called_function(self, call: cst.Call, scope: Scope) -> tuple[cst.FunctionDef, cst.ClassDef | None] | None:
        func = call.func
        if isinstance(func, cst.Name):
            fn = self.index.functions.get(func.value)
            return (fn, None) if fn is not None else None
        if (
            isinstance(func, cst.Attribute)
            and isinstance(func.value, cst.Name)
            and func.value.value in ("self", "cls")
            and scope.cls is not None
        ):
            fn = self.index.methods.get(id(scope.cls), {}).get(func.attr.value)
            return (fn, scope.cls) if fn is not None else None
        return None

    def expand(
        self,
        expr: cst.CSTNode,
        scope: Scope,
        *,
        stop: Callable[[cst.CSTNode], bool] | None = None,
        max_hops: int = 6,
        limit: int = 4000,
    ) -> Iterator[tuple[cst.CSTNode, Scope]]:
        """Every node of ``expr`` and of the values its names/calls refer to (not below ``stop``)."""
        stack: list[tuple[cst.CSTNode, Scope, int]] = [(expr, scope, 0)]
        seen: set[int] = set()
        while stack and len(seen) < limit:
            node, sc, hops = stack.pop()
            if id(node) in seen:
                continue
            seen.add(id(node))
            yield node, sc
            if stop is not None and stop(node):
                continue
            if hops < max_hops and isinstance(node, (cst.Name, cst.Attribute, cst.Call)):
                refs = self.referents(node, sc)
                # a name re-bound to stop(value) (t = t1 + t2; t = log(t)) counts as stopped
                if not (stop is not None and isinstance(node, (cst.Name, cst.Attribute)) and any(stop(v) for v, _ in refs)):
                    for value, vsc in refs:
                        stack.append((value, vsc, hops + 1))
            if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                continue
            for child in node.children:
                stack.append((child, sc, hops))

    def resolve_simple(self, expr: cst.BaseExpression, scope: Scope, hops: int = 6) -> tuple[cst.BaseExpression, Scope]:
        """Follow a plain name/attribute while it has exactly one assigned value."""
        for _ in range(hops):
            if not isinstance(expr, (cst.Name, cst.Attribute)):
                break
            values = self.referents(expr, scope)
            if len(values) != 1:
                break
            expr, scope = values[0]
        return expr, scope


def resolver_for(ctx: object) -> Resolver:
    """One Resolver per file (a rule's ``FileContext``), shared by the rules running on it."""
    res = ctx.__dict__.get("_dp1_resolver")
    if res is None:
        res = ctx.__dict__["_dp1_resolver"] = Resolver(ctx.analysis)
    return res


# ---------------------------------------------------------------- PATE moment term
@dataclass
class MomentShape:
    """Pieces of ``(1−q)((1−q)/(1−e^{2λ}q))^l + q·e^{2λl}`` found in an expression."""

    #: (node, exponent argument, scope) of exp(x) calls and e**x powers
    exps: list[tuple[cst.CSTNode, cst.BaseExpression, Scope]]
    #: (node, base, exponent, scope) of powers with a non-literal exponent (the order l)
    powers: list[tuple[cst.CSTNode, cst.BaseExpression, cst.BaseExpression, Scope]]
    one_minus: int
    #: a power ``base ** l`` with ``1 − …`` in its base and an ``exp(… l …)`` using the same order l
    is_term: bool = False


def power_parts(node: cst.CSTNode, aliases: dict[str, str]) -> tuple[cst.BaseExpression, cst.BaseExpression] | None:
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Power):
        return node.left, node.right
    if isinstance(node, cst.Call):
        full, last = call_parts(node, aliases)
        if last in POW_NAMES and full is not None and len(node.args) >= 2:
            return node.args[0].value, node.args[1].value
        if last in ("pow", "pow_") and full is None and len(node.args) == 1 and isinstance(node.func, cst.Attribute):
            return node.func.value, node.args[0].value  # tensor.pow(l)
    return None


def moment_shape(
    res: Resolver, expr: cst.CSTNode, scope: Scope, stop: Callable[[cst.CSTNode], bool] | None = None
) -> MomentShape:
    shape = MomentShape([], [], 0)
    for node, sc in res.expand(expr, scope, stop=stop):
        if isinstance(node, cst.Call) and is_math_call(node, res.aliases, EXP_NAMES):
            if node.args:
                shape.exps.append((node, node.args[0].value, sc))
            elif isinstance(node.func, cst.Attribute):
                shape.exps.append((node, node.func.value, sc))  # tensor.exp()
        parts = power_parts(node, res.aliases)
        if parts is not None and dotted(parts[0]) in E_NAMES:
            shape.exps.append((node, parts[1], sc))
        elif parts is not None and number(parts[1]) is None:
            shape.powers.append((node, parts[0], parts[1], sc))
        if is_one_minus(node):
            shape.one_minus += 1
    if shape.exps and shape.powers and shape.one_minus:
        shape.is_term = any(_is_moment_power(res, p, shape) for p in shape.powers)
    return shape


def names_in(res: Resolver, expr: cst.CSTNode, scope: Scope, *, follow: bool = False) -> set[str]:
    nodes = res.expand(expr, scope, max_hops=3) if follow else ((n, scope) for n in _subtree(expr))
    return {n.value for n, _ in nodes if isinstance(n, cst.Name)}


def _subtree(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(n.children)


def _is_moment_power(
    res: Resolver, power: tuple[cst.CSTNode, cst.BaseExpression, cst.BaseExpression, Scope], shape: MomentShape
) -> bool:
    _, base, exponent, sc = power
    order = names_in(res, exponent, sc)
    if not order:
        return False
    if not any(is_one_minus(n) for n, _ in res.expand(base, sc, max_hops=3)):
        return False
    return any(order & names_in(res, argument, esc, follow=True) for _, argument, esc in shape.exps)


# ---------------------------------------------------------------- parameter identity
_WRAPPERS = frozenset({"tensor", "as_tensor", "array", "asarray", "float", "float32", "float64", "constant", "convert_to_tensor"})


def unwrap(expr: cst.BaseExpression, aliases: dict[str, str]) -> cst.BaseExpression:
    """``torch.tensor([x])``, ``np.array(x)``, ``float(x)``, ``[x]`` → ``x``."""
    for _ in range(4):
        if isinstance(expr, (cst.List, cst.Tuple)) and len(expr.elements) == 1:
            expr = expr.elements[0].value
        elif isinstance(expr, cst.Call) and expr.args and call_parts(expr, aliases)[1] in _WRAPPERS:
            expr = expr.args[0].value
        else:
            break
    return expr


def identity_keys(res: Resolver, expr: cst.BaseExpression, scope: Scope, depth: int = 3) -> set[tuple[str, ...]]:
    """Names under which one quantity travels through a module: the local/global name, the
    ``self`` attribute, the ``cfg['key']``, the parameter name and the arguments passed to it."""
    expr = unwrap(expr, res.aliases)
    keys: set[tuple[str, ...]] = set()
    if depth < 0:
        return keys
    idx = res.index
    if isinstance(expr, cst.Name):
        name = expr.value
        fn = scope.func
        if fn is not None and name in idx.params.get(id(fn), []):
            keys.add(("param", name))
            position = idx.params[id(fn)].index(name)
            offset = 1 if scope.cls is not None and idx.params[id(fn)][:1] in (["self"], ["cls"]) else 0
            for call, csc in idx.calls.get(fn.name.value, []):
                passed = arg(call, position - offset, name)
                if passed is not None:
                    keys |= identity_keys(res, passed, csc, depth - 1)
        if fn is not None and name in idx.local.get(id(fn), {}):
            keys.add(("local", str(id(fn)), name))
        elif fn is None or name not in idx.params.get(id(fn), []):
            keys.add(("global", name))
        for value, vsc in res.referents(expr, scope):
            if isinstance(unwrap(value, res.aliases), (cst.Name, cst.Attribute, cst.Subscript)):
                keys |= identity_keys(res, value, vsc, depth - 1)
    elif isinstance(expr, cst.Attribute):
        base = dotted(expr)
        if base is not None and base.split(".")[0] in ("self", "cls"):
            keys.add(("attr", expr.attr.value))
            for value, vsc in res.referents(expr, scope):
                if isinstance(unwrap(value, res.aliases), (cst.Name, cst.Attribute, cst.Subscript)):
                    keys |= identity_keys(res, value, vsc, depth - 1)
        elif base is not None:
            keys.add(("dotted", base))
    elif isinstance(expr, cst.Subscript):
        key = last_name(expr)
        if key is not None:
            keys.add(("key", key))
    return keys


# ---------------------------------------------------------------- min / clamp forms
_MIN_FUNCS = frozenset({"minimum", "fmin"})
_CLAMP_FUNCS = frozenset({"clamp", "clip", "clamp_", "clip_", "clip_by_value"})
_LIST_MIN = frozenset({"min", "amin", "nanmin", "reduce_min"})


def bounded_operands(call: cst.Call, aliases: dict[str, str]) -> list[cst.BaseExpression]:
    """The operands a min/clamp/clip call bounds from above, or [] for other calls."""
    full, last = call_parts(call, aliases)
    local = dotted(call.func)
    method = isinstance(call.func, cst.Attribute) and (local is None or local.split(".")[0] not in aliases)
    positional = [a.value for a in call.args if a.keyword is None and not a.star]
    if last in _MIN_FUNCS and len(positional) >= 2:
        return positional[:2]
    if last == "min" and full == "min":
        if len(positional) >= 2:
            return positional
        if len(positional) == 1 and isinstance(positional[0], (cst.List, cst.Tuple)):
            return [e.value for e in positional[0].elements]
        return []
    if last == "where" and len(positional) == 3 and isinstance(positional[0], cst.Comparison):
        test = positional[0]
        if len(test.comparisons) == 1 and not isinstance(test.comparisons[0].operator, (cst.Equal, cst.NotEqual)):
            sides = {_code(test.left), _code(test.comparisons[0].comparator)}
            if {_code(positional[1]), _code(positional[2])} == sides:
                return positional[1:]  # where(t < a, t, a)
        return []
    if last in _LIST_MIN and positional and isinstance(positional[0], (cst.List, cst.Tuple)):
        return [e.value for e in positional[0].elements]
    if last == "min" and full is not None and full.startswith("torch.") and len(positional) == 2 and number(positional[1]) is None:
        return positional
    if last in _CLAMP_FUNCS or last in ("clamp_max", "clamp_max_"):
        value, upper = _clamp_parts(call, aliases)
        return [value] if value is not None and upper is not None else []
    return []


def _clamp_parts(call: cst.Call, aliases: dict[str, str]) -> tuple[cst.BaseExpression | None, cst.BaseExpression | None]:
    """(value, upper limit) of a clamp/clip call: ``t.clamp(max=a)``, ``np.clip(t, lo, a)``, …"""
    _, last = call_parts(call, aliases)
    local = dotted(call.func)
    method = isinstance(call.func, cst.Attribute) and (local is None or local.split(".")[0] not in aliases)
    only_max = bool(last) and last.startswith("clamp_max")
    if method and isinstance(call.func, cst.Attribute):
        value: cst.BaseExpression | None = call.func.value
        upper = arg(call, 0, "max") if only_max else arg(call, 1, ("max", "a_max"))
    else:
        value = arg(call, 0, ("input", "a", "x", "t"))
        upper = arg(call, 1, "max") if only_max else arg(call, 2, ("max", "a_max", "clip_value_max"))
    return value, upper


def constant_bound(call: cst.Call, operands: list[cst.BaseExpression], term: cst.BaseExpression,
                   aliases: dict[str, str]) -> bool:
    """Whether what bounds ``term`` in ``call`` (from :func:`bounded_operands`) is only number
    literals, as in ``min(p, 1.0)`` or ``np.clip(t, 0, 1)``: a cap, not a bound of another quantity."""
    others = [o for o in operands if o is not term]
    if not others:
        others = [u for u in (_clamp_parts(call, aliases)[1],) if u is not None]
    return bool(others) and all(number(o) is not None for o in others)



def _code(node: cst.CSTNode) -> str:
    return cst.Module(body=[]).code_for_node(node).strip()


# ---------------------------------------------------------------- prefilter text conditions
_DQ3 = r'"""[^"\\]*(?:(?:\\.|"(?!""))[^"\\]*)*"""'
_SQ3 = r"'''[^'\\]*(?:(?:\\.|'(?!''))[^'\\]*)*'''"
_DQ = r'"[^"\\\n]*(?:\\.[^"\\\n]*)*"'
_SQ = r"'[^'\\\n]*(?:\\.[^'\\\n]*)*'"
_LEXEME = re.compile(rf"(?P<prefix>\b[rRbBuUfF]{{1,3}})?(?:{_DQ3}|{_SQ3}|{_DQ}|{_SQ})|#[^\n]*", re.S)
_F_OPENER = re.compile(r"\b(?:[fF][rRbB]?|[rRbB][fF])['\"]")


@functools.lru_cache(maxsize=8)
def fstring_text(source: str) -> str:
    """The f-string literals of ``source``, one per line. ``code_only`` blanks them, but the
    expressions in their ``{…}`` are parsed and visited like any other code."""
    if _F_OPENER.search(source) is None:
        return ""
    return "\n".join(
        m.group() for m in _LEXEME.finditer(source) if m.group("prefix") and "f" in m.group("prefix").lower()
    )


def code_gate(source: str, test: Callable[[str], bool], quick: Callable[[str], bool] | None = None) -> bool:
    """``test`` on the code of ``source``: comments and plain string literals removed
    (:func:`code_only`), f-strings kept (their text is appended when ``test`` fails without it).
    Both are first checked on the raw source, which holds every text the code holds, so most
    files are rejected before :func:`code_only` runs; ``quick`` is a substring-only version of
    ``test``. Both must only ask whether texts occur (never that a text is absent)."""
    if quick is not None and not quick(source):
        return False
    if not test(source):
        return False
    code = code_only(source)
    if test(code):
        return True
    if "{" not in source:
        return False  # an f-string expression needs braces
    extra = fstring_text(source)
    return bool(extra) and (quick is None or quick(code + "\n" + extra)) and test(code + "\n" + extra)


def _identifier_at(text: str, start: int) -> bool:
    return start == 0 or not (text[start - 1].isalnum() or text[start - 1] == "_")


def word_search(pattern: re.Pattern[str], text: str) -> bool:
    """``pattern`` (starting with a literal, so the scan is fast) matched where no identifier
    character precedes it: the same as a leading ``\\b`` for patterns starting with a letter."""
    return any(_identifier_at(text, m.start()) for m in pattern.finditer(text))


#: ``1 - x`` (number(left) == 1: ``1``, ``1.``, ``1.0``, ``1e0``, ``(1)``; line breaks allowed)
_ONE_MINUS_TEXT = re.compile(r"1(?:\.0*)?(?:[eE][+-]?0+)?[\s)\\]*-(?!=)")
_POW_CALL_TEXT = re.compile(r"(?:pow_?|power|float_power)\b")
#: an ``exp``/``expm1`` call (the name is spelled at the call or in its import)
EXP_TEXT = re.compile(r"exp(?:m1)?\b")
#: ``pow(math.e, x)``, ``np.power(np.e, l)``
_E_POW_CALL_TEXT = re.compile(r"pow\w*\(\s*(?:\w+\s*=\s*)?(?:\w+\.)*e[\s)]*,")
_BLANK = " \t\r\n\f\\"


def _power_operators(code: str) -> tuple[bool, bool]:
    """(a ``**`` power operator occurs — an operand before it, unlike ``f(**kwargs)`` —,
    one of them has the base ``e`` as in ``math.e ** x`` or ``(e)**x``)."""
    power = False
    for m in re.finditer(r"\*\*", code):
        j = m.start() - 1
        closed = False
        while j >= 0 and (code[j] in _BLANK or code[j] == ")"):
            closed = closed or code[j] == ")"
            j -= 1
        c = code[j] if j >= 0 else ""
        if closed or c.isalnum() or c in ("_", ".", "]"):
            power = True
            if c == "e" and _identifier_at(code, j):
                return True, True
    return power, False


def moment_term_text(code: str) -> bool:
    """Text a PATE moment term (1−q)·(…)**l + q·exp(…) cannot be written without: an
    exponential (an ``exp``/``expm1`` call, whose name is spelled at the call or in its import,
    or ``e`` raised to a power), a power (``**`` after an operand, or a
    ``pow``/``power``/``float_power`` call) and a ``1 -``. Substring checks run first (cheap)."""
    if not ("**" in code or "pow" in code) or "-" not in code:
        return False
    if not any(_identifier_at(code, m.start()) and (m.start() == 0 or code[m.start() - 1] != ".")
               for m in _ONE_MINUS_TEXT.finditer(code)):
        return False
    power_op, e_power = _power_operators(code) if "**" in code else (False, False)
    pow_call = "pow" in code and word_search(_POW_CALL_TEXT, code)
    if not (power_op or pow_call):
        return False
    if e_power or ("exp" in code and word_search(EXP_TEXT, code)):
        return True
    return pow_call and _E_POW_CALL_TEXT.search(code) is not None


#: calls :func:`bounded_operands` understands (min/minimum/fmin/amin/nanmin/reduce_min/clamp/
#: clip/clip_by_value/clamp_max/where, whose name is spelled at the call or in its import) or
#: a conditional expression's ``else`` (a statement ``else`` is always followed by ``:``)
_BOUND_TEXT = re.compile(
    r"(?:min|minimum|fmin|amin|nanmin|reduce_min|clamp_?|clip_?|clip_by_value|clamp_max_?|where)\b"
    r"|else\b(?!\s*:)"
)
_BOUND_WORDS = ("min", "clamp", "clip", "where", "else")


def bound_text(code: str) -> bool:
    return any(w in code for w in _BOUND_WORDS) and word_search(_BOUND_TEXT, code)


#: a log call of :data:`LOG_NAMES`
_LOG_TEXT = re.compile(r"log(?:1p|2|10|sumexp|addexp)?\b")


def log_text(code: str) -> bool:
    return "log" in code and word_search(_LOG_TEXT, code)


class TokenText:
    """Finds where a name could carry one of ``tokens`` in the sense of :func:`name_tokens`
    (snake_case, CamelCase, digits): the token not glued to other lowercase letters. ``lambda``
    counts only inside a longer identifier (``lambda_``, ``Lambda``), never as the keyword."""

    def __init__(self, tokens: frozenset[str] | set[str]) -> None:
        # case-insensitive, spelled as per-letter classes grouped by first letter: several
        # times faster to scan than an ``re.I`` alternation
        def letters(text: str) -> str:
            return "".join(f"[{re.escape(c.lower())}{re.escape(c.upper())}]" if c.lower() != c.upper() else re.escape(c)
                           for c in text)

        groups: dict[str, list[str]] = {}
        for t in sorted(tokens, key=len, reverse=True):
            groups.setdefault(t[0].lower(), []).append(t[1:])
        self._any = re.compile("|".join(
            letters(first) + "(?:" + "|".join(letters(rest) for rest in rests) + ")" for first, rests in groups.items()
        ))

    def search(self, text: str) -> bool:
        for m in self._any.finditer(text):
            start, end = m.span()
            before = text[start - 1] if start else ""
            after = text[end] if end < len(text) else ""
            first = text[start]
            if after.islower() and after.isalpha():
                continue
            if before.islower() and before.isalpha() and not first.isupper():
                continue
            if m.group().lower() == "lambda" and not (before in "_0123456789" and before
                                                        or after in "_0123456789" and after or first.isupper()):
                continue
            return True
        return False


def token_text(tokens: frozenset[str] | set[str]) -> TokenText:
    return TokenText(tokens)


# ---------------------------------------------------------------- ast gates (``Rule.may_report``)
# Supersets, on CPython's ``ast``, of the libcst shapes above: a ``False`` proves the shape is absent.
def ast_powers(facts: AstFacts) -> list[tuple[ast.AST, ast.AST]]:
    """(base, exponent) of every shape ``power_parts`` accepts."""
    out: list[tuple[ast.AST, ast.AST]] = [(n.left, n.right) for n in facts.binops(ast.Pow)]
    unknown = ast.Name("?")  # an exponent whose place among the arguments is not certain
    for call in facts.calls:
        lasts = facts.call_lasts(call)
        values = [a.value if isinstance(a, ast.Starred) else a for a in call.args] + [k.value for k in call.keywords]
        odd = bool(call.keywords) or any(isinstance(a, ast.Starred) for a in call.args)
        if lasts & POW_NAMES and len(values) >= 2:
            out.append((values[0], unknown if odd else values[1]))
        if lasts & {"pow", "pow_"} and isinstance(call.func, ast.Attribute) and len(values) == 1:
            out.append((call.func.value, unknown if odd else values[0]))
    return out


def ast_moment_term(facts: AstFacts, roots: list[ast.AST]) -> bool:
    """``moment_shape(...).is_term`` may hold for one of ``roots``: in what a root reaches (a
    superset of ``Resolver.expand``) a power with a name in its non-literal exponent, a ``1 - x``
    reached from its base, and an exp (call or ``e ** x``) whose argument reaches that name."""
    if not any(ast_number(b.left) == 1.0 for b in facts.binops(ast.Sub)):
        return False
    if not facts.calls_any(EXP_NAMES) and not any(ast_dotted(base) in E_NAMES for base, _ in ast_powers(facts)):
        return False
    # all roots at once: a superset of each root's own shape
    nodes = facts.reach_all(roots)
    if reach_cut(nodes):
        return True
    powers, exps = _ast_powers_and_exps(facts, nodes)
    if not powers or not exps or not any(_ast_one_minus(n) for n in nodes):
        return False
    exp_names: set[str] | None = None
    for base, exponent in powers:
        order = {n.id for n in ast.walk(exponent) if isinstance(n, ast.Name)}
        if not order:
            continue
        base_nodes = facts.reach(base)
        if not (reach_cut(base_nodes) or any(_ast_one_minus(n) for n in base_nodes)):
            continue
        if exp_names is None:
            reached = facts.reach_all(exps)
            if reach_cut(reached):
                return True
            exp_names = {n.id for n in reached if isinstance(n, ast.Name)}
        if order & exp_names:
            return True
    return False


def _ast_one_minus(node: ast.AST) -> bool:
    return isinstance(node, ast.BinOp) and isinstance(node.op, ast.Sub) and ast_number(node.left) == 1.0


def _ast_powers_and_exps(facts: AstFacts, nodes: list[ast.AST]) -> tuple[list[tuple[ast.AST, ast.AST]], list[ast.AST]]:
    """(base, non-literal exponent) of the powers among ``nodes`` and the exp arguments."""
    powers: list[tuple[ast.AST, ast.AST]] = []
    exps: list[ast.AST] = []
    for node in nodes:
        pairs: list[tuple[ast.AST, ast.AST]] = []
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow):
            pairs.append((node.left, node.right))
        elif isinstance(node, ast.Call):
            lasts = facts.call_lasts(node)
            values = [a.value if isinstance(a, ast.Starred) else a for a in node.args] + [k.value for k in node.keywords]
            if lasts & EXP_NAMES:
                exps.extend(values or ([node.func.value] if isinstance(node.func, ast.Attribute) else []))
            if lasts & POW_NAMES and len(values) >= 2:
                if node.keywords:  # keywords may be written before a ``*args``: any order
                    pairs.extend((a, b) for a in values for b in values if a is not b)
                else:
                    pairs.append((values[0], values[1]))
            if lasts & {"pow", "pow_"} and isinstance(node.func, ast.Attribute) and len(values) == 1:
                pairs.append((node.func.value, values[0]))
        for base, exponent in pairs:
            if ast_dotted(base) in E_NAMES:
                exps.append(exponent)
            elif ast_number(exponent) is None:
                powers.append((base, exponent))
    return powers, exps


def ast_bounded_roots(facts: AstFacts) -> list[ast.AST]:
    """Everything a call ``bounded_operands`` may accept could bound: its arguments and receiver."""
    out: list[ast.AST] = []
    for call in facts.calls:
        if facts.call_lasts(call) & _BOUNDING:
            out.extend(a.value if isinstance(a, ast.Starred) else a for a in call.args)
            out.extend(k.value for k in call.keywords)
            if isinstance(call.func, ast.Attribute):
                out.append(call.func.value)
    return out


_BOUNDING = _MIN_FUNCS | _CLAMP_FUNCS | _LIST_MIN | {"min", "where", "clamp_max", "clamp_max_"}


def ast_bounding_call(facts: AstFacts) -> bool:
    """A call ``bounded_operands`` may accept (by its last name)."""
    return facts.calls_any(_BOUNDING)


def ast_unwrap(facts: AstFacts, expr: ast.AST) -> ast.AST:
    """``unwrap`` on ``ast`` (wrapper names matched as written and through import aliases)."""
    for _ in range(4):
        if isinstance(expr, (ast.List, ast.Tuple)) and len(expr.elts) == 1:
            expr = expr.elts[0]
        elif isinstance(expr, ast.Call) and (expr.args or expr.keywords) and facts.call_lasts(expr) & _WRAPPERS:
            expr = expr.args[0] if expr.args else expr.keywords[0].value
            if isinstance(expr, ast.Starred):
                expr = expr.value
        else:
            break
    return expr


def ast_identity(facts: AstFacts, expr: ast.AST) -> str | None:
    """The name string every ``identity_keys`` key of a bare ``expr`` carries."""
    expr = ast_unwrap(facts, expr)
    if isinstance(expr, ast.Name):
        return expr.id
    if isinstance(expr, ast.Attribute):
        base = ast_dotted(expr)
        if base is not None and base.split(".")[0] in ("self", "cls"):
            return expr.attr
        return base
    if isinstance(expr, ast.Subscript):
        return ast_last_name_dp1(expr)
    return None


def ast_identity_links(facts: AstFacts) -> dict[str, set[str]]:
    """Name string -> the name strings ``identity_keys`` may go on to from it: the bare values
    assigned to a name, the bare arguments passed to a parameter (in calls named like its
    function). Scopes and depth are ignored, so the closure is a superset of the keys' names."""
    def compute() -> dict[str, set[str]]:
        links: dict[str, set[str]] = {}
        for node in facts.nodes(ast.Assign, ast.AugAssign, ast.AnnAssign, ast.NamedExpr):
            value = node.value  # type: ignore[attr-defined]
            source = ast_identity(facts, value) if value is not None else None
            if source is None:
                continue
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]  # type: ignore[attr-defined]
            for target in targets:
                for sub in ast.walk(target):
                    if isinstance(sub, (ast.Name, ast.Attribute, ast.Subscript)):
                        name = ast_identity(facts, sub)
                        if name is not None:
                            links.setdefault(name, set()).add(source)
        params: dict[str, list[str]] = {}
        for fn in facts.functions:
            args = fn.args
            params.setdefault(fn.name, []).extend(
                a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg) if a)
        for call in facts.calls:
            name = ast_dotted(call.func)
            names = params.get(name.rsplit(".", 1)[-1], []) if name is not None else []
            for value in (*call.args, *(k.value for k in call.keywords)) if names else ():
                passed = ast_identity(facts, value.value if isinstance(value, ast.Starred) else value)
                if passed is not None:
                    for param in names:
                        links.setdefault(param, set()).add(passed)
        return links

    return facts.memo("dp1-identity-links", compute)


def ast_identity_closure(links: dict[str, set[str]], start: set[str]) -> set[str]:
    out = set(start)
    stack = list(start)
    while stack:
        for nxt in links.get(stack.pop(), ()):
            if nxt not in out:
                out.add(nxt)
                stack.append(nxt)
    return out
