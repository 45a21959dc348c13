"""A fast pre-order traversal of libcst trees that dispatches ``visit_X``/``leave_X`` methods.

libcst's own ``CSTNode.visit`` rebuilds (and re-validates) every node it passes through, even for
read-only visitors; on the rule workload that costs several times the parse. Rules only read the
tree, so this walks the dataclass fields directly. Layout fields (whitespace, brackets, commas,
operators, comments) are not walked: no rule visits those node types, and a rule needing one
reads it from its parent. Siblings come in field order, which is source order except that a
function's or class's decorators (and a class's bases) come after its body, an ``IfExp``'s test
before its body and an ``Arg``'s value before its keyword; parents are always entered before and
left after their children.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import libcst as cst

_LAYOUT = frozenset({
    "lpar", "rpar", "lbracket", "rbracket", "lbrace", "rbrace", "leading_lines", "lines_after_decorators",
    "comma", "dot", "colon", "semicolon", "equal", "operator", "asynchronous", "star", "header", "footer",
    "trailing_whitespace", "newline", "first_line", "empty_lines", "indent", "whitespace", "between",
    "equal_sign", "arrow", "posonly_ind",
})


class _NodeKinds(dict[type, bool]):
    """``kind -> issubclass(kind, CSTNode)``, filled on first sight: libcst's ABCs make
    ``isinstance`` slow, a dict lookup is not."""

    def __missing__(self, kind: type) -> bool:
        known = self[kind] = issubclass(kind, cst.CSTNode)
        return known


_NODE_KINDS = _NodeKinds()
_is_node = _NODE_KINDS.__getitem__
#: per node type, a generated function listing its children (one attribute read per field)
_CHILDREN: dict[type, Callable[[cst.CSTNode], list[cst.CSTNode]]] = {}


def _child_fields(kind: type) -> tuple[str, ...]:
    return tuple(
        f.name for f in dataclasses.fields(kind) if f.name not in _LAYOUT and not f.name.startswith("whitespace")
    )


def _make_children(kind: type) -> Callable[[cst.CSTNode], list[cst.CSTNode]]:
    lines = ["def kids(node):", "    out = []"]
    for name in _child_fields(kind):
        lines += [
            f"    v = node.{name}",
            "    k = v.__class__",
            "    if k is list or k is tuple:",
            "        out.extend([x for x in v if is_node(x.__class__)])",
            "    elif is_node(k):",
            "        out.append(v)",
        ]
    lines.append("    return out")
    namespace: dict[str, Any] = {"is_node": _is_node}
    exec("\n".join(lines), namespace)  # noqa: S102 - code generated from dataclass field names only
    return namespace["kids"]


def children(node: cst.CSTNode) -> list[cst.CSTNode]:
    """The syntactic child nodes of ``node`` in field order (no layout nodes)."""
    kind = node.__class__
    fn = _CHILDREN.get(kind)
    if fn is None:
        fn = _CHILDREN[kind] = _make_children(kind)
    return fn(node)


class Preorder:
    """Every node of a tree in the pre-order ``dispatch`` visits (children in field order), with
    each subtree's size: a node's subtree is the slice ``nodes[i:i + sizes[i]]``."""

    def __init__(self, root: cst.CSTNode) -> None:
        nodes: list[cst.CSTNode] = []
        parents: list[int] = []
        stack: list[tuple[cst.CSTNode, int]] = [(root, -1)]
        pop, push, add, up = stack.pop, stack.extend, nodes.append, parents.append
        while stack:
            node, parent = pop()
            here = len(nodes)
            add(node)
            up(parent)
            push([(kid, here) for kid in reversed(children(node))])
        sizes = [1] * len(nodes)
        for i in range(len(nodes) - 1, 0, -1):
            sizes[parents[i]] += sizes[i]
        self.nodes = nodes
        self.sizes = sizes
        #: id -> position; a node object met twice keeps its last position (same subtree)
        self.position = {id(node): i for i, node in enumerate(nodes)}

    def find(self, node: cst.CSTNode) -> int | None:
        i = self.position.get(id(node))
        return i if i is not None and self.nodes[i] is node else None


Handlers = dict[str, list[Callable[[Any], Any]]]


_OWN: dict[type, tuple[str, ...]] = {}


def _own_methods(kind: type) -> tuple[str, ...]:
    """``visit_X``/``leave_X`` methods ``kind`` defines itself (not libcst's per-type no-op stubs)."""
    names = _OWN.get(kind)
    if names is None:
        found = []
        for attr in dir(kind):
            if not attr.startswith(("visit_", "leave_")) or attr == "visit_batched":
                continue
            owner = next(c for c in kind.__mro__ if attr in c.__dict__)
            if not owner.__module__.startswith("libcst"):
                found.append(attr)
        names = _OWN[kind] = tuple(found)
    return names


def _handlers(visitors: Iterable[object]) -> tuple[Handlers, Handlers]:
    enter: Handlers = {}
    leave: Handlers = {}
    for visitor in visitors:
        for attr in _own_methods(type(visitor)):
            (enter if attr[0] == "v" else leave).setdefault(attr[6:], []).append(getattr(visitor, attr))
    return enter, leave


def dispatch(root: cst.CSTNode, visitors: Sequence[object], preorder: Preorder | None = None) -> None:
    """Call every visitor's ``visit_<Type>(node)`` on entering and ``leave_<Type>(node)`` on
    leaving each node under ``root`` (return values are ignored: children are always walked).
    ``preorder``, when given, is ``Preorder(root)``."""
    enter, leave = _handlers(visitors)
    if preorder is not None:
        _dispatch_preorder(preorder, enter, leave)
        return
    stack: list[tuple[cst.CSTNode, bool]] = [(root, False)]
    pop, push = stack.pop, stack.append
    while stack:
        node, leaving = pop()
        name = type(node).__name__
        if leaving:
            for fn in leave[name]:
                fn(node)
            continue
        for fn in enter.get(name, ()):
            fn(node)
        if name in leave:
            push((node, True))
        kids = children(node)
        for kid in reversed(kids):
            push((kid, False))


def _dispatch_preorder(preorder: Preorder, enter: Handlers, leave: Handlers) -> None:
    sizes = preorder.sizes
    #: (end of the subtree, node) of the entered nodes that have ``leave`` handlers, innermost last
    open_: list[tuple[int, cst.CSTNode]] = []
    for i, node in enumerate(preorder.nodes):
        while open_ and open_[-1][0] <= i:
            left = open_.pop()[1]
            for fn in leave[type(left).__name__]:
                fn(left)
        name = type(node).__name__
        for fn in enter.get(name, ()):
            fn(node)
        if name in leave:
            open_.append((i + sizes[i], node))
    while open_:
        left = open_.pop()[1]
        for fn in leave[type(left).__name__]:
            fn(left)
