"""The private data's own range or categories, kept by a fitting method for another method to use.

An encoder, binner or table transformer of a DP pipeline learns its domain in one method and uses it
in another: ``fit`` takes ``min(values)``/``max(values)``, ``np.unique(col)``, ``dict.fromkeys(data)``
or ``col.value_counts().index`` of the records it is given and keeps the result on the instance
(``self.edges = np.linspace(lo, hi, k)``, ``self._build_vocab(cats)``, ``self.meta = get_meta(data)``)
or returns it as the fitted state (a ``_fit_continuous`` hook returning ``{'min': lo, 'max': hi}``);
``encode``/``transform``/``inverse_transform``/``decode``/``sample`` then bins, encodes or decodes
the release with it. The range and the category list are read from the records with no noise.

:func:`sites` gives ``[line, col, what]`` at each read of such a domain whose value reaches the kept
state. The project phase reports them (as DP202) only in modules the project's DP code reaches
(``preprocessing.join``). Left out: a class with one method only (nothing else reads the state),
parameters naming a given domain (``categories``, ``bounds``, ``bins``) or the prediction target
(``y``, ``labels``), reads along a record's own axes, and values the method never keeps.
"""
from __future__ import annotations

import ast
import re

from dpcheck.analysis.astfacts import func_name

#: names that are not the private records: synthetic or public data, held-out splits, model values
NOT_PRIVATE = frozenset({
    "synth", "synthetic", "syn", "fake", "gen", "generated", "sample", "samples", "sampled", "public", "pub",
    "test", "tst", "val", "valid", "validation", "holdout", "noisy", "noise", "dummy", "toy", "random", "rand",
    "aux", "auxiliary", "loss", "losses", "reward", "rewards", "advantage", "advantages", "returns", "grad",
    "grads", "gradient", "gradients", "weight", "weights", "param", "params", "parameters", "logits", "logit",
    "score", "scores", "pred", "preds", "prediction", "predictions", "output", "outputs", "out", "attn",
    "attention", "emb", "embedding", "embeddings", "hidden", "latent", "z", "eps", "epsilon", "epsilons",
    "acc", "accuracy", "time", "times", "latency", "err", "error", "errors", "result", "results", "res",
    "metric", "metrics", "history", "perf", "model", "net", "lr", "dp", "est", "estimate", "estimated",
    "approx", "released", "answer", "answers", "perturbed", "randomized", "privatized", "sanitized", "batch",
    "running", "mb", "minibatch", "prob", "probs", "probabilities", "pdf", "density", "likelihood", "bound",
    "bounds", "lower", "upper", "limit", "limits", "range", "ranges", "clip", "center", "centers", "centre",
    "centres", "proximity", "g", "gs", "flat_g", "correlation", "rmse", "mse", "mae", "prev", "previous", "best",
    "tol", "change", "diff", "residual", "residuals", "scale", "scales", "strategy", "workload",
    # a federated server's own data: the DP of a federation protects the clients' records
    "server",
})

#: builtins / methods / numpy functions whose result is the set of values the data holds or its extremes
_EXTREMES = frozenset({"min", "max", "amin", "amax", "nanmin", "nanmax"})
_QUANTILES = frozenset({"quantile", "nanquantile", "percentile", "nanpercentile"})
_SETS = frozenset({"unique", "value_counts", "drop_duplicates"})
_LIBS = frozenset({"np", "numpy", "pd", "pandas", "torch", "jnp"})
#: calls that hand back (a container of) their argument's values: the value is still the data
_CARRY_CALLS = frozenset({
    "list", "tuple", "sorted", "array", "asarray", "copy", "flatten", "ravel", "reshape", "dropna", "astype",
    "to_numpy", "tolist", "values", "squeeze", "DataFrame", "Series", "iter", "deepcopy", "float", "int",
})
#: words of a parameter that is a given domain, a label set or a configuration, not the records
_GIVEN = frozenset({
    "categories", "category", "cats", "vocab", "vocabulary", "domain", "domains", "classes", "levels", "bins",
    "edges", "bounds", "bound", "range", "ranges", "limits", "lower", "upper", "low", "high", "lo", "hi",
    "y", "label", "labels", "target", "targets", "schema", "meta", "metadata", "config", "cfg", "columns",
    "column_names", "names", "keys", "public", "pub", "synthetic", "synth", "fake", "generated", "test", "val",
    "valid", "validation", "noisy", "noise", "epsilon", "eps", "delta", "rho", "sigma", "n", "k", "size",
    "num", "dim", "seed", "rng", "model", "weights", "grads", "grad", "scores", "loss", "logits", "probs",
    "options", "kwargs", "args", "mode", "strategy", "discrete", "categorical", "ordinal", "continuous",
})
_LABELS = frozenset({"y", "label", "labels", "target", "targets", "class", "classes", "cond", "condition"})
#: attributes of a table that are its schema or its dimensions, not its records' values
_SCHEMA = frozenset({"columns", "dtypes", "dtype", "index", "keys", "shape", "names", "ndim", "size", "name"})
_BASELINE = frozenset({"baseline", "nonprivate", "nondp"})
_CAMEL = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")


def _words(name: str) -> set[str]:
    out: set[str] = set()
    for part in re.split(r"[^A-Za-z0-9]+", name):
        out.update(w.lower() for w in _CAMEL.findall(part))
        if part:
            out.add(part.lower())
    return out


def _self_attr(node: ast.AST) -> str | None:
    """``attr`` of ``self.attr`` (through subscripts and attribute chains: ``self.meta[c]['min']``)."""
    while isinstance(node, ast.Subscript):
        node = node.value
    while isinstance(node, ast.Attribute) and not (isinstance(node.value, ast.Name) and node.value.id == "self"):
        node = node.value
        while isinstance(node, ast.Subscript):
            node = node.value
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        return node.attr
    return None


def _root_name(expr: ast.AST) -> str | None:
    node = expr
    for _ in range(16):
        if isinstance(node, ast.Subscript):
            node = node.value
        elif isinstance(node, ast.Attribute):
            if isinstance(node.value, ast.Name) and node.value.id == "self":
                return f"self.{node.attr}"  # the records the instance holds (``self.df``)
            node = node.value
        elif isinstance(node, ast.Call):
            if isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name) \
                    and node.func.value.id == "self":
                return None  # a method of the instance: what it returns is its own
            if isinstance(node.func, ast.Attribute) and not (
                    isinstance(node.func.value, ast.Name) and node.func.value.id in _LIBS):
                node = node.func.value
            elif func_name(node.func) in _CARRY_CALLS and node.args:
                node = node.args[0]
            else:
                return None
        elif isinstance(node, ast.Name):
            return node.id
        else:
            return None
    return None


def _bound(target: ast.expr) -> list[str]:
    """Names an assignment target binds (``a``, ``a, b``), not those it indexes with (``d[k]``)."""
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [n for e in target.elts for n in _bound(e)]
    if isinstance(target, ast.Starred):
        return _bound(target.value)
    return []


def _per_record(call: ast.Call) -> bool:
    """Reduced along a record's own axes (``x.max(axis=1)``), or elementwise (``np.maximum``)."""
    axis = next((k.value for k in call.keywords if k.arg in {"axis", "dim"}), None)
    if axis is None:
        lib = isinstance(call.func, ast.Attribute) and isinstance(call.func.value, ast.Name) \
            and call.func.value.id in _LIBS
        rest = call.args[1:] if lib else call.args if isinstance(call.func, ast.Attribute) else call.args[1:]
        axis = rest[0] if rest else None
    if axis is None:
        return False
    elts = axis.elts if isinstance(axis, (ast.Tuple, ast.List)) else [axis]
    return not all(isinstance(e, ast.Constant) and e.value in (0, None) for e in elts)


class _Method:
    """One method: which names hold its data, which hold a domain read from it (-> the read nodes)."""

    def __init__(self, fn: ast.FunctionDef | ast.AsyncFunctionDef, data: set[str],
                 passing: frozenset[str] = frozenset(),
                 returning: dict[str, list[ast.Call]] | None = None) -> None:
        self.fn = fn
        self.data = set(data)
        self.domain: dict[str, list[ast.Call]] = {}
        #: methods of the class that hand back (part of) the data they are given / a domain of it
        self.passing = passing
        self.returning = returning or {}
        for _ in range(3):
            changed = False
            for node in ast.walk(fn):
                if isinstance(node, (ast.For, ast.comprehension)) and self._data_value(node.iter):
                    # ``for record in dataset.to_list()``: each record is the data
                    for name in _bound(node.target):
                        if name not in self.data:
                            self.data.add(name)
                            changed = True
                elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                        and node.func.attr in {"append", "extend"} and isinstance(node.func.value, ast.Name) \
                        and node.args and self._data_value(node.args[0]) and not self.reads(node.args[0]) \
                        and node.func.value.id not in self.data:
                    self.data.add(node.func.value.id)  # ``values.append(record.get(field))``
                    changed = True
                if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and node.value is not None:
                    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                    names = [n for t in targets for n in _bound(t)]
                    reads = self.reads(node.value)
                    if reads:
                        for name in names:
                            changed |= self._add(name, reads)
                    elif self._data_value(node.value):
                        for name in names:
                            if name not in self.data and name not in self.domain:
                                self.data.add(name)
                                changed = True
                elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                        and node.func.attr in {"append", "extend", "update", "add"} \
                        and isinstance(node.func.value, ast.Name) and node.args:
                    reads = self.reads(node.args[0])
                    if reads:
                        changed |= self._add(node.func.value.id, reads)
            if not changed:
                break

    def _add(self, name: str, reads: list[ast.Call]) -> bool:
        held = self.domain.setdefault(name, [])
        known = {id(r) for r in held}
        new = [r for r in reads if id(r) not in known]
        held.extend(new)
        return bool(new)

    def _data_value(self, expr: ast.AST) -> bool:
        """``values = list(data)``, ``column = df[c].copy()``, ``df = pd.DataFrame(data)``; not the
        prediction target (``labels = y.astype(int)``: its class set sizes the model), nor the
        table's schema (``df.columns``, ``df.dtypes``, ``d.keys()``)."""
        inner = expr
        for _ in range(8):
            if isinstance(inner, ast.Call) and isinstance(inner.func, ast.Name) and inner.func.id in _CARRY_CALLS \
                    and inner.args:
                inner = inner.args[0]
            elif isinstance(inner, (ast.ListComp, ast.GeneratorExp, ast.SetComp)):
                inner = inner.elt
            else:
                break
        if isinstance(inner, ast.Call) and isinstance(inner.func, ast.Attribute) \
                and isinstance(inner.func.value, ast.Name) and inner.func.value.id == "self" \
                and inner.func.attr in self.passing and inner.args:
            return self._data_value(inner.args[0])  # ``self._extract_values(dataset, field)``
        root = _root_name(expr)
        if root is None or root not in self.data or _words(root) & _LABELS:
            return False
        for n in ast.walk(expr):
            if isinstance(n, ast.Attribute) and n.attr in _SCHEMA:
                return False
            if isinstance(n, ast.Subscript) and isinstance(n.slice, ast.Constant) and isinstance(n.slice.value, str) \
                    and _words(n.slice.value) & _LABELS:
                return False  # ``data_db["labels"]``: the target column
        return True

    def _read(self, node: ast.AST) -> bool:
        """Is ``node`` a read of the data's extremes, quantiles or set of values?"""
        if not isinstance(node, ast.Call):
            return False
        name = func_name(node.func)
        if isinstance(node.func, ast.Name):
            if name in {"min", "max"} and len(node.args) == 1 and not node.keywords:
                arg = node.args[0]
                return isinstance(arg, (ast.Name, ast.Subscript, ast.Attribute, ast.Call)) and self._data_value(arg) \
                    and not isinstance(arg, ast.Call) or isinstance(arg, ast.Call) \
                    and func_name(arg.func) in {"list", "sorted"} and self._data_value(arg)
            if name == "set" and len(node.args) == 1:
                return self._data_value(node.args[0])
            if name == "Counter" and len(node.args) == 1:
                return self._data_value(node.args[0])
            return False
        if not isinstance(node.func, ast.Attribute):
            return False
        receiver = node.func.value
        if name == "fromkeys" and isinstance(receiver, ast.Name) and receiver.id == "dict" and node.args:
            return self._data_value(node.args[0])
        lib = isinstance(receiver, ast.Name) and receiver.id in _LIBS
        if name in _EXTREMES | _QUANTILES | _SETS:
            data = node.args[0] if lib and node.args else None if lib else receiver
            if data is None or not self._data_value(data) or _per_record(node):
                return False
            if name in {"max", "min"} and (node.args[1:] if lib else node.args) and not any(
                    k.arg in {"axis", "dim"} for k in node.keywords):
                first = (node.args[1:] if lib else node.args)[0]
                if not (isinstance(first, ast.Constant) and first.value in (0, None)):
                    return False  # ``np.max(a, b)`` / ``t.max(other)``: elementwise
            return True
        return False

    def reads(self, expr: ast.AST) -> list[ast.Call]:
        """Reads of a domain that ``expr`` carries (directly, through a name holding one, or through
        a method of the class returning one of the data it is given)."""
        out: list[ast.Call] = []
        for node in ast.walk(expr):
            if self._read(node):
                out.append(node)  # type: ignore[arg-type]
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and isinstance(node.func.value, ast.Name) and node.func.value.id == "self" \
                    and node.func.attr in self.returning and node.args and self._data_value(node.args[0]):
                out.extend(self.returning[node.func.attr])
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in self.domain:
                out.extend(self.domain[node.id])
        return out


def _methods(cls: ast.ClassDef) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    return [s for s in cls.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))]


def _data_params(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    """The records a method is given: its first parameter after ``self``, unless it names a given
    domain, a label set or a configuration."""
    params = [a.arg for a in [*fn.args.posonlyargs, *fn.args.args]][1:]
    if not params or _words(params[0]) & _GIVEN or not _words(params[0]) & _RECORDS:
        return set()
    return {params[0]}


#: words of a parameter that hands a class the records themselves (kept as ``self.df``)
_RECORDS = frozenset({"data", "df", "dataset", "x", "records", "table", "frame", "train", "training", "db",
                      "database", "points", "pts", "traces", "trajectories", "stream", "rows", "raw", "column",
                      "col", "values", "series"})


def _held(methods: list[ast.FunctionDef | ast.AsyncFunctionDef]) -> set[str]:
    """``self.<a>`` names of attributes a method sets to the records it is given (``self.df = df``)."""
    out: set[str] = set()
    for fn in methods:
        data = {p for p in _data_params(fn) if _words(p) & _RECORDS}
        if not data:
            continue
        method = _Method(fn, data)
        for node in ast.walk(fn):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Attribute) \
                    and isinstance(node.targets[0].value, ast.Name) and node.targets[0].value.id == "self" \
                    and method._data_value(node.value) and not method.reads(node.value):
                out.add(f"self.{node.targets[0].attr}")
    return out


def _reads_attr(fn: ast.AST) -> set[str]:
    return {n.attr for n in ast.walk(fn) if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Load)
            and isinstance(n.value, ast.Name) and n.value.id == "self"}


def _storing(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    """Attributes a method sets from its parameters (``self._vocab[v] = i`` for ``v`` in its argument)."""
    params = {a.arg for a in fn.args.args[1:]}
    held = set(params)
    for node in ast.walk(fn):
        if isinstance(node, ast.For) and {n.id for n in ast.walk(node.iter) if isinstance(n, ast.Name)} & held:
            held |= {n.id for n in ast.walk(node.target) if isinstance(n, ast.Name)}
    out: set[str] = set()
    for node in ast.walk(fn):
        if isinstance(node, (ast.Assign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            value_names = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
            for t in targets:
                attr = _self_attr(t)
                if attr is not None and value_names & held:
                    out.add(attr)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr in {"append", "extend", "update", "add", "__setitem__"} \
                and {n.id for a in node.args for n in ast.walk(a) if isinstance(n, ast.Name)} & held:
            attr = _self_attr(node.func.value)
            if attr is not None:
                out.add(attr)
    return out


def _returns_domain(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A module function whose return value carries a domain of its first parameter
    (``get_metadata(data)`` returning each column's min, max and values)."""
    params = [a.arg for a in fn.args.args]
    if not params or _words(params[0]) & _GIVEN or not _words(params[0]) & _RECORDS:
        return False
    method = _Method(fn, {params[0]})
    return any(isinstance(n, ast.Return) and n.value is not None and method.reads(n.value) for n in ast.walk(fn))


def _helpers(methods: list[ast.FunctionDef | ast.AsyncFunctionDef],
             held: set[str]) -> tuple[frozenset[str], dict[str, list[ast.Call]]]:
    """Methods returning (part of) the data they are given (``_extract_values(dataset, f)``), and
    methods returning a domain read from it (``_unique_values(dataset, f)`` -> its reads)."""
    passing: set[str] = set()
    returning: dict[str, list[ast.Call]] = {}
    for _ in range(2):
        for fn in methods:
            data = _data_params(fn)
            if not data or fn.name == "__init__":
                continue
            method = _Method(fn, data | held, frozenset(passing), returning)
            for node in ast.walk(fn):
                if isinstance(node, ast.Return) and node.value is not None \
                        and not (isinstance(node.value, ast.Name) and node.value.id == "self"):
                    reads = method.reads(node.value)
                    if reads:
                        known = returning.setdefault(fn.name, [])
                        known.extend(r for r in reads if all(r is not h for h in known))
                    elif method._data_value(node.value):
                        passing.add(fn.name)
    return frozenset(passing), returning


def _fit_named(name: str) -> bool:
    return bool(_words(name) & {"fit", "learn", "build", "prepare", "preprocess"})


_KEPT = "the data's own range or categories kept as "


def shadowed_fit(cls: ast.ClassDef, fn: ast.AST, node: ast.AST) -> bool:
    """``node`` sits in ``cls``'s ``fit`` that its own ``fit_transform`` re-implements without calling
    ``self.fit`` (nor ``super().fit``), and that copy holds the very same expression (same text): the
    pipeline's ``fit_transform`` is the live path and is checked (and reported) there; ``fit`` is a
    duplicate that a caller reaches only to repeat the same read (the rule's own ``_shadowed_fit`` says
    the same for a module's findings)."""
    if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) or fn.name != "fit":
        return False
    twin = next((s for s in cls.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))
                 and s.name == "fit_transform"), None)
    if twin is None:
        return False
    want = ast.dump(node)
    same = False
    for sub in ast.walk(twin):
        if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) and sub.func.attr == "fit":
            base = sub.func.value
            if (isinstance(base, ast.Name) and base.id == "self") or (
                    isinstance(base, ast.Call) and isinstance(base.func, ast.Name) and base.func.id == "super"):
                return False
        same = same or (type(sub) is type(node) and ast.dump(sub) == want)
    return same


def kept_site(what: str) -> bool:
    """Is ``what`` (a preprocessing site's description) one of :func:`sites`?"""
    return what.startswith(_KEPT)


def sites(tree: ast.Module) -> list[list[object]]:
    """``[line, col, what]`` of each domain read that a class keeps for another method."""
    domain_functions = {f.name: f for f in tree.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
                        and _returns_domain(f)}
    out: dict[int, list[object]] = {}
    for cls in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)):
        methods = _methods(cls)
        if len(methods) < 2 or _words(cls.name) & _BASELINE or _words(ast.get_docstring(cls) or "") & _BASELINE:
            continue  # a non-private baseline model: it claims no guarantee
        by_name = {m.name: m for m in methods}
        reads_of = {m.name: _reads_attr(m) for m in methods}
        held = _held(methods)
        passing, returning = _helpers(methods, held)
        for fn in methods:
            data = _data_params(fn) | held
            if not data:
                continue
            method = _Method(fn, data, passing, returning)
            own = _Method(fn, held, passing, returning) if held else _Method(fn, set())
            users = {a for name, r in reads_of.items() if name not in {fn.name, "__init__"} for a in r}
            # a getter the other methods call hands them what it returns (``return self.dim``)
            called = any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == fn.name
                         and isinstance(n.func.value, ast.Name) and n.func.value.id == "self"
                         for m in methods if m is not fn for n in ast.walk(m))
            if called:
                users |= {a for n in ast.walk(fn) if isinstance(n, ast.Return) and n.value is not None
                          for a in [_self_attr(n.value)] if a is not None}
            kept: list[tuple[list[ast.Call], str]] = []
            for node in ast.walk(fn):
                if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and node.value is not None:
                    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                    attrs = [a for t in targets if (a := _self_attr(t)) is not None]
                    if not attrs:
                        continue
                    reads = method.reads(node.value)
                    if not reads and isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Name) \
                            and node.value.func.id in domain_functions and node.value.args \
                            and method._data_value(node.value.args[0]):
                        helper = domain_functions[node.value.func.id]
                        inner = _Method(helper, {helper.args.args[0].arg})
                        reads = [r for n in ast.walk(helper) if isinstance(n, ast.Return) and n.value is not None
                                 for r in inner.reads(n.value)]
                    if reads and set(attrs) & users:
                        kept.append((reads, f"`self.{attrs[0]}`"))
                elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                        and node.func.attr in {"append", "extend", "update", "add"} and node.args:
                    attr = _self_attr(node.func.value)
                    reads = method.reads(node.args[0])
                    if attr is not None and reads and attr in users:
                        kept.append((reads, f"`self.{attr}`"))
                elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                        and isinstance(node.func.value, ast.Name) and node.func.value.id == "self" \
                        and node.func.attr in by_name and node.func.attr != fn.name:
                    stored = _storing(by_name[node.func.attr]) & users
                    reads = [r for a in node.args for r in method.reads(a)]
                    if stored and reads:
                        kept.append((reads, f"`self.{sorted(stored)[0]}`"))
                elif isinstance(node, ast.Return) and node.value is not None and (_fit_named(fn.name) or called) \
                        and fn.name != "__init__" and not (isinstance(node.value, ast.Name) and node.value.id == "self"):
                    # a getter's result: only a domain of the records the instance holds (a helper
                    # the others call with any frame, synthetic or not, is theirs to judge)
                    reads = method.reads(node.value) if _fit_named(fn.name) else own.reads(node.value)
                    if reads:
                        kept.append((reads, f"the state `{fn.name}` returns"))
            for reads, where in kept:
                for read in reads:
                    if shadowed_fit(cls, fn, read):
                        continue  # (dp202fp45) the live copy in ``fit_transform`` is checked
                    line = read.lineno
                    if line not in out:
                        out[line] = [line, read.col_offset + 1,
                                     f"{_KEPT}{where} by `{fn.name}` for the "
                                     f"class's other methods (encoding, binning or decoding the release)"]
    return [out[k] for k in sorted(out)]

