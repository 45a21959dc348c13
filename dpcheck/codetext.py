"""The code of a Python source without its comments and string literals, for rule prefilters.

Rule prefilters (``Rule.applies_to``) decide from text alone whether a file can hold a finding,
so that most files are never parsed by libcst. Matching words of docstrings and comments lets
far too many files through; this strips both in one regex pass. Every string literal becomes
``''`` (so ``x.astype("int")`` reads ``x.astype('')``) and every comment disappears; line breaks
inside removed triple-quoted strings are kept so the line count stays. The result is only ever
used to *exclude* files, so a rare mis-lexed construct costs a missed exclusion or, at worst,
must be covered by the rule's own gate using the raw source (rules that read string contents do).
"""
from __future__ import annotations

import functools
import re

_DQ3 = r'"""[^"\\]*(?:(?:\\.|"(?!""))[^"\\]*)*"""'
_SQ3 = r"'''[^'\\]*(?:(?:\\.|'(?!''))[^'\\]*)*'''"
_DQ = r'"[^"\\\n]*(?:\\.[^"\\\n]*)*"'
_SQ = r"'[^'\\\n]*(?:\\.[^'\\\n]*)*'"
#: the leading lookahead lets the regex engine reject most positions on their first character
_LEXEME = re.compile(
    rf"(?=[rRbBuUfF\"'#])(?:(?P<string>(?:\b[rRbBuUfF]{{1,3}})?(?:{_DQ3}|{_SQ3}|{_DQ}|{_SQ}))|(?P<comment>#[^\n]*))",
    re.S,
)


def _blank(match: re.Match[str]) -> str:
    if match.group("comment") is not None:
        return ""
    return "''" + "\n" * match.group("string").count("\n")


@functools.lru_cache(maxsize=8)
def code_only(source: str) -> str:
    """``source`` with comments removed and every string literal replaced by ``''``."""
    return _LEXEME.sub(_blank, source)


def _blank_prose(match: re.Match[str]) -> str:
    if match.group("comment") is not None:
        return ""
    text = match.group("string")
    source = match.string
    line_start = source.rfind("\n", 0, match.start()) + 1
    if source[line_start:match.start()].strip() == "" and (text.endswith('"""') or text.endswith("'''")):
        return "''" + "\n" * text.count("\n")  # a docstring or other bare string statement
    return text


@functools.lru_cache(maxsize=8)
def prose_free(source: str) -> str:
    """``source`` without comments and docstrings (triple-quoted strings that begin a line),
    keeping every other string literal — for gates whose rule reads names from string keys
    such as ``params["epsilon"]``."""
    return _LEXEME.sub(_blank_prose, source)


def _is_fstring(literal: str) -> bool:
    prefix = literal[:3].split('"')[0].split("'")[0]
    return "f" in prefix.lower()


@functools.lru_cache(maxsize=8)
def code_and_fstrings(source: str) -> str:
    """``code_only(source)`` followed by the text of every f-string literal: an f-string's fields
    are code libcst parses (``f"{acct.spend(e)}"``), so a gate looking for calls must see them."""
    fstrings = [m.group("string") for m in _LEXEME.finditer(source)
                if m.group("string") is not None and _is_fstring(m.group("string"))]
    return code_only(source) + "\n" + "\n".join(fstrings)
