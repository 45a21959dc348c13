"""Preprocessing fitted on the private data of a DP project, wherever the code base puts it.

A DP trainer or synthesizer rarely scales its own input: a loader or a ``preprocessing.py`` with no
privacy word in it standardises, min-max scales, imputes, encodes or selects columns with
statistics of the records, and the DP module imports it. The statistics reach the model (and a
de-normalised synthetic release) with no noise and no budget. One file cannot show it; the
project can.

Per file (:func:`sites`, CPython ``ast``, never imports the code) this records the transformation
sites whose parameters come from the data they transform:

* a fit of a scaler / encoder / imputer / discretiser / column selector (``StandardScaler``,
  ``OneHotEncoder``, ``SimpleImputer``, ``KBinsDiscretizer``, ``ColumnTransformer``…) on the data;
* arithmetic with a statistic of the data: centring by its mean/median/min/quantile, dividing by
  its std/range/max, de-normalising ``z * std + mean``, clipping at its quantiles or mean±k·std,
  ``fillna`` with its median, a column kept or dropped by comparing its std/variance/correlation.

:func:`join` reports them (as DP202) in files the project's DP code reaches through its imports,
when some scanned module claims differential privacy. Excluded: data named synthetic, generated,
public, test or validation; functions and files that evaluate utility or plot; statistics of
losses, gradients, weights or model outputs.
"""
from __future__ import annotations

import ast
import os
import re
from collections.abc import Callable, Collection, Iterator, Mapping
from typing import Any

from dpcheck.analysis import dp_output, kept_domain, value_codebook
from dpcheck.analysis.astfacts import func_name
from dpcheck.analysis.off_switch import off_switch_nodes
from dpcheck.analysis.releaseless import measuring_folder
from dpcheck.analysis.per_record import ast_from_first_parameter, ast_per_record_functions

#: transformers whose ``fit`` learns parameters (bounds, moments, categories, modes, a selection)
PREP_CLASSES = frozenset({
    "StandardScaler", "MinMaxScaler", "MaxAbsScaler", "RobustScaler", "QuantileTransformer", "PowerTransformer",
    "KBinsDiscretizer", "OneHotEncoder", "OrdinalEncoder", "LabelEncoder", "LabelBinarizer", "MultiLabelBinarizer",
    "TargetEncoder", "SimpleImputer", "KNNImputer", "IterativeImputer", "BayesianGaussianMixture",
    "ClusterBasedNormalizer", "DataTransformer", "ColumnTransformer", "VarianceThreshold", "SelectKBest",
    "SelectPercentile", "KMeans", "MiniBatchKMeans",
})
#: a transformer class by what its name says it learns (``OneHotEncodingTransformer``,
#: ``CategoricalEncoder``, ``BayesGMMTransformer``, ``QuantileNormalizer``): whatever library or project
#: it comes from, its ``fit`` learns categories, modes or bounds from the data (a bare ``…Encoder`` may
#: be a stateless or a learned representation: not enough)
_PREP_FAMILY = re.compile(
    r"^(?=[A-Z])\w*?(?:(?:OneHot|Ordinal|Label|Target|Categor\w*|Frequency|Count)\w*Encod\w*|Scaler|Normali[sz]er|"
    r"Discreti[sz]er|Binari[sz]er|Imputer|(?:GMM|Mixture)\w*Transformer)$"
)


def prep_class(kind: str | None, own: Collection[str] = ()) -> bool:
    """Is ``kind`` (a class name) a transformer whose ``fit`` learns from the data? ``own``: classes
    the module defines (their ``fit`` is read as written, not guessed from the name)."""
    return bool(kind) and (kind in PREP_CLASSES or kind not in own and _PREP_FAMILY.match(kind or "") is not None)


_FIT = frozenset({"fit", "fit_transform", "partial_fit", "fit_predict"})
_LOCATION = frozenset({"mean", "nanmean", "median", "nanmedian", "min", "amin", "nanmin", "quantile",
                       "nanquantile", "percentile", "nanpercentile", "average"})
_SPREAD = frozenset({"std", "nanstd", "var", "nanvar", "max", "amax", "nanmax", "ptp"})
_SELECT = frozenset({"corr", "corrcoef", "corrwith", "nunique"})
_STATS = _LOCATION | _SPREAD | _SELECT
_MEANS = frozenset({"mean", "nanmean", "median", "nanmedian", "mode"})
#: names of returned statistics (``data, min_val, max_val = MinMaxScaler(data)``)
_STAT_WORDS = frozenset({"min", "max", "mean", "mu", "std", "sigma", "s", "scale", "scaler", "stats", "stat", "var",
                         "lo", "hi", "low", "high", "minimum", "maximum", "norm", "avg", "sd", "median", "offset"})
_REDUCTIONS = frozenset({"sum", "nansum", "mean", "nanmean", "average", "var", "nanvar", "std", "nanstd", "norm",
                         "dot", "max", "min", "trace", "item"})
_COLLECT = frozenset({"append", "drop", "remove", "add", "pop", "discard", "extend"})
_CLIP = frozenset({"clip", "clamp", "clip_by_value"})
_NOT_PRIVATE = kept_domain.NOT_PRIVATE
#: calls of utility evaluation / reporting: a function making them scores, it releases nothing
_EVALUATING = frozenset({
    "accuracy_score", "f1_score", "roc_auc_score", "r2_score", "mean_squared_error", "mean_absolute_error",
    "classification_report", "confusion_matrix", "precision_score", "recall_score", "cross_val_score",
    "average_precision_score", "balanced_accuracy_score", "predict", "predict_proba", "score", "savefig",
    "plot", "imshow", "hist", "scatter", "evaluate",
})
_EVAL_WORDS = frozenset({
    "eval", "evaluate", "evaluation", "evaluator", "metric", "metrics", "score", "scoring", "plot", "plots",
    "plotting", "visual", "visualize", "visualise", "visualization", "attack", "attacks", "baseline",
    "baselines", "nonprivate", "nonpriv", "test", "tests", "utility", "utilities", "benchmark", "inference",
    "mia", "membership", "fidelity", "similarity", "analysis", "notebook", "notebooks", "report", "crossval",
    "kfold", "cv", "gui", "display", "show", "recovery", "reconstruction", "inversion", "fisher",
})
#: words of a *function* (not a module: a ``validate.py`` script may train) that profiles, validates
#: an upload or scores re-identification / distance-to-record risk: with no ``raise`` it describes
#: the data to its owner and releases nothing
_DESCRIBING = frozenset({"profile", "profiling", "validate", "validator", "risk", "dcr", "nndr"})
#: names of modules that prepare the data set
_PREPARING = frozenset({
    "preprocess", "preprocessing", "prepare", "prep", "data", "dataset", "loader", "load", "transform",
    "transformer", "encode", "encoder", "encoding", "clean", "cleaning", "process", "processing", "normalize",
    "normalise", "normalization", "feature", "features", "discretize", "discretise",
})
_CAMEL = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")


#: encoders meant for a prediction target, and the words naming one
_LABEL_ENCODERS = frozenset({"LabelEncoder", "LabelBinarizer", "MultiLabelBinarizer"})
_LABEL_WORDS = frozenset({"y", "target", "targets", "label", "labels"})


def _words(name: str) -> set[str]:
    out: set[str] = set()
    for part in re.split(r"[^A-Za-z0-9]+", name):
        out.update(w.lower() for w in _CAMEL.findall(part))
        if part:
            out.add(part.lower())
    return out | {w[:-1] for w in out if len(w) > 3 and w.endswith("s")}


def _names(expr: ast.AST) -> Iterator[str]:
    for node in ast.walk(expr):
        if isinstance(node, ast.Name):
            yield node.id
        elif isinstance(node, ast.Attribute):
            yield node.attr


def _call_receiver(call: ast.Call) -> ast.AST | None:
    """The data a call reads: the object of a method (``X.mean()``), else its first argument
    (``np.mean(X)``); a library module (``np.``) is never the data."""
    func = call.func
    if isinstance(func, ast.Attribute) and not (isinstance(func.value, ast.Name) and func.value.id in _LIBS):
        return func.value
    return call.args[0] if call.args else None


def _root(expr: ast.AST) -> str | None:
    """The data a value is read from: ``X_train`` of ``X_train[cols].astype(float).values``."""
    node = expr
    for _ in range(16):
        if isinstance(node, ast.Subscript):
            node = node.value
        elif isinstance(node, ast.Call):
            if func_name(node.func) in _SEQUENCES:
                return None  # ``np.arange(n_classes)``: a configured index range, not records
            inner = _call_receiver(node)
            if inner is None:
                return None
            node = inner
        elif isinstance(node, ast.Attribute):
            if isinstance(node.value, ast.Name) and node.value.id in {"self", "cls"}:
                return node.attr
            if node.attr in {"values", "loc", "iloc", "T", "x", "data", "X"}:
                inner = node.value
                if isinstance(inner, ast.Name) and node.attr in {"x", "data", "X"}:
                    return node.attr
                node = inner
            else:
                return node.attr
        elif isinstance(node, ast.BinOp):
            node = node.left
        elif isinstance(node, ast.Name):
            return node.id
        elif isinstance(node, (ast.List, ast.Tuple)) and node.elts and not any(
                isinstance(e, ast.Constant) for e in node.elts):
            node = node.elts[0]  # ``np.array([v_prev, v_next])``: an array of the values listed
        else:
            return None
    return None


_SEQUENCES = frozenset({"arange", "range", "linspace", "logspace", "eye", "identity"})


def _private_looking(expr: ast.AST) -> bool:
    """Read from a named value not named like synthetic/public/held-out data or a model's values."""
    root = _root(expr)
    return root is not None and root not in _LIBS and not _words(root) & _NOT_PRIVATE


_SCALAR_CASTS = frozenset({"int", "float", "round", "len", "ceil", "floor"})


def _scalar_display(expr: ast.expr) -> bool:
    """A tuple or list written out of numbers (``(int(p * d), int(np.log(k)))``, ``[1.0, len(s)]``),
    not of arrays: a statistic of it is of those numbers, not of any records."""
    if isinstance(expr, ast.Call) and func_name(expr.func) in {"array", "asarray", "tensor", "as_tensor"} \
            and len(expr.args) == 1:
        return _scalar_display(expr.args[0])
    return isinstance(expr, (ast.Tuple, ast.List)) and bool(expr.elts) and all(
        isinstance(e, ast.Constant) and isinstance(e.value, (int, float))
        or isinstance(e, ast.Call) and func_name(e.func) in _SCALAR_CASTS for e in expr.elts)


def _stat(node: ast.AST) -> tuple[str, ast.expr] | None:
    """``(kind, data)`` when ``node`` computes a statistic of ``data`` (``x.mean(0)``, ``np.std(x)``)."""
    if not isinstance(node, ast.Call):
        return None
    name = func_name(node.func)
    if name not in _STATS and name != "mode" and name != "norm":
        return None
    if not isinstance(node.func, ast.Attribute):
        if name in {"max", "min"} and len(node.args) == 1 and not node.keywords \
                and isinstance(node.args[0], ast.Call) and func_name(node.args[0].func) in {"norm", "abs"} \
                and node.args[0].args and isinstance(node.args[0].func, ast.Attribute):
            # ``max(np.linalg.norm(X, axis=1))``, ``max(np.abs(y))``: the largest record norm or value
            return name, node.args[0].args[0]
        # builtin min/max over an iterable: lengths, scores, budgets; but the extreme of every
        # record's extreme (``max([max(row) for row in data])``) is the data's own
        if name in {"max", "min"} and len(node.args) == 1 and not node.keywords \
                and isinstance(node.args[0], (ast.ListComp, ast.GeneratorExp)):
            inner = node.args[0].elt
            if isinstance(inner, ast.Call) and func_name(inner.func) == name and len(inner.args) == 1 \
                    and isinstance(inner.func, ast.Name) and not isinstance(inner.args[0], ast.Constant):
                gen = node.args[0].generators[0]
                bound = {n.id for n in ast.walk(gen.target) if isinstance(n, ast.Name)}
                # ``max(g) for g in groups``: each g is one record of ``groups``, the maximum spans them all
                return name, gen.iter if _root(inner.args[0]) in bound else inner.args[0]
        return None
    receiver = node.func.value
    lib = isinstance(receiver, ast.Name) and receiver.id in {"np", "numpy", "torch", "jnp", "tf", "pd"} \
        or isinstance(receiver, ast.Attribute) and receiver.attr in {"math", "linalg", "reduce_mean"}
    if lib:
        if not node.args:
            return None
        if name in {"max", "min"} and len(node.args) >= 2 and not _axis_like(node.args[1]):
            return None  # torch.min(a, b): elementwise
        if _scalar_display(node.args[0]):
            return None  # np.max((int(p * d), int(q))): a choice among numbers written here
        data = node.args[0]
    else:
        data = receiver
        if name in {"max", "min"} and node.args and not _axis_like(node.args[0]):
            return None  # torch.max(a, b) / a.max(b): elementwise, not a statistic
    if name == "norm" or _shape_of(data):
        return None
    return name, data


def _shape_of(expr: ast.expr) -> bool:
    """``img.shape[:2]``, ``x.size()``: the array's dimensions, not the values of its records."""
    while isinstance(expr, ast.Subscript):
        expr = expr.value
    if isinstance(expr, ast.Call) and not expr.args:
        expr = expr.func
    return isinstance(expr, ast.Attribute) and expr.attr in {"shape", "size", "ndim"}


def _axis_like(arg: ast.expr) -> bool:
    return isinstance(arg, ast.Constant) and isinstance(arg.value, int) or isinstance(arg, ast.UnaryOp)


class _Scope:
    """One function (or the module's top level): its statistics by name, and its sites."""

    def __init__(self, body: list[ast.stmt], name: str, constructed: Mapping[str, str]) -> None:
        self.body = body
        self.name = name
        self.constructed = dict(constructed)
        #: name -> statistic kinds it holds (``mu = data.mean(0)``, ``s = x.max() - x.min()``)
        self.stats: dict[str, set[str]] = {}
        self.evaluating = _evaluating(body, name)
        #: names bound to a categorical with declared categories (``pd.Categorical(x, categories=c)``)
        self.declared: set[str] = {
            k for node in self.nodes() if isinstance(node, ast.Assign) for k in _targets(node)
            if any(_declares_categories(n) for n in ast.walk(node.value))}
        #: columns (``frame['c']``) last set by mapping through a lookup the code defines: their
        #: categories are the code's (``df['age'] = df['age'].map(lambda x: bucket(x))``)
        self.coded: set[str] = set()
        #: names bound only to literal arrays of private-looking values (``_listed``)
        self.listed: set[str] = set()
        #: the module's hand-written scalers (``_home_scalers``)
        self.home: set[str] = set()
        #: parameters every call fills with an enumerated domain (``np.arange(k)``)
        self.enumerated: set[str] = set()
        #: a ``fit`` the class's own ``fit_transform`` re-implements (dead beside it)
        self.shadowed = False
        #: names bound only to random draws (toy data made here) or to values built from them
        self.simulated: set[str] = set()
        for node in self.nodes():
            if isinstance(node, ast.Assign):
                reads = {n.id for n in ast.walk(node.value) if isinstance(n, ast.Name)} - _LIBS
                drawn = any(isinstance(n, ast.Call) and (_DRAWS & {func_name(n.func)} or "random" in _dotted(n.func)
                                                         or _sampler(n) or _generated(n))
                            for n in ast.walk(node.value))
                if drawn or (reads and reads <= self.simulated):
                    self.simulated.update(k for k in _targets(node) if "." not in k)
            elif isinstance(node, ast.Call) and func_name(node.func) in {"append", "extend"} and node.args \
                    and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name) \
                    and isinstance(node.args[0], ast.Name) and node.args[0].id in self.simulated:
                # ``database.append(sample)`` with a drawn sample: a toy data set grown row by row
                self.simulated.add(node.func.value.id)
        #: names computed from a model's values (gradients, losses, weights) and no data-named value:
        #: ``St = torch.norm(torch.stack([g.norm() for g in grads]))``, ``It = St_bar * Ut``
        self.derived: set[str] = set()
        for node in self.nodes():
            if isinstance(node, ast.Assign):
                reads = {n.id for n in ast.walk(node.value) if isinstance(n, ast.Name)} - _LIBS
                if any(r in self.derived or _words(r) & _MODEL_VALUES for r in reads) and not any(
                        r in {"X", "x", "D"} or _words(r) & _DATA_ARG_WORDS for r in reads):
                    self.derived.update(k for k in _targets(node) if "." not in k)
        self.listed = self._listed()
        #: names bound here only to a copy or slice of a private-looking value, whatever their word
        self.aliases = self._aliases()
        #: nodes inside a reduction (``np.abs(x - x.mean()).sum()``, ``np.average((x - m) ** 2)``): a
        #: dispersion being computed, not the data transformed
        self.reduced: set[int] = set()
        for node in self.nodes():
            if isinstance(node, ast.Call) and func_name(node.func) in _REDUCTIONS:
                parts: list[ast.AST] = [*node.args, *(k.value for k in node.keywords)]
                if isinstance(node.func, ast.Attribute):
                    parts.append(node.func.value)
                for part in parts:
                    self.reduced.update(id(n) for n in ast.walk(part))
        #: nodes of a value centred only to form its covariance or scatter matrix
        #: (``c = X - X.mean(0); np.cov(c)``, ``c.T.dot(c)``): a second moment, not the data shifted
        self.scatter: set[int] = set()
        for node in self.nodes():
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.BinOp) \
                    and isinstance(node.value.op, ast.Sub) and len(node.targets) == 1:
                key = _key(node.targets[0])
                if key is not None and self._covariance_of(key):
                    self.scatter.update(id(n) for n in ast.walk(node.value))
        #: names bound to one record at a time by a loop over the records (``for i, row in
        #: enumerate(X)``, ``for _, r in df.iterrows()``): a statistic of one is that record's own
        self.rows: set[str] = set()
        for node in self.nodes():
            if isinstance(node, (ast.For, ast.comprehension)):
                row = _row_target(node.target, node.iter)
                if row is not None:
                    self.rows.add(row)
        #: (g1) loops over the records by index (``for i in range(len(X))``, ``range(X.shape[0])``):
        #: ``X[i, ...]`` is one record, and so is a name the loop body binds to it (``img = X[i]``,
        #: ``img = np.pad(img, 4)``): per-image standardisation reads no other record
        self.record_index: dict[str, str] = {}
        for node in self.nodes():
            if isinstance(node, ast.For) and isinstance(node.target, ast.Name):
                over = _index_range(node.iter)
                if over is not None:
                    self.record_index[node.target.id] = over
        if self.record_index:
            for node in self.nodes():
                if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                        and self._one_record(node.value):
                    self.rows.add(node.targets[0].id)
        #: comparisons that choose columns or rows: a mask, a comprehension's filter, an ``if``
        #: whose body collects or drops something (not a guard that raises or returns)
        self.selecting: set[int] = set()
        for node in self.nodes():
            tests: list[ast.AST] = []
            if isinstance(node, ast.Subscript):
                tests = [node.slice]
            elif isinstance(node, ast.comprehension):
                tests = list(node.ifs)
            elif isinstance(node, ast.If) and any(
                    isinstance(n, ast.Delete) or isinstance(n, ast.Call) and func_name(n.func) in _COLLECT
                    for stmt in node.body for n in ast.walk(stmt)):
                tests = [node.test]
            for test in tests:
                self.selecting.update(id(n) for n in ast.walk(test) if isinstance(n, ast.Compare))

    def releases(self) -> bool:
        """Does the scope name a privacy budget or a private engine (``target_epsilon``,
        ``make_private``, ``self.dp_engine``)? A baseline or robustness test does not."""
        for node in self.nodes():
            word = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else \
                node.arg if isinstance(node, (ast.arg, ast.keyword)) and node.arg else ""
            if word and _words(word) & _RELEASE_WORDS:
                return True
        return False

    def _covariance_of(self, key: str) -> bool:
        """Every read of ``key`` in this scope forms its second moment (``np.cov(key)``,
        ``key.T.dot(key)``, ``key.T @ key``, ``np.dot(key.T, key)``) or reads its shape."""
        moments: set[int] = set()
        shapes: set[int] = set()
        reads: list[ast.AST] = []
        for node in self.nodes():
            if isinstance(node, ast.Call) and func_name(node.func) in {"cov", "dot", "matmul"} or \
                    isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
                parts = [n for n in ast.walk(node) if _key(n) == key]
                if len(parts) >= 2 or parts and isinstance(node, ast.Call) and func_name(node.func) == "cov":
                    moments.update(id(n) for n in parts)
            elif isinstance(node, ast.Attribute) and node.attr == "shape" and _key(node.value) == key:
                shapes.add(id(node.value))
            if _key(node) == key and isinstance(getattr(node, "ctx", None), ast.Load):
                reads.append(node)
        return bool(moments) and all(id(n) in moments or id(n) in shapes for n in reads)

    def enclosing_if(self, stmt: ast.stmt) -> ast.If | None:
        """The ``if`` whose body holds ``stmt`` directly (one index per scope: a 5,000-statement function
        would otherwise be walked once per assignment)."""
        index = self.__dict__.get("_if_index")
        if index is None:
            index = {}
            for node in self.nodes():
                if isinstance(node, ast.If):
                    for child in node.body:
                        index.setdefault(id(child), node)
            self.__dict__["_if_index"] = index
        return index.get(id(stmt))

    def loops(self) -> list[ast.For]:
        """The scope's ``for`` loops (nested ones included), computed once."""
        found = self.__dict__.get("_loops")
        if found is None:
            found = [n for n in self.nodes() if isinstance(n, ast.For)]
            self.__dict__["_loops"] = found
        return found

    def nodes(self) -> Iterator[ast.AST]:
        stack: list[ast.AST] = list(reversed(self.body))
        while stack:
            node = stack.pop()
            yield node
            for child in reversed(list(ast.iter_child_nodes(node))):
                if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    stack.append(child)

    def private(self, expr: ast.AST) -> bool:
        """``_private_looking`` and not toy data drawn at random in this scope, or a name whose
        every binding here is a literal array of such values (``ranges = np.array([v_1, v_3])``)."""
        root = _root(expr)
        if root in self.simulated or root in self.derived:
            return False
        if _private_looking(expr) or root in self.listed:
            return True
        return root is not None and root in self.aliases and self._copy_of_private(root, getattr(expr, "lineno", 0))

    def _aliases(self) -> dict[str, list[tuple[int, str | None]]]:
        """Each name's bindings in this scope, in order: ``(line, name it copies or slices)``, the
        second None for anything else (a computation, a store into it, a loop target)."""
        out: dict[str, list[tuple[int, str | None]]] = {}
        for node in self.nodes():
            line = getattr(node, "lineno", 0)
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        out.setdefault(target.id, []).append(
                            (line, _copied(node.value) if len(node.targets) == 1 else None))
                    else:
                        for n in ast.walk(target):
                            if isinstance(n, ast.Name):
                                out.setdefault(n.id, []).append((line, None))
            elif isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.For, ast.comprehension, ast.withitem, ast.NamedExpr)):
                target = getattr(node, "target", None) or getattr(node, "optional_vars", None)
                for n in ast.walk(target) if target is not None else ():
                    if isinstance(n, ast.Name):
                        out.setdefault(n.id, []).append((getattr(n, "lineno", line), None))
        for bindings in out.values():
            bindings.sort(key=lambda b: b[0])
        return out

    def _copy_of_private(self, name: str, line: int, depth: int = 0) -> bool:
        """The binding of ``name`` that reaches ``line`` (the last one above it) copies or slices a
        private-looking value (``syn = data.copy()``, then ``vals = syn.values[:, 1:]``): the records
        under a word read as synthetic or held-out. A rebinding to itself (``vals = list(vals)``)
        keeps what it was; any other binding ends it."""
        if depth > 4 or name in self.simulated or name in self.derived:
            return False
        before = [b for b in self.aliases.get(name, ()) if b[0] < line]
        while before and before[-1][1] == name:
            before.pop()
        if not before:
            return depth > 0 and _private_looking(ast.Name(id=name))
        source = before[-1][1]
        return source is not None and self._copy_of_private(source, before[-1][0], depth + 1)

    def _listed(self) -> set[str]:
        """Names bound only to arrays listing named values (``np.array([a, b]).reshape(-1, 1)``)."""
        sources: dict[str, list[ast.expr]] = {}
        for node in self.nodes():
            if isinstance(node, ast.Assign):
                for key in _targets(node):
                    sources.setdefault(key, []).append(node.value)
        out: set[str] = set()
        for key, values in sources.items():
            if all(any(isinstance(n, (ast.List, ast.Tuple)) and isinstance(n.ctx, ast.Load) for n in ast.walk(v))
                   and _root(v) is not None and not _drawn(v) for v in values) \
                    and any(_private_looking(v) for v in values):
                out.add(key)
        return out

    def kinds(self, expr: ast.AST) -> set[str]:
        """Statistic kinds ``expr`` carries (directly or through a name assigned one)."""
        out: set[str] = set()
        for node in ast.walk(expr):
            found = _stat(node)
            if found is not None and self.private(found[1]) and not self.per_record(node, found[1]):
                out.add(found[0])
            key = _key(node)
            if key is not None and key in self.stats:
                out |= self.stats[key]
        return out


    def _one_record(self, expr: ast.AST) -> bool:
        """``X[i, ...]`` with ``i`` a loop index over ``X``'s records, or a value computed from one such
        record alone (``np.pad(img, 4)``, ``img[a:b, c:d, :]``, ``img.astype(float)``)."""
        node = expr
        for _ in range(16):
            if isinstance(node, ast.Subscript):
                first = node.slice.elts[0] if isinstance(node.slice, ast.Tuple) and node.slice.elts else node.slice
                if isinstance(first, ast.Name) and first.id in self.record_index \
                        and _root(node.value) == self.record_index[first.id]:
                    return True
                node = node.value
            elif isinstance(node, ast.Call):
                inner = _call_receiver(node)
                if inner is None:
                    return False
                node = inner
            elif isinstance(node, ast.Name):
                return node.id in self.rows
            else:
                return False
        return False

    def per_record(self, call: ast.AST, data: ast.expr) -> bool:
        """A statistic that reads no record but the one it transforms: of a single record bound by a
        loop over the records (by value or by index), or reduced along axes other than the records'
        axis 0 (``x.mean(axis=1, keepdims=True)``: each row by its own mean), or of the parameter of a
        helper named for one item (``normalize_vector(vec)``, ``transform_img_vals(x)``)."""
        if _root(data) in self.rows:
            return True
        if self.record_index and self._one_record(data):
            return True
        if _root(data) in getattr(self, "params", ()) and _one_item(self.name, _root(data) or ""):
            return True
        return isinstance(call, ast.Call) and _within_record_axes(call, self._axes_names())

    def _axes_names(self) -> frozenset[str]:
        """(QF b90) Names bound to the axes after the records' (``axes = tuple(range(1, x.ndim))``)."""
        cached = getattr(self, "_record_axes", None)
        if cached is None:
            cached = frozenset(t.id for node in self.nodes() if isinstance(node, ast.Assign)
                               and _after_record_axis(node.value) for t in node.targets if isinstance(t, ast.Name))
            self._record_axes = cached
        return cached

    def pure(self, expr: ast.AST) -> bool:
        """Is ``expr`` a statistic alone (``x.max() - x.min()``, ``mu[0]``), not data shifted by one?"""
        inside: set[int] = set()
        for node in ast.walk(expr):
            if _stat(node) is not None:
                inside.update(id(n) for n in ast.walk(node))
        for node in ast.walk(expr):
            if isinstance(node, ast.Name) and id(node) not in inside and node.id not in self.stats \
                    and node.id not in _LIBS:
                return False
        return True


#: words of a loop variable or iterable holding columns, not records (``for col in df``)
_COLUMN_WORDS = frozenset({"col", "cols", "column", "columns", "feature", "features", "attr", "attrs", "attribute",
                           "attributes", "var", "vars", "variable", "variables", "field", "fields", "dim", "dims"})
#: iterations over a table's columns or keys, not its records
_COLUMN_ITERS = frozenset({"columns", "T"})


#: calls that copy, reshape or convert a value without computing from it
_COPIES = frozenset({"copy", "deepcopy", "to_numpy", "astype", "reshape", "array", "asarray", "flatten", "ravel",
                     "squeeze", "reset_index", "dropna", "to_frame", "tolist", "list"})


def _copied(expr: ast.expr) -> str | None:
    """The name ``expr`` copies, slices or converts (``data.copy()``, ``df.values[:, 1:]``,
    ``np.array(x)``), or None for anything computed."""
    while True:
        if isinstance(expr, ast.Subscript):
            expr = expr.value
        elif isinstance(expr, ast.Attribute) and expr.attr in {"values", "T", "iloc", "loc", "data"}:
            expr = expr.value
        elif isinstance(expr, ast.Call) and func_name(expr.func) in _COPIES:
            if isinstance(expr.func, ast.Attribute) and not (isinstance(expr.func.value, ast.Name)
                                                            and expr.func.value.id in _LIBS | {"copy"}):
                expr = expr.func.value
            elif expr.args:
                expr = expr.args[0]
            else:
                return None
        else:
            break
    return expr.id if isinstance(expr, ast.Name) and expr.id not in _LIBS else None


def _row_target(target: ast.expr, it: ast.expr) -> str | None:
    """The name a loop binds to one record of the data it iterates (``row`` of ``for i, row in
    enumerate(X)`` or ``for _, row in df.iterrows()``), or None for loops over columns, keys,
    index ranges or zipped tables."""
    if isinstance(it, ast.Call) and func_name(it.func) in {"enumerate", "iterrows", "itertuples"}:
        if func_name(it.func) == "enumerate":
            if not it.args:
                return None
            it = it.args[0]
        else:
            it = it.func.value if isinstance(it.func, ast.Attribute) else it
        if not isinstance(target, ast.Tuple) or len(target.elts) != 2:
            return None
        target = target.elts[1]
    if not isinstance(target, ast.Name) or _words(target.id) & _COLUMN_WORDS:
        return None
    node = it
    while isinstance(node, ast.Subscript):
        node = node.value
    if isinstance(node, ast.Attribute) and node.attr in _COLUMN_ITERS:
        return None
    if not isinstance(node, (ast.Name, ast.Attribute)):
        return None
    root = node.id if isinstance(node, ast.Name) else node.attr
    return None if _words(root) & _COLUMN_WORDS else target.id


def _index_range(it: ast.expr) -> str | None:
    """The records ``range(len(X))`` / ``range(X.shape[0])`` / ``range(0, len(X))`` counts over."""
    if not (isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range" and it.args
            and len(it.args) <= 2 and not it.keywords):
        return None
    stop = it.args[-1]
    if len(it.args) == 2 and not (isinstance(it.args[0], ast.Constant) and it.args[0].value == 0):
        return None
    if isinstance(stop, ast.Call) and isinstance(stop.func, ast.Name) and stop.func.id == "len" and len(stop.args) == 1:
        return _root(stop.args[0])
    if isinstance(stop, ast.Subscript) and isinstance(stop.value, ast.Attribute) and stop.value.attr == "shape" \
            and isinstance(stop.slice, ast.Constant) and stop.slice.value == 0:
        return _root(stop.value.value)
    return None


#: (g1) words of one item (an image, a vector, a row), singular, in a helper's name or parameter
_ONE_ITEM = frozenset({"image", "img", "vector", "vec", "row", "record", "pixel"})
#: … and of many: a helper named for a data set or a batch takes them all
_MANY_ITEMS = frozenset({"images", "imgs", "vectors", "vecs", "rows", "records", "data", "dataset", "datasets",
                         "batch", "batches", "df", "table", "frame", "all", "train", "features", "samples",
                         # a column is a vector too: a helper named for one scales a whole attribute
                         "col", "cols", "column", "columns", "series", "attr", "attribute", "feature"})


def _one_item(function: str, param: str) -> bool:
    """A helper named for one item (``normalize_vector``, ``transform_img_vals``, ``per_image_std``) or
    taking one (``def scale(img)``), with no word of a data set or batch in either name: it is mapped
    over items, and a statistic of its parameter is that item's own."""
    raw = {w.lower() for n in (function, param) for part in re.split(r"[^A-Za-z0-9]+", n)
           for w in [part, *_CAMEL.findall(part)] if w}
    return bool(raw & _ONE_ITEM) and not raw & _MANY_ITEMS


def _after_record_axis(expr: ast.expr) -> bool:
    """``tuple(range(1, x.ndim))``, ``list(range(1, len(x.shape)))``, ``range(1, k)``: every axis but the
    records' axis 0 (QF b90: a per-image standardiser)."""
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id in {"tuple", "list"} \
            and len(expr.args) == 1 and not expr.keywords:
        expr = expr.args[0]
    return isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id == "range" \
        and len(expr.args) >= 2 and isinstance(expr.args[0], ast.Constant) and type(expr.args[0].value) is int \
        and expr.args[0].value >= 1


def _within_record_axes(call: ast.Call, axes_names: frozenset[str] = frozenset()) -> bool:
    """``x.std(axis=1)``, ``np.max(x, axis=(1, 2))``, ``t.mean(dim=2)``: reduced along axes that are
    all positive, a record's own values (``axis=-1`` is left out: of 1-D data it is axis 0); also
    ``axis=tuple(range(1, x.ndim))`` or a name bound to it."""
    axis: ast.expr | None = next((k.value for k in call.keywords if k.arg in {"axis", "dim"}), None)
    if axis is None:
        lib = isinstance(call.func, ast.Attribute) and isinstance(call.func.value, ast.Name) \
            and call.func.value.id in _LIBS
        position = 1 if lib else 0
        if len(call.args) > position:
            axis = call.args[position]
    if axis is None:
        return False
    if _after_record_axis(axis) or isinstance(axis, ast.Name) and axis.id in axes_names:
        return True
    elts = axis.elts if isinstance(axis, (ast.Tuple, ast.List)) else [axis]
    return bool(elts) and all(isinstance(e, ast.Constant) and type(e.value) is int and e.value >= 1 for e in elts)


_DRAWS = frozenset({"randn", "rand", "normal", "uniform", "multivariate_normal", "make_classification",
                    "make_blobs", "make_regression", "make_moons", "randint", "standard_normal"})


#: scikit-learn's generators of synthetic data sets (``sklearn.datasets.make_*``)
_GENERATORS = frozenset({
    "make_circles", "make_moons", "make_blobs", "make_classification", "make_regression", "make_gaussian_quantiles",
    "make_hastie_10_2", "make_friedman1", "make_friedman2", "make_friedman3", "make_s_curve", "make_swiss_roll",
    "make_low_rank_matrix", "make_sparse_uncorrelated", "make_multilabel_classification", "make_biclusters",
    "make_checkerboard", "make_spd_matrix", "make_sparse_spd_matrix", "make_sparse_coded_signal"})


def _generated(call: ast.Call) -> bool:
    """A synthetic data set drawn by a generator (``datasets.make_circles(n, noise=0.05)``), any
    ``make_*`` reached through a ``datasets`` module: toy data, not records anyone holds."""
    name = func_name(call.func)
    return name in _GENERATORS or (name.startswith("make_") and "datasets" in _dotted(call.func).split("."))


#: words of a function that draws a toy data set (``schoel_balog_tostik_sample(n, d)``)
_SAMPLER_WORDS = frozenset({"sample", "samples", "simulate", "simulated", "synthetic", "toy"})


def _sampler(call: ast.Call) -> bool:
    """A call named for drawing a sample, given only sizes (names, numbers, ``max(ns)``): it makes
    toy data; a call handed records (``df.sample(frac=0.5)``, ``sample(data)``) subsamples them."""
    ws = _words(func_name(call.func))
    if not ws & _SAMPLER_WORDS or len(ws) < 2 or not call.args:
        return False
    return not any(isinstance(n, ast.Name) and (n.id in {"X", "x", "D"} or _words(n.id) & _DATA_ARG_WORDS)
                   for a in [*call.args, *(k.value for k in call.keywords)] for n in ast.walk(a))


#: words of a DP release in a scope (not ``noise``/``sigma``, which also name attacks and augmentations)
_RELEASE_WORDS = frozenset({"epsilon", "eps", "privacy", "private", "dp", "multiplier", "budget", "ldp"})
#: words of a model's own values (what DP-SGD clips and noises, not the records)
_MODEL_VALUES = frozenset({"grad", "grads", "gradient", "gradients", "loss", "losses", "logits", "param", "params",
                           "parameters", "weights"})
_DATA_ARG_WORDS = frozenset({"data", "df", "dataset", "records", "train", "features", "table", "rows", "database", "samples"})


def _drawn(expr: ast.AST) -> bool:
    """Does ``expr`` draw at random (``np.random.random(d) * span``: a random point, not data)?"""
    return any(isinstance(n, ast.Call) and ("random" in _dotted(n.func) or func_name(n.func) in _DRAWS)
               for n in ast.walk(expr))


def _dotted(func: ast.expr) -> str:
    parts: list[str] = []
    while isinstance(func, ast.Attribute):
        parts.append(func.attr)
        func = func.value
    if isinstance(func, ast.Name):
        parts.append(func.id)
    return ".".join(reversed(parts))


_LIBS = frozenset({"np", "numpy", "pd", "torch", "tf", "jnp", "math", "self", "abs", "float", "int", "len"})


def _key(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        return f"self.{node.attr}"
    return None


def _declares_categories(node: ast.AST) -> bool:
    """A call that gives a categorical its category set explicitly: ``categories=`` passed, or the
    set positionally (``s.cat.set_categories(range(k))``, ``CategoricalDtype(levels)``,
    ``pd.Categorical(x, levels)``), so the encoding's columns are the code's, not the records'."""
    if not isinstance(node, ast.Call):
        return False
    if any(kw.arg == "categories" for kw in node.keywords):
        return True
    name = func_name(node.func)
    return (name == "set_categories" and bool(node.args)) or (name == "CategoricalDtype" and bool(node.args)) \
        or (name == "Categorical" and len(node.args) >= 2)


def _targets(stmt: ast.AST) -> list[str]:
    out: list[str] = []
    targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target] if isinstance(
        stmt, (ast.AnnAssign, ast.AugAssign)) else []
    for t in targets:
        for n in ast.walk(t):
            key = _key(n)
            if key is not None:
                out.append(key)
    return out


def _evaluating(body: list[ast.stmt], name: str) -> bool:
    """Named for evaluation, or scoring models with no privacy budget in sight (a function that
    also spends a budget trains the DP model on what it prepared)."""
    if _words(name) & (_EVAL_WORDS | _ERROR_WORDS):
        return True
    if _words(name) & _DESCRIBING and not any(isinstance(n, ast.Raise) for stmt in body for n in ast.walk(stmt)):
        return True  # a validator that raises on the data reveals what it found
    scores = budget = False
    for stmt in body:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Call) and func_name(node.func) in _EVALUATING:
                scores = True
            elif isinstance(node, ast.Call) and _words(func_name(node.func)) & _RELEASING:
                budget = True
            elif isinstance(node, (ast.Name, ast.arg, ast.keyword)):
                word = node.id if isinstance(node, ast.Name) else node.arg if isinstance(node, (ast.arg, ast.keyword)) else ""
                budget = budget or bool(word and _words(word) & _BUDGET)
    return scores and not budget


#: calls that add noise or run a mechanism: the function releases, whatever else it scores
_RELEASING = frozenset({"laplace", "gumbel", "geometric", "mechanism", "privatize", "privatise", "perturb", "randomize",
                        "randomise", "noise", "noisy", "rappor", "make_private"})
_BUDGET = frozenset({"epsilon", "eps", "budget", "noise", "sigma", "privacy", "delta", "rho", "multiplier"})


def _home_scalers(tree: ast.Module) -> set[str]:
    """Classes of the module whose ``fit(self, x)`` keeps a statistic of ``x`` on the instance
    (``self.m, self.s = x.mean(0), x.std(0)``): a scaler written by hand."""
    out: set[str] = set()
    for cls in tree.body:
        if not isinstance(cls, ast.ClassDef):
            continue
        for fn in cls.body:
            if not isinstance(fn, ast.FunctionDef) or fn.name not in _FIT or len(fn.args.args) < 2:
                continue
            param = fn.args.args[1].arg
            for node in ast.walk(fn):
                if isinstance(node, ast.Assign) and any(
                        isinstance(t, (ast.Attribute, ast.Tuple)) and "self." in ast.unparse(t) for t in node.targets) \
                        and any((found := _stat(n)) is not None and _root(found[1]) == param for n in ast.walk(node.value)):
                    out.add(cls.name)
    return out


def _own_classes(tree: ast.Module) -> set[str]:
    return {c.name for c in ast.walk(tree) if isinstance(c, ast.ClassDef)}


def _fit_arity(tree: ast.Module) -> dict[tuple[str, str], int]:
    """``(class, method) -> positional arguments`` of the fitting methods of the module's classes
    (without ``self``; none listed for a method taking ``*args``)."""
    out: dict[tuple[str, str], int] = {}
    for cls in ast.walk(tree):
        if not isinstance(cls, ast.ClassDef):
            continue
        for fn in cls.body:
            if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) and fn.name in _FIT and fn.args.vararg is None:
                out[(cls.name, fn.name)] = max(0, len(fn.args.posonlyargs) + len(fn.args.args) - 1)
    return out


#: containers whose ``fit`` fits every transformer among their steps
_COMPOSITES = frozenset({"Pipeline", "make_pipeline", "ColumnTransformer", "make_column_transformer", "FeatureUnion",
                         "make_union"})


def _transformer_kind(value: ast.AST, own: Collection[str], home: Collection[str],
                      factories: Mapping[str, str], local: Mapping[str, str] | None = None) -> str | None:
    """The transformer class a value builds: a constructor call (``MinMaxScaler()``), either arm of
    ``LabelBinarizer() if cat else MinMaxScaler()``, a pipeline or column transformer with such a
    step (its ``fit`` fits the step), a call of a module function returning one (``make_preprocessor()``)
    or a name ``local`` binds to one. None for categories or bin edges passed in (public)."""
    if isinstance(value, ast.IfExp):
        return _transformer_kind(value.body, own, home, factories, local) or \
            _transformer_kind(value.orelse, own, home, factories, local)
    if isinstance(value, ast.Name) and local is not None:
        return local.get(value.id)
    if not isinstance(value, ast.Call):
        return None
    kind = func_name(value.func)
    if kind in _COMPOSITES:
        public = False
        for part in ast.walk(value):
            if part is not value and isinstance(part, ast.Call):
                inner = func_name(part.func)
                if prep_class(inner, own) or inner in home:
                    if not _public_categories(part):
                        return inner
                    public = True
            elif isinstance(part, ast.Name) and local is not None and part.id in local:
                return local[part.id]
        # steps built elsewhere: a column transformer learns whatever they learn
        return None if public or not prep_class(kind, own) else kind
    if prep_class(kind, own) or kind in home:
        return None if _public_categories(value) else kind
    return factories.get(kind)


def _factories(tree: ast.Module, own: Collection[str], home: Collection[str]) -> dict[str, str]:
    """Functions and methods of the module that build and return an unfitted transformer
    (``def make_preprocessor(...): return ColumnTransformer([...])``, or annotated ``-> MinMaxScaler``)."""
    out: dict[str, str] = {}
    fns = [f for f in ast.walk(tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))]
    for _ in range(2):
        for fn in fns:
            if fn.name in out or fn.name in _FIT:
                continue
            if fn.returns is not None and prep_class(func_name(fn.returns) if isinstance(
                    fn.returns, (ast.Name, ast.Attribute)) else None, own):
                out[fn.name] = func_name(fn.returns)  # type: ignore[arg-type]
                continue
            local: dict[str, str] = {}
            fitted = False
            for node in ast.walk(fn):
                if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                    kind = _transformer_kind(node.value, own, home, out, local)
                    if kind:
                        local[node.targets[0].id] = kind
                elif isinstance(node, ast.Call) and func_name(node.func) in _FIT:
                    fitted = True  # a function that fits what it builds hands back a fitted object
            if fitted:
                continue
            kinds = [_transformer_kind(r.value, own, home, out, local) for r in ast.walk(fn)
                     if isinstance(r, ast.Return) and r.value is not None]
            if kinds and all(kinds):
                out[fn.name] = kinds[0]  # type: ignore[assignment]
    return out


def _constructed(tree: ast.Module) -> dict[str, str]:
    """Names and ``self.`` attributes assigned a preprocessing transformer anywhere in the module
    (a container filled with them, ``self.encoders[col] = OneHotEncoder()``, under its own name)."""
    out: dict[str, str] = {}
    home = _home_scalers(tree)
    own = _own_classes(tree)
    factories = _factories(tree, own, home)
    out.update({f"{name}()": kind for name, kind in factories.items()})  # ``make_scaler().fit(x)``
    for node in ast.walk(tree):
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            kind = _transformer_kind(node.value, own, home, factories)
            if kind:
                for key in {*_targets(node), *_held_in(node)}:
                    out[key] = kind
    return out


def _held_in(node: ast.Assign | ast.AnnAssign) -> list[str]:
    """The names an assignment stores into: a container for an item store (``self.enc[col] = ...``
    holds in ``self.enc``, not in ``col``), each element of a tuple target."""
    out: list[str] = []
    stack: list[ast.expr] = list(node.targets) if isinstance(node, ast.Assign) else [node.target]
    while stack:
        target = stack.pop()
        if isinstance(target, (ast.Tuple, ast.List)):
            stack.extend(target.elts)
            continue
        while isinstance(target, ast.Subscript):
            target = target.value
        key = _key(target)
        if key is not None:
            out.append(key)
    return out


def _public_categories(ctor: ast.Call) -> bool:
    for kw in ctor.keywords:
        if kw.arg in {"categories", "bins", "bin_edges"} and not (
                isinstance(kw.value, ast.Constant) and kw.value.value == "auto"):
            return True
    return False


_ENUMERATIONS = frozenset({"arange", "range", "linspace"})


def _enumeration(expr: ast.expr) -> bool:
    """``np.arange(domain_size).reshape(-1, 1)``: values enumerated from a size, not records."""
    while isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) \
            and expr.func.attr in {"reshape", "astype", "tolist"}:
        expr = expr.func.value
    return isinstance(expr, ast.Call) and func_name(expr.func) in _ENUMERATIONS


def _enumerated_params(tree: ast.Module) -> dict[str, set[str]]:
    """function name -> its parameters that every call of it in the module (by that name, one
    definition) fills with an enumerated domain: a fit on ``np.arange(k)`` learns nothing private."""
    defs: dict[str, list[ast.FunctionDef | ast.AsyncFunctionDef]] = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            defs.setdefault(node.name, []).append(node)
    calls: dict[str, list[ast.Call]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and func_name(node.func) in defs:
            calls.setdefault(func_name(node.func), []).append(node)
    out: dict[str, set[str]] = {}
    for name, found in calls.items():
        if len(defs[name]) != 1:
            continue
        params = [a.arg for a in defs[name][0].args.args]
        if params[:1] in (["self"], ["cls"]):
            params = params[1:]
        for position, param in enumerate(params):
            passed = []
            for call in found:
                keyword = next((k.value for k in call.keywords if k.arg == param), None)
                passed.append(keyword if keyword is not None else
                              call.args[position] if position < len(call.args) else None)
            if all(p is not None and _enumeration(p) for p in passed):
                out.setdefault(name, set()).add(param)
    return out


def _bin_count(bins: ast.expr) -> bool:
    """``bins=10`` / ``bins=self.n_bins``: a number of bins, whose edges ``cut`` takes from the data's
    own minimum and maximum (not a sequence of edges)."""
    if isinstance(bins, ast.Constant):
        return isinstance(bins.value, int) and not isinstance(bins.value, bool)
    key = _key(bins) or ""
    parts = _words(key.rsplit(".", 1)[-1])
    return bool(parts & {"n", "num", "number", "nbins"}) and bool(parts & {"bins", "bin", "nbins"})


def _shadowed_fits(tree: ast.Module) -> set[int]:
    """ids of ``fit`` methods that the class's own ``fit_transform`` re-implements without calling
    ``self.fit``: the pipeline runs ``fit_transform``, whose copy of the fitting is checked there."""
    out: set[int] = set()
    for cls in ast.walk(tree):
        if not isinstance(cls, ast.ClassDef):
            continue
        members = {m.name: m for m in cls.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))}
        fit, both = members.get("fit"), members.get("fit_transform")
        if fit is None or both is None:
            continue
        calls = [n for n in ast.walk(both) if isinstance(n, ast.Call)]
        if any(isinstance(c.func, ast.Attribute) and isinstance(c.func.value, ast.Name)
               and c.func.value.id == "self" and c.func.attr == "fit" for c in calls):
            continue
        if any(func_name(c.func) in _FIT for c in calls):
            out.add(id(fit))
    return out


def _scopes(tree: ast.Module) -> Iterator[_Scope]:
    constructed = _constructed(tree)
    home = _home_scalers(tree)
    enumerated = _enumerated_params(tree)
    shadowed = _shadowed_fits(tree)
    bucketers = _constant_returns(list(ast.walk(tree)))
    top = _Scope([s for s in tree.body if not isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))],
                 "", constructed)
    top.home = home
    top.own_classes = _own_classes(tree)  # type: ignore[attr-defined]
    top.fit_arity = _fit_arity(tree)  # type: ignore[attr-defined]
    _fill_coded(top, bucketers)
    yield top
    stack: list[tuple[ast.AST, bool]] = [(tree, False)]
    while stack:
        node, outer_evaluates = stack.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if any("grad_sampler" in _dotted(d.func if isinstance(d, ast.Call) else d) for d in child.decorator_list):
                    continue  # a per-sample-gradient rule of a layer (Opacus): the layer's own maths, before clipping
                scope = _Scope(child.body, child.name, constructed)
                scope.home = home
                scope.own_classes = top.own_classes  # type: ignore[attr-defined]
                scope.fit_arity = top.fit_arity  # type: ignore[attr-defined]
                scope.enumerated = enumerated.get(child.name, set()) & {a.arg for a in child.args.args}
                scope.params = {a.arg for a in (*child.args.posonlyargs, *child.args.args)}  # type: ignore[attr-defined]
                scope.shadowed = id(child) in shadowed
                # a helper nested in an evaluation (a classifier's normalize) evaluates too
                scope.evaluating = outer_evaluates or _evaluating(child.body, child.name)
                _fill_coded(scope, bucketers)
                yield scope
                stack.append((child, scope.evaluating))
            elif isinstance(child, ast.ClassDef) and _words(child.name) & _LOSS_CLASS_WORDS:
                # (R1 b86) a loss module's methods weight the model's error (``FocalFrequencyLoss``): a
                # training objective, not preprocessing of the records
                stack.append((child, True))
            else:
                stack.append((child, outer_evaluates))


#: words of a class that computes a loss from the model's outputs
_LOSS_CLASS_WORDS = frozenset({"loss", "losses", "criterion"})


#: folder names of general helpers (``utilities/data_utils.py``), not of utility evaluation
_HELPER_FOLDERS = frozenset({"utilities"})


def evaluates(path: str, name: str = "") -> bool:
    """A file (its name or its two parent folders) or a function named for evaluation, plots,
    tests or attacks: what it computes scores the data, it releases nothing."""
    return bool(_words(os.path.splitext(os.path.basename(path))[0]) & _EVAL_WORDS or any(
        _words(part) & _EVAL_WORDS - _HELPER_FOLDERS for part in path.replace("\\", "/").split("/")[-3:-1]
    ) or (name and any(_words(part) & _EVAL_WORDS for part in name.split("."))))


#: words of an argument handing a call a privacy budget: its output is the mechanism's release
_BUDGET_ARG = frozenset({"epsilon", "eps", "rho"})


def _privatised_names(fn: ast.FunctionDef | ast.AsyncFunctionDef, skip: ast.AST | None = None) -> set[str]:
    """Names ``fn`` binds to a mechanism's output or to values built from it: the result of a call
    handed a privacy budget (``flipped = randomise(edges, eps=eps)``) or a value a draw is added to."""
    out: set[str] = set()
    assigns = [n for n in ast.walk(fn) if isinstance(n, ast.Assign)
               and (skip is None or not any(m is skip for m in ast.walk(n.value)))]
    for _ in range(4):
        grown = False
        for node in assigns:
            reads = {n.id for n in ast.walk(node.value) if isinstance(n, ast.Name)}
            budgeted = any(isinstance(c, ast.Call) and (
                any(k.arg and _words(k.arg) & _BUDGET_ARG for k in c.keywords)
                or any(isinstance(a, ast.Name) and _words(a.id) & _BUDGET_ARG for a in c.args))
                for c in ast.walk(node.value))
            noised = any(isinstance(b, ast.BinOp) and isinstance(b.op, ast.Add) and (_drawn(b.left) or _drawn(b.right))
                         for b in ast.walk(node.value))
            if budgeted or noised or reads & out:
                new = {k for k in _targets(node) if "." not in k} - out
                if new:
                    out |= new
                    grown = True
        if not grown:
            break
    return out


def _hands_budget(call: ast.Call) -> bool:
    """``give_noise(data, eps, scale)``, ``perturb(x, epsilon=e)``: a call handing a privacy budget."""
    return any(k.arg and _words(k.arg) & _BUDGET_ARG for k in call.keywords) or any(
        isinstance(a, ast.Name) and _words(a.id) & _BUDGET_ARG for a in call.args)


def _downstream_helpers(tree: ast.Module) -> set[str]:
    """Top-level functions of the module every call of which hands them a mechanism's output
    (``_privatised_names``) or sits in a function named for a non-private baseline or an evaluation
    (``run_nonprivate``): what they fit is post-processing of the release, or a baseline."""
    top = {f.name: f for f in tree.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))}
    enclosing: dict[int, ast.FunctionDef | ast.AsyncFunctionDef] = {}
    for fn in top.values():
        enclosing.update((id(n), fn) for n in ast.walk(fn) if isinstance(n, ast.Call))
    calls: dict[str, list[tuple[ast.Call, ast.FunctionDef | ast.AsyncFunctionDef | None]]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in top:
            calls.setdefault(node.func.id, []).append((node, enclosing.get(id(node))))
    privatised: dict[str, set[str]] = {}
    out: set[str] = set()
    for name, sites_of in calls.items():
        def downstream(call: ast.Call, caller: ast.FunctionDef | ast.AsyncFunctionDef | None) -> bool:
            if caller is None or caller.name == name:
                return False
            if _words(caller.name) & _EVAL_WORDS:
                return True
            data = call.args[0] if call.args else None
            root = _root(data) if data is not None else None
            if root is None:
                return False
            if _hands_budget(call):
                # handed the privacy budget: the helper is the mechanism unless its data was released
                # by another statement (``data[f'v_{eps}'] = give_noise(data, eps)`` binds only its output)
                return root in _privatised_names(caller, skip=call)
            if caller.name not in privatised:
                privatised[caller.name] = _privatised_names(caller)
            return root in privatised[caller.name]
        if all(downstream(c, f) for c, f in sites_of):
            out.add(name)
    return out


def sites(tree: ast.Module, path: str = "", source: str | None = None) -> list[list[Any]]:
    """``[line, col, what]`` of each preprocessing site fitted on data that looks private. ``source``:
    the module's text; without a transformer or a statistic in it only ``value_codebook`` runs."""
    if evaluates(path):
        return []
    if source is not None and not _prepares(source):
        return value_codebook.sites(tree, _evaluating)
    out: dict[int, list[Any]] = {}
    switched_off = off_switch_nodes(tree) | _dead_dispatch_nodes(tree)
    per_record = ast_per_record_functions(tree)
    top_functions = {f.name: f for f in tree.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))}
    downstream = _downstream_helpers(tree)
    for scope in _scopes(tree):
        if not scope.body or scope.name == "forward" or scope.evaluating or scope.shadowed \
                or scope.name in downstream and scope.name in top_functions:
            continue
        if _post_processing(scope.name) or _words(scope.name) & _SYNTACTIC_ANONYMITY:
            continue  # (S2 b96) cleanup of the released table; a k-anonymity generaliser (no DP budget)
        ends: set[str] = set()
        stored_at = 0
        warned = _warned_statements(scope)
        for node in scope.nodes():
            found = _site(node, scope) if id(node) not in switched_off else None
            if found is not None and scope.name in per_record and _own_record_fill(node, top_functions[scope.name]):
                found = None  # one record's own median: the helper is mapped over the records one at a time
            if found is not None and node.lineno not in out:  # type: ignore[attr-defined]
                out[node.lineno] = [node.lineno, node.col_offset + 1, found]  # type: ignore[attr-defined]
            if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
                if id(node) not in warned:
                    ends |= _stored_ends(node, scope)
                if ends >= {"low", "high"} and node.lineno not in out and scope.name != "__init__" \
                        and not stored_at and id(node) not in switched_off:
                    stored_at = node.lineno  # type: ignore[attr-defined]
                    out[node.lineno] = [node.lineno, node.col_offset + 1,  # type: ignore[attr-defined]
                                        "the data's own extremes stored as the fitted range"]
                kinds = scope.kinds(node.value) if scope.pure(node.value) else set()
                for key in _targets(node):
                    if kinds:
                        scope.stats[key] = kinds
                    else:
                        scope.stats.pop(key, None)
    for site in kept_domain.sites(tree):
        out.setdefault(site[0], site)  # type: ignore[call-overload]
    for site in value_codebook.sites(tree, _evaluating):  # the observed values kept as a domain or codebook
        out.setdefault(site[0], site)  # type: ignore[call-overload]
    return [out[k] for k in sorted(out)]


#: words of a syntactic anonymisation step (k-anonymity, l-diversity, t-closeness): it releases
#: generalised records and spends no DP budget, so the bins it cuts shape no DP release
_SYNTACTIC_ANONYMITY = frozenset({"anonymity", "kanonymity", "diversity", "closeness"})


def _post_processing(name: str) -> bool:
    """A function named for post-processing (``_post_process``, ``postprocess_output``): it cleans up
    the table the generator (and its DP step) already produced; DP is closed under post-processing."""
    return "postprocess" in name.lower().replace("_", "")


#: statistics giving the low or the high end of a column's range
_LOW = frozenset({"min", "amin", "nanmin"})
_HIGH = frozenset({"max", "amax", "nanmax"})
_QUANTILE = frozenset({"quantile", "nanquantile", "percentile", "nanpercentile"})


def _warned_statements(scope: _Scope) -> set[int]:
    """Statements of a block that also issues a warning (``warnings.warn(..., PrivacyLeakWarning)``
    beside the fallback): the per-file rule's acknowledged note, not a silent range."""
    out: set[int] = set()
    for node in [*scope.nodes(), ast.Module(body=scope.body, type_ignores=[])]:
        for field in ("body", "orelse"):
            block = getattr(node, field, None)
            if isinstance(block, list) and any(
                    isinstance(n, ast.Call) and func_name(n.func) == "warn"
                    for stmt in block if isinstance(stmt, ast.Expr) for n in ast.walk(stmt)):
                out.update(id(n) for stmt in block for n in ast.walk(stmt))
    return out


def _stored_ends(node: ast.Assign | ast.AnnAssign, scope: _Scope) -> set[str]:
    """Ends of a range (``low``/``high``) a statement keeps on the instance from the data's own
    extremes: ``self.min = float(col.min())``, ``self.lo, self.hi = x.min(), x.max()``,
    ``self.bounds[c] = {"min": s.min(), "max": s.max()}``. A fitted object that keeps both ends
    decodes or samples its release between the private extremes."""
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    if not any(isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "self"
               for t in targets for n in ast.walk(t)):
        return set()
    parts: list[ast.expr] = [node.value] if node.value is not None else []
    if isinstance(node.value, (ast.Tuple, ast.List)):
        parts = list(node.value.elts)
    elif isinstance(node.value, ast.Dict):
        parts = [v for v in node.value.values if v is not None]
    out: set[str] = set()
    quantiles = 0
    for part in parts:
        if not scope.pure(part):
            continue
        kinds = {found[0] for n in ast.walk(part) if (found := _stat(n)) is not None
                 and scope.private(found[1]) and not scope.per_record(n, found[1])}
        if kinds & _LOW and not kinds & _HIGH:
            out.add("low")
        elif kinds & _HIGH and not kinds & _LOW:
            out.add("high")
        elif kinds & _QUANTILE:
            quantiles += 1
    if quantiles >= 2 or quantiles and out:
        out |= {"low", "high"}
    return out


def _own_record_fill(node: ast.AST, fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """``col.fillna(col.median())`` where ``col`` comes from ``fn``'s first parameter."""
    if not (isinstance(node, ast.Call) and func_name(node.func) == "fillna" and node.args):
        return False
    arg = node.args[0]
    if not (isinstance(arg, ast.Call) and isinstance(arg.func, ast.Attribute)):
        return False
    root = _root(arg.func.value)
    return root is not None and ast_from_first_parameter(fn, root.split(".")[0])


def _encodes_labels(fit: ast.Call, receiver: ast.expr, scope: _Scope) -> bool:
    """The encoder's codes are bound to a label-named value (``labels = enc.transform(v)``, or
    ``y = enc.fit_transform(v)``): it encodes the prediction target."""
    key = _key(receiver) if not isinstance(receiver, ast.Call) else None
    for node in scope.nodes():
        if not (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)):
            continue
        call = node.value
        if call is not fit and not (isinstance(call.func, ast.Attribute) and call.func.attr in {"transform", "fit_transform"}
                                    and key is not None and _key(call.func.value) == key):
            continue
        if any(_words(n) & _LABEL_WORDS for t in node.targets for n in _names(t)):
            return True
    return False


def _holds_records(name: str, node: ast.AugAssign, scope: _Scope) -> bool:
    """Does the whole name ``name`` hold records where ``node`` rescales it in place: a parameter or a
    global (no binding above it here), or last bound to a copy or slice of other data
    (``y_train = y[:n]``)? Not a value computed here (``X = P @ np.diag(e) @ P.T``, ``v = 0``) nor a
    loop's batch (``for x in loader: x /= x.max()`` scales one batch by its own extreme)."""
    bindings = getattr(scope, "_record_bindings", None)
    if bindings is None:
        bindings = {}
        for other in scope.nodes():
            line = getattr(other, "lineno", 0)
            if isinstance(other, ast.Assign):
                copy = len(other.targets) == 1 and _copied(other.value) is not None
                for t in other.targets:
                    if isinstance(t, ast.Name):
                        bindings.setdefault(t.id, []).append((line, copy))
            elif isinstance(other, (ast.For, ast.comprehension)):
                for t in ast.walk(other.target):
                    if isinstance(t, ast.Name):
                        bindings.setdefault(t.id, []).append((line, None))
        scope._record_bindings = bindings  # type: ignore[attr-defined]
    before = sorted((b for b in bindings.get(name, ()) if b[0] < node.lineno), key=lambda b: b[0])
    if any(copy is None for _, copy in before):
        return False
    return not before or bool(before[-1][1])


_BUDGET_ARGS = frozenset({"epsilon", "eps", "epslon", "budget", "rho"})


def _built_with_budget(held: ast.expr, scope: _Scope) -> bool:
    """(g2 h40) The fitted name is also built, in this scope, by a call given the privacy budget
    (``clf = DP_KMeans(k, epsilon=e, bounds=b)`` when a budget is set, ``clf = KMeans(k)`` in the
    explicit epsilon=None mode): the fit of the DP path is the DP estimator's."""
    key = _key(held)
    if key is None:
        return False
    for stmt in scope.body:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) \
                    and any(_key(t) == key for t in node.targets):
                given = [*(a for a in node.value.args), *(k.value for k in node.value.keywords)]
                if any(k.arg and _words(k.arg) & _BUDGET_ARGS for k in node.value.keywords) or any(
                        isinstance(n, ast.Name) and _words(n.id) & _BUDGET_ARGS for a in given for n in ast.walk(a)):
                    return True
    return False


#: a matrix computed from the records (a covariance or kernel repaired in place), not the records
_DERIVED_MATRICES = frozenset({"matrix", "mat", "cov", "covariance", "corr", "correlation", "gram", "kernel",
                               "hessian", "precision"})


def _derived_matrix(expr: ast.AST) -> bool:
    """(g2 h40) ``distance_matrix - row_mean - col_mean + grand_mean``: a matrix computed from the records (a
    distance or kernel matrix double-centred inside a loss term), not the records re-centred."""
    node = expr
    while isinstance(node, ast.BinOp):
        node = node.left
    root = _root(node)
    return root is not None and bool(_words(root) & _PAIRWISE)


#: a matrix of pairwise quantities between records (not a records matrix such as ``ratings_matrix``)
_PAIRWISE = frozenset({"distance", "distances", "dist", "gram", "kernel", "cov", "covariance", "corr",
                       "correlation", "similarity", "similarities"})


def _site(node: ast.AST, scope: _Scope) -> str | None:
    if isinstance(node, ast.Call):
        name = func_name(node.func)
        if name in _FIT and isinstance(node.func, ast.Attribute):
            receiver = node.func.value
            held = receiver.value if isinstance(receiver, ast.Subscript) else receiver  # ``self.encoders[col]``
            kind = (scope.constructed.get(f"{func_name(receiver.func)}()") or func_name(receiver.func)) \
                if isinstance(receiver, ast.Call) and not _public_categories(receiver) \
                else scope.constructed.get(_key(held) or "")
            data = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg in {"X", "y"}), None)
            if isinstance(receiver, ast.Call) and any(k.arg and _words(k.arg) & _BUDGET_ARGS
                                                      for k in receiver.keywords):
                return None  # ``KMeans(k, epsilon=e, bounds=b).fit(X)``: a DP estimator (diffprivlib) spends budget
            if kind in scope.home and not prep_class(kind) and not scope.releases():
                return None  # a hand-written scaler in a function that trains or releases nothing DP
            arity = getattr(scope, "fit_arity", {}).get((kind or "", name))
            if arity is not None and len(node.args) > arity:
                return None  # more arguments than this class's method takes: another binding of the receiver runs
            if data is not None and _root(data) in scope.enumerated:
                return None
            if kind in _LABEL_ENCODERS and data is not None and (
                    _words(_root(data) or "") & _LABEL_WORDS or _encodes_labels(node, receiver, scope)):
                return None  # the class set of the prediction target: schema, not a statistic of the records
            if kind in _CODE_ENCODERS and data is not None and (_id_column(data) or _recoded(node, data, scope)):
                return None  # (R1 b93/b94) identifiers mapped to indices; a refit on the codes a fit wrote
            if (prep_class(kind, getattr(scope, "own_classes", ())) or kind in scope.home) and data is not None \
                    and scope.private(data) and not _built_with_budget(held, scope):
                return f"`{kind}` fitted on the data"
            return None
        if name in ("qcut", "cut") and isinstance(node.func, ast.Attribute):
            data = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "x"), None)
            if data is None or not scope.private(data):
                return None
            if name == "qcut":
                if isinstance(data, ast.Call) and (
                        func_name(data.func) == "rank" and isinstance(data.func, ast.Attribute)
                        or func_name(data.func) == "arange" and len(data.args) == 1
                        and isinstance(data.args[0], ast.Call) and func_name(data.args[0].func) == "len"):
                    return None  # (R2) quantile bins of the rows' ranks/positions: edges are positions, no value
                return "the data binned at its own quantiles"
            bins = node.args[1] if len(node.args) > 1 else next((k.value for k in node.keywords if k.arg == "bins"), None)
            if bins is not None and _bin_count(bins):
                return "the data cut into equal-width bins between its own extremes"
            return None
        if name == "fillna" and node.args:
            arg = node.args[0]
            if isinstance(arg, ast.Call) and func_name(arg.func) in _MEANS and isinstance(arg.func, ast.Attribute) \
                    and scope.private(arg.func.value):
                return f"missing values filled with the data's {func_name(arg.func)}"
            return None
        if name == "get_dummies":
            data = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "data"), None)
            declared = data is not None and (any(_declares_categories(n) for n in ast.walk(data))
                or _key(data) in scope.declared or _coded_column(data, scope))
            if data is not None and not declared and scope.private(data) and not _names_label(data) \
                    and _root(data) not in scope.enumerated:
                return "the data one-hot encoded with the categories it holds (its columns are the private values)"
            return None
        if name in _CLIP and len(node.args) >= 2 and scope.private(node.args[0]):
            if scope.kinds(ast.Tuple(elts=node.args[1:], ctx=ast.Load())) & (_LOCATION | _SPREAD):
                return "the data clipped at its own statistics"
        return None
    if isinstance(node, ast.Assign) and _running_extreme(node, scope):
        return "the data's own extreme (a running maximum or minimum over its records) used as its scale or bound"
    if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and node.value.args \
            and any(isinstance(t, ast.Tuple) and len(t.elts) >= 2 for t in node.targets):
        # ``data, lo, hi = MinMaxScaler(data)``: a helper scales the data and hands back its statistics
        name = func_name(node.value.func).lower()
        named = [n for t in node.targets for n in _names(t)] + [
            n for a in [*node.value.args, *(k.value for k in node.value.keywords)] for n in _names(a)] + [
            k.arg for k in node.value.keywords if k.arg]
        if any(_words(n) & (_BUDGET | {"rdp", "dp", "noisy", "private"}) for n in named):
            return None  # a DP estimate of the statistics (noise scale or budget passed, rdp returned)
        held = [n for t in node.targets if isinstance(t, ast.Tuple) for e in t.elts[1:] for n in _names(e)]
        if any(w in name for w in ("scal", "normali", "standardi")) and scope.private(node.value.args[0]) \
                and any(_words(n) & _STAT_WORDS for n in held):
            return "the data scaled by a helper that returns its own statistics"
        return None
    if isinstance(node, ast.AugAssign) and (isinstance(node.target, ast.Subscript) or isinstance(
            node.target, ast.Name) and not _words_only_stat(node.target, scope)
            and not _words(node.target.id) & _DERIVED_MATRICES and _holds_records(node.target.id, node, scope)) \
            and scope.private(node.target):
        # ``df[c] -= df[c].mean()``, and in place on the whole array: ``y_train /= np.max(np.abs(y_train))``
        if isinstance(node.op, ast.Sub) and scope.kinds(node.value) & _LOCATION:
            return "the data centred (or shifted) by its own statistic"
        if isinstance(node.op, ast.Div) and scope.kinds(node.value) & _SPREAD:
            return "the data scaled by its own spread"
        return None
    if isinstance(node, ast.BinOp):
        if isinstance(node.op, ast.Sub) and scope.private(node.left) and not _words_only_stat(node.left, scope) \
                and not _drawn(node.left) and id(node) not in scope.reduced and id(node) not in scope.scatter \
                and not _derived_matrix(node.left):
            if scope.kinds(node.right) & _LOCATION:
                return "the data centred (or shifted) by its own statistic"
        if isinstance(node.op, ast.Div) and scope.private(node.left) and not _shape_of(node.left) \
                and not _shape_of(node.right):  # (R3 b69) ``x.size / var.size``: a count from shapes
            if scope.kinds(node.right) & _SPREAD and not _words_only_stat(node.left, scope) \
                    and not _class_count(node.right) and not _public_target(node.left):
                return "the data scaled by its own spread"
        if isinstance(node.op, ast.Add) and _one(node.right) and _category_count(node.left, scope):
            return "the number of categories taken as the data's own maximum plus one"
        if isinstance(node.op, ast.Add) and isinstance(node.left, ast.BinOp) and isinstance(node.left.op, ast.Mult):
            if scope.kinds(node.right) & _MEANS and scope.kinds(node.left.right) & {"std", "nanstd", "var"}:
                return "the output de-normalised with the data's mean and std"
        return None
    if isinstance(node, ast.If) and _rescaled_by_own_statistic(node, scope):
        return "the data's unit or scale chosen by a test on its own statistic"
    if isinstance(node, ast.Compare) and len(node.comparators) == 1 and id(node) in scope.selecting:
        right = node.comparators[0]
        if isinstance(right, ast.Constant) and isinstance(right.value, (int, float)) \
                and scope.kinds(node.left) & (_SELECT | {"std", "nanstd", "var", "nanvar"}):
            return "columns selected by a statistic of the data"
    return None


def _dead_dispatch_nodes(tree: ast.Module) -> set[int]:
    """(R1 b86) ``id``s of the nodes in an arm ``if kind == "minmax":`` of a module function whose
    parameter ``kind`` is never rebound, when every call of the function in the module (one at least)
    passes ``kind`` a string literal (or a caller's local bound only to string literals) other than
    ``"minmax"``: the callers hard-code another option, so the arm never runs."""
    calls: dict[str, list[tuple[ast.Call, ast.AST]]] = {}
    for scope in [tree, *(f for f in ast.walk(tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)))]:
        body = scope.body
        stack: list[ast.AST] = list(body)
        while stack:
            node = stack.pop()
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                continue
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                calls.setdefault(node.func.id, []).append((node, scope))
            stack.extend(ast.iter_child_nodes(node))

    def literals(value: ast.expr, scope: ast.AST) -> set[str] | None:
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            return {value.value}
        if not isinstance(value, ast.Name) or isinstance(scope, ast.Module):
            return None
        found: set[str] = set()
        for node in ast.walk(scope):
            if isinstance(node, ast.arg) and node.arg == value.id:
                return None
            if isinstance(node, ast.Name) and node.id == value.id and isinstance(node.ctx, ast.Store):
                parent_ok = False
                for stmt in ast.walk(scope):
                    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and stmt.targets[0] is node:
                        if isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str):
                            found.add(stmt.value.value)
                            parent_ok = True
                        break
                if not parent_ok:
                    return None
        return found or None

    out: set[int] = set()
    for fn in tree.body:
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) or fn.name not in calls:
            continue
        params = [a.arg for a in [*fn.args.posonlyargs, *fn.args.args]]
        rebound = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        for node in ast.walk(fn):
            if not (isinstance(node, ast.If) and isinstance(node.test, ast.Compare) and len(node.test.ops) == 1
                    and isinstance(node.test.ops[0], ast.Eq) and isinstance(node.test.left, ast.Name)
                    and isinstance(node.test.comparators[0], ast.Constant)
                    and isinstance(node.test.comparators[0].value, str)):
                continue
            name, option = node.test.left.id, node.test.comparators[0].value
            if name not in params or name in rebound:
                continue
            position = params.index(name)
            passed: set[str] = set()
            for call, scope in calls[fn.name]:
                if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
                    passed = {option}
                    break
                value = next((k.value for k in call.keywords if k.arg == name), None)
                if value is None and position < len(call.args):
                    value = call.args[position]
                got = literals(value, scope) if value is not None else None
                if got is None:
                    passed = {option}
                    break
                passed |= got
            if passed and option not in passed:
                out.update(id(n) for stmt in node.body for n in ast.walk(stmt))
    return out


def dead_dispatch_lines(tree: ast.Module) -> set[int]:
    """The source lines of the arms ``_dead_dispatch_nodes`` finds (for the per-file rule)."""
    dead = _dead_dispatch_nodes(tree)
    return {n.lineno for n in ast.walk(tree) if id(n) in dead and hasattr(n, "lineno")}


_CODE_ENCODERS = frozenset({"LabelEncoder", "OrdinalEncoder"})
_ID_WORDS = frozenset({"id", "ids", "uid", "uids", "uuid", "identifier", "identifiers", "pseudonym", "pseudonyms"})


def _id_column(data: ast.expr) -> bool:
    """``df["user_id"]``: identifiers mapped to embedding/row indices, not an attribute's value domain."""
    return isinstance(data, ast.Subscript) and isinstance(data.slice, ast.Constant) \
        and isinstance(data.slice.value, str) and bool(_words(data.slice.value) & _ID_WORDS)


def _recoded(fit: ast.Call, data: ast.expr, scope: _Scope) -> bool:
    """``df["c"] = enc.fit_transform(df["c"])`` before ``enc.fit_transform(df["c"])`` in the same
    scope (the column not rebound between): the column holds the codes 0..k-1 the first fit wrote,
    so refitting a label/ordinal encoder on it is the identity map and learns nothing new."""
    column = ast.dump(data)
    last: ast.Assign | None = None
    for node in scope.nodes():
        if isinstance(node, ast.Assign) and node.lineno < fit.lineno \
                and any(ast.dump(t).replace("Store()", "Load()") == column for t in node.targets) \
                and (last is None or node.lineno > last.lineno):
            last = node
    if last is None or not isinstance(last.value, ast.Call) or func_name(last.value.func) != "fit_transform" \
            or not last.value.args or ast.dump(last.value.args[0]) != column:
        return False
    receiver = last.value.func.value if isinstance(last.value.func, ast.Attribute) else None
    kind = (func_name(receiver.func) if isinstance(receiver, ast.Call)
            else scope.constructed.get(_key(receiver) or "")) if receiver is not None else None
    return kind in _CODE_ENCODERS


#: (R1 b93) words of a *function* computing the release's error against the truth (utility)
_ERROR_WORDS = frozenset({"accuracy", "rmse", "mae", "mse"})
#: names of a number of classes/categories: ``ls / num_classes`` spreads a smoothing mass evenly
_CLASS_COUNT_WORDS = frozenset({"classes", "class", "nclass", "nclasses", "categories", "labels"})
#: names of a public target a value is scaled to reach (``desired_peak / np.max(profile)``)
_TARGET_LEVEL_WORDS = frozenset({"desired", "goal", "wanted", "requested", "nominal", "rated", "setpoint"})


def _class_count(expr: ast.expr) -> bool:
    """``num_classes``: dividing by the number of classes (label smoothing, a uniform prior) is no
    scaling of the records by their spread."""
    return isinstance(expr, ast.Name) and bool(_words(expr.id) & _CLASS_COUNT_WORDS)


def _public_target(expr: ast.expr) -> bool:
    """``desired_load / np.max(x)``: the factor that brings simulated or ground-truth values to a
    public target level, not the data normalised by its own statistic."""
    return isinstance(expr, ast.Name) and bool(_words(expr.id) & _TARGET_LEVEL_WORDS)


def _constant_returns(tree_nodes: list[ast.AST]) -> set[str]:
    """Functions every ``return`` of which gives a literal: a bucketing by the code's own cut-offs."""
    out: set[str] = set()
    for fn in tree_nodes:
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            rets = [n for n in ast.walk(fn) if isinstance(n, ast.Return)]
            if rets and all(isinstance(r.value, ast.Constant) for r in rets):
                out.add(fn.name)
    return out


def _column_key(expr: ast.AST) -> str | None:
    if isinstance(expr, ast.Subscript) and isinstance(expr.slice, ast.Constant) and isinstance(expr.slice.value, str):
        base = _key(expr.value)
        return f"{base}[{expr.slice.value!r}]" if base else None
    return None


def _fill_coded(scope: _Scope, bucketers: set[str]) -> None:
    """``frame['c'] = frame['c'].map(lambda x: bucket(x))`` (or ``.map({...})``, ``.apply(bucket)``)
    with ``bucket`` returning literals only: the column's categories are the code's."""
    for node in scope.nodes():
        if not isinstance(node, ast.Assign) or len(node.targets) != 1:
            continue
        key = _column_key(node.targets[0])
        value = node.value
        if key is None or not (isinstance(value, ast.Call) and func_name(value.func) in {"map", "apply", "replace"}
                               and value.args):
            continue
        fn = value.args[0]
        if isinstance(fn, ast.Lambda) and isinstance(fn.body, ast.Call):
            fn = fn.body.func
        if isinstance(fn, ast.Dict) or isinstance(fn, ast.Name) and fn.id in bucketers:
            scope.coded.add(key)


def _coded_column(data: ast.expr, scope: _Scope) -> bool:
    key = _column_key(data)
    return key is not None and key in scope.coded


def _names_label(data: ast.expr) -> bool:
    """``y``, ``df["target"]``, ``records.pop("label")``: the prediction target, whose class set is schema."""
    named = [*_names(data), *(n.value for n in ast.walk(data) if isinstance(n, ast.Constant) and isinstance(n.value, str))]
    return any(_words(n) & _LABEL_WORDS for n in named)


_ARITH = (ast.Mult, ast.Div, ast.Add, ast.Sub, ast.FloorDiv)
_CENTRES = frozenset({"mean", "nanmean", "median", "nanmedian", "average", "quantile", "nanquantile", "percentile",
                      "nanpercentile"})


def _rescaled_by_own_statistic(node: ast.If, scope: _Scope) -> bool:
    """``if df[c].median() > 120: df[c] = df[c] / 365``: a number compared with a statistic of the
    records decides the transformation the records then get (a unit, a scale, an offset), so the
    released values' scale is an un-noised function of the data."""
    test = node.test
    if not isinstance(test, ast.Compare) or len(test.comparators) != 1:
        return False
    sides = [test.left, test.comparators[0]]
    if not any(isinstance(s, ast.Constant) and isinstance(s.value, (int, float)) and not isinstance(s.value, bool)
               or isinstance(s, ast.UnaryOp) and isinstance(s.operand, ast.Constant) for s in sides):
        return False
    stat_side = next((s for s in sides if not isinstance(s, (ast.Constant, ast.UnaryOp))), None)
    # a centre of the values (not ``x.max() > 1``, which tells a stored format apart: 0-255 or 0-1)
    if stat_side is None or not scope.pure(stat_side) or not scope.kinds(stat_side) & _CENTRES:
        return False
    roots = {_root(found[1]) for n in ast.walk(stat_side) if (found := _stat(n)) is not None} - {None}
    for stmt in node.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target, value = stmt.targets[0], stmt.value
        elif isinstance(stmt, ast.AugAssign):
            target, value = stmt.target, ast.BinOp(left=stmt.target, op=stmt.op, right=stmt.value)
        else:
            continue
        if not scope.private(target):
            continue
        for op in ast.walk(value):
            # a constant factor or offset (a unit conversion), not another statistic
            if not isinstance(op, ast.BinOp) or not isinstance(op.op, _ARITH) \
                    or isinstance(op.left, ast.Constant) == isinstance(op.right, ast.Constant):
                continue
            operand = op.left if not isinstance(op.left, ast.Constant) else op.right
            if _root(operand) in roots | {_root(target)} and scope.private(operand):
                return True
    return False


#: values whose maximum plus one is a schema count, not a domain read off the records: class labels,
#: positions, node ids of a graph's edge list
_INDEX_WORDS = frozenset({"index", "indices", "idx", "id", "ids", "edge", "edges", "position", "pos", "step", "epoch",
                          "round"})


def _running_extreme(node: ast.Assign, scope: _Scope) -> bool:
    """``m = max(m, np.linalg.norm(row))`` (or ``if v > m: m = v`` with ``v = np.linalg.norm(X[j])``) in a loop
    over the records (``for row in data``, ``for i in range(n): … X[i]``), then ``m`` divides the data: the largest record sets the scale (the
    ``||x|| <= 1`` normalisation a sensitivity assumes)."""
    value = node.value
    if len(node.targets) != 1 or not isinstance(node.targets[0], ast.Name):
        return False
    acc = node.targets[0].id
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in {"max", "min"} \
            and len(value.args) == 2:
        others = [a for a in value.args if not (isinstance(a, ast.Name) and a.id == acc)]
    else:
        # ``if v > m: m = v`` (or ``m < v``): the same running extreme written as a comparison
        enclosing = scope.enclosing_if(node) if isinstance(value, ast.Name) else None
        test = enclosing.test if enclosing is not None else None
        if not (isinstance(value, ast.Name) and isinstance(test, ast.Compare) and len(test.ops) == 1
                and isinstance(test.ops[0], (ast.Gt, ast.GtE, ast.Lt, ast.LtE))):
            return False
        sides = {_root(test.left), _root(test.comparators[0])}
        if sides != {acc, value.id}:
            return False
        others = [value]
    if len(others) != 1:
        return False
    loops = [n for n in scope.loops() if any(c is node for c in ast.walk(n))]
    if not loops:
        return False
    assigned: dict[str, list[ast.expr]] = {}
    for loop in loops:
        for stmt in ast.walk(loop):
            if isinstance(stmt, ast.Assign) and stmt is not node:
                for key in _targets(stmt):
                    assigned.setdefault(key, []).append(stmt.value)
    reads: list[ast.AST] = list(ast.walk(others[0]))
    for name in [n.id for n in reads if isinstance(n, ast.Name)]:
        for expr in assigned.get(name, ()):
            reads.extend(ast.walk(expr))
    if not any(isinstance(r, ast.Call) and func_name(r.func) in {"norm", "abs", "fabs"} for r in reads):
        return False  # the size of a record (its norm), not a score, a loss or an id
    names = {n.id for n in reads if isinstance(n, ast.Name)}
    over_records = False
    for loop in loops:
        bound = {n.id for n in ast.walk(loop.target) if isinstance(n, ast.Name)}
        if scope.private(loop.iter) and not _drawn(loop.iter) and bound & names and _root(loop.iter) != acc:
            over_records = True
        elif any(isinstance(r, ast.Subscript) and scope.private(r.value) and _root(r.value) != acc
                 and {n.id for n in ast.walk(r.slice) if isinstance(n, ast.Name)} & bound for r in reads):
            over_records = True
    return over_records and _divides_data(acc, scope)


def _divides_data(name: str, scope: _Scope) -> bool:
    """Is ``name`` (or a value built from it) a divisor of the data?"""
    holders = {name}
    for _ in range(2):
        for node in scope.nodes():
            if isinstance(node, ast.Assign) and any(isinstance(n, ast.Name) and n.id in holders
                                                    for n in ast.walk(node.value)):
                holders.update(k for k in _targets(node) if "." not in k)
    for node in scope.nodes():
        if isinstance(node, (ast.BinOp, ast.AugAssign)) and isinstance(node.op, ast.Div):
            right = node.right if isinstance(node, ast.BinOp) else node.value
            left = node.left if isinstance(node, ast.BinOp) else node.target
            if isinstance(left, ast.BinOp) and isinstance(left.op, ast.Mult):
                # ``(1.0 * X[j]) / m``: a cast by a constant factor, the records all the same
                left = left.right if isinstance(left.left, ast.Constant) else left.left
            if any(isinstance(n, ast.Name) and n.id in holders for n in ast.walk(right)) and scope.private(left):
                return True
    return False


def _one(expr: ast.expr) -> bool:
    return isinstance(expr, ast.Constant) and expr.value == 1 and not isinstance(expr.value, bool)


def _category_count(expr: ast.expr, scope: _Scope) -> bool:
    """``np.amax(df[c]) + 1``, ``int(x[c].max()) + 1``, ``np.array([d[c].max() for c in cols]) + 1``:
    the largest code present in the records taken as the number of categories (the domain)."""
    if any(isinstance(n, ast.BinOp) for n in ast.walk(expr)):
        return False  # ``np.max(costs) - costs + 1``: arithmetic with the maximum, not a count
    for node in ast.walk(expr):
        found = _stat(node)
        if found is None or found[0] not in _HIGH or not scope.private(found[1]) or scope.per_record(node, found[1]):
            continue
        keys = [_root(found[1]) or ""] + [c.value for c in ast.walk(found[1])
                                          if isinstance(c, ast.Constant) and isinstance(c.value, str)]
        if not any(_words(k) & (_LABEL_WORDS | _INDEX_WORDS) for k in keys):
            return True
    return False



def _words_only_stat(expr: ast.expr, scope: _Scope) -> bool:
    """``x.max() - x.min()``: a range, not the data shifted."""
    return bool(scope.kinds(expr))


_PREP_TEXT = (*sorted(PREP_CLASSES), "fit_predict(", "get_dummies(", "cut(", ".mean(", ".std(", "mean(", "std(", "fillna(", ".corr", "median(", ".min(",
              "nunique(", "quantile(", "Scal", "scal", "normali", "standardi", "-=", "/=", "Encod", "Normaliz", "Discretiz",
              "Transformer(", "max(", "norm(", "unique(", "fromkeys(", "value_counts(")


def _prepares(source: str) -> bool:
    return any(t in source for t in _PREP_TEXT)


def may_prepare(source: str) -> bool:
    """Cheap text gate of :func:`sites`: a transformer's name or a statistic call, or a value set
    (``set(``, ``factorize(``) that ``value_codebook`` may find kept as a domain."""
    return _prepares(source) or value_codebook.may_hold(source)


def star_imports(tree: ast.Module) -> list[list[Any]]:
    """``[level, module]`` of each ``from module import *`` (the flow's import rows leave them out)."""
    return [[n.level, n.module or ""] for n in ast.walk(tree)
            if isinstance(n, ast.ImportFrom) and any(a.name == "*" for a in n.names)]


def _import_edges(summaries: Mapping[str, dict[str, Any]], resolver: Any) -> dict[str, set[str]]:
    """importer -> the scanned files it imports (modules and the modules of imported names)."""
    edges: dict[str, set[str]] = {}
    for importer, summary in summaries.items():
        for level, module in summary.get("stars", []):
            found = resolver._module(importer, level, module)
            if found is not None and found != importer:
                edges.setdefault(importer, set()).add(found)
        for _local, level, module, name in summary.get("imports", []):
            found = None
            if name is not None:
                found = resolver._module(importer, level, f"{module}.{name}" if module else name)
            if found is None:
                found = resolver._module(importer, level, module)
            if found is not None and found != importer:
                edges.setdefault(importer, set()).add(found)
    return edges


#: DP claims the project flow's own test (``project._dp_module_text``) leaves to per-file rules:
#: local DP, randomised response, a DP-SGD trainer, a privacy budget
_CLAIM = re.compile(
    r"(?i)\bldp\b|\bldp_|_ldp\b|local[ _-]?differential|randomi[sz]ed[ _-]?response|\brappor\b|dp[_-]?sgd|"
    r"PrivacyEngine|make_private|privacy[ _-]?(?:budget|parameter|guarantee)|\bdp[_-]?(?:fl|fed|train\w*)\b|"
    r"random\.laplace\("
)


def claims(source: str) -> bool:
    """Does the module speak of (local) differential privacy beyond ``project._dp_module_text``?"""
    return _CLAIM.search(source) is not None


def literal_claim(source: str, tree: ast.Module, dp_text: Callable[[str], bool] | None = None) -> bool:
    """Does the module speak of DP only in metadata literals: strings of dict displays, subscript keys or
    multi-line string templates (``'differential_privacy': {...}`` in a dataset description, a YAML template, a config
    section ``params['Differential-privacy parameters']``)? Such a module describes a DP setting; it runs
    no DP code. Docstrings, comments, messages and help texts still count."""
    docs = {id(n.body[0].value) for n in ast.walk(tree)
            if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and n.body
            and isinstance(n.body[0], ast.Expr)}
    keys: list[ast.AST] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            keys.append(node)
        elif isinstance(node, ast.Subscript):
            keys.append(node.slice)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and "\n" in node.value \
                and id(node) not in docs:
            keys.append(node)
    spans = [(n.lineno, n.col_offset, n.end_lineno, n.end_col_offset) for k in keys for n in ast.walk(k)
             if isinstance(n, ast.Constant) and isinstance(n.value, str) and n.end_lineno is not None
             and n.end_col_offset is not None]
    if not spans:
        return False
    lines = source.split("\n")
    for first, col, last, end in sorted(spans, reverse=True):
        if first == last:
            line = lines[first - 1]
            lines[first - 1] = line[:col] + " " * (end - col) + line[end:]
        else:
            lines[first - 1] = lines[first - 1][:col]
            for i in range(first, last - 1):
                lines[i] = ""
            lines[last - 1] = " " * end + lines[last - 1][end:]
    code = "\n".join(lines)
    return not (claims(code) or dp_text is not None and dp_text(code))


def reached(summaries: Mapping[str, dict[str, Any]], resolver: Any, depth: int = 3) -> dict[str, str]:
    """Files a DP-claiming script (a claiming module nothing imports) imports within ``depth``
    steps (three), and the helpers of an entry script that imports a claiming module -> that module.
    Standalone data-preparation scripts of a project with a DP script count too."""
    edges = _import_edges(summaries, resolver)
    imported = {b for deps in edges.values() for b in deps}
    # the origins are DP *scripts* (claiming modules nothing imports: a train.py, a main.py): a
    # library's DP modules are imported by its package, and its users bring their own data
    # a claiming module only entry scripts import (a ``demo.py`` or a CLI wrapper around ``train.py``;
    # tests and evaluations aside) is the top of the DP pipeline all the same
    importers: dict[str, set[str]] = {}
    for importer, deps in edges.items():
        for dep in deps:
            importers.setdefault(dep, set()).add(importer)
    claimed = sorted(p for p, s in summaries.items() if s.get("claim") and os.path.basename(p) != "__init__.py"
                     and all(i not in imported for i in importers.get(p, ()) if _runs_pipeline(i)))
    out: dict[str, str] = {p: p for p in claimed}
    frontier = dict(out)
    for _ in range(depth):
        nxt: dict[str, str] = {}
        for file, origin in sorted(frontier.items()):
            for dep in sorted(edges.get(file, ())):
                if dep not in out:
                    out[dep] = nxt[dep] = origin
        frontier = nxt
    claiming = {p for p, s in summaries.items() if s.get("claim")}
    # a module whose only DP words are in string literals (a metadata template's key) runs no DP code
    running = {p for p in claiming if not summaries[p].get("literal_claim")}
    for script in sorted(p for p in edges if p not in imported and _runs_pipeline(p)):
        # an entry script that runs DP code (imported directly or through the driver module it
        # imports): the rest of what it imports prepares that DP code's input
        origin = next((c for c in sorted(_closure(edges, script, 2)) if c in running), None)
        if origin is not None:
            for dep in sorted(edges[script]):
                out.setdefault(dep, origin)
    # a standalone preparation script prepares the input of DP code that runs, not of a metadata
    # description that only names a DP setting
    running_claimed = [c for c in claimed if c in running]
    if running_claimed:
        for path in summaries:
            stem = os.path.splitext(os.path.basename(path))[0]
            if path not in imported and _words(stem) & _PREPARING \
                    and not _words(stem) & _EVAL_WORDS and running_claimed:
                out.setdefault(path, running_claimed[0])
    origins = running_claimed or sorted(running)
    for path in sorted(summaries):
        if origins and path not in imported and _preparing_script(path, summaries[path]):
            # run by hand (or through a shell command) before the DP code reads what it writes
            out.setdefault(path, origins[0])
            for dep in sorted(edges.get(path, ())):
                out.setdefault(dep, origins[0])
    return out


def _runs_pipeline(path: str) -> bool:
    """Can the entry script ``path`` run the DP pipeline (not a test, an evaluation or a benchmark)?"""
    folder = os.path.basename(os.path.dirname(path))
    return not (_words(os.path.splitext(os.path.basename(path))[0]) | _words(folder)) & _EVAL_WORDS


def _closure(edges: Mapping[str, set[str]], start: str, depth: int) -> set[str]:
    """The files ``start`` imports within ``depth`` steps (``start`` itself excluded)."""
    seen: set[str] = set()
    frontier = {start}
    for _ in range(depth):
        frontier = {dep for file in frontier for dep in edges.get(file, ())} - seen - {start}
        if not frontier:
            break
        seen |= frontier
    return seen


#: words of a top-level function that prepares the data set (not ``load``/``data``: every script loads)
_PREPARING_DEFS = frozenset({
    "preprocess", "preprocessing", "prepare", "prep", "clean", "encode", "discretize", "discretise", "normalize",
    "normalise", "process", "binarize", "binarise",
})


#: words of a module that fits models (its own preparation feeds its own models)
_MODELLING = frozenset({"model", "models", "modelling", "modeling"})


def _preparing_script(path: str, summary: Mapping[str, Any]) -> bool:
    """A module nothing imports that defines a data-preparation function (``def preprocess(...)``)
    and is not named for evaluation: a standalone step whose output the DP code reads from disk."""
    if _words(os.path.splitext(os.path.basename(path))[0]) & (_EVAL_WORDS | _MODELLING) \
            or os.path.basename(path) == "__init__.py":
        return False  # (R1 b93) a modelling module nothing imports (a non-DP baseline) prepares no DP input
    return any(_words(name) & _PREPARING_DEFS and not _words(name) & _EVAL_WORDS for name in summary.get("defs", ()))


def _distributed(path: str, cache: dict[str, bool]) -> bool:
    """Is ``path`` inside a released distribution (an sdist's ``PKG-INFO``, a wheel's
    ``*.dist-info``, within four folders up)? A library's preprocessing runs on whatever data its
    user passes; only the user's script makes that data private."""
    folder = os.path.dirname(path)
    for _ in range(5):
        if folder not in cache:
            try:
                names = os.listdir(folder)
            except OSError:
                names = []
            cache[folder] = any(n == "PKG-INFO" or n.endswith((".dist-info", ".egg-info")) for n in names)
        if cache[folder]:
            return True
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    return False


def join(summaries: Mapping[str, dict[str, Any]], display: Mapping[str, str], resolver_type: Any,
         make: Any, judged: Collection[tuple[str, int]] = ()) -> list[Any]:
    """DP202 findings at the preprocessing sites of files the project's DP code reaches. ``judged``:
    (file, line) of fitting sites whose callers the project flow reads (a kept domain defers to them)."""
    if not any(s.get("claim") for s in summaries.values()) or not any(s.get("prep") for s in summaries.values()):
        return []
    from dpcheck.finding import RelatedLocation

    listed: dict[str, bool] = {}
    summaries = {p: s for p, s in summaries.items() if not _distributed(p, listed)}
    if not summaries:
        return []
    resolver = resolver_type(summaries)
    reach = reached(summaries, resolver)
    # a class that keeps the data's own domain for its other methods is the DP code's encoder
    # whenever a module claiming DP imports it, even inside a library package
    direct: dict[str, str] = {}
    for importer, deps in sorted(_import_edges(summaries, resolver).items()):
        if summaries[importer].get("claim") and not evaluates(importer):
            for dep in sorted(deps):
                direct.setdefault(dep, importer)
    findings = []
    for file, summary in sorted(summaries.items()):
        origin = reach.get(file)
        only_kept = False
        if origin is None:
            origin = direct.get(file)
            only_kept = True
            if origin is None:
                continue
        if measuring_folder(display.get(file, file)):
            continue  # (g37-4) evaluation / attack / plotting code shapes no release
        for site in summary.get("prep", []):
            if only_kept and not kept_domain.kept_site(site[4]):
                continue
            if kept_domain.kept_site(site[4]) and (file, site[0]) in judged:
                continue  # the call sites of this fitter decide (synthetic data passed, result unused)
            if dp_output.site_released(file, site, summaries, resolver):
                continue  # (h45-p) fitted only on what a mechanism released: post-processing
            shown = display.get(origin, origin)
            where = "this module claims differential privacy" if origin == file else \
                f"the DP module `{shown}` imports this code"
            message = (
                f"{site[4]}: the transformation's parameters (moments, bounds, categories, a column selection) "
                f"are read from the private records with no DP mechanism ({where}), so they shape what the DP "
                f"training or release consumes or emits outside the privacy budget. Take them from public "
                f"metadata or a public split, or estimate them with a DP mechanism charged to the budget"
            )
            related = () if origin == file else (RelatedLocation(shown, 1, 1, "the module claiming DP"),)
            finding = make(display.get(file, file), site, message, related)
            if finding is not None:
                findings.append(finding)
    return findings
