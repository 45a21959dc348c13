"""Which expressions carry private training data.

Sources: the data parameters of training entry points (``fit(self, X, y=None)``, ``train(data)``,
``generate(X, …)`` whose body trains), names passed as data to a training call
(``model.fit(df)``), datasets read from storage (``pd.read_csv``). Taint follows, flow-insensitively
per scope, assignments (tuple unpacking, augmented, loop targets), subscripts/attributes/method
calls on tainted values, calls of the module's own functions (argument -> parameter -> return),
``self.attr`` stored in one method and read in another, and returned values. Counts and types
(``len(X)``, ``X.shape``, ``X.dtype``, ``X.columns``), model scores (``predict``, ``log_prob``),
``x is None`` tests and values released through a DP primitive (noise added, a DP library call,
a call given ``epsilon=``) are not private.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import libcst as cst

from dpcheck.analysis.index import Scope, SyntaxIndex
from dpcheck.analysis.syntax import all_params, call_name, dotted, value_refs, walk, words
from dpcheck.analysis.vocabulary import (
    COLUMN_READS, DP_LIBRARIES, LOAD_CALLS, MAYBE_TRAIN_ENTRY, MODEL_CALLEE_WORDS, MODEL_OUTPUT_CALLS, NOISE_DRAWS, NOT_PRIVATE_WORDS,
    SHAPE_ATTRS, SHAPE_CALLS, STRONG_NOISE_DRAWS, TRAIN_ENTRY, TRAIN_STEP_CALLS, dp_name_strength,
    is_data_param_name, is_dataset_name,
)

_MAX_DEPTH = 120
_MAX_ROUNDS = 12
_SCALAR_ANNOTATIONS = frozenset({"int", "float", "bool", "str", "bytes", "Callable", "Optional[int]", "Optional[float]"})
_DATA_KEYWORDS = frozenset({"X", "x", "y", "data", "df", "dataset", "train_data", "training_data", "features", "labels"})
_TRAINING_CALLS = frozenset({"fit", "train", "fit_transform", "partial_fit", "fit_sample", "fit_resample", "_fit", "_train"})


@dataclass(frozen=True)
class Origin:
    """Why a value is private: ``text`` (+ " at line N" of ``node`` when shown).

    ``intrinsic`` is False for a helper's parameter tainted only by what some caller passed it:
    calls of that helper are private only when their own arguments are.
    """

    text: str
    node: cst.CSTNode | None
    intrinsic: bool = True

    def describe(self, line_of: Callable[[cst.CSTNode], int] | None) -> str:
        if self.node is None or line_of is None:
            return self.text
        return f"{self.text} at line {line_of(self.node)}"


_SESSIONS = frozenset({"sess", "session", "self.sess", "self.session", "self._sess", "self._session"})
_STEPPERS = ("opt", "solver", "trainer", "model", "engine")


def has_training_step(body: cst.CSTNode) -> bool:
    """A training step in ``body`` (nested defs excluded): ``loss.backward()``, ``minimize``,
    ``fit``/``partial_fit``, ``optimizer.step()``, a TF1 ``sess.run``."""
    for sub in walk(body, into_scopes=False):
        if type(sub) is not cst.Call:
            continue
        name = call_name(sub)  # type: ignore[arg-type]
        if name in TRAIN_STEP_CALLS:
            return True
        func = sub.func  # type: ignore[attr-defined]
        if name == "step" and type(func) is cst.Attribute:
            receiver = (dotted(func.value) or "").lower()
            if any(s in receiver for s in _STEPPERS):
                return True
        if name == "run" and type(func) is cst.Attribute and (dotted(func.value) or "") in _SESSIONS:
            return True
    return False


def is_entry_point(fn: cst.FunctionDef, index: SyntaxIndex) -> bool:
    """A training entry point: ``fit``/``train``/``fit_transform``…, or a sampler that trains."""
    name = fn.name.value
    if TRAIN_ENTRY.match(name) or words(name) & {"train", "training", "fit"}:
        return True
    if name in MAYBE_TRAIN_ENTRY and has_training_step(fn.body):
        return True
    doc = fn.get_docstring()
    return bool(doc and "train" in doc.lower() and ("privat" in doc.lower() or "DP" in doc) and "model" in doc.lower())


def _data_params(fn: cst.FunctionDef, is_method: bool) -> list[cst.Param]:
    params = all_params(fn)
    if is_method and params and params[0].name.value in ("self", "cls"):
        params = params[1:]
    out = []
    for param in params:
        name = param.name.value
        if not is_data_param_name(name) or words(name) & NOT_PRIVATE_WORDS:
            continue
        if param.default is not None and type(param.default) is not cst.Name:
            continue  # a literal default is a setting, not the data
        if param.default is not None and param.default.value not in ("None",):  # type: ignore[attr-defined]
            continue
        if param.annotation is not None:
            annotation = cst.Module([]).code_for_node(param.annotation.annotation)
            if annotation in _SCALAR_ANNOTATIONS:
                continue
        out.append(param)
    return out


class PrivateData:
    def __init__(self, index: SyntaxIndex, qualify: Callable[[str], str]) -> None:
        self.index = index
        self._qualify = qualify
        self.names: dict[cst.CSTNode, dict[str, Origin]] = {}
        self.attrs: dict[cst.ClassDef, dict[str, Origin]] = {}
        self.returns: dict[cst.CSTNode, Origin] = {}
        self._memo: dict[tuple[cst.CSTNode, bool], Origin | None] = {}
        self._calls_of: dict[cst.FunctionDef, list[cst.Call]] | None = None
        self._solved = False
        self._seed()
        self._solve()
        self._solved = True

    # ---- public ------------------------------------------------------------------------------
    def origin(self, expr: cst.CSTNode, *, allow_shape: bool = False) -> Origin | None:
        key = (expr, allow_shape)
        if key in self._memo:
            return self._memo[key]
        scope = self.index.scope_of(expr)
        found = self._expr(expr, scope, allow_shape, 0)  # type: ignore[arg-type]
        self._memo[key] = found
        return found

    # ---- seeds -------------------------------------------------------------------------------
    def _seed(self) -> None:
        index = self.index
        for fn in index.nodes(cst.FunctionDef):
            cls = index.method_class(fn)  # type: ignore[arg-type]
            if is_entry_point(fn, index):  # type: ignore[arg-type]
                per = self.names.setdefault(fn, {})
                for param in _data_params(fn, cls is not None):  # type: ignore[arg-type]
                    if self.public_at_every_call(fn, param.name.value):  # type: ignore[arg-type]
                        continue
                    per[param.name.value] = Origin(
                        f"parameter `{param.name.value}` of `{fn.name.value}`", None)  # type: ignore[attr-defined]
        for call in index.nodes(cst.Call):
            if call_name(call) not in _TRAINING_CALLS:  # type: ignore[arg-type]
                continue
            scope = index.owner[call]
            fn_name = call_name(call)  # type: ignore[arg-type]
            positional = [a for a in call.args if a.keyword is None and not a.star][:2]  # type: ignore[attr-defined]
            keyed = [a for a in call.args if a.keyword is not None and a.keyword.value in _DATA_KEYWORDS]  # type: ignore[attr-defined]
            for arg in (*positional, *keyed):
                name = dotted(arg.value)
                if name is None:
                    continue
                last = name.rsplit(".", 1)[-1]
                if not is_data_param_name(last) or words(last) & NOT_PRIVATE_WORDS:
                    continue
                origin = Origin(f"`{name}` passed to `{fn_name}`", call)
                if name.startswith(("self.", "cls.")) and name.count(".") == 1:
                    cls = index._class_of_scope(scope)
                    if cls is not None:
                        self.attrs.setdefault(cls, {}).setdefault(last, origin)
                elif "." not in name:
                    if self._made_up(name, scope):
                        continue
                    self.names.setdefault(scope, {}).setdefault(name, origin)
                    self._seed_backwards(name, scope, origin)

    def public_at_every_call(self, fn: cst.FunctionDef, name: str, depth: int = 0) -> bool:
        """Every call of ``fn`` in this module passes, as parameter ``name``, a value named public
        (``self.public_X``) or a parameter of its caller that is public in this sense in turn:
        ``_fit(self, X)`` reached only as ``self.get_partition(self.public_X)`` → ``self._fit(X)``
        fits on public data. Never for a public training entry point (``fit``, ``train``): users
        call those with their private data from outside. A function no call here reaches keeps
        its parameters private."""
        if depth > 3 or (not fn.name.value.startswith("_") and is_entry_point(fn, self.index)):
            return False
        if self._calls_of is None:
            # by name: ``self._fit(X)`` in a subclass runs the base class's ``_fit`` (one def of that
            # name in the module, else the call is not counted)
            self._calls_of = {}
            for call in self.index.nodes(cst.Call):
                func = call.func  # type: ignore[attr-defined]
                target = func.value if type(func) is cst.Name else (
                    func.attr.value if type(func) is cst.Attribute and dotted(func.value) in ("self", "cls") else None)
                fn_called = self.index.unique_function(target) if target is not None else None
                if fn_called is not None:
                    self._calls_of.setdefault(fn_called, []).append(call)  # type: ignore[arg-type]
        calls = self._calls_of.get(fn, [])
        names = [p.name.value for p in all_params(fn)]
        if not calls or name not in names:
            return False
        position = names.index(name) - (1 if names[:1] in (["self"], ["cls"]) else 0)
        for call in calls:
            passed = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == name), None)
            if passed is None:
                positional = [a for a in call.args if a.keyword is None and not a.star]
                passed = positional[position].value if 0 <= position < len(positional) else None
            key = dotted(passed) if passed is not None else None
            if key is None:
                return False
            if "public" in words(key.rsplit(".", 1)[-1]):
                continue
            caller = self.index.owner.get(call)
            if "." in key or type(caller) is not cst.FunctionDef or \
                    not self.public_at_every_call(caller, key, depth + 1):  # type: ignore[arg-type]
                return False
        return True

    def _made_up(self, name: str, scope: Scope) -> bool:
        """Every value ``name`` is bound to in ``scope`` is made up in place (a random draw, a
        literal, ``np.zeros``…): test or demo data fitted on, not anyone's records."""
        found = [b.value for b in self.index.bindings.get(scope, {}).get(name, ())]
        return bool(found) and all(v is not None and _made_up_value(v, self._qualify) for v in found)

    def _seed_backwards(self, name: str, scope: Scope, origin: Origin) -> None:
        """What a name passed to a training call was built from is training data too
        (``df = raw[cols]; model.fit(df)`` makes ``raw`` private)."""
        bound = self.index.bindings.get(scope, {})
        tainted = self.names.setdefault(scope, {})
        work = [name]
        while work:
            current = work.pop()
            for binding in bound.get(current, ()):
                if binding.value is None:
                    continue
                for ref in value_refs(binding.value):
                    if "." in ref or ref in tainted or ref not in bound:
                        continue
                    if not is_data_param_name(ref) or words(ref) & NOT_PRIVATE_WORDS:
                        continue
                    tainted[ref] = Origin(f"`{ref}` flows into {origin.text}", origin.node)
                    work.append(ref)

    # ---- fixpoint ----------------------------------------------------------------------------
    def _solve(self) -> None:
        index = self.index
        bindings = index.bindings
        returns = index.returns
        local_calls = self._local_calls()
        for _ in range(_MAX_ROUNDS):
            changed = False
            for scope, per_name in bindings.items():
                tainted = self.names.setdefault(scope, {})
                for name, found in per_name.items():
                    if name in tainted:
                        continue
                    for binding in found:
                        if binding.value is None:
                            continue
                        origin = self._expr(binding.value, scope, False, 0)
                        if origin is None:
                            continue
                        tainted[name] = origin
                        changed = True
                        if name.startswith(("self.", "cls.")):
                            cls = index._class_of_scope(scope)
                            if cls is not None:
                                attr = name.split(".", 1)[1]
                                where = scope.name.value if type(scope) is cst.FunctionDef else "the class"  # type: ignore[union-attr]
                                self.attrs.setdefault(cls, {}).setdefault(
                                    attr, Origin(f"{name} stored in `{where}`", binding.stmt, origin.intrinsic))
                        break
            for fn, rets in returns.items():
                if fn in self.returns:
                    continue
                for ret in rets:
                    if ret.value is None:
                        continue
                    origin = self._expr(ret.value, fn, False, 0)  # type: ignore[arg-type]
                    if origin is not None:
                        self.returns[fn] = origin
                        changed = True
                        break
            for call, callee, scope in local_calls:
                per = self.names.setdefault(callee, {})
                for param, arg in _bind_args(call, callee):
                    if param in per:
                        continue
                    origin = self._expr(arg, scope, False, 0)
                    if origin is not None:
                        per[param] = Origin(
                            f"parameter `{param}` of `{callee.name.value}`, given private data ({origin.text})",
                            origin.node, False)
                        changed = True
            if not changed:
                break

    def _local_calls(self) -> list[tuple[cst.Call, cst.FunctionDef, Scope]]:
        out = []
        for call in self.index.nodes(cst.Call):
            callee = self.callee(call)  # type: ignore[arg-type]
            if callee is not None and call.args:  # type: ignore[attr-defined]
                out.append((call, callee, self.index.owner[call]))
        return out  # type: ignore[return-value]

    def callee(self, call: cst.Call) -> cst.FunctionDef | None:
        return self.index.callee(call)

    # ---- expressions -------------------------------------------------------------------------
    def _lookup(self, name: str, scope: cst.CSTNode) -> Origin | None:
        index = self.index
        first = True
        cur: cst.CSTNode | None = scope
        while cur is not None:
            if first or type(cur) is not cst.ClassDef:
                tainted = self.names.get(cur)
                if tainted is not None and name in tainted:
                    return tainted[name]
                if name in index.bindings.get(cur, {}):  # type: ignore[arg-type]
                    return None  # bound here but not private: shadows outer names
            first = False
            cur = None if type(cur) is cst.Module else index.owner.get(cur, index.module)
        return None

    def _expr(self, expr: cst.CSTNode, scope: cst.CSTNode, allow_shape: bool, depth: int) -> Origin | None:
        if depth > _MAX_DEPTH:
            return None
        kind = type(expr)
        nxt = depth + 1
        if kind is cst.Name:
            return self._lookup(expr.value, scope)  # type: ignore[attr-defined]
        if kind is cst.Attribute:
            attr = expr.attr.value  # type: ignore[attr-defined]
            if attr in SHAPE_ATTRS and not allow_shape:
                return None
            base = expr.value  # type: ignore[attr-defined]
            if type(base) is cst.Name and base.value in ("self", "cls"):  # type: ignore[attr-defined]
                local = self._lookup(f"{base.value}.{attr}", scope)  # type: ignore[attr-defined]
                if local is not None:
                    return local
                cls = self.index._class_of_scope(scope)  # type: ignore[arg-type]
                return self.attrs.get(cls, {}).get(attr) if cls is not None else None
            found = self._expr(base, scope, allow_shape, nxt)
            if found is None and attr in COLUMN_READS:
                found = self._column_read(base, expr)
            return found
        if kind is cst.Subscript:
            found = self._expr(expr.value, scope, allow_shape, nxt)  # type: ignore[attr-defined]
            if found is None and _column_index(expr):  # type: ignore[arg-type]
                found = self._column_read(expr.value, expr)  # type: ignore[attr-defined]
            return found
        if kind is cst.Call:
            return self._call(expr, scope, allow_shape, nxt)  # type: ignore[arg-type]
        if kind is cst.BinaryOperation:
            if type(expr.operator) in (cst.Add, cst.Subtract) and (  # type: ignore[attr-defined]
                    is_noise_expr(expr.left) or is_noise_expr(expr.right)):  # type: ignore[attr-defined]
                return None
            return self._expr(expr.left, scope, allow_shape, nxt) or self._expr(expr.right, scope, allow_shape, nxt)  # type: ignore[attr-defined]
        if kind is cst.Comparison:
            if any(type(c.operator) in (cst.Is, cst.IsNot) for c in expr.comparisons):  # type: ignore[attr-defined]
                return None
            found = self._expr(expr.left, scope, allow_shape, nxt)  # type: ignore[attr-defined]
            for comp in expr.comparisons:  # type: ignore[attr-defined]
                found = found or self._expr(comp.comparator, scope, allow_shape, nxt)
            return found
        if kind is cst.UnaryOperation:
            return self._expr(expr.expression, scope, allow_shape, nxt)  # type: ignore[attr-defined]
        if kind is cst.BooleanOperation:
            return self._expr(expr.left, scope, allow_shape, nxt) or self._expr(expr.right, scope, allow_shape, nxt)  # type: ignore[attr-defined]
        if kind is cst.IfExp:
            return self._expr(expr.body, scope, allow_shape, nxt) or self._expr(expr.orelse, scope, allow_shape, nxt)  # type: ignore[attr-defined]
        if kind in (cst.Tuple, cst.List, cst.Set):
            for el in expr.elements:  # type: ignore[attr-defined]
                found = self._expr(el.value, scope, allow_shape, nxt)
                if found is not None:
                    return found
            return None
        if kind is cst.Dict:
            for el in expr.elements:  # type: ignore[attr-defined]
                found = self._expr(el.value, scope, allow_shape, nxt)
                if found is not None:
                    return found
            return None
        if kind in (cst.ListComp, cst.SetComp, cst.GeneratorExp):
            # the element, not the iterable: ``[1 for row in X]`` has one element per record of X
            # but no record values (the loop target is bound to the iterable in the scope)
            return self._expr(expr.elt, scope, allow_shape, nxt)  # type: ignore[attr-defined]
        if kind is cst.DictComp:
            return self._expr(expr.value, scope, allow_shape, nxt)  # type: ignore[attr-defined]
        if kind in (cst.StarredElement, cst.Await, cst.NamedExpr, cst.Yield):
            inner = getattr(expr, "value", None)
            return None if inner is None else self._expr(inner, scope, allow_shape, nxt)
        return None

    def _column_read(self, base: cst.CSTNode, at: cst.CSTNode) -> Origin | None:
        """``df["age"]``, ``X[:, j]``, ``data.values``: a column read of a dataset-named value."""
        name = dotted(base)
        if name is None or not is_dataset_name(name):
            return None
        return Origin(f"column read of dataset `{name}`", at)

    def _call(self, call: cst.Call, scope: cst.CSTNode, allow_shape: bool, depth: int) -> Origin | None:
        last = call_name(call)
        func = call.func
        if last in SHAPE_CALLS:
            if not allow_shape:
                return None
        elif last in MODEL_OUTPUT_CALLS:
            return None
        if last in LOAD_CALLS:
            return Origin(f"dataset read by `{dotted(func) or last}`", call)
        name = dotted(func)
        if name is not None and self._qualify(name).split(".")[0] in DP_LIBRARIES:
            return None
        if is_noise_expr(call):
            return None
        for arg in call.args:
            if arg.keyword is not None and dp_name_strength(arg.keyword.value) == 2:
                return None  # released through a DP primitive (``mean(X, epsilon=…)``)
        if name is not None and words(name.rsplit(".", 1)[-1]) & MODEL_CALLEE_WORDS:
            return None  # ``self.discriminator(real)``, ``model(x)``: scores of a model
        callee = self.callee(call)
        if callee is not None:
            ret = self.returns.get(callee)
            if ret is None:
                return None
            if ret.intrinsic:
                return Origin(f"returned by `{callee.name.value}` ({ret.text})", ret.node)
            for _, arg in _bind_args(call, callee):
                found = self._expr(arg, scope, False, depth)
                if found is not None:
                    return found
            return None
        if type(func) is cst.Attribute:
            found = self._expr(func.value, scope, allow_shape, depth)  # type: ignore[attr-defined]
            if found is not None:
                return found
        for arg in call.args:
            found = self._expr(arg.value, scope, allow_shape, depth)
            if found is not None:
                return found
        return None


_MADE_UP_CALLS = frozenset({
    "rand", "randn", "randint", "random", "random_sample", "normal", "uniform", "zeros", "ones", "full",
    "arange", "linspace", "eye", "make_classification", "make_regression", "make_blobs", "make_moons",
    "make_circles", "zeros_like", "ones_like",
})


def _made_up_value(expr: cst.BaseExpression, qualify: Callable[[str], str]) -> bool:
    """``np.random.rand(10, 5)``, ``np.array([[1, 2]])``, ``[[0.1, 0.2]]``, ``np.zeros((3, 2))``."""
    if isinstance(expr, (cst.List, cst.Tuple)):
        return all(isinstance(e.value, (cst.Integer, cst.Float, cst.UnaryOperation, cst.List, cst.Tuple))
                   for e in expr.elements)
    if not isinstance(expr, cst.Call):
        return False
    name = dotted(expr.func)
    full = qualify(name) if name is not None else ""
    if call_name(expr) in _MADE_UP_CALLS:
        if full.split(".")[0] in ("numpy", "torch", "sklearn", "random"):
            return True
        receiver = expr.func.value if isinstance(expr.func, cst.Attribute) else None
        # a random generator object: ``rng.random((10, 5))``, ``random_state.normal(size=n)``
        if receiver is not None and words(dotted(receiver) or "") & {"rng", "random", "generator", "prng"}:
            return True
    if call_name(expr) in ("array", "asarray", "tensor", "DataFrame") and expr.args:
        return _made_up_value(expr.args[0].value, qualify)
    return False


def _column_index(sub: cst.Subscript) -> bool:
    """A string key (``df["age"]``), a list of them (``df[["age", "income"]]``) or a tuple index
    with a full slice (``X[:, j]``)."""
    elements = sub.slice
    if len(elements) == 1:
        index = elements[0].slice
        if not isinstance(index, cst.Index):
            return False
        value = index.value
        if isinstance(value, cst.List) and value.elements:
            return all(isinstance(e.value, (cst.SimpleString, cst.ConcatenatedString)) for e in value.elements)
        return isinstance(value, (cst.SimpleString, cst.ConcatenatedString))
    first = elements[0].slice
    return isinstance(first, cst.Slice) and first.lower is None and first.upper is None


def is_noise_expr(expr: cst.CSTNode) -> bool:
    """A random draw (or a sum of draws) used as noise: ``np.random.laplace(0, b)``,
    ``torch.normal(0, sigma, …)``, ``add_noise(…)``."""
    if type(expr) is cst.BinaryOperation:
        return is_noise_expr(expr.left) or is_noise_expr(expr.right)  # type: ignore[attr-defined]
    if type(expr) is not cst.Call:
        return False
    last = call_name(expr)  # type: ignore[arg-type]
    return last in NOISE_DRAWS or last in STRONG_NOISE_DRAWS or "noise" in words(last)


def _bind_args(call: cst.Call, callee: cst.FunctionDef) -> list[tuple[str, cst.BaseExpression]]:
    """(parameter name, argument) pairs of a call of ``callee`` (``self`` skipped for methods)."""
    params = [p.name.value for p in (*callee.params.posonly_params, *callee.params.params)]
    if params and params[0] in ("self", "cls") and type(call.func) is cst.Attribute:
        params = params[1:]
    out: list[tuple[str, cst.BaseExpression]] = []
    position = 0
    kw_names = {p.name.value for p in (*callee.params.params, *callee.params.kwonly_params)}
    for arg in call.args:
        if arg.star:
            continue
        if arg.keyword is None:
            if position < len(params):
                out.append((params[position], arg.value))
            position += 1
        elif arg.keyword.value in kw_names:
            out.append((arg.keyword.value, arg.value))
    return out
