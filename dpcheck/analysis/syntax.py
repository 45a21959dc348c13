"""Pure helpers over libcst nodes: dotted names, identifier words, call names, string text.

Nothing here needs the file's index; these replace the duplicated copies in the rule families'
private helper modules (``dotted``, ``call_name``, ``last_name``, ``tokens``/``words``).
"""
from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator

import libcst as cst

from dpcheck.cstwalk import Preorder, children


def dotted(expr: cst.CSTNode | None) -> str | None:
    """``a.b.c`` for a Name/Attribute chain, else None."""
    parts: list[str] = []
    while type(expr) is cst.Attribute:
        parts.append(expr.attr.value)  # type: ignore[union-attr]
        expr = expr.value  # type: ignore[union-attr]
    if type(expr) is cst.Name:
        parts.append(expr.value)  # type: ignore[union-attr]
        return ".".join(reversed(parts))
    return None


def undotted(text: str, base: cst.BaseExpression | None = None) -> cst.Name | cst.Attribute | None:
    """The Name/Attribute chain ``a.b.c`` spells (after ``base``, when given); None when a part is
    not an identifier (text from strings, ``"t,"``, cannot become a node)."""
    expr = base
    for part in text.split("."):
        if not part.isidentifier():
            return None
        expr = cst.Name(part) if expr is None else cst.Attribute(value=expr, attr=cst.Name(part))
    return expr  # type: ignore[return-value]


def subscripted_name(expr: cst.BaseExpression) -> str | None:
    """The name under any subscripts (``counts[a][b]`` -> counts), or None when it is not a plain name."""
    while isinstance(expr, cst.Subscript):
        expr = expr.value
    return expr.value if isinstance(expr, cst.Name) else None


def name_words(expr: cst.CSTNode) -> set[str]:
    """The words of every name and attribute in ``expr`` (``self.train_loss`` -> self, train, loss)."""
    out: set[str] = set()
    for n in walk(expr):
        if isinstance(n, cst.Name):
            out |= words(n.value)
        elif isinstance(n, cst.Attribute):
            out |= words(n.attr.value)
    return out


def last_name(expr: cst.CSTNode | None) -> str | None:
    """``c`` of ``a.b.c`` / ``c``; the string key of ``cfg["c"]``; else None."""
    if isinstance(expr, cst.Attribute):
        return expr.attr.value
    if isinstance(expr, cst.Name):
        return expr.value
    if isinstance(expr, cst.Subscript) and len(expr.slice) == 1:
        index = expr.slice[0].slice
        if isinstance(index, cst.Index) and isinstance(index.value, cst.SimpleString):
            value = index.value.evaluated_value
            return value if isinstance(value, str) else None
    return None


def base_name(expr: cst.BaseExpression) -> str | None:
    """The name under subscripts and attributes: ``x`` of ``x``, ``x["k"]``, ``x.a[0].b``; None for a call."""
    while isinstance(expr, (cst.Subscript, cst.Attribute)):
        expr = expr.value
    return expr.value if isinstance(expr, cst.Name) else None


def call_name(call: cst.Call) -> str:
    """Last segment of the called name (``np.random.laplace`` -> ``laplace``); '' if unknown."""
    func = call.func
    if type(func) is cst.Attribute:
        return func.attr.value  # type: ignore[union-attr]
    if type(func) is cst.Name:
        return func.value  # type: ignore[union-attr]
    return ""


_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_SPLIT = re.compile(r"[^A-Za-z0-9]+")
_WORDS: dict[str, frozenset[str]] = {}


def words(identifier: str) -> frozenset[str]:
    """Lower-case word pieces: ``xTrainData`` -> {x, train, data}; ``self.noise_std`` -> {self, noise, std}."""
    out = _WORDS.get(identifier)
    if out is None:
        out = _WORDS[identifier] = frozenset(
            w for w in _SPLIT.split(_CAMEL.sub("_", identifier).lower()) if w
        )
    return out


#: ``walk`` results of the file being analysed, by (id, into_scopes). Each entry keeps its node
#: alive, so an id cannot be reused while the entry stands; ``clear_walks`` ends a file.
_WALKS: dict[tuple[int, bool], tuple[cst.CSTNode, list[cst.CSTNode]]] = {}
_MAX_WALKS = 200_000
#: the pre-order of the module being analysed: ``walk`` of a node in it is a slice
_TREE: list[Preorder] = []


def clear_walks(preorder: Preorder | None = None) -> None:
    """Forget the walks of the previous file; ``preorder`` is the next file's module's."""
    _WALKS.clear()
    _TREE.clear()
    if preorder is not None:
        _TREE.append(preorder)


def preorder_of(root: cst.CSTNode) -> Preorder | None:
    """The analysed module's ``Preorder`` when ``root`` is that module."""
    return _TREE[0] if _TREE and _TREE[0].nodes[0] is root else None


def walk(node: cst.CSTNode, *, into_scopes: bool = True) -> Iterator[cst.CSTNode]:
    """Pre-order nodes of ``node``'s subtree (``node`` included), layout nodes skipped.

    Rules walk the same functions and statements many times; the list is kept until
    ``clear_walks`` (libcst trees are immutable)."""
    key = (id(node), into_scopes)
    hit = _WALKS.get(key)
    if hit is not None and hit[0] is node:
        return iter(hit[1])
    at = _TREE[0].find(node) if _TREE else None
    if at is not None:
        out = _slice(_TREE[0], at, into_scopes)
    else:
        out = []
        stack = [node]
        pop, push, add = stack.pop, stack.extend, out.append
        while stack:
            cur = pop()
            add(cur)
            if not into_scopes and cur is not node and type(cur) in SCOPE_TYPES:
                continue
            push(reversed(children(cur)))
    if len(_WALKS) >= _MAX_WALKS:  # a caller outside ``run_rules`` never clears
        _WALKS.clear()
    _WALKS[key] = (node, out)
    return iter(out)


def _slice(tree: Preorder, at: int, into_scopes: bool) -> list[cst.CSTNode]:
    nodes, sizes = tree.nodes, tree.sizes
    end = at + sizes[at]
    if into_scopes:
        return nodes[at:end]
    out = [nodes[at]]
    i = at + 1
    while i < end:
        cur = nodes[i]
        out.append(cur)
        i += sizes[i] if type(cur) in SCOPE_TYPES else 1
    return out


SCOPE_TYPES = frozenset({cst.FunctionDef, cst.ClassDef, cst.Lambda})
COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)


def string_text(node: cst.CSTNode) -> str:
    """The literal text of every string inside ``node`` (f-string parts included), space-joined."""
    parts: list[str] = []
    for sub in walk(node):
        kind = type(sub)
        if kind is cst.SimpleString:
            value = sub.evaluated_value  # type: ignore[attr-defined]
            parts.append(value if isinstance(value, str) else value.decode("latin-1"))
        elif kind is cst.FormattedStringText:
            parts.append(sub.value)  # type: ignore[attr-defined]
    return " ".join(parts)


def interface_only(fn: cst.FunctionDef) -> bool:
    """An interface: a body of only a docstring, ``pass``, ``...`` or ``raise``."""
    body = fn.body.body if isinstance(fn.body, cst.IndentedBlock) else [fn.body]
    for stmt in body:
        if not isinstance(stmt, cst.SimpleStatementLine):
            return False
        for small in stmt.body:
            if isinstance(small, (cst.Pass, cst.Raise)):
                continue
            if isinstance(small, cst.Expr) and isinstance(small.value, (cst.SimpleString, cst.ConcatenatedString,
                                                                           cst.Ellipsis)):
                continue
            return False
    return True


def param_names(fn: cst.FunctionDef | cst.Lambda) -> list[str]:
    p = fn.params
    return [x.name.value for x in (*p.posonly_params, *p.params, *p.kwonly_params)]


def call_params(call: cst.Call, callee: cst.FunctionDef) -> list[str]:
    """The parameters ``call``'s arguments bind to: ``self``/``cls`` dropped for a method call."""
    params = param_names(callee)
    if params and params[0] in ("self", "cls") and isinstance(call.func, cst.Attribute):
        params = params[1:]
    return params


def all_params(fn: cst.FunctionDef | cst.Lambda) -> list[cst.Param]:
    p = fn.params
    out = [*p.posonly_params, *p.params]
    if isinstance(p.star_arg, cst.Param):
        out.append(p.star_arg)
    out.extend(p.kwonly_params)
    if p.star_kwarg is not None:
        out.append(p.star_kwarg)
    return out


def number(expr: cst.CSTNode | None) -> float | None:
    """Value of a finite numeric literal (unary minus included), else None."""
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, (cst.Minus, cst.Plus)):
        inner = number(expr.expression)
        if inner is None:
            return None
        return -inner if isinstance(expr.operator, cst.Minus) else inner
    if isinstance(expr, (cst.Integer, cst.Float)):
        try:
            value = float(expr.evaluated_value)  # 0x10, 1_000, 1e-5
        except (ValueError, OverflowError):
            return None
        return value if math.isfinite(value) else None
    return None


def target_nodes(target: cst.CSTNode) -> Iterator[cst.BaseExpression]:
    """The Name/Attribute/Subscript leaves of an assignment or loop target."""
    if isinstance(target, (cst.Tuple, cst.List)):
        for el in target.elements:
            yield from target_nodes(el.value)
    elif isinstance(target, cst.StarredElement):
        yield from target_nodes(target.value)
    elif isinstance(target, (cst.Name, cst.Attribute, cst.Subscript)):
        yield target


def refs(node: cst.CSTNode) -> set[str]:
    """Names and dotted attribute chains (``self.x``, ``a.b``) appearing in ``node``."""
    out: set[str] = set()
    for sub in walk(node):
        kind = type(sub)
        if kind is cst.Name:
            out.add(sub.value)  # type: ignore[attr-defined]
        elif kind is cst.Attribute:
            name = dotted(sub)
            if name is not None:
                out.add(name)
    return out


def value_refs(expr: cst.CSTNode) -> set[str]:
    """Names read as values: a called function's own name is not (``f(x)`` reads x), a method
    call's receiver is (``x.astype(int)`` reads x); ``self.a.b`` reads ``self.a.b`` and ``self``."""
    out: set[str] = set()
    stack: list[cst.CSTNode] = [expr]
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is cst.Call:
            func = node.func  # type: ignore[attr-defined]
            if type(func) is cst.Attribute:
                stack.append(func.value)
            stack.extend(a.value for a in node.args)  # type: ignore[attr-defined]
            continue
        if kind is cst.Attribute:
            name = dotted(node)
            if name is not None:
                out.add(name)
                out.add(name.split(".")[0])
                continue
        if kind is cst.Name:
            out.add(node.value)  # type: ignore[attr-defined]
            continue
        if kind in SCOPE_TYPES:
            continue
        stack.extend(children(node))
    return out


def target_names(target: cst.CSTNode) -> set[str]:
    """Names and ``obj.attr`` chains bound by an assignment/loop target (``x[i]`` binds nothing)."""
    out: set[str] = set()
    for leaf in target_nodes(target):
        name = dotted(leaf)
        if name is not None:
            out.add(name)
    return out


def loop_targets(loop: cst.CSTNode) -> set[str]:
    """Names a ``for`` loop or a comprehension binds."""
    if isinstance(loop, cst.For):
        return target_names(loop.target)
    if isinstance(loop, COMPREHENSIONS):
        out: set[str] = set()
        comp: cst.CompFor | None = loop.for_in
        while comp is not None:
            out |= target_names(comp.target)
            comp = comp.inner_for_in
        return out
    return set()


def loop_iter(loop: cst.CSTNode) -> cst.BaseExpression | None:
    if isinstance(loop, cst.For):
        return loop.iter
    if isinstance(loop, COMPREHENSIONS):
        return loop.for_in.iter
    return None


def scope_assignments(node: cst.CSTNode, line_of: Callable[[cst.CSTNode], int], *,
                      annotated: bool = False) -> list[tuple[int, str, cst.BaseExpression]]:
    """``(line, dotted target, value)`` of each single-target assignment in ``node``'s own scope, in source order
    (annotated assignments with a value too when ``annotated``)."""
    found: list[tuple[int, str, cst.BaseExpression]] = []
    for sub in walk(node, into_scopes=False):
        if isinstance(sub, cst.Assign) and len(sub.targets) == 1:
            name, value = dotted(sub.targets[0].target), sub.value
        elif annotated and isinstance(sub, cst.AnnAssign) and sub.value is not None:
            name, value = dotted(sub.target), sub.value
        else:
            continue
        if name is not None:
            found.append((line_of(sub), name, value))
    return found


def name_values(node: cst.CSTNode) -> dict[str, list[cst.BaseExpression]]:
    """Plain name -> the values assigned to it in ``node``'s own scope (every target of ``a = b = v``)."""
    values: dict[str, list[cst.BaseExpression]] = {}
    for a in walk(node, into_scopes=False):
        if isinstance(a, cst.Assign):
            for t in a.targets:
                if isinstance(t.target, cst.Name):
                    values.setdefault(t.target.value, []).append(a.value)
    return values
