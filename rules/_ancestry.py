"""Parent-link navigation shared by the rule families' per-file indexes."""
from __future__ import annotations

from collections.abc import Iterator

import libcst as cst


class Ancestry:
    """Mixin: needs ``self.parents`` mapping each node to its parent."""

    parents: dict[cst.CSTNode, cst.CSTNode]

    def ancestors(self, node: cst.CSTNode) -> Iterator[cst.CSTNode]:
        cur = self.parents.get(node)
        while cur is not None:
            yield cur
            cur = self.parents.get(cur)

    def enclosing_function(self, node: cst.CSTNode) -> cst.FunctionDef | None:
        for anc in self.ancestors(node):
            if isinstance(anc, cst.FunctionDef):
                return anc
        return None

    def enclosing_class(self, node: cst.CSTNode) -> cst.ClassDef | None:
        for anc in self.ancestors(node):
            if isinstance(anc, cst.ClassDef):
                return anc
        return None
