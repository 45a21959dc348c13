"""Read Python 2 sources (and tab-mixed indentation) as Python 3, with positions mapped back.

Research code is often Python 2: ``print x``, ``except E, e:``, backticks, ``<>``, ``0777``,
``10L``, ``ur''``, ``exec code in ns``, ``raise E, msg``, and indentation mixing tabs and spaces
(a tab advances to the next multiple of 8, as Python 2 counted it). Notebook exports (Colab,
Jupyter "download as .py") keep IPython's shell escapes and magics, ``!pip install x``,
``%matplotlib inline``, ``%%time``, as statements; they become ``pass`` with the rest of the line as
a comment. A call argument written as a parenthesised star, ``torch.zeros((*p.shape))``, which the
parser of Python 3.8 and older took for ``*p.shape``, loses its parentheses. :func:`convert` rewrites these
token by token without ever adding or removing a line, so a finding keeps its line number, and
:class:`Converted` maps a column of the converted text back to the original column. The result
is only parsed, never run.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

_STRING = r"""(?:[uUbB]?[rR]?|[rR][bB]?)(?:'''(?:[^'\\]|\\.|'(?!''))*'''|\"\"\"(?:[^"\\]|\\.|"(?!""))*\"\"\"|'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*")"""
_TOKEN = re.compile(
    rf"""(?P<string>{_STRING})
    |(?P<comment>\#[^\n]*)
    |(?P<number>(?:0[xX][0-9a-fA-F]+|0[oObB]?[0-7]+|\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)[lLjJ]?)
    |(?P<name>[^\W\d]\w*)
    |(?P<newline>\r?\n)
    |(?P<continuation>\\\r?\n)
    |(?P<space>[ \t\f]+)
    |(?P<op><>|>>=|<<=|\*\*=|//=|->|[-+*/%&|^<>=!]=|<<|>>|\*\*|//|.)""",
    re.S | re.X,
)
_COMPOUND = {"if", "elif", "else", "for", "while", "try", "except", "finally", "with", "def", "class"}
_OPEN, _CLOSE = "([{", ")]}"


@dataclass(frozen=True)
class Converted:
    text: str
    #: per line (0-based): the original 0-based column of each character of the converted line
    columns: tuple[tuple[int, ...], ...]
    #: what was rewritten, e.g. {"print statement": 3, "tab indentation": 12}
    changes: dict[str, int]

    def original_column(self, line: int, col: int) -> int:
        """The 1-based original column of 1-based ``col`` on 1-based ``line`` of the converted text."""
        if not 0 < line <= len(self.columns):
            return col
        cols = self.columns[line - 1]
        if not cols:
            return col
        index = min(max(col - 1, 0), len(cols) - 1)
        return cols[index] + 1 + max(col - 1 - index, 0)


class _Writer:
    """Builds the converted text, remembering where each written character came from."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.origins: list[list[int]] = [[]]
        self.changes: dict[str, int] = {}

    def put(self, text: str, origin: int, change: str = "", same: bool = True) -> None:
        """Write ``text`` read at original column ``origin``: character by character (``same``),
        or all of it standing for the original token at ``origin`` (a rewrite)."""
        if change:
            self.changes[change] = self.changes.get(change, 0) + 1
        self.parts.append(text)
        column = origin
        for char in text:
            if char == "\n":
                self.origins.append([])
                column = 0
                continue
            self.origins[-1].append(column)
            if same:
                column += 1

    def last(self) -> str:
        for part in reversed(self.parts):
            if part.strip():
                return part
        return ""


def convert(source: str) -> Converted | None:
    """``source`` rewritten as Python 3, or ``None`` when nothing Python-2-specific was found."""
    out = _Writer()
    depth = 0
    line_start = True  # at the start of a physical line (indentation)
    stmt_start = True  # the next significant token starts a statement
    first_word = ""  # the statement's first keyword
    kind = ""  # "print", "exec", "raise", "except" while converting that statement
    closing = ""  # written when the statement ends: the ``)`` of a converted print
    paren_next = False  # a converted print/exec still owes its ``(``
    commas = 0
    backtick_open = False
    magic = False  # inside an IPython ``!``/``%`` line: the rest of it is a comment
    unwrap: list[int] = []  # depths whose closing bracket ends a parenthesised star argument
    col = 0

    def end_statement() -> None:
        nonlocal closing, kind, commas, paren_next
        if paren_next:
            out.put("(", col)
        if closing:
            out.put(closing, max(col - 1, 0))
        closing, kind, commas, paren_next = "", "", 0, False

    for match in _TOKEN.finditer(source):
        text, group = match.group(), match.lastgroup
        if magic and group != "newline":
            out.put(text, col)
            col += len(text)
            continue
        if group == "newline" or group == "continuation":
            magic = False
            if group == "newline" and depth == 0:
                end_statement()
                stmt_start, first_word = True, ""
            out.put(text, col)
            line_start, col = True, 0
            continue
        if group == "space":
            if line_start and "\t" in text:
                out.put(" " * len(text.expandtabs(8)), col, "tab indentation", same=False)
            elif paren_next:
                out.put("(" + text[1:], col)
                paren_next = False
            else:
                out.put(text, col)
            col += len(text)
            continue
        line_start = False
        if paren_next and group != "comment":
            out.put("(", col)
            paren_next = False
        if group == "comment":
            if depth == 0:
                end_statement()
            out.put(text, col)
        elif group == "string":
            if text[:2].lower() == "ur":
                out.put("r", col + 1, "ur'' string")
                out.put(text[2:], col + 2)
            else:
                out.put(text, col)
            stmt_start = False
        elif group == "number":
            modern = _number(text)
            out.put(modern, col, "Python 2 number" if modern != text else "", same=modern == text)
            stmt_start = False
        elif group == "name":
            if stmt_start:
                first_word = text
                stmt_start = False
                if text in ("print", "exec") and not _used_as_function(source, match.end()):
                    kind, closing, paren_next = text, ")", True
                    out.put(text, col, f"{text} statement")
                    col += len(text)
                    continue
                if text in ("raise", "except"):
                    kind = text
            if kind == "exec" and depth == 0 and text == "in":
                out.put(",", col, same=False)
            else:
                out.put(text, col)
        elif text in ("!", "%") and stmt_start and depth == 0 and not kind:
            out.put("pass#", col, "IPython magic line", same=False)
            magic = True
        else:
            starts = _op_starts_statement(text, depth, first_word)
            star_argument = (text == "(" and out.last().endswith(("(", ","))
                             and _parenthesised_star(source, match.end()))
            if text in _OPEN:
                depth += 1
            elif text in _CLOSE:
                depth = max(depth - 1, 0)
            if star_argument:
                unwrap.append(depth)
                out.put(" ", col, "parenthesised star argument")
            elif text == ")" and unwrap and unwrap[-1] == depth + 1:
                unwrap.pop()
                out.put(" ", col)
            elif text == "<>":
                out.put("!=", col, "<> operator")
            elif text == "`":
                out.put(")" if backtick_open else "repr(", col, "backtick repr", same=False)
                backtick_open = not backtick_open
            elif text == ">>" and kind == "print" and out.last().endswith("("):
                pass  # ``print >>f, x`` → ``print(f, x)``: only parsed, never run
            elif text == "," and depth == 0 and kind == "except":
                out.put(" as", col, "except X, e", same=False)
                kind = ""
            elif text == "," and depth == 0 and kind == "raise":
                commas += 1
                if commas == 1:
                    out.put("(", col, "raise E, msg", same=False)
                    closing = ")"
                else:
                    out.put(text, col)
            else:
                if starts:
                    end_statement()
                out.put(text, col)
            if starts:
                stmt_start, first_word = True, ""
        col += len(text)
    if depth == 0:
        end_statement()
    changes = {k: v for k, v in out.changes.items() if k}
    if not changes:
        return None
    return Converted("".join(out.parts), tuple(tuple(o) for o in out.origins), changes)


def _used_as_function(source: str, pos: int) -> bool:
    """``print(...)``, ``print = f``, ``x.print``: not a Python 2 statement to convert."""
    rest = source[pos:pos + 80].lstrip(" \t")
    return bool(re.match(r"(\(|=[^=]|\.)", rest))


def _parenthesised_star(source: str, pos: int) -> bool:
    """Is the ``(`` just before ``pos`` wrapping one starred expression, ``(*x)`` (no tuple comma)?"""
    if not re.match(r"[ \t]*\*(?!\*)", source[pos:pos + 80]):
        return False
    depth = 0
    for match in _TOKEN.finditer(source, pos):
        text, group = match.group(), match.lastgroup
        if group != "op":
            continue
        if text in _OPEN:
            depth += 1
        elif text in _CLOSE:
            if depth == 0:
                return True
            depth -= 1
        elif depth == 0 and text in (",", ":", ";", "="):
            return False
    return False


def _op_starts_statement(op: str, depth: int, first_word: str) -> bool:
    if depth:
        return False
    return op == ";" or (op == ":" and first_word in _COMPOUND)


def _number(text: str) -> str:
    """Python 3 spelling of a Python 2 number literal (``10L`` → ``10``, ``0777`` → ``0o777``)."""
    body = text[:-1] if text[-1] in "lL" else text
    if re.fullmatch(r"0[0-7]+", body) and body.strip("0"):
        body = "0o" + body[1:]
    return body
