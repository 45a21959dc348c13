"""Parse what CPython parses, within limits, and never report valid code as a syntax error.

* :func:`python_tree`: CPython's ``ast`` of the text, or why not — a syntax error (with its line),
  or a parser limit (too deep, too many nested brackets, out of parser memory) that is not one.
* :func:`too_complex`: the limits checked before libcst sees a file. libcst's time grows with
  the square of an expression's depth (3,000 ``a.b.c…`` or ``x if c else …`` terms: ~10 s;
  8,000 ternaries: > 6 GB) and its native parser overflows the C stack on ~1,300 nested
  brackets (a segfault), so deeper files are reported as not analysed instead.
* :func:`cst_module`: libcst's tree of code CPython accepts. A statement libcst's grammar refuses
  (``(name): int``, 100,000 implicitly concatenated strings) is blanked out — replaced by
  ``pass`` on its first line and empty lines after, so every other line keeps its number — and
  reported, so the rest of the file is still analysed.
"""
from __future__ import annotations

import ast
import re
import warnings
from dataclasses import dataclass
from collections.abc import Callable
from typing import TYPE_CHECKING

from dpcheck.codetext import code_only

if TYPE_CHECKING:
    import libcst as cst

#: default deepest expression/statement nesting (CPython ``ast`` levels) handed to libcst
DEFAULT_MAX_DEPTH = 400
#: brackets nested deeper than this are refused by CPython (its tokenizer's MAXLEVEL) anyway
MAX_BRACKETS = 200
#: statements libcst refuses that are blanked out before the whole file is given up
MAX_BLANKED = 20

_LIMIT_MESSAGES = ("too many nested parentheses", "too many statically nested blocks", "too complex",
                   "maximum recursion", "too many nested")


@dataclass(frozen=True)
class NotParsed:
    """Why a text has no tree: ``limit`` (a parser limit, not a syntax error) or a syntax error."""

    message: str
    line: int
    col: int
    limit: bool


def python_tree(source: str) -> ast.Module | NotParsed:
    """CPython's ``ast`` of ``source`` (never compiled, never run) or why there is none."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return compile(source, "<scanned>", "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
    except SyntaxError as exc:
        message = str(exc.msg)
        limit = any(text in message for text in _LIMIT_MESSAGES)
        return NotParsed(message, exc.lineno or 1, exc.offset or 1, limit)
    except (RecursionError, MemoryError) as exc:
        return NotParsed(f"CPython's parser gave up ({type(exc).__name__})", _deepest_line(source), 1, True)
    except ValueError as exc:  # e.g. NUL bytes
        return NotParsed(str(exc), 1, 1, False)


_FIELDS: dict[type, tuple[str, ...]] = {}


def _fields(kind: type) -> tuple[str, ...]:
    fields = _FIELDS.get(kind)
    if fields is None:
        fields = _FIELDS[kind] = tuple(kind._fields)  # type: ignore[attr-defined]
    return fields


def too_complex(tree: ast.AST, max_depth: int) -> tuple[int, str] | None:
    """(line, reason) when ``tree`` nests deeper than ``max_depth``; walked without recursion."""
    stack: list[tuple[ast.AST, int, int]] = [(tree, 0, 1)]
    pop, push, push_all = stack.pop, stack.append, stack.extend
    while stack:
        node, depth, line = pop()
        line = getattr(node, "lineno", line)
        if depth > max_depth:
            return line, f"expression or statement nested more than {max_depth} levels deep"
        depth += 1
        for name in _fields(type(node)):
            value = getattr(node, name, None)
            if isinstance(value, ast.AST):
                push((value, depth, line))
            elif isinstance(value, list):
                push_all([(item, depth, line) for item in value if isinstance(item, ast.AST)])
    return None


def bracket_depth(source: str) -> tuple[int, int]:
    """(deepest bracket nesting, its line) of the code outside strings and comments."""
    depth = deepest = 0
    line = where = 1
    for char in code_only(source):
        if char in "([{":
            depth += 1
            if depth > deepest:
                deepest, where = depth, line
        elif char in ")]}":
            depth = max(depth - 1, 0)
        elif char == "\n":
            line += 1
    return deepest, where


def _deepest_line(source: str) -> int:
    """Where a parser that gave up most likely did: the deepest brackets, else the longest line."""
    depth, line = bracket_depth(source)
    if depth > MAX_BRACKETS // 2:
        return line
    lengths = [len(text) for text in source.splitlines()] or [0]
    return lengths.index(max(lengths)) + 1


_ERROR_AT = re.compile(r"error at (\d+):(\d+)")


def cst_error_line(exc: cst.ParserSyntaxError) -> int:
    """The line libcst's message names (its ``raw_line`` is one too high at the end of a line)."""
    match = _ERROR_AT.search(exc.message)
    return int(match.group(1)) if match else exc.raw_line


@dataclass(frozen=True)
class Blanked:
    first: int
    last: int
    reason: str


def cst_module(
    source: str, tree: ast.Module | None, parse: Callable[[str], cst.Module]
) -> tuple[cst.Module, str, list[Blanked]]:
    """libcst's tree of ``source``, the text it was parsed from and the statements blanked out
    to get it. Raises ``libcst.ParserSyntaxError`` when libcst still refuses the text (or no
    CPython ``tree`` says which statement to blank)."""
    import libcst as cst

    blanked: list[Blanked] = []
    text = source
    while True:
        try:
            return parse(text), text, blanked
        except cst.ParserSyntaxError as exc:
            if tree is None or len(blanked) >= MAX_BLANKED:
                raise
            line = cst_error_line(exc)
            span = _statement_at(tree, line)
            if span is None or any(b.first == span[0] for b in blanked):
                raise
            text = _blank(text, *span)
            blanked.append(Blanked(span[0], span[1], short(exc.message)))


def short(message: str, limit: int = 100) -> str:
    """The first line of a parser message, cut at ``limit`` characters (libcst lists every
    token it expected)."""
    first = message.splitlines()[0] if message else ""
    return first if len(first) <= limit else first[: limit - 1] + "…"


def _statement_at(tree: ast.Module, line: int) -> tuple[int, int] | None:
    """(first, last) line of the innermost statement that spans ``line``."""
    best: tuple[int, int] | None = None
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.stmt):
            end = node.end_lineno or node.lineno
            if not node.lineno <= line <= end:
                continue
            best = (node.lineno, end)
        stack.extend(child for child in ast.iter_child_nodes(node) if isinstance(child, ast.stmt))
    if best is None:  # past the last statement (libcst reads ahead): the last one
        ends = [(n.lineno, n.end_lineno or n.lineno) for n in tree.body]
        before = [span for span in ends if span[0] <= line]
        best = before[-1] if before else None
    return best


def _blank(text: str, first: int, last: int) -> str:
    # split on "\n" only: str.splitlines also splits on form feeds and other characters that
    # neither parser counts as line breaks
    lines = text.split("\n")
    head = lines[first - 1]
    indent = head[: len(head) - len(head.lstrip(" \t"))]
    lines[first - 1] = f"{indent}pass"
    for i in range(first, min(last, len(lines))):
        lines[i] = ""
    return "\n".join(lines)
