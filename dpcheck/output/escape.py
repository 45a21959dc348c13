"""Make text taken from the scanned tree (file names, code quoted in messages) safe to print.

A file name is whatever bytes the file system allows: a newline (which would start a raw
``::warning`` line that GitHub Actions obeys), terminal escape sequences, or bytes that are not
UTF-8 (Python holds them as lone surrogates, which no UTF-8 writer accepts).
"""
from __future__ import annotations

import os
import re
from urllib.parse import quote

#: C0/C1 controls, DEL, and the Unicode line and paragraph separators
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def unicode_safe(text: str) -> str:
    """``text`` with each undecodable byte (a lone surrogate) written as ``\\xNN``."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        pass
    try:
        raw = text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a surrogate that is no escaped byte
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return raw.decode("utf-8", "backslashreplace")


def one_line(text: str) -> str:
    """``unicode_safe(text)`` with every control character written as an escape (``\\n``,
    ``\\x1b``): one line of plain text whatever the input."""
    return _CONTROL.sub(_escape, unicode_safe(text))


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    return {"\n": "\\n", "\r": "\\r", "\t": "\\t"}.get(char, f"\\x{ord(char):02x}" if ord(char) < 0x100 else f"\\u{ord(char):04x}")


def uri_path(path: str) -> str:
    """A relative path as a URI reference: the file system's own bytes, percent-encoded."""
    return quote(os.fsencode(path.replace(os.sep, "/")))
