"""Non-private fallbacks the code itself flags as leaking privacy.

A node is acknowledged when a privacy-leak warning (``warnings.warn(…, PrivacyLeakWarning)``, a
warning class or message text saying privacy leaks / "additional privacy leakage" / "not
differentially private"; a logger call — ``logger.warning``, ``logging.warning``, ``log.warn`` —
counts when its text says so) comes before it in its own block or an enclosing block of its
function, directly or inside a preceding ``if`` that does not test a bound (``if not public:
logger.warning("PrivacyLeakage: …")``), or when it sits in a branch taken only when the user gave no public bounds/norms
(``if bounds is None:``, ``if not self.bounds:``) and that branch, or an earlier branch of the same
function on the same test, raises such a warning. A fallback without a warning is not acknowledged.
"""
from __future__ import annotations

import re
from collections.abc import Callable

import libcst as cst

from dpcheck.analysis.index import SyntaxIndex
from dpcheck.analysis.syntax import call_name, dotted, string_text, walk, words

LEAK_TEXT = re.compile(
    r"(?i)privacy[\s_-]*leak|additional[\s\w]{0,20}privacy|not\s+(?:be\s+)?differentially[\s-]*private"
    r"|leak\w*\s+(?:of\s+)?(?:private|privacy)|violat\w*\s+(?:the\s+)?(?:differential\s+)?privacy"
    r"|privacy\s+(?:guarantees?|budget)\s+(?:is\s+|are\s+|will\s+be\s+)?(?:not|no\s+longer|void|violated|compromised)"
    r"|(?:is|are|be)\s+not\s+(?:\(?[εe]\w*\)?[\s,-]*)?private\b"
)
#: a cheap necessary condition of any leak warning in the source
LEAK_SOURCE = re.compile(r"(?i)privacy\s*leak|leak|not\s+(?:be\s+)?differentially|not\s+private|violat|privacy")
_WARN_CALLS = frozenset({"warn", "warning", "warn_explicit", "warnings_warn"})
_BOUND_WORDS = frozenset({
    "bounds", "bound", "norm", "range", "ranges", "clip", "clipping", "sensitivity", "min", "max", "lower",
    "upper", "scale", "domain", "limits", "limit", "lo", "hi", "minimum", "maximum",
})


def is_leak_warning(call: cst.Call) -> bool:
    if call_name(call) not in _WARN_CALLS:
        return False
    for arg in call.args:
        name = dotted(arg.value)
        if name is not None:
            last = name.rsplit(".", 1)[-1]
            if "PrivacyLeak" in last or {"privacy", "warning"} <= words(last):
                return True
    return bool(LEAK_TEXT.search(string_text(call)))


def missing_bound_branch(test: cst.BaseExpression) -> str | None:
    """``"body"`` if the branch under ``test`` runs when a bound/norm was not given, ``"orelse"``
    if the else-branch does, None if ``test`` is not about a missing bound."""
    if isinstance(test, cst.BooleanOperation):
        left, right = missing_bound_branch(test.left), missing_bound_branch(test.right)
        if isinstance(test.operator, cst.Or):
            return "body" if "body" in (left, right) else None
        return "orelse" if "orelse" in (left, right) else None
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        if _names_bound(test.expression):
            return "body"
        inner = missing_bound_branch(test.expression)
        return {"body": "orelse", "orelse": "body"}.get(inner or "")
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1 and _names_bound(test.left):
        comp = test.comparisons[0]
        if isinstance(comp.comparator, cst.Name) and comp.comparator.value == "None":
            if isinstance(comp.operator, (cst.Is, cst.Equal)):
                return "body"
            if isinstance(comp.operator, (cst.IsNot, cst.NotEqual)):
                return "orelse"
    if _names_bound(test):
        return "orelse"
    return None


def _tests_a_bound(node: cst.If) -> bool:
    """Any test of the ``if``/``elif`` chain is about a missing bound/norm."""
    branch: cst.CSTNode | None = node
    while isinstance(branch, cst.If):
        if missing_bound_branch(branch.test) is not None:
            return True
        branch = branch.orelse
    return False


def _names_bound(expr: cst.CSTNode) -> bool:
    name = dotted(expr)
    return name is not None and bool(words(name.rsplit(".", 1)[-1]) & _BOUND_WORDS)


class Acknowledgements:
    def __init__(self, index: SyntaxIndex, source: str, line_of: Callable[[cst.CSTNode], int]) -> None:
        self.index = index
        self._line_of = line_of
        self._warnings: set[cst.CSTNode] = set()
        if LEAK_SOURCE.search(source):
            self._warnings = {c for c in index.nodes(cst.Call) if is_leak_warning(c)}  # type: ignore[arg-type]
        self._stmt_warning: dict[cst.CSTNode, cst.Call | None] = {}
        self._memo: dict[cst.CSTNode, str | None] = {}

    def reason(self, node: cst.CSTNode) -> str | None:
        if not self._warnings:
            return None
        if node not in self._memo:
            self._memo[node] = self._reason(node)
        return self._memo[node]

    def _warning_in(self, stmt: cst.CSTNode) -> cst.Call | None:
        """The leak warning a statement issues before what follows it: a simple statement line's
        own warning, or one inside an ``if`` on anything but a missing bound (``if not public:
        logger.warning("PrivacyLeakage …")``, which fires whenever the data is private). After
        ``if bounds is None: warn(…)`` the following code runs with the bounds given too."""
        if stmt not in self._stmt_warning:
            found = None
            kind = type(stmt)
            if kind is cst.SimpleStatementLine:
                for small in stmt.body:  # type: ignore[attr-defined]
                    if type(small) is cst.Expr and small.value in self._warnings:  # type: ignore[attr-defined]
                        found = small.value  # type: ignore[attr-defined]
            elif kind is cst.If and not _tests_a_bound(stmt):
                found = self._branch_warning(stmt)
            self._stmt_warning[stmt] = found
        return self._stmt_warning[stmt]

    def _branch_warning(self, branch: cst.CSTNode) -> cst.Call | None:
        for sub in walk(branch, into_scopes=False):
            if sub in self._warnings:
                return sub  # type: ignore[return-value]
        return None

    def _reason(self, node: cst.CSTNode) -> str | None:
        index = self.index
        child = node
        for anc in index.ancestors(node):
            kind = type(anc)
            if kind in (cst.FunctionDef, cst.ClassDef, cst.Lambda):
                break
            if kind is cst.IndentedBlock or kind is cst.Module:
                body = anc.body  # type: ignore[attr-defined]
                for stmt in body:
                    if stmt is child:
                        break
                    warning = self._warning_in(stmt)
                    if warning is not None:
                        return f"computed after the privacy leak warning at line {self._line_of(warning)}"
            elif kind is cst.If or kind is cst.IfExp:
                reason = self._guarded(anc, child)
                if reason is not None:
                    return reason
            child = anc
        return None

    def _guarded(self, branch_node: cst.CSTNode, child: cst.CSTNode) -> str | None:
        test = branch_node.test  # type: ignore[attr-defined]
        if child is test:
            return None
        side = missing_bound_branch(test)
        if side is None:
            return None
        branch = getattr(branch_node, "body" if side == "body" else "orelse", None)
        if branch is None or (child is not branch and not self.index.inside(child, branch)):
            return None
        test_code = _code(test)
        warning = self._branch_warning(branch) if type(branch_node) is cst.If else None
        if warning is None:
            warning = self._earlier_guarded_warning(branch_node, test_code, side)
        if warning is None:
            return None
        return (f"in the fallback taken when `{test_code}` (no public bound given), which warns of a "
                f"privacy leak at line {self._line_of(warning)}")

    def _earlier_guarded_warning(self, at: cst.CSTNode, test_code: str, side: str) -> cst.Call | None:
        """A leak warning in an ``if`` on the same test earlier in the same function."""
        fn = self.index.enclosing_function(at)
        position = self.index.order[at]
        for warning in self._warnings:
            if self.index.order[warning] >= position or self.index.enclosing_function(warning) is not fn:
                continue
            for anc in self.index.ancestors(warning):
                if type(anc) is cst.If and _code(anc.test) == test_code:  # type: ignore[attr-defined]
                    branch = anc.body if side == "body" else anc.orelse  # type: ignore[attr-defined]
                    if branch is not None and self.index.inside(warning, branch):
                        return warning  # type: ignore[return-value]
                if type(anc) is cst.FunctionDef:
                    break
        return None


_EMPTY = cst.Module([])


def _code(node: cst.CSTNode) -> str:
    return " ".join(_EMPTY.code_for_node(node).split())
