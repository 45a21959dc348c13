"""The lint-rule interface and the per-file analysis that runs rules over one parsed tree.

A rule is a libcst ``BatchableCSTVisitor``: every selected rule visits the same tree in one
traversal. Rules report nodes; positions are resolved only when something was reported.
Deep metadata (scopes, qualified names) is resolved lazily through ``self.ctx.metadata(...)``
so files and functions that cannot contain the bug never pay for it. What every rule needs to
know about the file (qualified names, bindings, DP context, private data, acknowledged leaks) is
asked of ``self.ctx.analysis`` (:mod:`dpcheck.analysis`), built on first use and shared.

A rule with ``requires_dp_context = True`` reports only nodes in DP context. A report on a node
the code itself flags as a non-private fallback (a privacy-leak warning before it) becomes a
``note`` of category ``acknowledged``, its reason appended to the message.

Code cases: ``VALID`` strings must produce no finding of the rule. In ``INVALID`` strings every
line carrying the marker comment ``# <-`` must produce at least one finding of the rule and no
unmarked line may produce one.
"""
from __future__ import annotations

import ast
import re
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider, ProviderT

from dpcheck.analysis import FileAnalysis
from dpcheck.analysis.acknowledged import LEAK_SOURCE
from dpcheck import dead_branches
from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.positions import Positions
from dpcheck.analysis.resolver import Resolver, Scope, resolver_for
from dpcheck.analysis.syntax import clear_walks
from dpcheck.categories import ALL_CATEGORIES, check_category
from dpcheck.cstwalk import Preorder, dispatch
from dpcheck.finding import Finding

MARKER = "# <-"
#: category of findings in a non-private fallback the code flags with a privacy-leak warning
ACKNOWLEDGED = "acknowledged"


@dataclass
class Report:
    node: cst.CSTNode
    message: str
    category: str


@dataclass
class FileContext:
    """What a rule may know about the file it visits. Metadata is resolved at most once."""

    path: str
    source: str
    wrapper: MetadataWrapper
    _resolved: dict[ProviderT, Mapping[cst.CSTNode, Any]] = field(default_factory=dict)
    _analysis: FileAnalysis | None = None
    #: CPython's tree of ``source``: handed over by the engine (the one its gate read) or parsed
    #: on first use; ``False`` = CPython cannot read the source
    _tree: ast.Module | None | bool = None

    @property
    def module(self) -> cst.Module:
        return self.wrapper.module

    @property
    def analysis(self) -> FileAnalysis:
        """The shared analysis core of this file (see :mod:`dpcheck.analysis`), built on first use."""
        if self._analysis is None:
            self._analysis = FileAnalysis(self.module, self.source, self._line_of)
        return self._analysis

    def python_tree(self) -> ast.Module | None:
        """CPython's ``ast`` of ``source``, shared by every rule of the file (read-only); ``None``
        when CPython cannot read what libcst did."""
        if self._tree is None:
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    self._tree = ast.parse(self.source)
            except (SyntaxError, ValueError):
                self._tree = False
        return self._tree if isinstance(self._tree, ast.Module) else None

    def _line_of(self, node: cst.CSTNode) -> int:
        return self.metadata(PositionProvider)[node].start.line

    def metadata(self, provider: ProviderT) -> Mapping[cst.CSTNode, Any]:
        if provider not in self._resolved:
            if provider is PositionProvider:
                # piecewise: only the statements holding the nodes asked about are regenerated
                tree = self.python_tree() if Positions.ast_positions_hold(self.source) else None
                self._resolved[provider] = Positions(self.module, self.source, self.analysis.index.parents, tree)
            else:
                self._resolved[provider] = self.wrapper.resolve(provider)
        return self._resolved[provider]


class Rule(cst.BatchableCSTVisitor):
    id: ClassVar[str]
    name: ClassVar[str]
    category: ClassVar[str]
    severity: ClassVar[str] = "error"
    summary: ClassVar[str]
    #: longer explanation for ``dpcheck explain`` (what, why it breaks privacy, the fix)
    rationale: ClassVar[str] = ""
    VALID: ClassVar[Sequence[str]] = ()
    INVALID: ClassVar[Sequence[str]] = ()
    #: cheap prefilter: the rule runs on a file only if one of these substrings occurs in it
    #: (empty = always run)
    TRIGGERS: ClassVar[Sequence[str]] = ()
    #: report only nodes in DP context (``FileAnalysis.in_dp_context``): the rule's pattern is a
    #: bug only in code that claims or implements differential privacy
    requires_dp_context: ClassVar[bool] = False
    #: with the ``ast`` gate on, the engine checks only ``TRIGGERS`` before the gate and the rest of
    #: ``applies_to`` after it (for rules whose text prefilter costs more than their gate); such a
    #: rule's ``applies_to`` must imply ``triggered``
    TEXT_AFTER_GATE: ClassVar[bool] = False

    def __init__(self, ctx: FileContext) -> None:
        super().__init__()
        self.ctx = ctx
        self.reports: list[Report] = []

    def report(self, node: cst.CSTNode, message: str, *, category: str | None = None) -> None:
        self.reports.append(Report(node, message, check_category(category or self.category)))

    @classmethod
    def applies_to(cls, source: str) -> bool:
        return cls.triggered(source)

    @classmethod
    def triggered(cls, source: str) -> bool:
        """Does one of ``TRIGGERS`` occur in ``source`` (or are there none)?"""
        return not cls.TRIGGERS or any(t in source for t in cls.TRIGGERS)

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """Second prefilter, on CPython's ``ast`` of a file ``applies_to`` admitted: ``False``
        only when the rule cannot report on the file (the shapes its report needs are absent).
        The engine then skips the rule, and the libcst parse when no rule is left. Default: may."""
        return True

    @classmethod
    def admits(cls, facts: AstFacts) -> bool:
        """The engine's second prefilter: the file may have DP context (when the rule reports
        only there) and ``may_report`` holds."""
        if cls.requires_dp_context and not facts.may_have_dp_context:
            return False
        return cls.may_report(facts)


def expected_lines(case: str) -> set[int]:
    return {i for i, line in enumerate(case.splitlines(), 1) if MARKER in line}


def run_rules(
    source: str,
    rules: Iterable[type[Rule]],
    path: str = "<string>",
    module: cst.Module | None = None,
    *,
    prefiltered: bool = False,
    tree: ast.Module | None = None,
) -> list[Finding]:
    """Parse ``source`` once (unless ``module`` is given) and run ``rules`` on it.

    ``prefiltered=True`` says the caller already kept only rules whose triggers occur; ``tree``
    is CPython's ``ast`` of exactly ``source``, when the caller has it (rules share it).
    Raises ``libcst.ParserSyntaxError`` for unparsable source; rule crashes propagate as
    ``RuleCrash`` naming the rule.
    """
    selected = list(rules) if prefiltered else [r for r in rules if r.applies_to(source)]
    if not selected:
        return []
    if module is None:
        module = cst.parse_module(source)
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    ctx = FileContext(path, source, wrapper, _tree=tree)
    preorder = Preorder(ctx.module)
    clear_walks(preorder)
    try:
        return _findings(source, path, ctx, selected, preorder)
    finally:
        clear_walks()


def _findings(
    source: str, path: str, ctx: FileContext, selected: list[type[Rule]], preorder: Preorder,
) -> list[Finding]:
    visitors: list[Rule] = []
    for rule_cls in selected:
        try:
            visitors.append(rule_cls(ctx))
        except Exception as exc:  # noqa: BLE001 - reported with the rule id
            raise RuleCrash(rule_cls.id, exc) from exc
    try:
        dispatch(ctx.module, visitors, preorder)
    except Exception as exc:  # noqa: BLE001
        culprit = _culprit(exc, visitors)
        raise RuleCrash(culprit, exc) from exc
    findings: list[Finding] = []
    kept = [
        (visitor, rep) for visitor in visitors for rep in visitor.reports
        if not visitor.requires_dp_context or ctx.analysis.in_dp_context(rep.node)
    ]
    if kept:
        positions = ctx.metadata(PositionProvider)
        if isinstance(positions, Positions):
            positions.compute(rep.node for _, rep in kept)
        lines = source.splitlines()
        check_acknowledged = ACKNOWLEDGED in ALL_CATEGORIES and LEAK_SOURCE.search(source) is not None
        for visitor, rep in kept:
            category, severity, message = rep.category, visitor.severity, rep.message
            if check_acknowledged:
                reason = ctx.analysis.acknowledged(rep.node)
                if reason is not None:
                    category, severity = ACKNOWLEDGED, "note"
                    message = f"{message} (acknowledged: {reason})"
            pos = positions[rep.node]
            snippet = lines[pos.start.line - 1].strip() if pos.start.line <= len(lines) else ""
            findings.append(
                Finding(
                    path=path,
                    line=pos.start.line,
                    col=pos.start.column + 1,
                    end_line=pos.end.line,
                    end_col=pos.end.column + 1,
                    rule=visitor.id,
                    name=visitor.name,
                    category=category,
                    severity=severity,
                    message=message,
                    snippet=snippet,
                )
            )
    if findings:
        findings = _live_branches(ctx, findings)
    return sorted(set(findings))


def _live_branches(ctx: FileContext, findings: list[Finding]) -> list[Finding]:
    """Drop findings inside a branch of a private function or flag that no call or assignment of the module
    selects (``dpcheck.dead_branches``): that code never runs, so it releases nothing."""
    tree = ctx.python_tree()
    if tree is None:
        return findings
    spans = dead_branches.local_spans(tree)
    if not spans:
        return findings
    return [f for f in findings if not any(a <= f.line <= b for a, b in spans)]


class RuleCrash(Exception):
    def __init__(self, rule_id: str, exc: BaseException) -> None:
        super().__init__(f"rule {rule_id} crashed: {type(exc).__name__}: {exc}")
        self.rule_id = rule_id
        self.original = exc


def _culprit(exc: BaseException, visitors: Sequence[Rule]) -> str:
    """Find which rule's code raised, from the traceback's frames."""
    tb = exc.__traceback__
    culprit = "?"
    while tb is not None:
        self_obj = tb.tb_frame.f_locals.get("self")
        if isinstance(self_obj, Rule):
            culprit = self_obj.id
        tb = tb.tb_next
    return culprit


_SUPPRESS = re.compile(r"#\s*dpcheck:\s*ignore(?:\[(?P<ids>[A-Za-z0-9_,\s]+)\])?")


def suppressed_ids(line: str) -> set[str] | None:
    """``None`` = no suppression; empty set = suppress everything; else the ids listed."""
    match = _SUPPRESS.search(line)
    if match is None:
        return None
    ids = match.group("ids")
    return set() if ids is None else {i.strip().upper() for i in ids.split(",") if i.strip()}


class ScopedRule(Rule):
    """A Rule that knows the function and class it is currently visiting."""

    def __init__(self, ctx) -> None:  # type: ignore[no-untyped-def]
        super().__init__(ctx)
        self._funcs: list[cst.FunctionDef] = []
        self._classes: list[cst.ClassDef] = []

    @property
    def scope(self) -> Scope:
        return Scope(self._funcs[-1] if self._funcs else None, self._classes[-1] if self._classes else None)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._classes.append(node)

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self._classes.pop()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._funcs.append(node)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self._funcs.pop()

    @property
    def resolver(self) -> Resolver:
        return resolver_for(self.ctx)

    def src(self, node: cst.CSTNode, limit: int = 60) -> str:
        text = " ".join(self.ctx.module.code_for_node(node).split())
        return text if len(text) <= limit else text[: limit - 1] + "…"
