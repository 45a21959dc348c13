"""Which functions, classes and modules are DP code.

A scope has DP context when it shows a strong signal (a parameter/variable/attribute named like a
privacy budget, a call of a DP library, a noise or accountant primitive with a DP-named scale, a
docstring or a name claiming differential privacy) or two different weak ones (``delta`` and
``sigma``; ``eps`` alone is as often a numerical-stability constant). A class has DP context when
its own body or one of its methods does; a function without signals of its own has it when a
function with DP context in the same module calls it.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from dpcheck.analysis.index import SyntaxIndex
from dpcheck.analysis.syntax import call_name, dotted, last_name, number, walk, words
from dpcheck.analysis.vocabulary import (
    ACCOUNTANT_CALL, ANCHOR_DP_WORDS, DP_LIBRARIES, DP_NAME, NOISE_DRAWS, STRONG_NOISE_DRAWS, dp_name_strength,
    dp_claim, dp_generator_name, stability_constant,
)
from dpcheck.cstwalk import children


#: a privacy-named function with these words measures privacy empirically (DCR, NNDR, an attack's
#: score); it does not claim differential privacy
_EVALUATION_WORDS = frozenset({"evaluate", "evaluation", "eval", "metric", "metrics", "score", "scores", "risk"})


def _privacy_evaluation(name: str) -> bool:
    """``_evaluate_privacy_preservation``, ``privacy_metrics``, ``compute_privacy_risk``."""
    pieces = {w.lower() for w in words(name)}
    return "privacy" in pieces and bool(pieces & _EVALUATION_WORDS) and not pieces & {"dp", "differential"}


@dataclass
class DPContext:
    """The DP evidence of one function, class or module. ``reasons`` is empty when not DP."""

    scope: cst.CSTNode = field(repr=False)
    reasons: list[str] = field(default_factory=list)
    #: weak hints that alone do not make the scope DP code
    hints: list[str] = field(default_factory=list)

    @property
    def is_dp(self) -> bool:
        return bool(self.reasons)

    def __bool__(self) -> bool:
        return self.is_dp


#: a cheap necessary condition for any signal in the (lower-cased) source text
_ANY_SIGNAL = (
    "eps", "delta", "rho", "sigma", "budget", "priv", "dp", "pate", "laplace", "gumbel", "account", "rdp",
    "noise", "sensitiv", "lam", "ε", "δ", "ρ", "mech", "opacus", "tmlt", "autodp", "snsynth", "smartnoise",
    "mbi", "clip", "moment", "teacher", "orders", "gnmax", "noisy", "renyi", "rényi", "1.25",
)
_SCALE_KEYWORDS = frozenset({"scale", "std", "stddev", "sigma", "b", "noise_scale", "beta"})


class DPContexts:
    def __init__(self, index: SyntaxIndex, source: str, qualify) -> None:  # noqa: ANN001 - callable
        self.index = index
        self._qualify = qualify
        self._strong: dict[cst.CSTNode, list[str]] = {}
        self._weak: dict[cst.CSTNode, dict[str, str]] = {}
        self._contexts: dict[cst.CSTNode, DPContext] = {}
        #: the DP generator the module names (``pategan``, ``"PATE-GAN"``), if any
        self.generator_name: str | None = None
        lower = source.lower()
        if any(word in lower for word in _ANY_SIGNAL):
            self._collect()
        self._aggregate()

    # ---- queries ---------------------------------------------------------------------------
    def of_scope(self, scope: cst.CSTNode) -> DPContext:
        ctx = self._contexts.get(scope)
        if ctx is None:
            ctx = self._contexts[scope] = DPContext(scope)
        return ctx

    def context_of(self, node: cst.CSTNode) -> DPContext:
        """Context of the innermost function, else class, else module enclosing ``node``."""
        for anc in (node, *self.index.ancestors(node)):
            if type(anc) in (cst.FunctionDef, cst.ClassDef):
                return self.of_scope(anc)
        return self.of_scope(self.index.module)

    def any_dp(self) -> bool:
        """Does any function, class or the module have DP context?"""
        return any(ctx.is_dp for ctx in self._contexts.values())

    def in_dp_context(self, node: cst.CSTNode) -> bool:
        if self.of_scope(self.index.module).is_dp:
            return True
        for anc in (node, *self.index.ancestors(node)):
            if type(anc) in (cst.FunctionDef, cst.ClassDef) and self.of_scope(anc).is_dp:
                return True
        return False

    # ---- signals ---------------------------------------------------------------------------
    def _strong_signal(self, scope: cst.CSTNode, reason: str) -> None:
        found = self._strong.setdefault(scope, [])
        if reason not in found:
            found.append(reason)

    def _weak_signal(self, scope: cst.CSTNode, name: str, reason: str) -> None:
        self._weak.setdefault(scope, {}).setdefault(name, reason)

    def _stability_names(self) -> set[str]:
        """Names bound somewhere to a numerical-stability literal (``eps = 1e-8``, ``eps=1e-7``)."""
        out: set[str] = set()
        for node in self.index.nodes(cst.Assign):
            if len(node.targets) == 1 and type(node.targets[0].target) in (cst.Name, cst.Attribute):  # type: ignore[attr-defined]
                target = node.targets[0].target  # type: ignore[attr-defined]
                name = target.value if type(target) is cst.Name else target.attr.value
                value = node.value  # type: ignore[attr-defined]
                if stability_constant(name, number(value)) or (
                        words(name) & {"eps", "epsilon"} and _machine_epsilon(value)):
                    out.add(name)
        for node in self.index.nodes(cst.Param):
            if node.default is not None and stability_constant(node.name.value, number(node.default)):  # type: ignore[attr-defined]
                out.add(node.name.value)  # type: ignore[attr-defined]
        if out:  # ``self._epsilon = epsilon`` keeps the constant under another epsilon-like name
            for node in self.index.nodes(cst.Assign):
                value = node.value  # type: ignore[attr-defined]
                if type(value) is cst.Name and value.value in out and len(node.targets) == 1:  # type: ignore[attr-defined]
                    target = node.targets[0].target  # type: ignore[attr-defined]
                    name = target.value if type(target) is cst.Name else (
                        target.attr.value if type(target) is cst.Attribute else None)
                    if name is not None and words(name) & {"eps", "epsilon"}:
                        out.add(name)
        return out

    def _collect(self) -> None:
        index = self.index
        parents = index.parents
        stability = self._stability_names()
        strength_cache: dict[str, int] = {}
        for node in index.nodes(cst.Name):
            value = node.value  # type: ignore[attr-defined]
            strength = strength_cache.get(value)
            if strength is None:
                strength = strength_cache[value] = 0 if _privacy_evaluation(value) else dp_name_strength(value)
            if not strength or value in stability:
                continue
            parent = parents.get(node)
            kind = type(parent)
            if kind in (cst.FunctionDef, cst.ClassDef, cst.ImportAlias, cst.Import, cst.ImportFrom, cst.AsName):
                continue
            if kind is cst.Attribute and (self._module_path(node, parent)  # type: ignore[arg-type]
                                           or _machine_epsilon(parent)):  # type: ignore[arg-type]
                continue
            if kind is cst.Param:
                fn = parents[parents[parent]]  # Param -> Parameters -> FunctionDef/Lambda
                scope: cst.CSTNode = fn if type(fn) is cst.FunctionDef else index.scope_of(fn)
                reason = f"parameter {value}"
            elif kind is cst.Arg and parent.keyword is node:  # type: ignore[union-attr]
                if strength < 2 or stability_constant(value, number(parent.value)):  # type: ignore[union-attr]
                    continue
                scope, reason = index.scope_of(node), f"keyword {value}="
            elif kind is cst.Attribute and parent.attr is node:  # type: ignore[union-attr]
                scope, reason = index.scope_of(node), f"attribute {dotted(parent) or value}"
            else:
                scope, reason = index.scope_of(node), f"variable {value}"
            if type(scope) is cst.Lambda:
                scope = index.scope_of(scope)
            if strength == 2:
                self._strong_signal(scope, reason)
            else:
                self._weak_signal(scope, value, reason)
        for node in index.nodes(cst.SimpleString):
            self._key_signal(node, strength_cache)  # type: ignore[arg-type]
        for node in index.nodes(cst.Call):
            self._call_signal(node)  # type: ignore[arg-type]
        for node in index.nodes(cst.Float):
            if node.value == "1.25" and self._inside_log(node):  # type: ignore[attr-defined]
                self._strong_signal(self._function_scope(node), "Gaussian mechanism calibration (log of 1.25/δ)")
        self._claims()

    def _module_path(self, node: cst.Name, parent: cst.Attribute) -> bool:
        """``node`` names a module, not a DP parameter: part of an imported dotted path
        (``import synthcity.metrics.eval_privacy``) or an imported name used as a module
        (``eval_privacy.score(x)``, ``metrics.eval_privacy.f``); ``config.epsilon`` still counts."""
        holder = self.index.parents.get(parent)
        if parent.value is node:
            if node.value in self.index.imports:
                return True
            while type(holder) is cst.Attribute:  # ``from privacy_meter.constants import X``
                holder = self.index.parents.get(holder)
            return type(holder) in (cst.ImportAlias, cst.ImportFrom)
        if type(holder) is cst.Attribute and holder.value is parent:  # type: ignore[union-attr]
            cur: cst.CSTNode = parent
            while type(cur) is cst.Attribute:
                cur = cur.value  # type: ignore[attr-defined]
            if type(cur) is cst.Name and cur.value in self.index.imports:  # type: ignore[attr-defined]
                return True  # a segment in the middle of an imported module's path
        while type(holder) is cst.Attribute:
            holder = self.index.parents.get(holder)
        return type(holder) in (cst.ImportAlias, cst.ImportFrom)

    def _inside_log(self, node: cst.CSTNode) -> bool:
        """``log(1.25 / delta)``, ``np.log(1.25 * d)``: the literal is an operand of a log's argument."""
        parent = self.index.parents.get(node)
        for _ in range(3):
            if type(parent) not in (cst.BinaryOperation, cst.UnaryOperation):
                break
            parent = self.index.parents.get(parent)
        holder = self.index.parents.get(parent) if type(parent) is cst.Arg else None
        return type(holder) is cst.Call and call_name(holder) in ("log", "ln", "log1p")  # type: ignore[arg-type]

    def _function_scope(self, node: cst.CSTNode) -> cst.CSTNode:
        scope = self.index.scope_of(node)
        return self.index.scope_of(scope) if type(scope) is cst.Lambda else scope

    def _key_signal(self, node: cst.SimpleString, strength_cache: dict[str, int]) -> None:
        """``cfg["epsilon"]``, ``params.get('delta')``: a DP parameter read by its key."""
        raw = node.value
        if len(raw) > 40:
            return
        value = raw.strip("'\"bBrRuU")
        strength = strength_cache.get(value)
        if strength is None:
            strength = strength_cache[value] = dp_name_strength(value) if value.isidentifier() else 0
        if not strength:
            return
        parent = self.index.parents.get(node)
        holder = self.index.parents.get(parent) if parent is not None else None
        is_key = type(parent) is cst.Index and type(holder) is cst.SubscriptElement
        is_get = type(parent) is cst.Arg and type(holder) is cst.Call and call_name(holder) in ("get", "pop", "setdefault")
        if not (is_key or is_get):
            return
        scope = self.index.scope_of(node)
        if type(scope) is cst.Lambda:
            scope = self.index.scope_of(scope)
        if strength == 2:
            self._strong_signal(scope, f"reads the key {value!r}")
        else:
            self._weak_signal(scope, value, f"reads the key {value!r}")

    def _call_signal(self, call: cst.Call) -> None:
        name = dotted(call.func)
        last = call_name(call)
        if not last:
            return
        qualified = self._qualify(name) if name is not None else None
        root = (qualified or "").split(".")[0]
        scope = self.index.scope_of(call)
        if type(scope) is cst.Lambda:
            scope = self.index.scope_of(scope)
        shown = qualified or last
        if root in DP_LIBRARIES:
            self._strong_signal(scope, f"calls {shown}")
        elif ACCOUNTANT_CALL.match(last):
            self._strong_signal(scope, f"calls {shown}")
        elif last in NOISE_DRAWS:
            scale = _scale_arg(call, last)
            if scale is not None and _names_dp(scale, strict=last not in STRONG_NOISE_DRAWS):
                self._strong_signal(scope, f"calls {shown} with a DP-named scale")
            elif last in STRONG_NOISE_DRAWS:
                self._weak_signal(scope, last, f"calls {shown}")

    def _claims(self) -> None:
        index = self.index
        module_doc = index.module.get_docstring()
        claim = dp_claim(module_doc) if module_doc else None
        if claim:
            self._strong_signal(index.module, f"docstring claims differential privacy ({claim!r})")
        named = self.generator_name = self._generator_name()
        if named:
            self._strong_signal(index.module, f"names the DP generator {named!r}")
        for alias_local, full in index.imports.items():
            if full.split(".")[0] in DP_LIBRARIES:
                self._strong_signal(index.module, f"imports {full}")
                break
        claimed: list[str] = []
        for kind in (cst.FunctionDef, cst.ClassDef):
            label = "function" if kind is cst.FunctionDef else "class"
            for node in index.nodes(kind):
                name = node.name.value  # type: ignore[attr-defined]
                if DP_NAME.search(name) and not _privacy_evaluation(name) \
                        or (kind is cst.FunctionDef and ACCOUNTANT_CALL.match(name)):
                    self._strong_signal(node, f"{label} name {name}")
                    claimed.append(f"{label} {name}")
                doc = node.get_docstring()  # type: ignore[attr-defined]
                claim = dp_claim(doc) if doc else None
                if claim:
                    self._strong_signal(node, f"docstring claims differential privacy ({claim!r})")
                    claimed.append(f"{label} {name}")
                if kind is cst.ClassDef:
                    for base in node.bases:  # type: ignore[attr-defined]
                        base_name = last_name(base.value) or ""
                        if DP_NAME.search(base_name):
                            self._strong_signal(node, f"base class {base_name}")
        if claimed:
            # a module that defines a class or function claiming DP is DP code throughout
            self._strong_signal(index.module, f"defines {claimed[0]}, which claims DP")

    def _generator_name(self) -> str | None:
        """A DP generator named in an identifier or a string of the module (comments are not read)."""
        seen: set[str] = set()
        for kind in (cst.Name, cst.SimpleString):
            for node in self.index.nodes(kind):
                text = node.value  # type: ignore[attr-defined]
                if text in seen:
                    continue
                seen.add(text)
                found = dp_generator_name(text)
                if found:
                    return found
        return None

    # ---- aggregation -----------------------------------------------------------------------
    def _own_reasons(self, scope: cst.CSTNode) -> list[str]:
        reasons = list(self._strong.get(scope, ()))
        weak = self._weak.get(scope, {})
        if len(weak) >= 2 and any(words(name) & ANCHOR_DP_WORDS for name in weak) \
                and not all("teachers" in words(name) for name in weak):
            reasons.extend(weak.values())
        return reasons

    def _aggregate(self) -> None:
        index = self.index
        for scope in {*self._strong, *self._weak}:
            reasons = self._own_reasons(scope)
            ctx = self.of_scope(scope)
            ctx.reasons.extend(reasons)
            if not reasons:
                ctx.hints.extend(self._weak.get(scope, {}).values())
        for cls in index.nodes(cst.ClassDef):
            ctx = self.of_scope(cls)
            for stmt in cls.body.body:  # type: ignore[attr-defined]
                if type(stmt) is cst.FunctionDef and self.of_scope(stmt).is_dp:
                    first = self.of_scope(stmt).reasons[0]
                    ctx.reasons.append(f"method {stmt.name.value}: {first}")
                    break
        self._propagate_calls()

    def _propagate_calls(self) -> None:
        """A function without signals that a DP function of the module calls is on a DP path."""
        index = self.index
        functions = index.nodes(cst.FunctionDef)
        if not functions or not any(self.in_dp_context(f) for f in functions):
            return
        by_name: dict[str, list[cst.CSTNode]] = {}
        for fn in functions:
            by_name.setdefault(fn.name.value, []).append(fn)  # type: ignore[attr-defined]
        for cls in index.nodes(cst.ClassDef):
            by_name.setdefault(cls.name.value, []).append(cls)  # type: ignore[attr-defined]
        calls_in: dict[cst.CSTNode, list[str]] = {}
        for call in index.nodes(cst.Call):
            func = call.func  # type: ignore[attr-defined]
            callee = None
            if type(func) is cst.Name:
                callee = func.value
            elif type(func) is cst.Attribute and type(func.value) is cst.Name and func.value.value in ("self", "cls"):
                callee = func.attr.value
            if callee is None or callee not in by_name:
                continue
            caller = index.enclosing_function(call)
            if caller is not None:
                calls_in.setdefault(caller, []).append(callee)
        work: list[cst.CSTNode] = [f for f in functions if self.in_dp_context(f)]
        while work:
            caller = work.pop()
            for callee_name in calls_in.get(caller, ()):
                for callee in by_name[callee_name]:
                    ctx = self.of_scope(callee)
                    if ctx.is_dp:
                        continue
                    how = "constructed" if type(callee) is cst.ClassDef else "called"
                    ctx.reasons.append(f"{how} in {caller.name.value}, which has DP context")  # type: ignore[attr-defined]
                    if type(callee) is cst.ClassDef:
                        work.extend(s for s in callee.body.body if type(s) is cst.FunctionDef)  # type: ignore[attr-defined]
                    else:
                        work.append(callee)


def _machine_epsilon(expr: cst.BaseExpression) -> bool:
    """``np.finfo(float).eps``, ``torch.finfo(x.dtype).eps``, ``sys.float_info.epsilon``."""
    for sub in walk(expr):
        if type(sub) is cst.Name and sub.value in ("finfo", "float_info", "iinfo"):  # type: ignore[attr-defined]
            return True
    return False


def _scale_arg(call: cst.Call, last: str) -> cst.BaseExpression | None:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value in _SCALE_KEYWORDS:
            return arg.value
    positional = [a.value for a in call.args if a.keyword is None and not a.star]
    if last in ("randn", "randn_like", "standard_normal"):
        return None
    if len(positional) >= 2:
        return positional[1]
    return positional[0] if len(positional) == 1 and last in ("Laplace", "Normal") else None


def _names_dp(expr: cst.BaseExpression, *, strict: bool) -> bool:
    """Does ``expr`` name a DP parameter (``strict``: a strong or anchor name, not ``sigma``)?"""
    stack: list[cst.CSTNode] = [expr]
    while stack:
        node = stack.pop()
        if type(node) is cst.Name:
            value = node.value  # type: ignore[attr-defined]
            strength = dp_name_strength(value)
            if strength == 2 or words(value) & ANCHOR_DP_WORDS or (strength and not strict) \
                    or "sensitivity" in words(value):
                return True
        elif type(node) is not cst.SimpleString:
            stack.extend(children(node))
    return False
