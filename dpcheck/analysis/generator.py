"""Helpers of rules DP302-DP304 and DP401-DP403 over the shared analysis core.

``index_for(ctx)`` is these rules' view of ``ctx.analysis`` (the file's one core index, built on
first use); the generic node helpers come from :mod:`dpcheck.analysis.syntax`. What is left here
is the families' own vocabulary: assignment keys, taint over a scope, generator-output names.
"""
from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterable, Sequence

import libcst as cst


from dpcheck.analysis import FileAnalysis
from dpcheck.analysis.astfacts import dotted as ast_dotted
from dpcheck.analysis.astfacts import read_names, spread
from dpcheck.analysis.view import CoreView
from dpcheck.analysis.syntax import call_name, dotted, value_refs, walk

LoopNode = cst.For | cst.While


class ModuleIndex(CoreView):
    """The DP3/DP4 rules' view of the file's shared core index (``ctx.analysis``): no walk of its own."""

    def __init__(self, fa: FileAnalysis) -> None:
        super().__init__(fa)
        self.enclosing_statement = fa.enclosing_statement
        self.functions_named = fa.functions_named
        self._simple_assigns: dict[cst.CSTNode, list[cst.Assign]] = {}

    @property
    def returns(self) -> list[cst.Return]:
        return self.fa.nodes(cst.Return)  # type: ignore[return-value]

    @property
    def compares(self) -> list[cst.Comparison]:
        return self.fa.nodes(cst.Comparison)  # type: ignore[return-value]

    @property
    def binops(self) -> list[cst.BinaryOperation]:
        return self.fa.nodes(cst.BinaryOperation)  # type: ignore[return-value]

    @property
    def assigns(self) -> list[cst.Assign | cst.AnnAssign | cst.AugAssign]:
        found = [*self.fa.nodes(cst.Assign), *self.fa.nodes(cst.AnnAssign), *self.fa.nodes(cst.AugAssign)]
        return sorted(found, key=self.order.__getitem__)  # type: ignore[return-value]

    def enclosing_loops(self, node: cst.CSTNode) -> list[LoopNode]:
        """``for``/``while`` loops whose body holds ``node``, innermost first, inside its function."""
        return self.fa.enclosing_loops(node)  # type: ignore[return-value]

    def simple_assigns(self, scope: cst.CSTNode) -> list[cst.Assign]:
        """Plain ``=`` statements inside ``scope`` (cached per scope)."""
        found = self._simple_assigns.get(scope)
        if found is None:
            found = self._simple_assigns[scope] = [n for n in walk(scope) if type(n) is cst.Assign]
        return found


def index_for(ctx: object) -> ModuleIndex:
    cached = ctx.__dict__.get("_dp34_index")
    if cached is None:
        cached = ModuleIndex(ctx.analysis)
        ctx.__dict__["_dp34_index"] = cached
    _STATE.gan_context = gan_context(ctx.source)
    return cached


# ---- expression helpers (the generic ones live in dpcheck.analysis.syntax) ---------------------
def target_key(expr: cst.BaseExpression) -> str | None:
    """A stable key for an assignment target: ``q``, ``self.q``; ``q[i]`` -> ``q``."""
    while isinstance(expr, cst.Subscript):
        expr = expr.value
    return dotted(expr)


_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def tokens(identifier: str) -> set[str]:
    """``self.G_sample`` -> {'self', 'g', 'sample'}; ``netG`` -> {'net', 'g', 'netg'}."""
    out: set[str] = set()
    for part in re.split(r"[._]+", identifier):
        if not part:
            continue
        out.add(part.lower())
        out.update(p.lower() for p in _CAMEL.sub(" ", part).split())
    return out


def code(module: cst.Module, node: cst.CSTNode) -> str:
    return re.sub(r"\s+", "", module.code_for_node(node))


def assignments_in(func: cst.CSTNode, index: ModuleIndex, *,
                   nested: bool = True) -> list[tuple[str, cst.BaseExpression, cst.CSTNode]]:
    """(target key, value, statement) for simple assignments inside ``func``, in source order;
    ``nested=False`` leaves out the functions, lambdas and classes defined inside it (their names
    are other variables).

    Tuple unpacking ``a, b = f()`` maps each name to the whole right-hand side.
    """
    out: list[tuple[str, cst.BaseExpression, cst.CSTNode]] = []
    for node in walk(func, into_scopes=nested):
        if isinstance(node, cst.Assign):
            for tgt in node.targets:
                for key in _target_keys(tgt.target):
                    out.append((key, node.value, node))
        elif isinstance(node, (cst.AnnAssign, cst.AugAssign)) and node.value is not None:
            key = target_key(node.target)
            if key is not None:
                out.append((key, node.value, node))
        elif isinstance(node, cst.NamedExpr):
            key = target_key(node.target)
            if key is not None:
                out.append((key, node.value, node))
        elif isinstance(node, (cst.For, cst.CompFor)):
            for key in _target_keys(node.target):
                out.append((key, node.iter, node))
    return out


def _target_keys(expr: cst.BaseExpression) -> Iterable[str]:
    if isinstance(expr, (cst.Tuple, cst.List)):
        for el in expr.elements:
            inner = el.value.value if isinstance(el.value, cst.StarredElement) else el.value
            yield from _target_keys(inner)
        return
    key = target_key(expr)
    if key is not None:
        yield key


def taint(
    assigns: list[tuple[str, cst.BaseExpression, cst.CSTNode]],
    is_source: Callable[[cst.BaseExpression], bool],
    seed: Iterable[str] = (),
) -> set[str]:
    """Names whose value derives (transitively, order-insensitive) from a source expression."""
    tainted = set(seed)
    changed = True
    while changed:
        changed = False
        for key, value, _ in assigns:
            if key in tainted:
                continue
            if is_source(value) or value_refs(value) & tainted:
                tainted.add(key)
                changed = True
    return tainted


# ---- generator output ------------------------------------------------------------------------
#: words that name generator output anywhere inside an identifier (``fake_data``, ``x_synthetic``)
GEN_TOKENS = {"generated", "netg", "fake", "fakes", "synthetic", "synth"}
#: "fake" also names FakeTensors, fake quantisation, mocks: it counts only in GAN code
_GAN_TEXT = re.compile(
    r"\b[Dd]iscriminator|\bnetD\b|\b[Cc]ritic\b|\b[Ll]atent|\b[Tt]eacher|\bG_sample\b|\bnetG\b|\bG\("
    r"|\b(?:self\.)?generator\(|\bGenerator\("
)

#: a substring of every match of ``_GAN_TEXT`` (``in`` tests are far faster than the regex)
_GAN_LITERALS = ("iscriminator", "netD", "ritic", "atent", "eacher", "G_sample", "netG", "G(", "enerator(")


def has_any(text: str, literals: Iterable[str]) -> bool:
    return any(lit in text for lit in literals)


#: ``_GAN_TEXT`` split into (literal, offset of the literal in a match, pattern of the match)
_GAN_PARTS = (
    ("iscriminator", 1, re.compile(r"\b[Dd]iscriminator")),
    ("netD", 0, re.compile(r"\bnetD\b")),
    ("ritic", 1, re.compile(r"\b[Cc]ritic\b")),
    ("atent", 1, re.compile(r"\b[Ll]atent")),
    ("eacher", 1, re.compile(r"\b[Tt]eacher")),
    ("G_sample", 0, re.compile(r"\bG_sample\b")),
    ("netG", 0, re.compile(r"\bnetG\b")),
    ("G(", 0, re.compile(r"\bG\(")),
    # ``\b(?:self\.)?generator\(`` matches exactly where ``\bgenerator\(`` does
    ("enerator(", 1, re.compile(r"\b[Gg]enerator\(")),
)


def gan_context(source: str) -> bool:
    """Does ``source`` read like GAN code (weak generator names count)? Exactly
    ``_GAN_TEXT.search(source)``, by ``str.find`` of a literal of each alternative."""
    for lit, off, pat in _GAN_PARTS:
        i = source.find(lit)
        while i != -1:
            if i >= off and pat.match(source, i - off):
                return True
            i = source.find(lit, i + 1)
    return False


class _FileState:
    gan_context = True


_STATE = _FileState()
#: whole identifier segments that name the GAN generator or its output: ``G(z)``,
#: ``model.generate(n)``, ``self.generator_net``, ``gen_out`` — but not ``apply_series_generator``
#: or ``_io_to_generator`` (Python generators), where the word comes last in a compound
_GEN_SEGMENT = re.compile(
    r"_*(?:netG|G_\w+|[Gg]en|[Gg]enerator|[Gg]enerator_?\w*|\w*_gen"
    r"|[Gg]en_(?:out|output|outputs|data|samples?|model|net|network|x|z|batch|rows|imgs|images|fake|synth)\w*)"
)
#: ambiguous outside GAN code (``G`` is a group size, ``generate`` a template method, ``fake`` a
#: FakeTensor): they count only in files that also mention discriminators, latents, teachers…
_WEAK_GEN_SEGMENT = re.compile(r"_*(?:G|generate|\w+_G)")
#: methods of random number generators (often named ``generator``): their output is not a GAN's
_RNG_METHODS = {
    "uniform", "normal", "standard_normal", "randn", "rand", "randint", "integers", "random", "permutation",
    "choice", "shuffle", "binomial", "poisson", "multinomial", "beta", "gamma", "exponential", "laplace",
    "manual_seed", "seed", "get_state", "set_state", "bytes", "random_sample", "spawn", "bit_generator",
}
# identifiers that contain a generator word but name something else (random bit generators,
# code generators, python generators)
_NOT_GEN = {
    "bit", "bitgen", "rng", "random", "seed", "seeds", "state", "code", "codegen", "expr", "func",
    "function", "fn", "config", "cfg", "name", "names", "id", "ids", "key", "keys", "type", "types",
    "docs", "doc", "report", "html", "sql", "parser", "token", "tokens", "py", "c", "cpp", "torch",
    "np", "numpy", "tf", "jax", "cuda", "graph", "script", "module", "api", "impl", "stub", "test",
    "tests", "wrapper", "kernel", "kernels", "meta", "schema", "template", "int", "ints", "integer",
    "integers", "index", "indices", "idx", "mask", "masks", "bool", "bools",
    # compiler / tracing vocabulary (torch FakeTensor, fake quantisation, code generation)
    "mode", "modes", "quant", "quantize", "fakequant", "tensor", "tensors", "args", "kwargs", "alias",
    "aliases", "info", "infos", "op", "ops", "prop", "backend", "device", "mesh", "export", "trace",
    "artifact", "node", "nodes", "proxy", "shape", "shapes", "dtype", "guard", "guards", "symbol",
    "base", "bases", "view", "views", "aliased",
}

#: textual prefilter: some identifier that can name generator output
GEN_TEXT = re.compile(
    r"\b(?:G|netG|gen|generate)\b|\bG_\w|\w_G\b|[Gg]enerator|[Gg]enerated|[Ff]ake|[Ss]ynth|\bgen_|_gen\b"
)


def is_gen_identifier(name: str, weak: bool | None = None) -> bool:
    """``weak``: accept the weak spellings (``G``, ``fake``) whatever the file's GAN context."""
    toks = tokens(name)
    if toks & _NOT_GEN:
        return False
    weak_ok = _STATE.gan_context if weak is None else weak
    for segment in name.split("."):
        seg_tokens = tokens(segment)
        if _GEN_SEGMENT.fullmatch(segment) or seg_tokens & GEN_TOKENS - {"fake", "fakes"}:
            return True
        if weak_ok and (_WEAK_GEN_SEGMENT.fullmatch(segment) or seg_tokens & {"fake", "fakes"}):
            return True
    return False


def is_generator_call(call: cst.Call) -> bool:
    """A call that produces generator output: ``G(z)``, ``self.generator(z)``,
    ``sess.run(G_sample, …)``, ``model.generate(n)``."""
    name = dotted(call.func)
    if call_name(call) in _RNG_METHODS:
        return False
    if name is not None and is_gen_identifier(name):
        return True
    if call_name(call) == "run":
        return any(
            isinstance(a.value, (cst.Name, cst.Attribute)) and is_gen_identifier(dotted(a.value) or "")
            for a in call.args
        )
    return False


def contains_generator_call(expr: cst.CSTNode) -> bool:
    return any(isinstance(n, cst.Call) and is_generator_call(n) for n in walk(expr))


#: identifiers that may name the generator or its output in any file (a superset of what
#: :func:`is_gen_identifier` accepts without GAN context) ...
_STRONG_GEN_TEXT = re.compile(
    r"\b_*(?:[Gg]en(?:\b|_|erator)|G_|netG)|_gen\b|[Gg]enerated|GENERATED|[Ss]ynth|SYNTH|[Nn](?:et|ET)[Gg]"
)
#: ... and those that count only where the source also reads like GAN code (``_GAN_TEXT``)
_WEAK_GEN_TEXT = re.compile(r"\b_*(?:G|generate)\b|_G\b|[Ff]ake|FAKE")


#: the rest of a called dotted name (``self.gen .sample (``), after a match inside it
_CALL_TAIL = re.compile(r"\w*(?:[\s\\]*\.[\s\\]*\w+)*[\s\\]*\(")
_CALL_TAIL_RAW = re.compile(r"\w*(?:(?:[\s\\]|#[^\n]*(?![^\n]))*\.(?:[\s\\]|#[^\n]*(?![^\n]))*\w+)*(?:[\s\\]|#[^\n]*(?![^\n]))*\(")
#: ``sess.run(G_sample, …)`` and a bare ``run(…)``: their generator identifier is an argument
_RUN_CALL = re.compile(r"\brun[\s\\]*\(")


def _called(pattern: re.Pattern[str], code: str) -> bool:
    """A match of ``pattern`` inside a dotted name that is called: ``G(z)``, ``self.gen.sample(n)``."""
    for m in pattern.finditer(code):
        if _CALL_TAIL.match(code, m.end()):
            return True
    return False


#: literal-prefixed patterns (fast scans) one of which is inside every match of
#: ``_STRONG_GEN_TEXT`` / ``_WEAK_GEN_TEXT``
_STRONG_GEN_PRE = (re.compile(r"gen(?:\b|_|erat)"), re.compile(r"Gen(?:\b|_|erat)"))
STRONG_GEN_LITERALS = ("G_", "GENERATED", "ynth", "YNTH", "etG", "etg", "ETG", "ETg")
WEAK_GEN_LITERALS = ("G", "generate", "ake", "AKE")


def strong_gen_raw(text: str) -> bool:
    """``_STRONG_GEN_TEXT.search(text)``, checked only inside the identifiers around a literal
    that every match holds (literal scans are fast; the regex scanning every position is not)."""
    for lit in ("gen", "Gen") + STRONG_GEN_LITERALS:
        i = text.find(lit)
        while i != -1:
            start = i
            while start > 0 and (text[start - 1].isalnum() or text[start - 1] == "_"):
                start -= 1
            end = _IDENT_REST.match(text, i).end()
            if _STRONG_GEN_TEXT.search(text, start, end):
                return True
            i = text.find(lit, end)
    return False


_IDENT_REST = re.compile(r"\w*")


def params_gen(source: str, code: str, names: set[str] | None = None) -> bool:
    """Some ``def`` (named with a token of ``names``, when given) whose parameter list (in
    ``code``) may name generator output: the rules seed their taint with such parameters."""
    for m in _DEF_NAME.finditer(code):
        if names is not None and not tokens(m.group(1)) & names:
            continue
        depth, i = 1, m.end()
        while i < len(code) and depth:
            ch = code[i]
            if ch in "([{":
                depth += 1
            elif ch in ")]}":
                depth -= 1
            i += 1
        if gen_text(source, code[m.end():i]):
            return True
    return False


_DEF_NAME = re.compile(r"def[\s\\]+(\w+)[\s\\]*\(")


def gen_raw(source: str) -> bool:
    """Cheap raw-source necessary condition of :func:`gen_text` (any ``called``)."""
    return strong_gen_raw(source) or (has_any(source, WEAK_GEN_LITERALS) and gan_context(source))


#: whitespace between the parts of a dotted name and its call: backslash continuations and,
#: in the raw source, comments (inside brackets) count too
_WS = r"[\s\\]*"
_WS_RAW = r"(?:[\s\\]|#[^\n]*(?![^\n]))*"
_TAIL = rf"\w*(?:{_WS_RAW}\.{_WS_RAW}\w+)*{_WS_RAW}\("
#: one literal of each ``*_GEN_LITERALS`` ending a dotted name that is called (see ``_called``)
_STRONG_CALLED_PRE = tuple(re.compile(re.escape(lit) + _TAIL) for lit in ("gen", "Gen") + STRONG_GEN_LITERALS)
_WEAK_CALLED_PRE = tuple(re.compile(re.escape(lit) + _TAIL) for lit in WEAK_GEN_LITERALS)
_RUN_PRE = re.compile(r"run" + _WS_RAW + r"\(")


def _called_fast(pattern: re.Pattern[str], pres: Sequence[re.Pattern[str]], text: str) -> bool:
    """``_called(pattern, text)``, scanning only around the candidates of the literal-prefixed
    ``pres`` (each match of ``pattern`` followed by a call tail lies in such a candidate's
    dotted name, which is searched from the start of its first identifier)."""
    for pre in pres:
        for cand in pre.finditer(text):
            start = cand.start()
            while start > 0 and (text[start - 1].isalnum() or text[start - 1] == "_"):
                start -= 1
            for m in pattern.finditer(text, start, cand.end()):
                if _CALL_TAIL_RAW.match(text, m.end()):
                    return True
    return False


def gen_called_raw(source: str) -> bool:
    """Necessary condition of ``gen_text(source, code, called=True)`` read on the raw source
    (cheap: literal-prefixed scans), so most files are excluded before ``code_only``."""
    if _called_fast(_STRONG_GEN_TEXT, _STRONG_CALLED_PRE, source):
        return True
    weak = has_any(source, WEAK_GEN_LITERALS) and gan_context(source)
    if weak and _called_fast(_WEAK_GEN_TEXT, _WEAK_CALLED_PRE, source):
        return True
    return _RUN_PRE.search(source) is not None and (weak or strong_gen_raw(source))


def gen_text(source: str, code: str, *, called: bool = False) -> bool:
    """Could ``code`` (``source`` without comments and strings) name a GAN generator or its
    output (:func:`is_gen_identifier`)? With ``called``, only in a called dotted name (``G(z)``,
    ``self.gen.sample(n)``) or as an argument of ``run(`` — what :func:`is_generator_call`
    needs. The GAN context of weak names is read from the raw source exactly as
    :func:`index_for` does."""
    strong = strong_gen_raw(code)
    if not called:
        return strong or (gan_context(source) and _WEAK_GEN_TEXT.search(code) is not None)
    if strong and _called_fast(_STRONG_GEN_TEXT, _STRONG_CALLED_PRE, code):
        return True
    weak = gan_context(source) and _WEAK_GEN_TEXT.search(code) is not None
    if weak and _called_fast(_WEAK_GEN_TEXT, _WEAK_CALLED_PRE, code):
        return True
    if _RUN_CALL.search(code):
        return weak or strong
    return False


# ---- ast gates (``Rule.may_report``) of the DP4xx rules
def ast_generated(expr: ast.AST, tainted: set[str]) -> bool:
    """``_is_generated`` on ``ast``, widened: anything in ``expr``, weak generator spellings too."""
    for node in ast.walk(expr):
        if isinstance(node, (ast.Name, ast.Attribute)):
            name = ast_dotted(node)
            if name is not None and (name in tainted or name.split(".")[0] in tainted
                                     or name != "self" and is_gen_identifier(name, weak=True)):
                return True
            if isinstance(node, ast.Attribute) and is_gen_identifier(node.attr, weak=True):
                return True
    return False


def ast_gen_taint(func: ast.AST) -> set[str]:
    """``_gen_taint`` on ``ast``, widened: a value with a generator name anywhere taints its targets."""
    args = func.args  # type: ignore[attr-defined]
    tainted = {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs) if is_gen_identifier(a.arg, weak=True)}
    flows: list[tuple[list[str], ast.AST]] = []
    for node in ast.walk(func):
        if isinstance(node, ast.Assign):
            flows.append(([n for t in node.targets for n in read_names(t)], node.value))
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign, ast.NamedExpr)) and node.value is not None:
            flows.append((list(read_names(node.target)), node.value))
        elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
            flows.append((list(read_names(node.target)), node.iter))
    pending = [(keys, read_names(value), ast_generated(value, set())) for keys, value in flows if keys]
    return spread(tainted, pending)
