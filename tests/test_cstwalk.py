"""The fast traversal reaches exactly the syntactic nodes libcst's own visitor reaches, entering a
parent before and leaving it after its children."""
from __future__ import annotations

from pathlib import Path

import libcst as cst
import pytest

from dpcheck.analysis import syntax
from dpcheck.cstwalk import _LAYOUT, Preorder, children, dispatch

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


class Events:
    """Every enter and leave, in order, through one handler per node type."""

    def __init__(self) -> None:
        self.events: list[tuple[str, int]] = []


def events_recorder(module: cst.Module) -> Events:
    methods = {}
    for kind in {type(n) for n in _all_nodes(module)}:
        def enter(self: Events, node: cst.CSTNode) -> None:
            self.events.append(("enter", id(node)))

        def leave(self: Events, node: cst.CSTNode) -> None:
            self.events.append(("leave", id(node)))

        methods[f"visit_{kind.__name__}"] = enter
        if kind is not cst.Name:  # some types have no leave handler
            methods[f"leave_{kind.__name__}"] = leave
    return type("EventsRecorder", (Events,), methods)()


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_preorder_dispatch_and_walk_match_the_stack_walks(path: Path) -> None:
    module = cst.parse_module(path.read_text(encoding="utf-8"))
    plain, ordered = events_recorder(module), events_recorder(module)
    dispatch(module, [plain])
    preorder = Preorder(module)
    dispatch(module, [ordered], preorder)
    assert ordered.events == plain.events
    assert [id(n) for n in preorder.nodes] == [i for kind, i in plain.events if kind == "enter"]
    subtrees = [n for n in preorder.nodes if type(n) in (cst.FunctionDef, cst.ClassDef, cst.SimpleStatementLine)]
    for into_scopes in (True, False):
        syntax.clear_walks()
        expected = [list(syntax.walk(n, into_scopes=into_scopes)) for n in [module, *subtrees]]
        syntax.clear_walks(preorder)
        sliced = [list(syntax.walk(n, into_scopes=into_scopes)) for n in [module, *subtrees]]
        syntax.clear_walks()
        assert sliced == expected


def test_node_classes_answer_isinstance_as_before() -> None:
    name = cst.Name("x")
    assert isinstance(name, cst.BaseExpression) and isinstance(name, cst.CSTNode)
    assert not isinstance(name, cst.Attribute) and not isinstance("x", cst.BaseExpression)
    assert issubclass(cst.Name, cst.BaseAssignTargetExpression) and not issubclass(cst.Name, cst.BaseStatement)


@pytest.mark.parametrize("path", FILES[:4], ids=[p.name for p in FILES[:4]])
def test_syntax_index_from_the_preorder_is_the_same(path: Path) -> None:
    from dpcheck.analysis.index import SyntaxIndex

    module = cst.parse_module(path.read_text(encoding="utf-8"))
    syntax.clear_walks()
    walked = SyntaxIndex(module)
    syntax.clear_walks(Preorder(module))
    sliced = SyntaxIndex(module)
    syntax.clear_walks()
    for a, b in ((walked.parents, sliced.parents), (walked.order, sliced.order), (walked.owner, sliced.owner),
                 (walked.by_type, sliced.by_type), (walked.imports, sliced.imports)):
        assert list(a.items()) == list(b.items())
    # and both agree with a plain recursive walk over ``children``
    expected_parents: dict[cst.CSTNode, cst.CSTNode] = {}
    expected_order: list[cst.CSTNode] = []

    def visit(node: cst.CSTNode) -> None:
        expected_order.append(node)
        for kid in children(node):
            expected_parents[kid] = node
            visit(kid)

    visit(module)
    assert list(walked.order) == expected_order
    assert walked.parents == expected_parents
