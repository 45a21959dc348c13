"""Branches of a parameter test that no call of the function selects.

``def set_domain(self, domain=None): if domain is not None: … else: lo = data.min()`` reads a private
range only when a caller leaves ``domain`` out; when every call in the project passes
``domain=(cmin, cmax)``, the ``else`` never runs and a finding inside it describes nothing that is
released. The same holds for ``if noise_type == "gaussian":`` when every call passes
``noise_type="laplace"``, and for ``if scale_data:`` when every call passes ``scale_data=False`` or
leaves the ``False`` default.

:func:`dead_branch_spans` answers, for one module, the line spans of such branches. It is
conservative: the function's name must be used only as the callee of calls (never passed as a value,
never spelled as a whole string, never decorated by something that may register it, never a method a
framework calls through an outside base class), every one of those calls must bind the parameter to a
value known statically (a literal, a tuple/list/dict display, or the parameter's literal default), the
parameter must never be reassigned inside the function, and every call must decide the test the same
way. A value that may come from the command line or a variable is unknown: its branch stays live.
"""
from __future__ import annotations

import ast
from collections.abc import Iterable
from dataclasses import dataclass

#: decorators that only wrap (the function is still called by its name)
_PLAIN = frozenset({"staticmethod", "classmethod", "property", "lru_cache", "cache", "wraps", "jit", "njit",
                    "no_grad", "inference_mode"})

_UNKNOWN = object()


@dataclass(frozen=True)
class _Value:
    """What a call binds to a parameter: ``const`` is a Python constant, or ``_UNKNOWN`` with only its
    truth and None-ness known (a display such as ``(lo, hi)``)."""
    const: object
    truthy: bool | None
    is_none: bool


def _value(node: ast.expr) -> _Value | None:
    if isinstance(node, ast.Constant):
        return _Value(node.value, bool(node.value), node.value is None)
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        try:
            const = ast.literal_eval(node)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            const = _UNKNOWN
        return _Value(const, bool(node.elts), False)
    if isinstance(node, ast.Dict):
        return _Value(_UNKNOWN, bool(node.keys), False)
    if isinstance(node, (ast.Lambda, ast.JoinedStr)):
        return _Value(_UNKNOWN, True if isinstance(node, ast.Lambda) else None, False)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant) \
            and isinstance(node.operand.value, (int, float)):
        return _Value(-node.operand.value, bool(node.operand.value), False)
    return None


def _decide(test: ast.expr, name: str, v: _Value) -> bool | None:
    """The truth of ``test`` (a test of parameter ``name``) when the parameter is ``v``; None: unknown."""
    return _decide_on(test, lambda n: isinstance(n, ast.Name) and n.id == name, v)


def _decide_on(test: ast.expr, is_it, v: _Value) -> bool | None:
    """The truth of ``test`` when the expression ``is_it`` picks out is ``v``; None: unknown."""
    if is_it(test):
        return v.truthy
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = _decide_on(test.operand, is_it, v)
        return None if inner is None else not inner
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        left, op, right = test.left, test.ops[0], test.comparators[0]
        if is_it(right) and not is_it(left):
            left, right = right, left
            if not isinstance(op, (ast.Eq, ast.NotEq, ast.Is, ast.IsNot)):
                return None
        if not is_it(left):
            return None
        if isinstance(op, (ast.Is, ast.IsNot)) and isinstance(right, ast.Constant) and right.value is None:
            return v.is_none if isinstance(op, ast.Is) else not v.is_none
        if v.const is _UNKNOWN:
            return None
        try:
            other = ast.literal_eval(right)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            return None
        if isinstance(op, (ast.Eq, ast.NotEq)):
            if not isinstance(v.const, (str, int, float, bool, type(None))) or \
                    not isinstance(other, (str, int, float, bool, type(None))):
                return None
            equal = v.const == other and type(v.const) is type(other)
            if not equal and v.const == other:
                return None  # 1 == 1.0 == True: leave to Python's rules we do not model
            return equal if isinstance(op, ast.Eq) else not equal
        if isinstance(op, (ast.In, ast.NotIn)) and isinstance(other, (tuple, list, set, frozenset)) \
                and isinstance(v.const, (str, int, type(None))) and all(isinstance(o, (str, int, type(None))) for o in other):
            inside = any(v.const == o and type(v.const) is type(o) for o in other)
            return inside if isinstance(op, ast.In) else not inside
    return None


def _stores(fn: ast.AST) -> set[str]:
    """Names the function assigns (its parameters reassigned are no longer what the caller passed)."""
    out: set[str] = set()
    for n in ast.walk(fn):
        if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
            out.add(n.id)
        elif isinstance(n, (ast.Global, ast.Nonlocal)):
            out.update(n.names)
    return out


def _stores_within(fn: ast.AST, name: str, branch: ast.If) -> bool:
    """Are all of ``fn``'s stores of ``name`` inside ``branch`` (its body or ``else``), not its test?"""
    inside = {id(n) for s in branch.body + branch.orelse for n in ast.walk(s)}
    for n in ast.walk(fn):
        if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, (ast.Store, ast.Del)) and id(n) not in inside:
            return False
        if isinstance(n, (ast.Global, ast.Nonlocal)) and name in n.names:
            return False
    return True


def _registering(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    for dec in fn.decorator_list:
        node = dec.func if isinstance(dec, ast.Call) else dec
        name = node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else ""
        if name not in _PLAIN:
            return True
    return False


def _kind(fn: ast.FunctionDef | ast.AsyncFunctionDef, in_class: bool) -> str:
    names = {d.id if isinstance(d, ast.Name) else d.attr if isinstance(d, ast.Attribute) else ""
             for d in fn.decorator_list}
    if not in_class or "staticmethod" in names:
        return "function"
    return "method"


class Index:
    """Calls and value uses of every name in a set of modules (built once per project)."""

    def __init__(self, trees: Iterable[ast.Module]) -> None:
        #: name -> calls whose callee is that name (``f(...)`` or ``x.f(...)``)
        self.calls: dict[str, list[ast.Call]] = {}
        #: name -> how many times code reads it (a Name load or an attribute read)
        self.reads: dict[str, int] = {}
        #: whole strings (``getattr(m, "f")``, ``__all__``)
        self.strings: set[str] = set()
        #: name -> kinds of its definitions ("function" / "method")
        self.kinds: dict[str, set[str]] = {}
        #: class name -> its bases as spelled (a dotted base or a keyword: None, from outside)
        self.bases: dict[str, list[str | None]] = {}
        #: name -> the literals module-level statements assign it (``FLAG = True``, ``config.flag = True``)
        self.top_values: dict[str, list[ast.expr]] = {}
        #: names stored anywhere else (a parameter, a local, an attribute set in code, a loop target…)
        self.stored: set[str] = set()
        #: a ``setattr`` with a computed name or a ``__dict__``/``vars()`` update: any attribute may change
        self.dynamic = False
        #: owners whose attributes may change wholesale (``cfg.update(vars(args))``, ``cfg[key] = v``,
        #: ``setattr(cfg, ...)``, ``vars(cfg)``): none of their flags is constant
        self.updated: set[str] = set()
        #: id of a call -> the local assignments of the function that makes it (name -> assigned values;
        #: a ``None`` entry: bound some other way, a parameter, a loop target…)
        self.scope_of: dict[int, dict[str, list[ast.expr | None]]] = {}
        trees = list(trees)
        for tree in trees:
            for fn in ast.walk(tree):
                if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    local = _assignments(fn)
                    for node in ast.walk(fn):
                        if isinstance(node, ast.Call):
                            self.scope_of[id(node)] = local  # an inner function's walk comes later: it wins
        for tree in trees:
            top: set[int] = set()
            for stmt in tree.body:
                if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and _value(stmt.value) is not None:
                    t = stmt.targets[0]
                    key = t.id if isinstance(t, ast.Name) else t.attr if isinstance(t, ast.Attribute) else None
                    if key is not None:
                        self.top_values.setdefault(key, []).append(stmt.value)
                        top.add(id(t))
            for node in ast.walk(tree):
                if isinstance(node, (ast.Name, ast.Attribute)) and isinstance(node.ctx, (ast.Store, ast.Del)) \
                        and id(node) not in top:
                    self.stored.add(node.id if isinstance(node, ast.Name) else node.attr)
                elif isinstance(node, ast.arg):
                    self.stored.add(node.arg)
                elif isinstance(node, (ast.Global, ast.Nonlocal)):
                    self.stored.update(node.names)
                elif isinstance(node, ast.alias):
                    self.stored.add((node.asname or node.name).split(".")[0])
                elif isinstance(node, ast.Subscript) and isinstance(node.ctx, (ast.Store, ast.Del)):
                    if isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str):
                        self.stored.add(node.slice.value)
                    elif isinstance(node.value, ast.Name):
                        self.updated.add(node.value.id)
                elif isinstance(node, ast.Call):
                    f = node.func
                    fname = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
                    if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and fname in (
                            "update", "setdefault", "__setitem__", "__setattr__", "merge_from_file", "merge_from_list",
                            "load", "parse_args"):
                        self.updated.add(f.value.id)
                    if fname in ("setattr", "vars") and node.args and isinstance(node.args[0], ast.Name):
                        self.updated.add(node.args[0].id)
                    if fname == "setattr" and not (len(node.args) > 1 and isinstance(node.args[1], ast.Constant)):
                        self.dynamic = True
                    elif fname == "setattr" and len(node.args) > 1:
                        self.stored.add(str(node.args[1].value))
                    elif fname == "update" and isinstance(f, ast.Attribute) and (
                            (isinstance(f.value, ast.Attribute) and f.value.attr == "__dict__")
                            or (isinstance(f.value, ast.Call) and isinstance(f.value.func, ast.Name)
                                and f.value.func.id == "vars")):
                        self.dynamic = True
        for tree in trees:
            for node in ast.walk(tree):
                if isinstance(node, ast.Call):
                    f = node.func
                    callee = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
                    if callee is not None:
                        self.calls.setdefault(callee, []).append(node)
                elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                    self.reads[node.id] = self.reads.get(node.id, 0) + 1
                elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
                    self.reads[node.attr] = self.reads.get(node.attr, 0) + 1
                elif isinstance(node, ast.Constant) and isinstance(node.value, str) and len(node.value) < 200:
                    self.strings.add(node.value)
                elif isinstance(node, ast.ClassDef):
                    self.bases.setdefault(node.name, []).extend(
                        [b.id if isinstance(b, ast.Name) else None for b in node.bases]
                        + [None for k in node.keywords if k.arg != "metaclass"])
                    for sub in node.body:
                        if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef)):
                            self.kinds.setdefault(sub.name, set()).add(_kind(sub, True))
            for stmt in tree.body:
                if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    self.kinds.setdefault(stmt.name, set()).add("function")


    def constant(self, name: str) -> _Value | None:
        """The value of a module-level flag the project assigns once, to a literal, and never again."""
        values = self.top_values.get(name, [])
        if len(values) != 1 or name in self.stored or self.dynamic:
            return None
        return _value(values[0])

    def external(self, cls: str, seen: frozenset[str] = frozenset()) -> bool:
        """Does class ``cls`` (or a project class it derives from) have a base from outside the project,
        whose framework may call its methods with any argument?"""
        if cls in seen:
            return False
        for b in self.bases.get(cls, ()):
            if b in _INNOCENT_BASES:
                continue
            if b is None or b not in self.bases or self.external(b, seen | {cls}):
                return True
        return False


#: bases that call no method of their subclasses
_INNOCENT_BASES = frozenset({"object", "ABC", "Generic", "Protocol", "NamedTuple"})


#: calls that never return None (a domain or a grid built by the caller: ``np.arange(lo, hi + 1)``)
_NOT_NONE_CALLS = frozenset({
    "arange", "array", "asarray", "linspace", "unique", "zeros", "ones", "full", "list", "tuple", "range",
    "sorted", "set", "frozenset", "dict", "tensor", "concatenate", "logspace", "str", "int", "float",
})


def _assignments(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, list[ast.expr | None]]:
    """Name -> the values ``fn`` assigns it (``None``: a parameter, a loop/with target, an augmented or
    unpacked assignment, a global: anything whose value we do not read)."""
    out: dict[str, list[ast.expr | None]] = {}
    a = fn.args
    for p in a.posonlyargs + a.args + a.kwonlyargs + [x for x in (a.vararg, a.kwarg) if x is not None]:
        out.setdefault(p.arg, []).append(None)
    for node in ast.walk(fn):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            out.setdefault(node.targets[0].id, []).append(node.value)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            out.setdefault(node.id, [])
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            for n in node.names:
                out.setdefault(n, []).append(None)
    # a store that is not a plain ``name = value`` (``for name in``, ``name += 1``, ``a, name = …``)
    plain = {id(n.targets[0]) for n in ast.walk(fn) if isinstance(n, ast.Assign) and len(n.targets) == 1
             and isinstance(n.targets[0], ast.Name)}
    for node in ast.walk(fn):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)) and id(node) not in plain:
            out[node.id].append(None)
    return out


def _not_none(node: ast.expr) -> bool:
    """Is ``node`` certainly not ``None`` (a display, arithmetic, a constant, a constructor call)?"""
    if isinstance(node, ast.Constant):
        return node.value is not None
    if isinstance(node, (ast.List, ast.Tuple, ast.Set, ast.Dict, ast.ListComp, ast.SetComp, ast.DictComp,
                         ast.BinOp, ast.JoinedStr)):
        return True
    if isinstance(node, ast.Call):
        f = node.func
        name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
        return name in _NOT_NONE_CALLS
    return False


def _argument(node: ast.expr, call: ast.Call, index: "Index | None") -> _Value | None:
    """What argument ``node`` of ``call`` is: a literal, or (``categories`` of ``f(x, categories)``) a local
    the calling function assigns only values that are never None (``categories = np.arange(1, 6)``)."""
    v = _value(node)
    if v is not None or index is None or not isinstance(node, ast.Name):
        return v
    values = index.scope_of.get(id(call), {}).get(node.id)
    if values and all(x is not None and _not_none(x) for x in values):
        return _Value(_UNKNOWN, None, False)
    return None


def _bound(call: ast.Call, fn: ast.FunctionDef | ast.AsyncFunctionDef, skip: int, param: str,
           index: "Index | None" = None) -> _Value | None:
    """The value ``call`` binds to ``param`` of ``fn`` (``skip`` leading parameters bound by the receiver)."""
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return None
    a = fn.args
    positional = [p.arg for p in (a.posonlyargs + a.args)][skip:]
    for k in call.keywords:
        if k.arg == param:
            return _argument(k.value, call, index)
    if param in positional:
        i = positional.index(param)
        if i < len(call.args):
            return _argument(call.args[i], call, index)
    elif param not in {p.arg for p in a.kwonlyargs}:
        return None
    # left out: the default
    defaults = dict(zip([p.arg for p in (a.posonlyargs + a.args)][-len(a.defaults):] if a.defaults else [], a.defaults))
    defaults.update({p.arg: d for p, d in zip(a.kwonlyargs, a.kw_defaults) if d is not None})
    if param not in defaults:
        return None  # a required parameter left out: we misread the call
    return _value(defaults[param])


def _branches(body: list[ast.stmt]) -> Iterable[ast.If]:
    """The ``if`` statements of a function body, not those of nested definitions."""
    stack = list(body)
    while stack:
        s = stack.pop()
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if isinstance(s, ast.If):
            yield s
        for field in ("body", "orelse", "finalbody", "handlers"):
            sub = getattr(s, field, None)
            if isinstance(sub, list):
                stack.extend(x for x in sub if isinstance(x, (ast.stmt, ast.ExceptHandler)))
        if isinstance(s, ast.ExceptHandler):
            stack.extend(s.body)
        if isinstance(s, ast.Match) if hasattr(ast, "Match") else False:
            for case in s.cases:  # type: ignore[attr-defined]
                stack.extend(case.body)


def _span(stmts: list[ast.stmt]) -> tuple[int, int]:
    return stmts[0].lineno, max(getattr(s, "end_lineno", None) or s.lineno for s in stmts)


def dead_branch_spans(tree: ast.Module, index: Index, *, private_only: bool = False) -> list[tuple[int, int]]:
    """Line spans of the branches of ``tree``'s functions that no call in ``index`` selects.

    ``private_only``: only functions and methods named ``_x`` (a scan of one file sees no outside
    caller, and only a private name has none). A method of a class deriving from a class outside the
    project is never decided: a framework may call it with anything.
    """
    out: list[tuple[int, int]] = []
    for fn, in_class, cls in _functions(tree):
        name = fn.name
        if name.startswith("__") or (private_only and not name.startswith("_")) or _registering(fn):
            continue
        if in_class and cls is not None and index.external(cls.name):
            continue
        kind = _kind(fn, in_class)
        if index.kinds.get(name, {kind}) != {kind} or name in index.strings:
            continue
        calls = index.calls.get(name, [])
        if not calls or index.reads.get(name, 0) != len(calls):
            continue  # never called (not this module's business), or used as a value somewhere
        skip = 0
        if kind == "method":
            if any(not isinstance(c.func, ast.Attribute) for c in calls):
                continue
            skip = 1  # the receiver binds ``self``
        params = {p.arg for p in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs}
        stores = _stores(fn)
        for branch in _branches(fn.body):
            names = {n.id for n in ast.walk(branch.test) if isinstance(n, ast.Name)}
            if len(names) != 1:
                continue
            (param,) = names
            if param not in params or param in ("self", "cls"):
                continue
            # (fp47) ``if categories is None: categories = np.unique(data)``: a store inside the branch itself,
            # a statement of the body run once, comes after the test (nothing before it changed the parameter).
            # Only for a private helper: a public function's optional-bounds fallback is reachable by any user of
            # the module, whatever its callers in this project pass (B63-006: ``private_mean(data, data_range=None)``)
            if param in stores and not (branch in fn.body and _stores_within(fn, param, branch)
                                        and fn.name.startswith("_")):
                continue
            decisions = set()
            for c in calls:
                v = _bound(c, fn, skip, param, index)
                d = None if v is None else _decide(branch.test, param, v)
                decisions.add(d)
                if d is None:
                    break
            if len(decisions) != 1 or None in decisions:
                continue
            (always,) = decisions
            if always and branch.orelse:
                out.append(_span(branch.orelse))
            elif not always:
                out.append(_span(branch.body))
    out.extend(_constant_branches(tree, index, private_only))
    return sorted(set(out))


def local_spans(tree: ast.Module) -> list[tuple[int, int]]:
    """:func:`dead_branch_spans` of one module read alone: only its private functions, methods and flags
    (``_name``), which no other module calls or sets."""
    private_defs = any(fn.name.startswith("_") and not fn.name.startswith("__") for fn, _, _ in _functions(tree))
    private_flags = any(isinstance(st, ast.Assign) and any(isinstance(t, ast.Name) and t.id.startswith("_")
                                                          for t in st.targets) for st in tree.body)
    if not (private_defs or private_flags):
        return []  # nothing a file read alone may decide (most files): skip the index
    return dead_branch_spans(tree, Index([tree]), private_only=True)


def _constant_branches(tree: ast.Module, index: Index, private_only: bool) -> list[tuple[int, int]]:
    """Branches on a module-level flag (``if USE_GAUSSIAN:``, ``if config.use_lap_noise:``) that the
    project sets once to a literal and never changes: the arm the literal rules out never runs."""
    out: list[tuple[int, int]] = []
    for branch in ast.walk(tree):
        if not isinstance(branch, ast.If):
            continue
        leaves = [n for n in ast.walk(branch.test) if isinstance(n, (ast.Name, ast.Attribute))
                  and isinstance(n.ctx, ast.Load)]
        if not leaves:
            continue
        leaf = leaves[0]
        if isinstance(leaf, ast.Attribute) and (not isinstance(leaf.value, ast.Name) or leaf.value.id in index.updated):
            continue
        # the flag and (for ``config.flag``) its owner are the only names the test reads
        if len(leaves) != (2 if isinstance(leaf, ast.Attribute) else 1):
            continue
        key = leaf.id if isinstance(leaf, ast.Name) else leaf.attr
        if private_only and not (key.startswith("_") and isinstance(leaf, ast.Name)):
            continue
        v = index.constant(key)
        if v is None:
            continue
        always = _decide_on(branch.test, lambda n, leaf=leaf: n is leaf, v)
        if always is None:
            continue
        if always and branch.orelse:
            out.append(_span(branch.orelse))
        elif not always:
            out.append(_span(branch.body))
    return out


def _functions(tree: ast.Module) -> Iterable[tuple[ast.FunctionDef | ast.AsyncFunctionDef, bool, ast.ClassDef | None]]:
    for stmt in tree.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield stmt, False, None
        elif isinstance(stmt, ast.ClassDef):
            for sub in stmt.body:
                if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    yield sub, True, stmt
