"""Can any scope of a file have DP context? A superset of ``DPContexts.any_dp`` on CPython's ``ast``.

``DPContexts`` (libcst) gives a scope DP context from a strong signal, or from two weak ones of
which one is an anchor; a class inherits it from a method, a function from a DP caller. Without a
first scope there is nothing to inherit, so the file has DP context only if some scope has a
strong signal or a pair of weak ones. Here every signal is looked for in the whole file at once
(weak names pooled across scopes, which can only add pairs), every exclusion the libcst code
makes to avoid false signals (numerical-stability ``eps``, module paths, ``finfo(...).eps``) is
skipped, and strings count under the loosest reading. So ``False`` proves that no node of the
file is in DP context, and a rule with ``requires_dp_context`` reports nothing there.
"""
from __future__ import annotations

import ast
from typing import Any

from dpcheck.analysis.astnames import dotted
from dpcheck.analysis.dpcontext import _ANY_SIGNAL
from dpcheck.analysis.syntax import words
from dpcheck.analysis.vocabulary import (
    ACCOUNTANT_CALL, ANCHOR_DP_WORDS, DP_LIBRARIES, DP_NAME, NOISE_DRAWS, STRONG_NOISE_DRAWS, dp_claim,
    dp_generator_name, dp_name_strength,
)

#: a dpcheck.analysis.astfacts.AstFacts (not imported: AstFacts.may_have_dp_context calls this module)
AstFacts = Any

_KEY_CALLS = frozenset({"get", "pop", "setdefault"})
_STRIPPED = "'\"bBrRuU"


def may_have_dp_context(facts: AstFacts) -> bool:
    lower = facts.source.lower()
    if not any(word in lower for word in _ANY_SIGNAL):
        return False  # ``DPContexts`` collects no signal at all then
    return _claims(facts) or _signals(facts)


def _claims(facts: AstFacts) -> bool:
    """Docstring claims, DP-named defs and bases, DP library imports, a named DP generator."""
    tree = facts.tree
    doc = ast.get_docstring(tree, clean=True)
    if doc and dp_claim(doc):
        return True
    for node in facts.nodes(ast.Import, ast.ImportFrom):
        names = [a.name for a in node.names]  # type: ignore[attr-defined]
        if isinstance(node, ast.ImportFrom) and node.module:
            names.append(node.module)
        if any(n.split(".")[0] in DP_LIBRARIES for n in names):
            return True
    for node in facts.nodes(ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
        name = node.name  # type: ignore[attr-defined]
        if DP_NAME.search(name) or (not isinstance(node, ast.ClassDef) and ACCOUNTANT_CALL.match(name)):
            return True
        doc = ast.get_docstring(node, clean=True)  # type: ignore[arg-type]
        if doc and dp_claim(doc):
            return True
        if isinstance(node, ast.ClassDef):
            for base in node.bases:
                if any(DP_NAME.search(n) for n in _identifiers(base)):
                    return True
    # one search over all texts, one per line: a match inside one text is found (and a few more)
    return dp_generator_name("\n".join(_all_texts(facts))) is not None


def _identifiers(node: ast.AST) -> list[str]:
    out: list[str] = []
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name):
            out.append(sub.id)
        elif isinstance(sub, ast.Attribute):
            out.append(sub.attr)
        elif isinstance(sub, ast.Constant) and isinstance(sub.value, str):
            out.append(sub.value)
    return out


def _all_texts(facts: AstFacts) -> set[str]:
    """Every identifier (names, attributes, parameters, keywords, defs, imports) and string."""
    out: set[str] = set()
    for node in facts.nodes(ast.Name):
        out.add(node.id)  # type: ignore[attr-defined]
    for node in facts.nodes(ast.Attribute):
        out.add(node.attr)  # type: ignore[attr-defined]
    for node in facts.nodes(ast.arg):
        out.add(node.arg)  # type: ignore[attr-defined]
    for node in facts.nodes(ast.keyword):
        if node.arg:  # type: ignore[attr-defined]
            out.add(node.arg)  # type: ignore[attr-defined]
    for node in facts.nodes(ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
        out.add(node.name)  # type: ignore[attr-defined]
    for node in facts.nodes(ast.alias):
        for name in (node.name, node.asname):  # type: ignore[attr-defined]
            if name:
                out.add(name)
                out.update(name.split("."))
    for node in facts.nodes(ast.ImportFrom):
        if node.module:  # type: ignore[attr-defined]
            out.add(node.module)  # type: ignore[attr-defined]
            out.update(node.module.split("."))  # type: ignore[attr-defined]
    for node in facts.nodes(ast.Constant):
        value = node.value  # type: ignore[attr-defined]
        if isinstance(value, str):
            out.add(value)
        elif isinstance(value, bytes):
            out.add(value.decode("latin-1"))
    return out


def _signals(facts: AstFacts) -> bool:
    """A strong signal anywhere, or weak names that would pair up if they shared a scope."""
    weak: set[str] = set()

    def named(value: str, *, keyword: bool = False) -> bool:
        strength = dp_name_strength(value)
        if strength == 2:
            return True
        if strength == 1 and not keyword:
            weak.add(value)
        return False

    for node in facts.nodes(ast.Name):
        if named(node.id):  # type: ignore[attr-defined]
            return True
    for node in facts.nodes(ast.Attribute):
        if named(node.attr):  # type: ignore[attr-defined]
            return True
    for node in facts.nodes(ast.arg):
        if named(node.arg):  # type: ignore[attr-defined]
            return True
    for node in facts.nodes(ast.keyword):
        if node.arg and named(node.arg, keyword=True):  # type: ignore[attr-defined]
            return True
    for node in facts.nodes(ast.Global, ast.Nonlocal):
        if any(named(n) for n in node.names):  # type: ignore[attr-defined]
            return True
    for node in facts.nodes(ast.MatchAs, ast.MatchStar):
        if node.name and named(node.name):  # type: ignore[attr-defined]
            return True
    for node in facts.nodes(ast.MatchMapping):
        if node.rest and named(node.rest):  # type: ignore[attr-defined]
            return True
    for key in _string_keys(facts):
        value = key.strip(_STRIPPED)
        if value.isidentifier() and named(value):
            return True
    for call in facts.calls:
        if _call_signal(facts, call, weak):
            return True
    if 1.25 in facts.numbers and facts.calls_any({"log", "ln", "log1p"}):
        return True
    return len(weak) >= 2 and any(words(n) & ANCHOR_DP_WORDS for n in weak) \
        and not all("teachers" in words(n) for n in weak)


def _string_keys(facts: AstFacts) -> list[str]:
    """Strings used as a subscript key or as an argument of ``get``/``pop``/``setdefault``."""
    out: list[str] = []
    for node in facts.nodes(ast.Subscript):
        index = node.slice  # type: ignore[attr-defined]
        for element in index.elts if isinstance(index, ast.Tuple) else [index]:
            if isinstance(element, ast.Constant) and isinstance(element.value, str):
                out.append(element.value)
    for call in facts.calls:
        func = call.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        if name in _KEY_CALLS:
            for arg in (*call.args, *(k.value for k in call.keywords)):
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    out.append(arg.value)
    return out


def _call_signal(facts: AstFacts, call: ast.Call, weak: set[str]) -> bool:
    func = call.func
    last = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    if not last:
        return False
    name = dotted(func)
    if name is not None and any(q.split(".")[0] in DP_LIBRARIES for q in facts.qualified(name)):
        return True
    if ACCOUNTANT_CALL.match(last):
        return True
    if last in NOISE_DRAWS:
        arguments = [*call.args, *(k.value for k in call.keywords)]
        if any(_names_dp(arg) for arg in arguments):
            return True
        if last in STRONG_NOISE_DRAWS:
            weak.add(last)
    return False


def _names_dp(expr: ast.AST) -> bool:
    """``_names_dp`` of the libcst code, for any argument and with the loose (non-strict) test."""
    for node in ast.walk(expr):
        value = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None
        if value is not None and (dp_name_strength(value) or words(value) & ANCHOR_DP_WORDS
                                  or "sensitivity" in words(value)):
            return True
    return False
