"""Helpers of rules DP201-DP203 and DP301 over the shared analysis core.

``index_for(ctx)`` is the DP2 rules' view of ``ctx.analysis`` (the file's one core index, built
on first use); the generic node helpers come from :mod:`dpcheck.analysis.syntax`. What is left
here is the DP2 families' own vocabulary (teacher loops, range arguments, training steps).
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

import libcst as cst

from dpcheck.analysis import FileAnalysis
from dpcheck.analysis.view import CoreView
from dpcheck.analysis.syntax import call_name, dotted, target_names, walk, words
from dpcheck.cstwalk import children

LoopNode = cst.For | cst.While
COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)
SCOPES = (cst.FunctionDef, cst.Lambda, cst.ClassDef, *COMPREHENSIONS)


class _SubtreeEnd:
    """``last[node]``: the pre-order position of the last node of ``node``'s subtree (lazy)."""

    def __init__(self, order: dict[cst.CSTNode, int]) -> None:
        self._order = order
        self._known: dict[cst.CSTNode, int] = {}

    def __getitem__(self, node: cst.CSTNode) -> int:
        known = self._known.get(node)
        if known is None:
            cur = node
            while True:
                kids = children(cur)
                if not kids:
                    break
                cur = kids[-1]
            known = self._known[node] = self._order[cur]
        return known


class Dp2Index(CoreView):
    """The DP2 rules' view of the file's shared core index (``ctx.analysis``): no walk of its own."""

    def __init__(self, fa: FileAnalysis) -> None:
        super().__init__(fa)
        self.last = _SubtreeEnd(fa.index.order)
        self.code = fa.code
        self._words: dict[cst.CSTNode, str] = {}
        self._loops: list[cst.CSTNode] | None = None
        self._attr_reads: set[str] | None = None

    @property
    def loops(self) -> list[cst.CSTNode]:
        """``for`` and ``while`` statements in source order."""
        if self._loops is None:
            self._loops = sorted((*self.fa.nodes(cst.For), *self.fa.nodes(cst.While)), key=self.order.__getitem__)
        return self._loops

    def attribute_read(self, attr: str) -> bool:
        """Is an attribute named ``attr`` read anywhere in the module (not only assigned), or
        named in a string (``getattr(self, "attr")``)? ``self._binary_columns = …`` that nothing
        reads is not used downstream."""
        if self._attr_reads is None:
            reads: set[str] = set()
            for node in self.fa.nodes(cst.Attribute):
                parent = self.parents.get(node)
                if isinstance(parent, cst.AssignTarget) and parent.target is node:
                    continue
                if isinstance(parent, cst.AnnAssign) and parent.target is node:
                    continue
                reads.add(node.attr.value)  # type: ignore[attr-defined]
            self._attr_reads = reads
        if attr in self._attr_reads:
            return True
        code = self.fa.source or ""
        return f'"{attr}"' in code or f"'{attr}'" in code

    def inside(self, node: cst.CSTNode, container: cst.CSTNode) -> bool:
        pos = self.order[node]
        return self.order[container] <= pos <= self.last[container]

    def enclosing_loops(self, node: cst.CSTNode) -> list[cst.CSTNode]:
        """Loops (for/while/comprehension) around ``node`` inside its function, innermost first."""
        out: list[cst.CSTNode] = []
        for anc in self.ancestors(node):
            if isinstance(anc, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                break
            if isinstance(anc, (cst.For, cst.While, *COMPREHENSIONS)):
                out.append(anc)
        return out

    def scope_of(self, node: cst.CSTNode) -> cst.CSTNode:
        return self.enclosing_function(node) or self.module

    def text_of(self, node: cst.CSTNode) -> str:
        """Identifiers and string literals of ``node``, one per line (a cheap stand-in for its code)."""
        text = self._words.get(node)
        if text is None:
            parts: list[str] = []
            if type(node) in (cst.FunctionDef, cst.ClassDef):
                parts.append(node.name.value)
            for sub in walk(node):
                kind = type(sub)
                if kind is cst.Name:
                    parts.append(sub.value)
                elif kind is cst.SimpleString:
                    parts.append(sub.value)
            text = self._words[node] = "\n".join(parts)
        return text


def index_for(ctx: object) -> Dp2Index:
    cached = getattr(ctx, "_dp2_index", None)
    if cached is None:
        cached = Dp2Index(ctx.analysis)
        ctx._dp2_index = cached  # type: ignore[attr-defined]
    return cached


# ---- expressions ---------------------------------------------------------------------------
def identifiers(node: cst.CSTNode) -> set[str]:
    """Plain identifiers (names and attribute names) in ``node``."""
    out: set[str] = set()
    for sub in walk(node):
        if isinstance(sub, cst.Name):
            out.add(sub.value)
        elif isinstance(sub, cst.Attribute):
            out.add(sub.attr.value)
    return out


def assigned(stmt: cst.CSTNode) -> tuple[set[str], cst.BaseExpression | None]:
    """Names bound by a simple assignment-like node and the value expression."""
    if isinstance(stmt, cst.Assign):
        names: set[str] = set()
        for t in stmt.targets:
            names |= target_names(t.target)
        return names, stmt.value
    if isinstance(stmt, cst.AnnAssign):
        return target_names(stmt.target), stmt.value
    if isinstance(stmt, cst.AugAssign):
        return target_names(stmt.target), stmt.value
    if isinstance(stmt, cst.NamedExpr):
        return target_names(stmt.target), stmt.value
    return set(), None


def bound_in(node: cst.CSTNode) -> set[str]:
    """Every name bound anywhere inside ``node`` (assignments, loop targets, with/except names)."""
    out: set[str] = set()
    for sub in walk(node):
        if isinstance(sub, (cst.Assign, cst.AnnAssign, cst.AugAssign, cst.NamedExpr)):
            out |= assigned(sub)[0]
        elif isinstance(sub, (cst.For, cst.CompFor)):
            out |= target_names(sub.target)
        elif isinstance(sub, cst.AsName):
            out |= target_names(sub.name)
    return out


def range_arg(expr: cst.BaseExpression | None) -> cst.BaseExpression | None:
    """``n`` for ``range(n)`` / ``range(0, n)`` / ``tqdm(range(n))`` / ``trange(n)``."""
    if not isinstance(expr, cst.Call):
        return None
    name = call_name(expr)
    if name in {"tqdm", "track", "enumerate"} and expr.args:
        return range_arg(expr.args[0].value)
    if name in {"range", "trange", "xrange"} and expr.args:
        positional = [a.value for a in expr.args if a.keyword is None]
        if not positional:
            return None
        return positional[0] if len(positional) == 1 else positional[1]
    return None


def functions_by_name(index: Dp2Index) -> dict[str, list[cst.FunctionDef]]:
    out: dict[str, list[cst.FunctionDef]] = {}
    for fn in index.functions:
        out.setdefault(fn.name.value, []).append(fn)
    return out


def statements(body: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """Small statements and compound headers of ``body`` in source order, not entering nested defs."""
    for node in walk(body, into_scopes=False):
        if isinstance(node, (cst.Assign, cst.AnnAssign, cst.AugAssign, cst.Expr, cst.Return)):
            yield node


def any_word(names: Iterable[str], pattern: re.Pattern[str]) -> bool:
    return any(pattern.search(n) for n in names)


# ---- DP vocabulary -------------------------------------------------------------------------
PATE_RE = re.compile(r"(?<![A-Za-z])(?:pate|PATE|Pate)(?=$|[^a-z]|gan)(?![Nn][Tt])")  # not "Patent", "PATENTABLE"
NOISE_CALL = {
    "laplace", "normal", "gumbel", "randn", "standard_normal", "normal_", "exponential",
    "Laplace", "Normal", "gaussian", "randn_like",
}


def is_noise_call(call: cst.Call) -> bool:
    name = call_name(call) or ""
    if name in NOISE_CALL:
        return True
    lowered = name.lower()
    return any(w in lowered for w in ("laplace", "gauss", "noise", "dp_", "private", "noisy"))


def has_noise(node: cst.CSTNode) -> bool:
    return any(isinstance(n, cst.Call) and is_noise_call(n) for n in walk(node))


DATA_WORDS = {
    "x", "xs", "data", "df", "dataset", "train", "training", "real", "records", "table",
    "features", "raw", "inputs", "input", "samples", "rows", "orig", "original",
}


def data_like(name: str) -> bool:
    """Does an identifier look like a dataset (``X_train``, ``df``, ``real_data``, ``self.data``)?"""
    last = name.split(".")[-1]
    return bool(words(last) & DATA_WORDS) or last in {"X", "x", "D"}
