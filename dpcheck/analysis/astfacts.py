"""Cheap facts about one file read from CPython's ``ast`` tree, for the rules' second prefilter.

libcst parses about five times slower than CPython's own parser. Before a file is parsed with
libcst, every rule its text prefilter admitted is asked ``Rule.admits(facts)``: can the rule
possibly report on this file? A rule answers from the shapes its report needs (the calls,
operators, assignments, names and value flow it looks for) in ``may_report``; a rule that reports
only in DP code is also dropped when no scope can have DP context (``astcontext``). The answer
must be conservative — a ``False`` is a proof that the rule reports nothing — so every fact here
is a *superset* of what the rule's libcst code sees: names are matched as written and through
every import alias, values are followed across scopes, in any order and without a hop limit.

``DPCHECK_AST_GATE=0`` in the environment turns the gate off (every admitted rule runs); the
benchmark's ``--gate-check`` and ``tests/test_scan_gate.py`` compare both settings.
"""
from __future__ import annotations

import ast
import math
import os
import re
from collections.abc import Callable
from functools import cached_property
from typing import TypeVar

from dpcheck.analysis.astnames import dotted, walk

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

T = TypeVar("T")

FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
#: fields holding only operator and context singletons: never walked
_SKIPPED_FIELDS = frozenset({"ctx", "op", "ops"})
_FIELDS: dict[type, tuple[str, ...]] = {}


def gate_enabled() -> bool:
    return os.environ.get("DPCHECK_AST_GATE", "1").strip().lower() not in ("0", "off", "false", "no")


def func_name(func: ast.AST) -> str:
    """Last segment of a name or attribute (``np.random.laplace`` -> ``laplace``); '' for anything else."""
    if isinstance(func, ast.Attribute):
        return func.attr
    if isinstance(func, ast.Name):
        return func.id
    return ""


def call_name(call: ast.Call) -> str:
    """Last segment of the called name; '' when the callee is not a name or attribute."""
    return func_name(call.func)


def number(node: ast.AST | None) -> float | None:
    """Value of a finite numeric literal (unary plus/minus included), else None."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        inner = number(node.operand)
        if inner is None:
            return None
        return -inner if isinstance(node.op, ast.USub) else inner
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        try:
            value = float(node.value)
        except OverflowError:
            return None
        return value if math.isfinite(value) else None
    return None


def last_name(node: ast.AST) -> str | None:
    """``c`` of ``a.b.c`` / ``c``; the string key of ``cfg["c"]``; else None."""
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Subscript):
        # the first string literal among the subscripts: ``cfg["eps"]``, ``x["a", 1]``
        elements = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        for element in elements:
            if isinstance(element, ast.Constant) and isinstance(element.value, (str, bytes)):
                return element.value if isinstance(element.value, str) else None
    return None


def product_factors(node: ast.AST) -> list[tuple[ast.AST, int]]:
    """Factors of a product/quotient as (factor, +1 numerator / -1 denominator), as the DP1 rules'."""
    while isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        node = node.operand
    if isinstance(node, ast.BinOp):
        if isinstance(node.op, (ast.Mult, ast.MatMult)):
            return product_factors(node.left) + product_factors(node.right)
        if isinstance(node.op, ast.Div):
            return product_factors(node.left) + [(f, -s) for f, s in product_factors(node.right)]
        if isinstance(node.op, ast.Pow) and (number(node.right) or 0) < 0:
            return [(f, -s) for f, s in product_factors(node.left)]
    return [(node, 1)]


def target_key(node: ast.AST) -> str | None:
    """``q``, ``self.q``; ``q[i]`` -> ``q`` (as the rules' ``target_key``)."""
    while isinstance(node, ast.Subscript):
        node = node.value
    return dotted(node)


def target_names(target: ast.AST) -> list[str]:
    """The names and ``obj.attr`` chains an assignment target binds (``x[i]`` binds nothing)."""
    if isinstance(target, (ast.Tuple, ast.List)):
        return [n for el in target.elts for n in target_names(el)]
    if isinstance(target, ast.Starred):
        return target_names(target.value)
    name = dotted(target)
    return [name] if name is not None else []


def spread(tainted: set[str], flows: list[tuple[list[str], set[str], bool]]) -> set[str]:
    """Fixpoint of value flow: ``(keys, names read, is a source)`` taints ``keys`` when the value
    is a source or reads a tainted name; ``tainted`` is updated in place and returned."""
    changed = True
    while changed:
        changed = False
        for keys, read, source in flows:
            if not set(keys) <= tainted and (source or read & tainted):
                tainted.update(keys)
                changed = True
    return tainted


def read_names(expr: ast.AST) -> set[str]:
    """Every dotted name and each of its prefixes under ``expr``: a superset of ``value_refs``."""
    out: set[str] = set()
    for node in walk(expr):
        if isinstance(node, (ast.Name, ast.Attribute)):
            name = dotted(node)
            if name is not None:
                parts = name.split(".")
                out.update(".".join(parts[:i]) for i in range(1, len(parts) + 1))
    return out


class AstFacts:
    """Facts of one module, each computed on first use."""

    def __init__(self, tree: ast.Module, source: str = "") -> None:
        self.tree = tree
        self.source = source
        self._memo: dict[str, object] = {}
        self._reached: dict[int, list[ast.AST]] = {}

    def memo(self, key: str, compute: Callable[[], T]) -> T:
        """A value computed once per file (a rule's own fact), under ``key``."""
        if key not in self._memo:
            self._memo[key] = compute()
        return self._memo[key]  # type: ignore[no-any-return]

    @cached_property
    def _walked(self) -> tuple[dict[type, list[ast.AST]], dict[ast.AST, ast.AST]]:
        """One walk: the nodes by type and each node's parent (operators and contexts skipped)."""
        by_type: dict[type, list[ast.AST]] = {}
        parents: dict[ast.AST, ast.AST] = {}
        stack: list[ast.AST] = [self.tree]
        pop, push = stack.pop, stack.append
        fields_of = _FIELDS
        while stack:
            node = pop()
            kind = type(node)
            found = by_type.get(kind)
            if found is None:
                found = by_type[kind] = []
            found.append(node)
            fields = fields_of.get(kind)
            if fields is None:
                fields = fields_of[kind] = tuple(f for f in kind._fields if f not in _SKIPPED_FIELDS)
            for name in fields:
                value = getattr(node, name, None)
                if type(value) is list:
                    for item in value:
                        if isinstance(item, ast.AST):
                            parents[item] = node
                            push(item)
                elif isinstance(value, ast.AST):
                    parents[value] = node
                    push(value)
        return by_type, parents

    @property
    def _by_type(self) -> dict[type, list[ast.AST]]:
        return self._walked[0]

    @property
    def parents(self) -> dict[ast.AST, ast.AST]:
        return self._walked[1]

    def enclosing_function(self, node: ast.AST) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        """The innermost function whose subtree holds ``node`` (decorators and defaults included)."""
        parents = self.parents
        cur = parents.get(node)
        while cur is not None and not isinstance(cur, FUNCTIONS):
            cur = parents.get(cur)
        return cur  # type: ignore[return-value]

    def functions_holding(self, nodes: list[ast.AST]) -> set[int]:
        """Ids of every function whose subtree holds one of ``nodes`` (all enclosing levels)."""
        parents = self.parents
        out: set[int] = set()
        for node in nodes:
            cur = parents.get(node)
            while cur is not None:
                if isinstance(cur, FUNCTIONS):
                    if id(cur) in out:
                        break  # its enclosing functions are in already
                    out.add(id(cur))
                cur = parents.get(cur)
        return out

    def nodes(self, *kinds: type) -> list[ast.AST]:
        by_type = self._by_type
        if len(kinds) == 1:
            return by_type.get(kinds[0], [])
        return [n for k in kinds for n in by_type.get(k, [])]

    @cached_property
    def may_have_dp_context(self) -> bool:
        """Could any scope have DP context (a superset of ``DPContexts.any_dp``)?"""
        from dpcheck.analysis.astcontext import may_have_dp_context

        return may_have_dp_context(self)

    @property
    def calls(self) -> list[ast.Call]:
        return self.nodes(ast.Call)  # type: ignore[return-value]

    @property
    def functions(self) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
        return self.nodes(*FUNCTIONS)  # type: ignore[return-value]

    @cached_property
    def aliases(self) -> dict[str, set[str]]:
        """Local name -> every qualified name an import anywhere in the file binds it to
        (``np`` -> {``numpy``}, ``ln`` -> {``numpy.log``})."""
        out: dict[str, set[str]] = {}
        for node in self.nodes(ast.Import):
            for alias in node.names:  # type: ignore[attr-defined]
                if alias.asname:
                    out.setdefault(alias.asname, set()).add(alias.name)
                else:
                    head = alias.name.split(".")[0]
                    out.setdefault(head, set()).add(head)
        for node in self.nodes(ast.ImportFrom):
            module = node.module or ""  # type: ignore[attr-defined]
            for alias in node.names:  # type: ignore[attr-defined]
                if alias.name != "*":
                    full = f"{module}.{alias.name}" if module else alias.name
                    out.setdefault(alias.asname or alias.name, set()).add(full)
        return out

    def qualified(self, name: str) -> set[str]:
        """``name`` with its head expanded through every import alias of it (and as written)."""
        head, _, rest = name.partition(".")
        out = {name}
        for full in self.aliases.get(head, ()):
            out.add(f"{full}.{rest}" if rest else full)
        return out

    def call_lasts(self, call: ast.Call) -> set[str]:
        """The called name's last segment as written and after expanding an import alias."""
        name = dotted(call.func)
        if name is None:
            return {call_name(call)}
        return {q.rsplit(".", 1)[-1] for q in self.qualified(name)}

    @cached_property
    def called(self) -> frozenset[str]:
        """Every called name's last segment, as written and alias-expanded."""
        return frozenset(n for call in self.calls for n in self.call_lasts(call))

    def calls_any(self, names: frozenset[str] | set[str]) -> bool:
        return not self.called.isdisjoint(names)

    @cached_property
    def identifiers(self) -> frozenset[str]:
        """Every identifier-shaped token of the source text (code, strings and comments alike)."""
        return frozenset(_IDENT.findall(self.source))

    @cached_property
    def numbers(self) -> frozenset[float]:
        """Values of the numeric literals (without sign)."""
        out: set[float] = set()
        for node in self.nodes(ast.Constant):
            value = number(node)
            if value is not None:
                out.add(value)
        return frozenset(out)

    def binops(self, op: type) -> list[ast.BinOp]:
        return [n for n in self.nodes(ast.BinOp) if isinstance(n.op, op)]  # type: ignore[attr-defined]

    def augassigns(self, op: type) -> list[ast.AugAssign]:
        return [n for n in self.nodes(ast.AugAssign) if isinstance(n.op, op)]  # type: ignore[attr-defined]

    @cached_property
    def _referents(self) -> tuple[dict[str, list[ast.AST]], dict[str, list[ast.AST]], dict[str, list[ast.AST]]]:
        """Assigned values by name, by attribute name, and return values by function name."""
        names: dict[str, list[ast.AST]] = {}
        attrs: dict[str, list[ast.AST]] = {}
        returns: dict[str, list[ast.AST]] = {}
        for node in self.nodes(ast.Assign, ast.AugAssign, ast.AnnAssign, ast.NamedExpr):
            value = node.value  # type: ignore[attr-defined]
            if value is None:
                continue
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]  # type: ignore[attr-defined]
            for target in targets:
                for sub in walk(target):
                    if isinstance(sub, ast.Name):
                        names.setdefault(sub.id, []).append(value)
                    elif isinstance(sub, ast.Attribute):
                        attrs.setdefault(sub.attr, []).append(value)
        for fn in self.functions:
            found = returns.setdefault(fn.name, [])
            for sub in walk(fn):
                if isinstance(sub, ast.Return) and sub.value is not None:
                    found.append(sub.value)
        return names, attrs, returns

    def resolutions(self, expr: ast.AST, hops: int = 6) -> list[ast.AST]:
        """``expr`` and every value a chain of plain names / ``self`` attributes starting at it may
        hold (all assigned values, not only a single one): a superset of ``resolve_simple``."""
        names, attrs, _ = self._referents
        out = [expr]
        seen = {id(expr)}
        current = [expr]
        for _ in range(hops):
            found: list[ast.AST] = []
            for e in current:
                if isinstance(e, ast.Name):
                    found.extend(names.get(e.id, ()))
                elif isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name) and e.value.id in ("self", "cls"):
                    found.extend(attrs.get(e.attr, ()))
            current = [v for v in found if id(v) not in seen]
            seen.update(id(v) for v in current)
            out.extend(current)
            if not current:
                break
        return out

    def reach(self, expr: ast.AST, limit: int = 20_000) -> list[ast.AST]:
        """Nodes of ``expr`` and of every value its names, ``self``/``cls`` attributes and calls may
        refer to, transitively: a superset of the DP1 rules' ``Resolver.expand`` (which follows
        one scope's bindings, module functions and methods, for a few hops)."""
        cached = self._reached.get(id(expr))
        if cached is None:
            cached = self._reached[id(expr)] = self.reach_all([expr], limit)
        return cached

    def reach_all(self, roots: list[ast.AST], limit: int = 50_000) -> list[ast.AST]:
        """``reach`` of several expressions at once (their union); ends with a marker
        (``reach_cut``) when ``limit`` nodes were collected before the end."""
        names, attrs, returns = self._referents
        out: list[ast.AST] = []
        seen: set[int] = set()
        stack = list(roots)
        while stack and len(out) < limit:
            root = stack.pop()
            if id(root) in seen:
                continue
            seen.add(id(root))
            for node in walk(root):
                out.append(node)
                if isinstance(node, ast.Name):
                    stack.extend(names.get(node.id, ()))
                elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                        and node.value.id in ("self", "cls"):
                    stack.extend(attrs.get(node.attr, ()))
                elif isinstance(node, ast.Call):
                    func = node.func
                    callee = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
                    if callee is not None:
                        stack.extend(returns.get(callee, ()))
        if stack:
            out.append(_UNKNOWN)  # the limit was hit: callers must treat the result as "anything"
        return out


#: marks a ``reach`` cut short by its limit
_UNKNOWN = ast.Pass()


def reach_cut(nodes: list[ast.AST]) -> bool:
    return bool(nodes) and nodes[-1] is _UNKNOWN


def unread_param(facts: AstFacts, vocabulary: frozenset[str]) -> bool:
    """Some function has a parameter whose name has a word of ``vocabulary`` and that no ``Name`` of its body
    reads (``def laplace(x, sens, epsilon): return x + noise(sens)``)."""
    from dpcheck.analysis.syntax import words

    for fn in facts.functions:
        args = fn.args
        params = [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs) if words(a.arg) & vocabulary]
        if not params:
            continue
        named = {n.id for stmt in fn.body for n in ast.walk(stmt) if isinstance(n, ast.Name)}
        if any(p not in named for p in params):
            return True
    return False
