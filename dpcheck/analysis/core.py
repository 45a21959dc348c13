"""``FileAnalysis``: the per-file facts every rule shares, each part built on first use."""
from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

import libcst as cst

from dpcheck.analysis.acknowledged import Acknowledgements
from dpcheck.analysis.dpcontext import DPContext, DPContexts
from dpcheck.analysis.index import Binding, Scope, SyntaxIndex
from dpcheck.analysis.positions import Positions
from dpcheck.analysis.syntax import COMPREHENSIONS, dotted, value_refs
from dpcheck.analysis.taint import Origin, PrivateData, has_training_step, is_noise_expr


class FileAnalysis:
    def __init__(self, module: cst.Module, source: str = "",
                 line_of: Callable[[cst.CSTNode], int] | None = None) -> None:
        self.module = module
        self.source = source
        self._line_of = line_of
        self._index: SyntaxIndex | None = None
        self._dp: DPContexts | None = None
        self._private: PrivateData | None = None
        self._ack: Acknowledgements | None = None
        self._code: dict[cst.CSTNode, str] = {}

    # ---- parts -----------------------------------------------------------------------------
    @property
    def index(self) -> SyntaxIndex:
        """Parent links, pre-order positions, nodes by type, imports, bindings."""
        if self._index is None:
            self._index = SyntaxIndex(self.module)
        return self._index

    @property
    def contexts(self) -> DPContexts:
        if self._dp is None:
            self._dp = DPContexts(self.index, self.source, self.qualify)
        return self._dp

    @property
    def private_data(self) -> PrivateData:
        if self._private is None:
            self._private = PrivateData(self.index, self.qualify)
        return self._private

    @property
    def acknowledgements(self) -> Acknowledgements:
        if self._ack is None:
            self._ack = Acknowledgements(self.index, self.source, self.line_of)
        return self._ack

    def line_of(self, node: cst.CSTNode) -> int:
        if self._line_of is None:
            positions = Positions(self.module, self.source or self.module.code, self.index.parents)
            self._line_of = lambda n: positions[n].start.line
        return self._line_of(node)

    # ---- names -----------------------------------------------------------------------------
    def qualify(self, name: str) -> str:
        """A dotted name with its head's import alias expanded (``np.exp`` -> ``numpy.exp``)."""
        head, _, rest = name.partition(".")
        full = self.index.imports.get(head)
        if full is None:
            return name
        return f"{full}.{rest}" if rest else full

    def qualified_name(self, node: cst.CSTNode) -> str | None:
        """``np.random.normal`` -> ``numpy.random.normal``; for a Call, of what it calls."""
        if type(node) is cst.Call:
            node = node.func  # type: ignore[attr-defined]
        elif type(node) is cst.Decorator:
            node = node.decorator  # type: ignore[attr-defined]
        name = dotted(node)
        return None if name is None else self.qualify(name)

    def binding(self, name_node: cst.Name) -> Binding | None:
        """The binding a Name refers to: the last one before it in its own scope, else the last
        one in the nearest enclosing scope that binds it (class bodies skipped for methods)."""
        index = self.index
        parent = index.parents.get(name_node)
        if type(parent) is cst.Attribute and parent.attr is name_node:  # type: ignore[union-attr]
            return None
        scope = index.scope_of(name_node)
        found = index.lookup(name_node.value, scope)
        if not found:
            return None
        if found[0].scope is scope:
            at = index.order.get(name_node, 0)
            before = [b for b in found if index.order[b.target] <= at]
            if before:
                return before[-1]
        return found[-1]

    def callee(self, call: cst.Call) -> cst.FunctionDef | None:
        """The module's own function a call runs: ``helper(x)`` (a uniquely named function) or
        ``self.method(x)`` (a method of the enclosing class)."""
        return self.index.callee(call)

    def referents(self, expr: cst.CSTNode) -> list[cst.BaseExpression]:
        """Values ``expr`` may hold, one hop back, flow-insensitively: every value assigned to a
        Name in the scope that binds it, every ``self.attr = value`` of the enclosing class, the
        ``return`` values of a called function of the module. Empty when unknown."""
        index = self.index
        kind = type(expr)
        if kind is cst.Name:
            found = index.lookup(expr.value, index.scope_of(expr))  # type: ignore[attr-defined]
            return [b.value for b in found if b.value is not None]
        if kind is cst.Attribute and type(expr.value) is cst.Name and expr.value.value in ("self", "cls"):  # type: ignore[attr-defined]
            cls = index._class_of_scope(index.scope_of(expr))
            if cls is None:
                return []
            return [b.value for b in self.attribute_bindings(cls, expr.attr.value) if b.value is not None]  # type: ignore[attr-defined]
        if kind is cst.Call:
            fn = self.callee(expr)  # type: ignore[arg-type]
            if fn is not None:
                return [r.value for r in self.returns_of(fn) if r.value is not None]
        return []

    def resolve_local(self, name_node: cst.Name) -> cst.CSTNode | None:
        """The statement (Assign, FunctionDef, ClassDef, Param, Import, For…) binding a Name."""
        found = self.binding(name_node)
        return None if found is None else found.stmt

    def value_of(self, name_node: cst.Name) -> cst.BaseExpression | None:
        """The expression assigned to a Name by its binding (None for params/defs/imports)."""
        found = self.binding(name_node)
        return None if found is None else found.value

    # ---- DP context ------------------------------------------------------------------------
    def dp_context(self, node: cst.CSTNode) -> DPContext:
        return self.contexts.context_of(node)

    def in_dp_context(self, node: cst.CSTNode) -> bool:
        return self.contexts.in_dp_context(node)

    def has_dp_code(self) -> bool:
        """Does any function, class or the module of the file have DP context?"""
        return self.contexts.any_dp()

    def dp_generator_named(self) -> str | None:
        """The DP generator the module names in an identifier or string (``pategan``,
        ``"PATE-GAN"``, ``private-data-generation``), else None: such a module is DP code and
        its data-named values are its training data."""
        return self.contexts.generator_name

    # ---- private data ----------------------------------------------------------------------
    def is_private(self, expr: cst.CSTNode, *, allow_shape: bool = False) -> bool:
        """Is ``expr``'s value derived from private training data? Counts and types of the data
        (``len(X)``, ``X.shape[0]``) are not, unless ``allow_shape`` (which applies to ``expr``'s
        own structure; names assigned from counts are never private)."""
        return self.private_data.origin(expr, allow_shape=allow_shape) is not None

    def public_parameter(self, node: cst.CSTNode, name: str) -> bool:
        """``name`` is a parameter of the function around ``node`` that every call in this module
        fills with a value named public (``self.public_X``), directly or through callers."""
        fn = self.enclosing_function(node)
        return fn is not None and self.private_data.public_at_every_call(fn, name)

    def is_record_values(self, expr: cst.CSTNode) -> bool:
        """``is_private`` without counts/shapes: the values of records."""
        return self.private_data.origin(expr, allow_shape=False) is not None

    def origin(self, expr: cst.CSTNode, *, allow_shape: bool = False) -> Origin | None:
        return self.private_data.origin(expr, allow_shape=allow_shape)

    def private_origin(self, expr: cst.CSTNode, *, allow_shape: bool = False) -> str | None:
        found = self.private_data.origin(expr, allow_shape=allow_shape)
        return None if found is None else found.describe(self.line_of)

    def is_training_entry(self, fn: cst.FunctionDef) -> bool:
        from dpcheck.analysis.taint import is_entry_point

        return is_entry_point(fn, self.index)

    # ---- acknowledged leaks ----------------------------------------------------------------
    def acknowledged(self, node: cst.CSTNode) -> str | None:
        return self.acknowledgements.reason(node)

    # ---- navigation --------------------------------------------------------------------------
    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        return self.index.parents.get(node)

    def ancestors(self, node: cst.CSTNode) -> Iterator[cst.CSTNode]:
        return self.index.ancestors(node)

    def enclosing_function(self, node: cst.CSTNode) -> cst.FunctionDef | None:
        return self.index.enclosing_function(node)

    def enclosing_class(self, node: cst.CSTNode) -> cst.ClassDef | None:
        return self.index.enclosing_class(node)

    def scope_of(self, node: cst.CSTNode) -> Scope:
        return self.index.scope_of(node)

    def nodes(self, kind: type) -> list[cst.CSTNode]:
        """Every node of exactly type ``kind``, in pre-order (source order, except that a def's
        decorators come after its body)."""
        return self.index.nodes(kind)

    def inside(self, node: cst.CSTNode, container: cst.CSTNode) -> bool:
        return self.index.inside(node, container)

    def enclosing_loops(self, node: cst.CSTNode, *, comprehensions: bool = False) -> list[cst.CSTNode]:
        """Loops whose repeated part holds ``node``, innermost first, inside its function: the
        body of a ``for``/``while`` (not a ``for``'s iterable or ``else``) and, with
        ``comprehensions``, the element part of a comprehension."""
        out: list[cst.CSTNode] = []
        child = node
        for anc in self.index.ancestors(node):
            kind = type(anc)
            if kind in (cst.FunctionDef, cst.ClassDef, cst.Lambda):
                break
            if (kind is cst.For or kind is cst.While) and child is anc.body:  # type: ignore[attr-defined]
                out.append(anc)
            elif comprehensions and kind in COMPREHENSIONS and child is not anc.for_in:  # type: ignore[attr-defined]
                out.append(anc)
            child = anc
        return out

    def enclosing_statement(self, node: cst.CSTNode) -> cst.CSTNode:
        """The innermost simple or compound statement holding ``node`` (``node`` if it is one)."""
        for cur in (node, *self.index.ancestors(node)):
            if isinstance(cur, (cst.BaseSmallStatement, cst.BaseCompoundStatement)):
                return cur
        return node

    def functions_named(self, name: str) -> list[cst.FunctionDef]:
        return [f for f in self.index.nodes(cst.FunctionDef) if f.name.value == name]  # type: ignore[attr-defined, misc]

    def method(self, cls: cst.ClassDef, name: str) -> cst.FunctionDef | None:
        for stmt in cls.body.body:
            if type(stmt) is cst.FunctionDef and stmt.name.value == name:  # type: ignore[attr-defined]
                return stmt  # type: ignore[return-value]
        return None

    def bindings_in(self, scope: cst.CSTNode) -> dict[str, list[Binding]]:
        """Name (or ``self.attr``) -> its bindings directly in ``scope`` (a function, lambda,
        class or the module), each list in source order."""
        return self.index.bindings.get(scope, {})  # type: ignore[call-overload]

    def attribute_bindings(self, cls: cst.ClassDef, attr: str) -> list[Binding]:
        """Every ``self.attr = …`` in the methods of ``cls``."""
        return self.index.self_attrs.get(cls, {}).get(attr, [])

    def returns_of(self, fn: cst.FunctionDef) -> list[cst.Return]:
        """``return`` statements of ``fn`` itself (not of nested defs)."""
        return self.index.returns.get(fn, [])

    def trains(self, body: cst.CSTNode) -> bool:
        """Does ``body`` hold a training step (``backward``/``minimize``/``fit``/optimizer step)?"""
        return has_training_step(body)

    def derived_names(self, scope: cst.CSTNode, is_source: Callable[[cst.BaseExpression], bool],
                      seed: Iterable[str] = ()) -> set[str]:
        """Names (and ``self.x``) of ``scope`` whose value derives, transitively and regardless of
        order, from an expression ``is_source`` accepts or from a ``seed`` name. Loop targets
        derive from their iterable; tuple targets from the whole right-hand side."""
        pending = [(name, b.value) for name, found in self.bindings_in(scope).items()
                   for b in found if b.value is not None]
        tainted = set(seed)
        refs_of: dict[cst.CSTNode, set[str]] = {}
        changed = True
        while changed:
            changed = False
            for name, value in pending:
                if name in tainted:
                    continue
                read = refs_of.get(value)
                if read is None:
                    read = refs_of[value] = value_refs(value)
                if read & tainted or is_source(value):
                    tainted.add(name)
                    changed = True
        return tainted

    def is_noise(self, expr: cst.CSTNode) -> bool:
        """A random draw (or a sum of draws) used as noise."""
        return is_noise_expr(expr)

    def code(self, node: cst.CSTNode) -> str:
        text = self._code.get(node)
        if text is None:
            text = self._code[node] = self.module.code_for_node(node)
        return text
