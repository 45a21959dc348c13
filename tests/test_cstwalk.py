"""The fast traversal reaches exactly the syntactic nodes libcst's own visitor reaches, entering a
parent before and leaving it after its children."""
from __future__ import annotations

from pathlib import Path

import libcst as cst
import pytest

from dpcheck.cstwalk import _LAYOUT, children, dispatch

ROOT = Path(__file__).resolve().parents[1]
FILES = sorted((ROOT / "vendored_impls").rglob("*.py"))[:12] + [ROOT / "dpcheck" / "rule.py"]
_LAYOUT_TYPES = (cst.BaseParenthesizableWhitespace, cst.Comma, cst.Dot, cst.Colon, cst.Semicolon,
                 cst.AssignEqual, cst.LeftParen, cst.RightParen, cst.LeftSquareBracket,
                 cst.RightSquareBracket, cst.LeftCurlyBrace, cst.RightCurlyBrace, cst.EmptyLine,
                 cst.TrailingWhitespace, cst.Newline, cst.Comment, cst.BaseBinaryOp, cst.BaseBooleanOp,
                 cst.BaseCompOp, cst.BaseUnaryOp, cst.BaseAugOp, cst.Asynchronous, cst.ParenthesizedWhitespace,
                 cst.ImportStar, cst.ParamStar, cst.ParamSlash,
                 cst.BitOr, cst.Equal)


class Libcst(cst.CSTVisitor):
    def __init__(self) -> None:
        self.seen: list[int] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        if not isinstance(node, _LAYOUT_TYPES):
            self.seen.append(id(node))
        return True


class Fast:
    """Records every node type through one handler per type, plus the nesting."""

    def __init__(self) -> None:
        self.seen: list[int] = []
        self.open: list[int] = []
        self.problems: list[str] = []


def recorder(module: cst.Module) -> Fast:
    """A fresh Fast subclass with a visit_/leave_ pair for every node type in ``module``."""
    methods = {}
    for kind in {type(n) for n in _all_nodes(module)}:
        def enter(self: Fast, node: cst.CSTNode) -> None:
            if not isinstance(node, _LAYOUT_TYPES):  # e.g. Slice.first_colon: walked, never visited
                self.seen.append(id(node))
            self.open.append(id(node))

        def leave(self: Fast, node: cst.CSTNode) -> None:
            if not self.open or self.open.pop() != id(node):
                self.problems.append(type(node).__name__)

        methods[f"visit_{kind.__name__}"] = enter
        methods[f"leave_{kind.__name__}"] = leave
    return type("Recorder", (Fast,), methods)()


def _all_nodes(node: cst.CSTNode) -> list[cst.CSTNode]:
    out, stack = [], [node]
    while stack:
        cur = stack.pop()
        out.append(cur)
        stack.extend(children(cur))
    return out


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_same_nodes_as_libcst_and_proper_nesting(path: Path) -> None:
    module = cst.parse_module(path.read_text(encoding="utf-8"))
    reference = Libcst()
    module.visit(reference)
    fast = recorder(module)
    dispatch(module, [fast])
    assert sorted(fast.seen) == sorted(reference.seen)
    assert not fast.problems and not fast.open


def test_layout_fields_are_not_walked_and_libcst_stubs_not_called() -> None:
    module = cst.parse_module("x = f(a, b)  # c\n")
    calls: list[str] = []

    class V(cst.BatchableCSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            calls.append("call")

        def visit_Comma(self, node: cst.Comma) -> None:  # a layout node: never reached
            calls.append("comma")

    dispatch(module, [V()])
    assert calls == ["call"]
    assert "comma" in _LAYOUT and "whitespace" in _LAYOUT
