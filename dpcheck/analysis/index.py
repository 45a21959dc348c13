"""One iterative walk over a module: parent links, pre-order positions, nodes by type, imports,
and the bindings of every scope (assignments, parameters, defs, imports, loop targets)."""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import libcst as cst

from dpcheck.analysis.syntax import all_params, dotted, preorder_of, target_nodes
from dpcheck.cstwalk import Preorder

Scope = cst.Module | cst.FunctionDef | cst.ClassDef | cst.Lambda

_SCOPES = (cst.FunctionDef, cst.ClassDef, cst.Lambda)
_SCOPE_KINDS = frozenset(_SCOPES)
#: nodes whose enclosing scope the walk records (the rest find it through their ancestors)
_OWNED = frozenset({
    cst.Assign, cst.AnnAssign, cst.AugAssign, cst.NamedExpr, cst.For, cst.CompFor, cst.Return,
    cst.FunctionDef, cst.ClassDef, cst.Lambda, cst.Import, cst.ImportFrom, cst.AsName, cst.Call,
})


@dataclass(frozen=True)
class Binding:
    """``name`` (a local name or ``self.attr``) bound at ``target`` by ``stmt`` to ``value``.

    ``kind``: assign | augassign | unpack | param | def | class | import | loop | with.
    ``value`` is None for parameters, defs, classes and imports.
    """

    name: str
    target: cst.CSTNode
    value: cst.BaseExpression | None
    stmt: cst.CSTNode
    kind: str
    scope: Scope


class SyntaxIndex:
    def __init__(self, module: cst.Module) -> None:
        self.module = module
        self.parents: dict[cst.CSTNode, cst.CSTNode] = {}
        self.order: dict[cst.CSTNode, int] = {}
        self.by_type: dict[type, list[cst.CSTNode]] = {}
        self.owner: dict[cst.CSTNode, Scope] = {}
        #: local name -> imported dotted name (``np`` -> ``numpy``, ``r`` -> ``torch.randn``)
        self.imports: dict[str, str] = {}
        self._bindings: dict[Scope, dict[str, list[Binding]]] | None = None
        self._self_attrs: dict[cst.ClassDef, dict[str, list[Binding]]] | None = None
        self._returns: dict[cst.CSTNode, list[cst.Return]] | None = None
        self._functions_by_name: dict[str, list[cst.FunctionDef]] | None = None
        self._methods: dict[cst.ClassDef, dict[str, cst.FunctionDef]] | None = None
        self._walk()

    # ---- the walk --------------------------------------------------------------------------
    def _walk(self) -> None:
        """Fill the dicts from the module's pre-order (the analysed module's shared one, else its own)."""
        preorder = preorder_of(self.module) or Preorder(self.module)
        parents, order, by_type, owner = self.parents, self.order, self.by_type, self.owner
        nodes, sizes = preorder.nodes, preorder.sizes
        #: (end of the scope's subtree, scope), innermost last
        scopes: list[tuple[int, Scope]] = [(len(nodes), self.module)]
        for i, node in enumerate(nodes):
            while scopes[-1][0] <= i:
                scopes.pop()
            order[node] = i
            kind = type(node)
            bucket = by_type.get(kind)
            if bucket is None:
                by_type[kind] = [node]
            else:
                bucket.append(node)
            end = i + sizes[i]
            if kind in _OWNED:
                owner[node] = scopes[-1][1]
                if kind is cst.Import or kind is cst.ImportFrom:
                    self._add_import(node)  # type: ignore[arg-type]
                if kind in _SCOPE_KINDS:
                    scopes.append((end, node))  # type: ignore[arg-type]
            j = i + 1
            while j < end:
                parents[nodes[j]] = node
                j += sizes[j]

    def _add_import(self, node: cst.Import | cst.ImportFrom) -> None:
        if isinstance(node, cst.Import):
            for alias in node.names:
                full = dotted(alias.name) or ""
                if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                    self.imports[alias.asname.name.value] = full
                else:
                    head = full.split(".")[0]
                    self.imports.setdefault(head, head)
            return
        if isinstance(node.names, cst.ImportStar):
            return
        base = "." * len(node.relative) + (dotted(node.module) or "") if node.module is not None else "." * len(node.relative)
        for alias in node.names:
            name = dotted(alias.name) or ""
            local = name
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                local = alias.asname.name.value
            sep = "" if base.endswith(".") or not base else "."
            self.imports[local] = f"{base}{sep}{name}"

    # ---- navigation ------------------------------------------------------------------------
    def nodes(self, kind: type) -> list[cst.CSTNode]:
        return self.by_type.get(kind, [])

    def ancestors(self, node: cst.CSTNode) -> Iterator[cst.CSTNode]:
        cur = self.parents.get(node)
        while cur is not None:
            yield cur
            cur = self.parents.get(cur)

    def enclosing_function(self, node: cst.CSTNode) -> cst.FunctionDef | None:
        for anc in self.ancestors(node):
            if type(anc) is cst.FunctionDef:
                return anc  # type: ignore[return-value]
        return None

    def enclosing_class(self, node: cst.CSTNode) -> cst.ClassDef | None:
        for anc in self.ancestors(node):
            if type(anc) is cst.ClassDef:
                return anc  # type: ignore[return-value]
        return None

    def scope_of(self, node: cst.CSTNode) -> Scope:
        """The innermost function/lambda/class whose body holds ``node``, else the module."""
        known = self.owner.get(node)
        if known is not None:
            return known
        for anc in self.ancestors(node):
            if type(anc) in (cst.FunctionDef, cst.ClassDef, cst.Lambda):
                return anc  # type: ignore[return-value]
        return self.module

    def inside(self, node: cst.CSTNode, container: cst.CSTNode) -> bool:
        return node is container or any(a is container for a in self.ancestors(node))

    def method_class(self, fn: cst.FunctionDef) -> cst.ClassDef | None:
        """The class ``fn`` is a method of (directly in its body), else None."""
        scope = self.owner.get(fn)
        return scope if type(scope) is cst.ClassDef else None  # type: ignore[return-value]

    # ---- bindings --------------------------------------------------------------------------
    @property
    def bindings(self) -> dict[Scope, dict[str, list[Binding]]]:
        if self._bindings is None:
            self._build_bindings()
        return self._bindings  # type: ignore[return-value]

    @property
    def self_attrs(self) -> dict[cst.ClassDef, dict[str, list[Binding]]]:
        """class -> attribute -> every ``self.attr = value`` in its methods."""
        if self._self_attrs is None:
            self._build_bindings()
        return self._self_attrs  # type: ignore[return-value]

    @property
    def returns(self) -> dict[cst.CSTNode, list[cst.Return]]:
        if self._returns is None:
            out: dict[cst.CSTNode, list[cst.Return]] = {}
            for ret in self.nodes(cst.Return):
                out.setdefault(self.owner[ret], []).append(ret)  # type: ignore[arg-type]
            self._returns = out
        return self._returns

    def _build_bindings(self) -> None:
        table: dict[Scope, dict[str, list[Binding]]] = {}
        attrs: dict[cst.ClassDef, dict[str, list[Binding]]] = {}
        owner = self.owner

        def bind(name: str, target: cst.CSTNode, value: cst.BaseExpression | None, stmt: cst.CSTNode,
                 kind: str, scope: Scope) -> None:
            table.setdefault(scope, {}).setdefault(name, []).append(Binding(name, target, value, stmt, kind, scope))

        def bind_target(target: cst.CSTNode, value: cst.BaseExpression | None, stmt: cst.CSTNode, kind: str) -> None:
            scope = owner[stmt]
            if isinstance(target, (cst.Tuple, cst.List)) and isinstance(value, (cst.Tuple, cst.List)) \
                    and len(target.elements) == len(value.elements) \
                    and not any(isinstance(e, cst.StarredElement) for e in (*target.elements, *value.elements)):
                for t, v in zip(target.elements, value.elements):
                    bind_target(t.value, v.value, stmt, kind)
                return
            unpack = isinstance(target, (cst.Tuple, cst.List))
            for leaf in target_nodes(target):
                how = "unpack" if unpack else kind
                if type(leaf) is cst.Name:
                    bind(leaf.value, leaf, value, stmt, how, scope)  # type: ignore[attr-defined]
                elif type(leaf) is cst.Attribute and type(leaf.value) is cst.Name \
                        and leaf.value.value in ("self", "cls"):  # type: ignore[attr-defined]
                    cls = self._class_of_scope(scope)
                    name = f"{leaf.value.value}.{leaf.attr.value}"  # type: ignore[attr-defined]
                    bind(name, leaf, value, stmt, how, scope)
                    if cls is not None:
                        attrs.setdefault(cls, {}).setdefault(leaf.attr.value, []).append(  # type: ignore[attr-defined]
                            Binding(name, leaf, value, stmt, how, scope))

        for node in self.nodes(cst.Assign):
            for t in node.targets:  # type: ignore[attr-defined]
                bind_target(t.target, node.value, node, "assign")  # type: ignore[attr-defined]
        for node in self.nodes(cst.AnnAssign):
            if node.value is not None:  # type: ignore[attr-defined]
                bind_target(node.target, node.value, node, "assign")  # type: ignore[attr-defined]
        for node in self.nodes(cst.AugAssign):
            bind_target(node.target, node.value, node, "augassign")  # type: ignore[attr-defined]
        for node in self.nodes(cst.NamedExpr):
            bind_target(node.target, node.value, node, "assign")  # type: ignore[attr-defined]
        for node in (*self.nodes(cst.For), *self.nodes(cst.CompFor)):
            bind_target(node.target, node.iter, node, "loop")  # type: ignore[attr-defined]
        for node in self.nodes(cst.AsName):
            parent = self.parents.get(node)
            value = parent.item if isinstance(parent, cst.WithItem) else None
            if isinstance(parent, (cst.ImportAlias,)):
                continue
            scope = self.scope_of(node)
            for leaf in target_nodes(node.name):  # type: ignore[attr-defined]
                if type(leaf) is cst.Name:
                    bind(leaf.value, leaf, value, parent or node, "with", scope)  # type: ignore[attr-defined]
        for node in self.nodes(cst.FunctionDef):
            bind(node.name.value, node, None, node, "def", owner[node])  # type: ignore[attr-defined]
            for param in all_params(node):  # type: ignore[arg-type]
                bind(param.name.value, param, None, param, "param", node)  # type: ignore[arg-type]
        for node in self.nodes(cst.Lambda):
            for param in all_params(node):  # type: ignore[arg-type]
                bind(param.name.value, param, None, param, "param", node)  # type: ignore[arg-type]
        for node in self.nodes(cst.ClassDef):
            bind(node.name.value, node, None, node, "class", owner[node])  # type: ignore[attr-defined]
        for node in (*self.nodes(cst.Import), *self.nodes(cst.ImportFrom)):
            names = node.names  # type: ignore[attr-defined]
            if isinstance(names, cst.ImportStar):
                continue
            for alias in names:
                if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                    local = alias.asname.name.value
                else:
                    local = (dotted(alias.name) or "").split(".")[0] if isinstance(node, cst.Import) \
                        else dotted(alias.name) or ""
                bind(local, alias, None, node, "import", owner[node])
        for per_scope in table.values():
            for found in per_scope.values():
                found.sort(key=lambda b: self.order[b.target])
        self._bindings, self._self_attrs = table, attrs

    def _class_of_scope(self, scope: Scope) -> cst.ClassDef | None:
        """The class whose method (or nested function of a method) ``scope`` is."""
        cur: cst.CSTNode | None = scope
        while cur is not None and type(cur) is not cst.Module:
            parent_scope = self.owner.get(cur)
            if type(parent_scope) is cst.ClassDef:
                return parent_scope  # type: ignore[return-value]
            cur = parent_scope
        return None

    def _index_functions(self) -> None:
        if self._functions_by_name is None:
            by_name: dict[str, list[cst.FunctionDef]] = {}
            methods: dict[cst.ClassDef, dict[str, cst.FunctionDef]] = {}
            for fn in self.nodes(cst.FunctionDef):
                by_name.setdefault(fn.name.value, []).append(fn)  # type: ignore[attr-defined, arg-type]
                cls = self.method_class(fn)  # type: ignore[arg-type]
                if cls is not None:
                    methods.setdefault(cls, {})[fn.name.value] = fn  # type: ignore[attr-defined, assignment]
            self._functions_by_name, self._methods = by_name, methods

    def unique_function(self, name: str) -> cst.FunctionDef | None:
        """The one function or method of the module named ``name``, else None."""
        self._index_functions()
        found = self._functions_by_name.get(name)  # type: ignore[union-attr]
        return found[0] if found and len(found) == 1 else None

    def callee(self, call: cst.Call) -> cst.FunctionDef | None:
        """The module's own function a call runs: a uniquely named ``helper(x)`` or
        ``self.method(x)`` of the enclosing class."""
        self._index_functions()
        func = call.func
        if type(func) is cst.Name:
            return self.unique_function(func.value)  # type: ignore[attr-defined]
        if type(func) is cst.Attribute and type(func.value) is cst.Name and func.value.value in ("self", "cls"):  # type: ignore[attr-defined]
            cls = self._class_of_scope(self.scope_of(call))
            if cls is not None:
                return self._methods.get(cls, {}).get(func.attr.value)  # type: ignore[attr-defined, union-attr]
        return None

    def lookup(self, name: str, scope: Scope, at: cst.CSTNode | None = None) -> list[Binding]:
        """Bindings of ``name`` visible from ``scope`` (Python's rule: class bodies are not
        enclosing scopes of their methods). Within ``scope`` those before ``at`` come first."""
        first = True
        cur: Scope | None = scope
        while cur is not None:
            if first or type(cur) is not cst.ClassDef:
                found = self.bindings.get(cur, {}).get(name)
                if found:
                    return found
            first = False
            cur = None if type(cur) is cst.Module else self.owner.get(cur, self.module)
        return []
