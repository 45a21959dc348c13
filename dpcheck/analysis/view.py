"""A rule family's view of the file's one core index: the core's navigation under the names the
rule families use, plus node lists by type. Families subclass it with their own vocabulary."""
from __future__ import annotations

import libcst as cst

from dpcheck.analysis.core import FileAnalysis


class CoreView:
    def __init__(self, fa: FileAnalysis) -> None:
        self.fa = fa
        core = fa.index
        self.module = core.module
        self.parents = core.parents
        self.order = core.order
        self.imports = core.imports
        self.ancestors = core.ancestors
        self.enclosing_function = core.enclosing_function
        self.enclosing_class = core.enclosing_class

    @property
    def functions(self) -> list[cst.FunctionDef]:
        return self.fa.nodes(cst.FunctionDef)  # type: ignore[return-value]

    @property
    def classes(self) -> list[cst.ClassDef]:
        return self.fa.nodes(cst.ClassDef)  # type: ignore[return-value]

    @property
    def calls(self) -> list[cst.Call]:
        return self.fa.nodes(cst.Call)  # type: ignore[return-value]

    def qualify(self, expr: cst.BaseExpression) -> str | None:
        """Dotted name of ``expr`` with import aliases expanded (``np.exp`` -> ``numpy.exp``)."""
        return self.fa.qualified_name(expr) if type(expr) is not cst.Call else None
