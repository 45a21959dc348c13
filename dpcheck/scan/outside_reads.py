"""Which files the rules read while one file is analysed, besides that file.

Some rules follow a value into the modules a file imports or the scripts beside it (DP305's
importers and base classes, DP507's seeded generators, DP582's callers). Their findings on a file
then depend on other files, which the per-file cache (keyed by the file's own content) cannot see:
an edited sibling would leave a stale result. :func:`watching` records the paths opened or listed
through Python's audit hooks (``open``, ``os.listdir``, ``os.scandir``), so the engine can leave such
a result out of the cache. A sibling a rule only tests for (``os.path.isfile``) and finds absent is
not recorded.
"""
from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager

_EVENTS = frozenset({"open", "os.listdir", "os.scandir"})
_seen: set[str] | None = None
_installed = False


def _hook(event: str, args: tuple) -> None:
    if _seen is None or event not in _EVENTS or not args:
        return
    target = args[0]
    if isinstance(target, (str, bytes, os.PathLike)):
        _seen.add(os.fsdecode(target))


@contextmanager
def watching() -> Iterator[set[str]]:
    """The set, filled while the block runs, of every path opened or listed in this process."""
    global _seen, _installed
    if not _installed:
        sys.addaudithook(_hook)  # cannot be removed; idle while nothing is watched
        _installed = True
    outer, _seen = _seen, set()
    try:
        yield _seen
    finally:
        inner, _seen = _seen, outer
        if outer is not None:
            outer |= inner


def _installed_roots() -> tuple[str, ...]:
    """Folders whose reads are the interpreter importing code (a lazily imported module), not a rule."""
    import dpcheck
    import dpcheck.rules
    roots = {sys.prefix, sys.base_prefix, sys.exec_prefix,
             os.path.dirname(dpcheck.__file__), os.path.dirname(dpcheck.rules.__file__ or "")}
    return tuple(os.path.join(os.path.realpath(r), "") for r in roots if r)


def reads_beyond(seen: set[str], path: str) -> bool:
    """Whether ``seen`` names a file or folder other than ``path`` itself and the installed code."""
    own = os.path.realpath(path)
    roots = _installed_roots()
    for p in seen:
        real = os.path.realpath(p)
        if real == own or "__pycache__" in real.split(os.sep) or os.path.join(real, "").startswith(roots):
            continue
        return True
    return False
