"""Shared AST helpers for rules DP201-DP203 and DP301.

``index_for(ctx)`` builds, once per file and only when a rule's cheap textual check found a
candidate, a ``Dp2Index``: parent links, a pre-order position for every node, the loops and
functions of the module and the import aliases. Everything else here is a small pure function
over libcst nodes. Scanned code is never imported or executed.
"""
from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

import libcst as cst

from dpcheck.rules._ancestry import Ancestry

from dpcheck.rule import FileContext

LoopNode = cst.For | cst.While
COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)
SCOPES = (cst.FunctionDef, cst.Lambda, cst.ClassDef, *COMPREHENSIONS)


@dataclass
class Dp2Index(Ancestry):
    module: cst.Module
    parents: dict[cst.CSTNode, cst.CSTNode] = field(default_factory=dict)
    order: dict[cst.CSTNode, int] = field(default_factory=dict)
    #: last pre-order position inside each node's subtree
    last: dict[cst.CSTNode, int] = field(default_factory=dict)
    functions: list[cst.FunctionDef] = field(default_factory=list)
    classes: list[cst.ClassDef] = field(default_factory=list)
    loops: list[cst.CSTNode] = field(default_factory=list)
    calls: list[cst.Call] = field(default_factory=list)
    imports: dict[str, str] = field(default_factory=dict)
    children: dict[cst.CSTNode, tuple[cst.CSTNode, ...]] = field(default_factory=dict)
    _code: dict[cst.CSTNode, str] = field(default_factory=dict)
    _words: dict[cst.CSTNode, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        counter = 0
        stack: list[tuple[cst.CSTNode, bool]] = [(self.module, False)]
        while stack:
            node, done = stack.pop()
            if done:
                self.last[node] = counter - 1
                continue
            self.order[node] = counter
            counter += 1
            kind = type(node)
            if kind is cst.Call:
                self.calls.append(node)
            elif kind is cst.For or kind is cst.While:
                self.loops.append(node)
            elif kind is cst.FunctionDef:
                self.functions.append(node)
            elif kind is cst.ClassDef:
                self.classes.append(node)
            elif kind is cst.Import:
                for alias in node.names:
                    full = dotted(alias.name) or ""
                    if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                        self.imports[alias.asname.name.value] = full
                    else:
                        self.imports.setdefault(full.split(".")[0], full.split(".")[0])
            elif kind is cst.ImportFrom and node.module is not None:
                base = dotted(node.module) or ""
                if not isinstance(node.names, cst.ImportStar):
                    for alias in node.names:
                        name = dotted(alias.name) or ""
                        local = name
                        if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                            local = alias.asname.name.value
                        self.imports[local] = f"{base}.{name}"
            stack.append((node, True))
            children = kids(node)
            self.children[node] = children
            for child in children:
                self.parents[child] = node
            stack.extend((c, False) for c in reversed(children))

    def inside(self, node: cst.CSTNode, container: cst.CSTNode) -> bool:
        pos = self.order[node]
        return self.order[container] <= pos <= self.last[container]

    def enclosing_loops(self, node: cst.CSTNode) -> list[cst.CSTNode]:
        """Loops (for/while/comprehension) around ``node`` inside its function, innermost first."""
        out: list[cst.CSTNode] = []
        for anc in self.ancestors(node):
            if isinstance(anc, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                break
            if isinstance(anc, (cst.For, cst.While, *COMPREHENSIONS)):
                out.append(anc)
        return out

    def scope_of(self, node: cst.CSTNode) -> cst.CSTNode:
        return self.enclosing_function(node) or self.module

    def qualify(self, expr: cst.BaseExpression) -> str | None:
        name = dotted(expr)
        if name is None:
            return None
        head, _, rest = name.partition(".")
        full = self.imports.get(head)
        if full is None:
            return name
        return f"{full}.{rest}" if rest else full

    def code(self, node: cst.CSTNode) -> str:
        text = self._code.get(node)
        if text is None:
            text = self._code[node] = self.module.code_for_node(node)
        return text


    def text_of(self, node: cst.CSTNode) -> str:
        """Identifiers and string literals of ``node``, one per line (a cheap stand-in for its code)."""
        text = self._words.get(node)
        if text is None:
            parts: list[str] = []
            if type(node) in (cst.FunctionDef, cst.ClassDef):
                parts.append(node.name.value)
            for sub in walk(node):
                kind = type(sub)
                if kind is cst.Name:
                    parts.append(sub.value)
                elif kind is cst.SimpleString:
                    parts.append(sub.value)
            text = self._words[node] = "\n".join(parts)
        return text


#: children of the file being analysed (set by ``index_for``), so ``walk`` skips recomputing them
_CHILDREN: dict[cst.CSTNode, tuple[cst.CSTNode, ...]] = {}


def index_for(ctx: FileContext) -> Dp2Index:
    global _CHILDREN
    cached = getattr(ctx, "_dp2_index", None)
    if cached is None:
        cached = Dp2Index(ctx.module)
        ctx._dp2_index = cached  # type: ignore[attr-defined]
    _CHILDREN = cached.children
    return cached


# ---- expressions ---------------------------------------------------------------------------
def dotted(expr: cst.CSTNode | None) -> str | None:
    """``a.b.c`` for Name/Attribute chains, else None."""
    parts: list[str] = []
    while isinstance(expr, cst.Attribute):
        parts.append(expr.attr.value)
        expr = expr.value
    if isinstance(expr, cst.Name):
        parts.append(expr.value)
        return ".".join(reversed(parts))
    return None


def last_name(expr: cst.CSTNode | None) -> str | None:
    if isinstance(expr, cst.Attribute):
        return expr.attr.value
    if isinstance(expr, cst.Name):
        return expr.value
    return None


def call_name(call: cst.Call) -> str | None:
    return last_name(call.func)


_FORMAT_PREFIXES = (
    "whitespace", "lpar", "rpar", "leading_lines", "lines_after", "semicolon", "comma", "equal",
    "colon", "lbracket", "rbracket", "lbrace", "rbrace", "asynchronous", "header", "footer", "dot",
    "operator", "trailing_whitespace", "newline", "first_line", "empty_lines", "star",
)
_FIELDS: dict[type, tuple[str, ...]] = {}


def kids(node: cst.CSTNode) -> tuple[cst.CSTNode, ...]:
    """Syntactic children of ``node`` without whitespace/punctuation, in field order.

    Much cheaper than ``CSTNode.children``, which runs libcst's visitor machinery per call.
    """
    names = _FIELDS.get(type(node))
    if names is None:
        names = tuple(f.name for f in dataclasses.fields(node) if not f.name.startswith(_FORMAT_PREFIXES))
        _FIELDS[type(node)] = names
    out: list[cst.CSTNode] = []
    for name in names:
        value = getattr(node, name)
        kind = type(value)
        if kind is list or kind is tuple:
            out.extend(v for v in value if _is_node(type(v)))
        elif _is_node(kind):
            out.append(value)
    return tuple(out)


_NODE_TYPES: dict[type, bool] = {}


def _is_node(kind: type) -> bool:
    known = _NODE_TYPES.get(kind)
    if known is None:
        known = _NODE_TYPES[kind] = issubclass(kind, cst.CSTNode)
    return known


_SCOPE_TYPES = frozenset({cst.FunctionDef, cst.ClassDef, cst.Lambda})


def walk(node: cst.CSTNode, *, into_scopes: bool = True) -> Iterator[cst.CSTNode]:
    """Pre-order nodes of ``node``'s subtree (``node`` included)."""
    stack = [node]
    while stack:
        cur = stack.pop()
        yield cur
        if not into_scopes and cur is not node and type(cur) in _SCOPE_TYPES:
            continue
        children = _CHILDREN.get(cur)
        if children is None:
            children = kids(cur)
        stack.extend(reversed(children))


def refs(node: cst.CSTNode) -> set[str]:
    """Names and dotted attribute chains (``self.x``) read or written in ``node``."""
    out: set[str] = set()
    for sub in walk(node):
        kind = type(sub)
        if kind is cst.Name:
            out.add(sub.value)
        elif kind is cst.Attribute:
            name = dotted(sub)
            if name is not None:
                out.add(name)
    return out


def identifiers(node: cst.CSTNode) -> set[str]:
    """Plain identifiers (names and attribute names) in ``node``."""
    out: set[str] = set()
    for sub in walk(node):
        if isinstance(sub, cst.Name):
            out.add(sub.value)
        elif isinstance(sub, cst.Attribute):
            out.add(sub.attr.value)
    return out


def target_names(target: cst.CSTNode) -> set[str]:
    """Names (and ``self.x`` chains) bound by an assignment/for target."""
    if isinstance(target, (cst.Name, cst.Attribute)):
        name = dotted(target)
        return {name} if name else set()
    if isinstance(target, (cst.Tuple, cst.List)):
        out: set[str] = set()
        for el in target.elements:
            out |= target_names(el.value)
        return out
    if isinstance(target, cst.StarredElement):
        return target_names(target.value)
    return set()


def assigned(stmt: cst.CSTNode) -> tuple[set[str], cst.BaseExpression | None]:
    """Names bound by a simple assignment-like node and the value expression."""
    if isinstance(stmt, cst.Assign):
        names: set[str] = set()
        for t in stmt.targets:
            names |= target_names(t.target)
        return names, stmt.value
    if isinstance(stmt, cst.AnnAssign):
        return target_names(stmt.target), stmt.value
    if isinstance(stmt, cst.AugAssign):
        return target_names(stmt.target), stmt.value
    if isinstance(stmt, cst.NamedExpr):
        return target_names(stmt.target), stmt.value
    return set(), None


def bound_in(node: cst.CSTNode) -> set[str]:
    """Every name bound anywhere inside ``node`` (assignments, loop targets, with/except names)."""
    out: set[str] = set()
    for sub in walk(node):
        if isinstance(sub, (cst.Assign, cst.AnnAssign, cst.AugAssign, cst.NamedExpr)):
            out |= assigned(sub)[0]
        elif isinstance(sub, (cst.For, cst.CompFor)):
            out |= target_names(sub.target)
        elif isinstance(sub, cst.AsName):
            out |= target_names(sub.name)
    return out


def loop_targets(loop: cst.CSTNode) -> set[str]:
    if isinstance(loop, cst.For):
        return target_names(loop.target)
    if isinstance(loop, COMPREHENSIONS):
        out: set[str] = set()
        comp: cst.CompFor | None = loop.for_in
        while comp is not None:
            out |= target_names(comp.target)
            comp = comp.inner_for_in
        return out
    return set()


def loop_iter(loop: cst.CSTNode) -> cst.BaseExpression | None:
    if isinstance(loop, cst.For):
        return loop.iter
    if isinstance(loop, COMPREHENSIONS):
        return loop.for_in.iter
    return None


def range_arg(expr: cst.BaseExpression | None) -> cst.BaseExpression | None:
    """``n`` for ``range(n)`` / ``range(0, n)`` / ``tqdm(range(n))`` / ``trange(n)``."""
    if not isinstance(expr, cst.Call):
        return None
    name = call_name(expr)
    if name in {"tqdm", "track", "enumerate"} and expr.args:
        return range_arg(expr.args[0].value)
    if name in {"range", "trange", "xrange"} and expr.args:
        positional = [a.value for a in expr.args if a.keyword is None]
        if not positional:
            return None
        return positional[0] if len(positional) == 1 else positional[1]
    return None


def functions_by_name(index: Dp2Index) -> dict[str, list[cst.FunctionDef]]:
    out: dict[str, list[cst.FunctionDef]] = {}
    for fn in index.functions:
        out.setdefault(fn.name.value, []).append(fn)
    return out


def params(fn: cst.FunctionDef) -> list[str]:
    p = fn.params
    return [x.name.value for x in (*p.posonly_params, *p.params, *p.kwonly_params)]


def statements(body: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """Small statements and compound headers of ``body`` in source order, not entering nested defs."""
    for node in walk(body, into_scopes=False):
        if isinstance(node, (cst.Assign, cst.AnnAssign, cst.AugAssign, cst.Expr, cst.Return)):
            yield node


def words(name: str) -> set[str]:
    """Lower-case word pieces of an identifier: ``xTrainData`` -> {x, train, data}."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name)
    return {w for w in re.split(r"[^A-Za-z0-9]+", spaced.lower()) if w}


def any_word(names: Iterable[str], pattern: re.Pattern[str]) -> bool:
    return any(pattern.search(n) for n in names)


# ---- DP vocabulary -------------------------------------------------------------------------
TEACHER_RE = re.compile(r"(?i)teacher")
PATE_RE = re.compile(r"(?<![A-Za-z])(?:pate|PATE|Pate)(?=$|[^a-z]|gan)")
PATE_CLAIM_RE = re.compile(
    r"(?<![A-Za-z])(?:pate|PATE|Pate)(?=$|[^a-z]|gan)|(?i:differential(?:ly)?[ _-]priva)|\bDP[- ]?GAN\b"
)
EPSILON_RE = re.compile(r"(?i)^(?:target_)?(?:epsilon|eps)(?:_?target|_budget)?$|^(?:self\.)?(?:target_)?epsilon")
NOISE_CALL = {
    "laplace", "normal", "gumbel", "randn", "standard_normal", "normal_", "exponential",
    "Laplace", "Normal", "gaussian", "randn_like",
}


def is_noise_call(call: cst.Call) -> bool:
    name = call_name(call) or ""
    if name in NOISE_CALL:
        return True
    lowered = name.lower()
    return any(w in lowered for w in ("laplace", "gauss", "noise", "dp_", "private", "noisy"))


def has_noise(node: cst.CSTNode) -> bool:
    return any(isinstance(n, cst.Call) and is_noise_call(n) for n in walk(node))


def line_of(ctx: FileContext, node: cst.CSTNode) -> int:
    from libcst.metadata import PositionProvider

    return ctx.metadata(PositionProvider)[node].start.line


_TRAIN_CALLS = {"backward", "minimize", "apply_gradients", "train_on_batch", "partial_fit", "fit", "step"}
_SESSION = {"sess", "session", "self.sess", "self.session", "self._sess", "self._session"}


def trains(body: cst.CSTNode) -> bool:
    """Does ``body`` contain a training step (backward/optimizer step/minimize/TF1 session run/fit)?"""
    for sub in walk(body, into_scopes=False):
        if not isinstance(sub, cst.Call):
            continue
        name = call_name(sub)
        if name in _TRAIN_CALLS:
            if name == "step":
                receiver = dotted(sub.func.value) if isinstance(sub.func, cst.Attribute) else None
                if not receiver or not re.search(r"(?i)opt|solver|trainer|model|self$", receiver):
                    continue
            return True
        if name == "run" and isinstance(sub.func, cst.Attribute) and (dotted(sub.func.value) or "") in _SESSION:
            return True
    return False


DATA_WORDS = {
    "x", "xs", "data", "df", "dataset", "train", "training", "real", "records", "table",
    "features", "raw", "inputs", "input", "samples", "rows", "orig", "original",
}


def data_like(name: str) -> bool:
    """Does an identifier look like a dataset (``X_train``, ``df``, ``real_data``, ``self.data``)?"""
    last = name.split(".")[-1]
    return bool(words(last) & DATA_WORDS) or last in {"X", "x", "D"}
