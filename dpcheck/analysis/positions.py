"""Source positions of a few nodes without generating the whole module's code.

libcst's ``PositionProvider`` regenerates the entire module with position tracking, which costs
about twice the parse; a file with one finding pays it all. Here CPython's own parser (about a
tenth of libcst's cost) gives the first line of each statement, and only the innermost statement
holding a reported node (descending through class and function bodies) is regenerated, starting
at that line with the indentation of its block. Every regenerated statement is checked against
CPython's line; on any mismatch or unusual input the whole module is regenerated as before.
"""
from __future__ import annotations

import ast
import warnings
from collections.abc import Iterable, Iterator, Mapping

import libcst as cst
from libcst.metadata import CodeRange
from libcst.metadata import MetadataWrapper, PositionProvider
from libcst.metadata.position_provider import PositionProvidingCodegenState

_DESCEND = (cst.ClassDef, cst.FunctionDef)
_AST_DEFS = (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)


class Positions(Mapping[cst.CSTNode, CodeRange]):
    """``CodeRange`` of nodes of one module (what ``PositionProvider`` resolves to), computed
    piecewise on demand; iterating or sizing it computes the whole module."""

    def __init__(
        self, module: cst.Module, source: str, parents: Mapping[cst.CSTNode, cst.CSTNode] | None = None,
        tree: ast.Module | None = None,
    ) -> None:
        self.module = module
        self.source = source
        self._parents = parents
        self._ranges: dict[cst.CSTNode, CodeRange] = {}
        self._done: set[cst.CSTNode] = set()
        self._full = False
        self._tree: ast.Module | None = tree if tree is not None and self.ast_positions_hold(source) else None
        #: libcst statement -> its CPython counterpart (filled level by level)
        self._twin: dict[cst.CSTNode, ast.stmt] = {}

    def __getitem__(self, node: cst.CSTNode) -> CodeRange:
        found = self._ranges.get(node)
        if found is None:
            if self._full:
                raise KeyError(node)
            self.compute([node])
            found = self._ranges[node]
        return found

    def __iter__(self) -> Iterator[cst.CSTNode]:
        if not self._full:
            self._whole()
        return iter(self._ranges)

    def __len__(self) -> int:
        if not self._full:
            self._whole()
        return len(self._ranges)

    def __contains__(self, node: object) -> bool:
        if node in self._ranges:
            return True
        if not isinstance(node, cst.CSTNode) or self._full:
            return False
        return node is self.module or node in self._parents_map()

    def compute(self, nodes: Iterable[cst.CSTNode]) -> None:
        missing = [n for n in nodes if n not in self._ranges]
        if not missing or self._full:
            return
        try:
            for node in missing:
                if node not in self._ranges and not self._piece(node):
                    self._whole()
                    return
        except Exception:  # noqa: BLE001 - any surprise: fall back to libcst's own provider
            self._whole()

    # ---- whole module ----------------------------------------------------------------------
    def _whole(self) -> None:
        self._ranges = dict(MetadataWrapper(self.module, unsafe_skip_copy=True).resolve(PositionProvider))
        self._full = True

    # ---- one statement ---------------------------------------------------------------------
    def _parents_map(self) -> Mapping[cst.CSTNode, cst.CSTNode]:
        if self._parents is None:
            from dpcheck.analysis.index import SyntaxIndex

            self._parents = SyntaxIndex(self.module).parents
        return self._parents

    @staticmethod
    def ast_positions_hold(source: str) -> bool:
        """Whether CPython's line/column positions of ``source`` are libcst's."""
        return not ("\r" in source or "\f" in source or source.startswith("\ufeff"))

    def _ast(self) -> ast.Module | None:
        if self._tree is None:
            if not self.ast_positions_hold(self.source):
                return None
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                self._tree = ast.parse(self.source)
        return self._tree

    def _piece(self, node: cst.CSTNode) -> bool:
        tree = self._ast()
        if tree is None:
            return False
        parents = self._parents_map()
        chain = [node]
        cur = parents.get(node)
        while cur is not None:
            chain.append(cur)
            cur = parents.get(cur)
        chain.reverse()  # module first
        if chain[0] is not self.module:
            return False
        statements: list[cst.CSTNode] = list(self.module.body)
        twins: list[ast.stmt] = tree.body
        indent: list[str] = []
        i = 1
        target: cst.CSTNode | None = None
        target_twin: ast.stmt | None = None
        while i < len(chain):
            stmt = chain[i]
            twin = self._match(stmt, statements, twins)
            if twin is None:
                return False
            target, target_twin = stmt, twin
            # descend into a class/function body when the node lies inside it
            if isinstance(stmt, _DESCEND) and isinstance(twin, _AST_DEFS) and i + 2 < len(chain) \
                    and chain[i + 1] is stmt.body and isinstance(stmt.body, cst.IndentedBlock):
                block = stmt.body
                indent = [*indent, block.indent if block.indent is not None else self.module.default_indent]
                statements, twins = list(block.body), twin.body
                i += 2
                continue
            break
        if target is None or target_twin is None or target in self._done:
            return target in self._done
        return self._generate(target, target_twin, indent)

    def _match(self, stmt: cst.CSTNode, statements: list[cst.CSTNode], twins: list[ast.stmt]) -> ast.stmt | None:
        known = self._twin.get(stmt)
        if known is not None:
            return known
        k = 0
        for s in statements:
            if k >= len(twins):
                return None
            self._twin[s] = twins[k]
            k += len(s.body) if isinstance(s, cst.SimpleStatementLine) else 1
        return self._twin.get(stmt)

    def _generate(self, stmt: cst.CSTNode, twin: ast.stmt, indent: list[str]) -> bool:
        first_line = twin.lineno
        decorators = getattr(stmt, "decorators", ())
        before = len(getattr(stmt, "leading_lines", ()))
        if decorators:
            first_line = min(d.lineno for d in twin.decorator_list)  # type: ignore[attr-defined]
            before += len(decorators[0].leading_lines)
        provider = PositionProvider()
        state = PositionProvidingCodegenState(
            default_indent=self.module.default_indent,
            default_newline=self.module.default_newline,
            provider=provider,
        )
        state.line = first_line - before
        state.indent_tokens = list(indent)
        stmt._codegen(state)
        computed = provider._computed
        if computed[stmt].start.line != twin.lineno:
            return False
        self._ranges.update(computed)
        self._done.add(stmt)
        return True
