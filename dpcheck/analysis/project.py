"""Project-wide flow: statistics fitted in one module on private data fed by a DP model in another.

Real generators delegate preprocessing: an encoder in module A fits on its argument (min/max,
quantiles, ``unique``, ``LabelEncoder``, ``pd.cut`` …) and the DP model in module B calls it on
its private training data. Neither file alone shows the leak. The engine therefore runs a cheap
second phase:

1. per file, :func:`summarize` reads the source with CPython's ``ast`` (never imports it) and
   records, as JSON-able data cached with the file's content hash: its imports, its top-level
   definitions, which functions/methods fit statistics on which parameter (and where), and which
   calls in a DP model's training entry point pass private data into which callee;
2. :func:`join` resolves every recorded call through the imports (relative, absolute within the
   scanned trees, ``import a.b as c``, re-exports) and reports the fitting sites as DP202
   findings with the DP call site as a related location.

The join is recomputed from the summaries on every run, so a change to either module changes
the result. Star imports resolve to the names the imported module defines. Anything that cannot
be resolved (missing modules, relative imports beyond the top, unparsable files, import cycles)
simply yields no finding.
"""
from __future__ import annotations

import ast
import os
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from dpcheck.analysis import dp_output, preprocessing
from dpcheck.analysis.astfacts import dotted as _dotted
from dpcheck.analysis.astfacts import func_name
from dpcheck.analysis.off_switch import off_switch_nodes
from dpcheck.analysis.syntax import words
from dpcheck.analysis.vocabulary import DP_NAME, dp_claim
from dpcheck.categories import ACKNOWLEDGED
from dpcheck.finding import Finding, RelatedLocation

VERSION = 15
RULE_ID = "DP202"
RULE_NAME = "non-private-bounds"
CATEGORY = "metadata"

_STAT_METHODS = {
    "min", "max", "amin", "amax", "quantile", "nanquantile", "unique", "nunique", "value_counts",
    "describe", "ptp", "aminmax", "mode",
}
_STAT_FUNCS = {
    "min", "max", "amin", "amax", "nanmin", "nanmax", "ptp", "quantile", "percentile", "nanquantile",
    "nanpercentile", "unique", "bincount", "cut", "qcut", "histogram_bin_edges", "value_counts",
}
_LIB_ROOTS = {"np", "numpy", "pd", "pandas", "torch", "jnp", "tf"}
_ENCODERS = {
    "LabelEncoder", "OneHotEncoder", "OrdinalEncoder", "KBinsDiscretizer", "MinMaxScaler", "StandardScaler",
    "RobustScaler", "MaxAbsScaler", "QuantileTransformer", "LabelBinarizer", "PowerTransformer",
    "DataTransformer", "HyperTransformer", "ClusterBasedNormalizer", "BayesGMMTransformer", "TabularEncoder",
}
_FIT_METHODS = {"fit", "fit_transform", "partial_fit"}
_PASS_METHODS = {
    "astype", "to_numpy", "copy", "dropna", "fillna", "reshape", "flatten", "ravel", "squeeze", "transpose",
    "float", "numpy", "detach", "cpu", "reset_index", "infer_objects", "to_frame",
    # element-wise clean-ups keep every record's value (``s.replace([inf], nan).abs()``)
    "replace", "abs", "clip", "round", "to_list", "tolist", "values",
}
#: library conversions of their first argument, record by record (``pd.to_numeric(s, errors=…)``)
_CONVERT_FUNCS = {"to_numeric", "to_datetime", "log", "log1p", "abs", "sqrt", "nan_to_num", "float32", "float64"}
_WRAP_FUNCS = {"asarray", "array", "tensor", "as_tensor", "from_numpy", "DataFrame", "Series", "asanyarray", "copy"}
_ENTRY_NAMES = {"fit", "train", "fit_transform", "_fit", "partial_fit", "_train", "fit_model", "train_model"}
_PRIVACY_PARAMS = re.compile(
    r"^(?:target_)?(?:epsilon|eps|delta|rho|sigma|noise_multiplier|privacy_budget|budget|max_grad_norm|"
    r"lamda|lambda_|noise_scale|mu)$"
)
#: privacy parameters whose name is also an ordinary ML hyperparameter (SVR's and Huber's epsilon,
#: DBSCAN's and MDS's eps, Adam's epsilon, a kernel's sigma, Huber's delta): DP only next to DP words
_AMBIGUOUS_PARAMS = re.compile(r"^(?:epsilon|eps|delta|rho|sigma|budget|lambda_|noise_scale|mu)$")
#: words of DP code in a class or function's text (or its module's imports) that make an ambiguous
#: parameter a privacy parameter (a synthesizer's epsilon is always a privacy budget)
_DP_VOCABULARY = re.compile(
    r"(?i)privacy|privately|differential|sensitivity|laplace(?!ian)|accountant|noise_multiplier|\brdp\b|zcdp|"
    r"\bdp_|_dp\b|synthesi[sz]|synthetic"
)
_NOT_DATA_PARAM = re.compile(
    r"(?i)^(?:self|cls|epsilon|eps|delta|rho|sigma|seed|random_state|epochs?|n_epochs|batch_size|lr|"
    r"learning_rate|verbose|device|columns?|categorical\w*|discrete\w*|continuous\w*|bounds|lower|upper|"
    r"meta\w*|schema|n_\w+|num_\w+|max_\w+|\w*_size|\w*_dim|\w*_eps|noise\w*|callback\w*|kwargs|args|"
    r"dtype|transformer|preprocessor\w*|conditions?|labels?_col\w*|target_col\w*)$"
)
_NOISE_CALL = re.compile(
    r"(?i)\b((?:\w+\.)*(?:laplace|add_noise|gaussian_mechanism|laplace_mechanism|make_private\w*|PrivacyEngine|"
    r"RDPAccountant|compute_rdp|GaussianMechanism|LaplaceMechanism|noisy_\w+|dp_\w+))\s*\("
)

#: a file is worth more than its imports only if it may fit statistics or hold a DP model
#: (plain substring tests: much faster than one regex with many alternatives)
_FIT_WORDS = (
    ".min(", ".max(", "amin(", "amax(", "nanmin(", "nanmax(", "quantile(", "unique(", "value_counts(", "describe(",
    "ptp(", "percentile(", "bincount(", "cut(", ".mode(", "Counter(", "set(", *sorted(_ENCODERS),
)
_DP_WORDS = ("epsilon", "eps", "delta", "rho", "sigma", "noise", "priva", "differential", "laplace", "pate", "dp")
_DP_WORD_RE = re.compile(r"\bdp|[a-z_]dp[A-Z_]|DP")


def _may_fit_text(source: str) -> bool:
    return any(w in source for w in _FIT_WORDS)


_ENTRY_TEXT = ("def fit", "def train", "def _fit", "def partial_fit", "def _train")


def _dp_text(source: str) -> bool:
    """May hold a DP model's training entry point (DP words and a ``def fit``/``def train``…)."""
    if not any(w in source for w in _ENTRY_TEXT):
        return False
    low = source.lower()
    return any(w in low for w in _DP_WORDS[:-1]) or ("dp" in low and _DP_WORD_RE.search(source) is not None)


# ---- per-file summary -------------------------------------------------------------------------


def wanted(source: str, path: str) -> bool:
    """Cheap text gate: does this file need a summary at all?"""
    if os.path.basename(path) == "__init__.py":
        return "import" in source
    return _may_fit_text(source) or _dp_text(source) or _dp_module_text(source) or "import" in source \
        or preprocessing.may_prepare(source)


#: a module that speaks of differential privacy (a DP script or model, not an ML hyperparameter)
_DP_MODULE = re.compile(
    r"(?i)differential(?:ly)?[ _-]?priva|privacy[ _-]?(?:budget|engine|accountant|loss)|\bopacus\b|"
    r"noise_multiplier|\bdp[_-]?(?:sgd|gan|epsilon|delta)\b|privacy_accounting|compute_rdp|rdp_accountant|"
    # the Gaussian mechanism's (or advanced composition's) calibration: sqrt(2 log(1.25/δ))/ε
    r"\blog\(\s*(?:1|1\.0*|1\.25|2|2\.0*)\s*/\s*(?:self\.)?(?:delta|target_delta|δ)\s*\)"
)


def _dp_module_text(source: str) -> bool:
    return _DP_MODULE.search(source) is not None


#: calls that read a dataset from storage: the records the DP code is about
_LOAD_CALLS = frozenset({
    "read_csv", "read_parquet", "read_excel", "read_table", "read_json", "read_feather", "read_pickle",
    "read_sql", "read_hdf", "loadtxt", "genfromtxt",
})


def summarize(source: str, path: str = "", tree: ast.Module | None = None) -> dict[str, Any] | None:
    """The file's flow summary (JSON-able), or ``None`` when it has nothing to contribute.
    ``tree``: the module already parsed by ``ast`` (saves a parse)."""
    if not wanted(source, path):
        return None
    if tree is None:
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None
    try:
        if not (_may_fit_text(source) or _dp_text(source) or _dp_module_text(source)
                or preprocessing.may_prepare(source) or any(f"{n}(" in source for n in _LOAD_CALLS)):
            # only a link in the import graph (a DP script reaching a loader through it)
            claim = preprocessing.claims(source)
            links = _Summarizer(source, tree, path).links()
            if dp_output.may_randomise(source):  # (h45-p) a module of mechanisms (``x + laplace(…)``)
                links["mech"] = sorted(dp_output.Released(tree).mechanisms)
            return {**links, "claim": claim,
                    "literal_claim": claim and preprocessing.literal_claim(source, tree, _dp_module_text),
                    "stars": preprocessing.star_imports(tree)}
        return _Summarizer(source, tree, path).run(_may_fit_text(source), _dp_text(source))
    except RecursionError:
        return None


def _root(node: ast.expr) -> str | None:
    """The name (or ``self.attr``) whose value an expression reads the data of."""
    while True:
        if isinstance(node, ast.Name):
            return node.id
        if isinstance(node, ast.Attribute):
            if isinstance(node.value, ast.Name) and node.value.id == "self":
                return f"self.{node.attr}"
            node = node.value
        elif isinstance(node, ast.Subscript):
            node = node.value
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _PASS_METHODS:
            node = node.func.value
        elif isinstance(node, ast.Call) and node.args and func_name(node.func) in _WRAP_FUNCS:
            node = node.args[0]
        elif isinstance(node, ast.Call) and node.args and isinstance(node.func, ast.Attribute) \
                and node.func.attr in _CONVERT_FUNCS and _dotted(node.func.value) in _LIB_ROOTS:
            node = node.args[0]
        else:
            return None


#: attributes naming a table's schema, not its values (``set(df.columns)``)
_SCHEMA_ATTRS = frozenset({"columns", "index", "dtypes", "shape", "names", "keys", "fields", "feature_names"})


#: calls that read out a column's or array's values
_VALUE_READS = frozenset({"tolist", "to_list", "to_numpy", "dropna"})


def _values_of(expr: ast.expr) -> bool:
    """A column's or a table's values (``df[c]``, ``df[c].values``, ``x.tolist()``), not its schema
    (``df.columns``, ``d.keys()``) nor a literal."""
    node = expr
    while True:
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr in _SCHEMA_ATTRS:
                return False
            if node.func.attr in _VALUE_READS:
                return True  # ``vals.tolist()``: the values themselves, whatever holds them
            node = node.func.value
        elif isinstance(node, ast.Attribute):
            if node.attr in _SCHEMA_ATTRS:
                return False
            node = node.value
        elif isinstance(node, ast.Subscript):
            return True
        else:
            return False


def _labels(expr: ast.expr) -> bool:
    """Read from a value named for the prediction target (``train_labels``, ``y``, ``df['target']``)."""
    parts = [_dotted(n) or "" for n in ast.walk(expr) if isinstance(n, (ast.Name, ast.Attribute))]
    parts += [c.value for c in ast.walk(expr) if isinstance(c, ast.Constant) and isinstance(c.value, str)]
    return any(words(re.sub(r"\W+", "_", p)) & {"label", "labels", "target", "targets", "y"} for p in parts)


def _given_categories(ctor: ast.Call) -> bool:
    """``OneHotEncoder(categories=[...])``, ``KBinsDiscretizer(bin_edges=…)``: the encoder's domain is
    given, so its ``fit`` learns nothing of the data's categories."""
    return any(kw.arg in {"categories", "bins", "bin_edges"} and not (
        isinstance(kw.value, ast.Constant) and kw.value.value in ("auto", None)) for kw in ctor.keywords)


def _params(fn: ast.FunctionDef | ast.AsyncFunctionDef, method: bool) -> list[str]:
    names = [a.arg for a in (*fn.args.posonlyargs, *fn.args.args)]
    if method and names and not any(_is_static(d) for d in fn.decorator_list):
        names = names[1:]
    return names + [a.arg for a in fn.args.kwonlyargs]


def _is_static(decorator: ast.expr) -> bool:
    return isinstance(decorator, ast.Name) and decorator.id == "staticmethod"


def _statements(fn: ast.AST) -> Iterator[ast.AST]:
    """Nodes of a function body in source order, not entering nested functions or classes."""
    stack = list(reversed(list(ast.iter_child_nodes(fn))))
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        stack.extend(reversed(list(ast.iter_child_nodes(node))))


def _all_statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Every statement, at any depth, without visiting expressions (imports are statements)."""
    stack = list(reversed(body))
    while stack:
        stmt = stack.pop()
        yield stmt
        for name in ("body", "orelse", "finalbody", "handlers", "cases"):
            inner = getattr(stmt, name, None)
            if isinstance(inner, list):
                stack.extend(reversed([s for s in inner if isinstance(s, (ast.stmt, ast.excepthandler,
                                                                                ast.match_case))]))


def _targets(node: ast.AST) -> list[ast.expr]:
    if isinstance(node, ast.Assign):
        return list(node.targets)
    if isinstance(node, (ast.AnnAssign, ast.AugAssign)) and node.value is not None:
        return [node.target]
    if isinstance(node, ast.NamedExpr):
        return [node.target]
    return []


def _target_keys(target: ast.expr) -> list[str]:
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self":
        return [f"self.{target.attr}"]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [k for elt in target.elts for k in _target_keys(elt)]
    return []


def _tainted(body: Iterable[ast.AST], seeds: Iterable[str]) -> dict[str, str]:
    """Names holding data derived from each seed parameter: name -> seed (two passes for loops)."""
    taint = {s: s for s in seeds}
    nodes = [n for n in body if isinstance(n, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.NamedExpr,
                                               ast.For, ast.AsyncFor, ast.comprehension))]
    for _ in range(2):
        for node in nodes:
            if isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
                # ``for k, v in columns.items()`` over a container of the data: its elements are data
                origin = _container_origin(node.iter, taint) or (
                    None if _schema_read(node.iter) else taint.get(_root(node.iter)))
                targets = [node.target] if origin else []
            else:
                value = getattr(node, "value", None)
                origin = None if value is None else taint.get(_root(value)) or _container_origin(value, taint)
                targets = _targets(node)
            if origin is None:
                continue
            for target in targets:
                for key in _target_keys(target):
                    taint.setdefault(key, origin)
    return taint


def _schema_read(expr: ast.expr) -> bool:
    """``df.columns``, ``d.keys()``: names, not the records' values."""
    node = expr.func if isinstance(expr, ast.Call) else expr
    return isinstance(node, ast.Attribute) and node.attr in _SCHEMA_ATTRS


def _container_origin(value: ast.expr, taint: Mapping[str, str]) -> str | None:
    """The seed behind a literal container of the data (``{"a": df["a"], …}``, ``[x[:, 0], …]``) or
    behind a container's ``.items()``/``.values()`` view, else ``None``."""
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) \
            and value.func.attr in {"items", "values"} and not value.args:
        return taint.get(_root(value.func.value)) or _container_origin(value.func.value, taint)
    if isinstance(value, ast.Dict):
        parts: list[ast.expr] = list(value.values)
    elif isinstance(value, (ast.List, ast.Tuple)):
        parts = list(value.elts)
    else:
        return None
    return next((o for part in parts if isinstance(part, (ast.Subscript, ast.Attribute, ast.Call, ast.Name))
                 and (o := taint.get(_root(part)))), None)


@dataclass
class _Site:
    line: int
    col: int
    end_line: int
    end_col: int
    what: str
    snippet: str
    suppressed: bool
    #: why the code itself flags this fallback (PrivacyLeakWarning, public bounds not given), or ""
    acknowledged: str = ""
    #: parameters whose absence alone leads here (``if bounds is None:``): a caller passing all
    #: of them never reaches this site
    guards: list[str] = field(default_factory=list)

    def row(self) -> list[Any]:
        return [self.line, self.col, self.end_line, self.end_col, self.what, self.snippet, self.suppressed,
                self.acknowledged, self.guards]


_LEAK_TEXT = re.compile(r"(?i)privacy\s*leak|leak\w*\s+(?:of\s+)?privacy|PrivacyLeak")
_PUBLIC_PARAM = re.compile(r"(?i)bound|norm|range|lower|upper|clip|limit|domain|categor|classes|^min|^max")


def _warns_of_leak(stmt: ast.stmt) -> bool:
    if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)):
        return False
    call = stmt.value
    if func_name(call.func) != "warn":
        return False
    for arg in (*call.args, *(k.value for k in call.keywords)):
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str) and _LEAK_TEXT.search(arg.value):
            return True
        if (name := _dotted(arg)) and _LEAK_TEXT.search(name):
            return True
    return False


def _unset_public_test(test: ast.expr) -> bool:
    """``bounds is None``, ``not data_norm``, ``lower is None or upper is None`` …"""
    if isinstance(test, ast.BoolOp):
        return any(_unset_public_test(v) for v in test.values)
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        name = _dotted(test.operand)
    elif (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Is, ast.Eq))
          and isinstance(test.comparators[0], ast.Constant) and test.comparators[0].value is None):
        name = _dotted(test.left)
    else:
        return False
    return bool(name and _PUBLIC_PARAM.search(name.rsplit(".", 1)[-1]))


def _set_public_test(test: ast.expr) -> bool:
    """``bounds is not None`` (its else-branch is the fallback taken without public bounds)."""
    return (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.IsNot, ast.NotEq))
            and isinstance(test.comparators[0], ast.Constant) and test.comparators[0].value is None
            and bool((name := _dotted(test.left)) and _PUBLIC_PARAM.search(name.rsplit(".", 1)[-1])))


def _none_tested(test: ast.expr) -> list[str]:
    """Plain names a branch condition tests for being unset (``x is None``, ``not x``)."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or):
        return [n for v in test.values for n in _none_tested(v)]
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) and isinstance(test.operand, ast.Name):
        return [test.operand.id]
    if (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Is)
            and isinstance(test.left, ast.Name) and isinstance(test.comparators[0], ast.Constant)
            and test.comparators[0].value is None):
        return [test.left.id]
    return []


def _guards(node: ast.AST, parents: Mapping[ast.AST, ast.AST], params: list[str]) -> list[str]:
    """Parameters tested unset by the innermost enclosing ``if`` whose body holds ``node``."""
    child, parent = node, parents.get(node)
    while parent is not None and not isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef)):
        if isinstance(parent, ast.If) and child in parent.body:
            names = _none_tested(parent.test)
            if names and all(n in params for n in names):
                return names
        child, parent = parent, parents.get(parent)
    return []


def _acknowledged(node: ast.AST, parents: Mapping[ast.AST, ast.AST]) -> str:
    """Why ``node`` is in a fallback the code flags — after a privacy-leak warning in an enclosing
    block, or in the branch taken when public bounds/norms were not given — else ``""``."""
    child, parent = node, parents.get(node)
    while parent is not None:
        for block in ("body", "orelse", "finalbody"):
            stmts = getattr(parent, block, None)
            if isinstance(stmts, list) and child in stmts:
                if any(_warns_of_leak(s) for s in stmts[: stmts.index(child)]):
                    return "computed right after a privacy-leak warning"
        if isinstance(parent, ast.If) and child in parent.body and _unset_public_test(parent.test):
            return f"only when `{ast.unparse(parent.test)}`, i.e. no public value was given"
        if isinstance(parent, ast.If) and child in parent.orelse and _set_public_test(parent.test):
            return f"only when not `{ast.unparse(parent.test)}`, i.e. no public value was given"
        if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return ""
        child, parent = parent, parents.get(parent)
    return ""


@dataclass
class _Function:
    key: str  # "func" or "Class.method"
    node: ast.FunctionDef | ast.AsyncFunctionDef
    cls: ast.ClassDef | None
    params: list[str] = field(default_factory=list)
    _taint: dict[str, str] | None = None

    @cached_property
    def nodes(self) -> list[ast.AST]:
        """The body's nodes in source order (nested functions and classes not entered)."""
        return list(_statements(self.node))

    @cached_property
    def calls(self) -> list[ast.Call]:
        return [n for n in self.nodes if isinstance(n, ast.Call)]

    def taint(self) -> dict[str, str]:
        """Names holding data derived from each parameter (computed once)."""
        if self._taint is None:
            self._taint = _tainted(self.nodes, self.params)
        return self._taint


#: libraries whose calls never run the project's own functions (``ppcalls`` skips them)
_NOT_PROJECT = frozenset({"np", "numpy", "pd", "pandas", "torch", "tf", "jnp", "jax", "scipy", "sklearn", "math",
                          "os", "sys", "json", "re", "random", "F", "nn", "plt", "logging", "time", "pickle"})


#: calls that privatise their input: ``exponential_mechanism(scores, …)``, ``laplace(…)``, ``report_noisy_max``
_MECHANISM_CALL = re.compile(r"(?i)mechanism|laplace|gauss|exponential|noisy|noise|gumbel")


def _fed_to_mechanism(fn: _Function, call: ast.Call) -> bool:
    """The helper's result is only a mechanism's input here: ``scores = [score(df, c) for c in
    cands]`` then ``exponential_mechanism(scores, …)`` (PrivBayes's mutual-information scores).
    The statistic inside ``score`` is the utility the mechanism privatises, not a leaked bound."""
    holder: ast.AST | None = None
    for stmt in fn.nodes:
        if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and stmt.value is not None and \
                any(n is call for n in ast.walk(stmt.value)):
            holder = stmt
            break
    if holder is None:
        return False
    names = {k for t in _targets(holder) for k in _target_keys(t)}
    if not names:
        return False
    for other in fn.calls:
        func = other.func
        label = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        if not _MECHANISM_CALL.search(label):
            continue
        args = [*other.args, *(k.value for k in other.keywords)]
        if any(isinstance(n, ast.Name) and n.id in names for a in args for n in ast.walk(a)):
            return True
    return False


def _shadowed_fit(fn: _Function, call: ast.Call) -> bool:
    """``call`` sits in a class's ``fit`` whose work its own ``fit_transform`` repeats (see
    :func:`dpcheck.analysis.kept_domain.shadowed_fit`)."""
    from dpcheck.analysis.kept_domain import shadowed_fit

    return fn.cls is not None and shadowed_fit(fn.cls, fn.node, call)


def _may_fit(call: ast.Call) -> bool:
    """Could this call fit a statistic (before looking at what it is called on)?"""
    func = call.func
    if isinstance(func, ast.Attribute):
        return func.attr in _STAT_METHODS or func.attr in _STAT_FUNCS or func.attr in _FIT_METHODS
    return isinstance(func, ast.Name) and (func.id in _NAME_STATS or func.id in {"set", "frozenset"})


_NAME_STATS = {"Counter", "cut", "qcut", "bincount", "unique", "quantile", "percentile"}


class _Summarizer:
    def __init__(self, source: str, tree: ast.Module, path: str = "") -> None:
        self.source = source
        self.path = path
        self.lines = source.splitlines()
        self.tree = tree
        self.functions: list[_Function] = []
        for stmt in tree.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.functions.append(_Function(stmt.name, stmt, None, _params(stmt, False)))
            elif isinstance(stmt, ast.ClassDef):
                for item in stmt.body:
                    if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        self.functions.append(_Function(f"{stmt.name}.{item.name}", item, stmt, _params(item, True)))
        self._class_attrs: dict[str, dict[str, str]] = {}
        self._classes = {s.name for s in tree.body if isinstance(s, ast.ClassDef)}
        #: fitters whose own statistic is (part of) what they return: ``cardinality(X)`` returning
        #: ``np.prod(X.nunique())``; a caller that uses the result uses the statistic
        self._returning: set[str] = set()
        self._current: _Function | None = None
        #: do the module's imports name DP code (computed on first use)
        self._dp_vocabulary: bool | None = None

    def run(self, fits: bool = True, dp: bool = True) -> dict[str, Any]:
        """``fits``/``dp``: the text may fit statistics / hold a DP model (else skip that part)."""
        return {
            "v": VERSION,
            "imports": self._imports(),
            "defs": sorted(
                s.name for s in self.tree.body
                if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
            ),
            "fitters": (fitters := self._fitters() if fits else {}),
            "params": {f.key: f.params for f in self.functions if f.key in fitters},
            "returns": sorted(self._returning) if fits else [],
            "calls": (self._calls() if dp else []) + self._script_calls(),
            "loadfits": self._loadfits(fitters) if fits else {},
            "dpcalls": self._dpcalls() if _dp_module_text(self.source) else [],
            "claim": (claim := _dp_module_text(self.source) or preprocessing.claims(self.source)),
            "literal_claim": claim and preprocessing.literal_claim(self.source, self.tree, _dp_module_text),
            "stars": preprocessing.star_imports(self.tree),
            "prep": (prep := self._prep_sites()),
            # (h45-p) mechanisms of this module and calls handing DP outputs on: a preprocessing
            # site fitted only on what a mechanism released is post-processing
            **self._released_rows(bool(prep)),
        }

    def links(self) -> dict[str, Any]:
        return {"v": VERSION, "imports": self._imports(), "defs": sorted(
            s.name for s in self.tree.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)))}

    def _prep_sites(self) -> list[list[Any]]:
        """Preprocessing fitted on the data (``preprocessing.sites``), as this file's sites."""
        if not preprocessing.may_prepare(self.source):
            return []
        rows = []
        for line, col, what in preprocessing.sites(self.tree, self.path, self.source):
            node = ast.Pass(lineno=line, col_offset=col - 1, end_lineno=line, end_col_offset=col - 1)
            row = self._site(node, what).row()  # type: ignore[arg-type]
            rows.append(row + self._reaching(line))
        return rows

    def _reaching(self, line: int) -> list[Any]:
        """``[function key, [[function key, parameter], …], {function key: parameters}]``: the
        parameters whose values the site at ``line`` reads (``[]`` when it reads other data)."""
        found = self.released.function_of(line)
        if found is None:
            return []
        key, fn = found
        cls = self.released.functions[key][1]
        pairs = dp_output.reaching_params(fn, line, cls)
        if not pairs:
            return []
        keyed = sorted({(k or key, p) for k, p in pairs})
        params = {k: [p for p in dp_output.function_params(self.released.functions[k][0])
                      if p not in ("self", "cls")] for k, _ in keyed if k in self.released.functions}
        return [key, [list(pair) for pair in keyed], params]

    @cached_property
    def released(self) -> dp_output.Released:
        return dp_output.Released(self.tree, find=dp_output.may_draw(self.source))

    def _released_rows(self, prep: bool) -> dict[str, Any]:
        """``mech``: this module's mechanisms (function keys); ``ppcalls``: calls of the project's
        functions, each ``[chain, method, line, {argument: flag}]`` (``#i`` positional, else the
        keyword), a flag ``"r"`` (a DP output), ``"n"`` (no data), ``"o"`` (other) or
        ``["via", chain, method]`` (the result of that call, a mechanism elsewhere or not)."""
        drawing = dp_output.may_draw(self.source)
        out: dict[str, Any] = {"mech": sorted(self.released.mechanisms) if drawing else []}
        local = set(self.released.functions) | {k.split(".")[0] for k in self.released.functions}
        imported = {row[0] for row in self._imports()}
        rows: list[list[Any]] = []
        scopes: list[tuple[ast.AST, _Function | None]] = [(f.node, f) for f in self.functions]
        scopes.append((self.tree, None))
        for scope, fn in scopes:
            constructed = self._local_constructed(fn) if fn is not None else {}
            names: set[str] | None = None
            calls = fn.calls if fn is not None else [
                n for stmt in self.tree.body if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                                      ast.ClassDef))
                for n in ast.walk(stmt) if isinstance(n, ast.Call)]
            for call in calls:
                if not (call.args or call.keywords):
                    continue
                func = call.func
                if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) \
                        and func.value.id in ("self", "cls") and fn is not None and fn.cls is not None:
                    callee: tuple[str, str | None] | None = (fn.cls.name, func.attr)
                else:
                    callee = self._callee(func, constructed)
                if callee is None or callee[0].split(".")[0] not in local | imported \
                        or callee[0].split(".")[0] in _NOT_PROJECT:
                    continue
                if names is None:
                    names = self.released.names(scope) if drawing and fn is not None else set()
                flags: dict[str, Any] = {}
                args = [(f"#{i}", a) for i, a in enumerate(call.args) if not isinstance(a, ast.Starred)]
                args += [(k.arg, k.value) for k in call.keywords if k.arg]
                for slot, arg in args:
                    flags[slot] = self._flag(arg, scope, names, call.lineno, constructed, drawing)
                if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
                    flags["*"] = "o"  # ``f(*xs)``, ``f(**kw)``: which parameter gets what is not known
                rows.append([callee[0], callee[1], call.lineno, flags])
        out["ppcalls"] = rows
        return out

    def _flag(self, arg: ast.expr, scope: ast.AST, names: set[str], line: int,
              constructed: Mapping[str, str], drawing: bool) -> Any:
        kind = self.released.kind(arg, scope, names) if drawing else None
        if drawing and self.released.expr_released(arg, scope, names, line):
            return "r"
        if kind == "neutral" or isinstance(arg, ast.Constant):
            return "n"
        if isinstance(arg, ast.Name):
            value = self.released.last_value(arg.id, scope, line)
            if isinstance(value, ast.Call):
                callee = self._callee(value.func, constructed)
                if callee is not None:
                    return ["via", callee[0], callee[1]]
        return "o"

    # -- positions ---------------------------------------------------------------------------

    def _col(self, line: int, offset: int) -> int:
        """1-based character column from ``ast``'s UTF-8 byte offset."""
        text = self.lines[line - 1] if 0 < line <= len(self.lines) else ""
        return len(text.encode("utf-8")[:offset].decode("utf-8", "replace")) + 1

    def _site(self, node: ast.expr, what: str) -> _Site:
        line = node.lineno
        text = self.lines[line - 1] if 0 < line <= len(self.lines) else ""
        end_line = node.end_lineno or line
        end_col = self._col(end_line, node.end_col_offset or 0)
        from dpcheck.rule import suppressed_ids

        ids = suppressed_ids(text)
        suppressed = ids is not None and (not ids or any(RULE_ID.startswith(i) for i in ids))
        return _Site(line, self._col(line, node.col_offset), end_line, end_col, what, text.strip(), suppressed)

    # -- imports -----------------------------------------------------------------------------

    def _imports(self) -> list[list[Any]]:
        rows: list[list[Any]] = []
        for node in _all_statements(self.tree.body):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname:
                        rows.append([alias.asname, 0, alias.name, None])
                    else:
                        top = alias.name.split(".")[0]
                        rows.append([top, 0, top, None])
            elif isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    if alias.name == "*":
                        continue
                    rows.append([alias.asname or alias.name, node.level, node.module or "", alias.name])
        return rows

    # -- fitting sites -----------------------------------------------------------------------

    def _constructed(self, cls: ast.ClassDef) -> dict[str, str]:
        """``self.attr`` -> dotted constructor name, for attributes assigned a constructor call."""
        out: dict[str, str] = {}
        methods = [m for m in cls.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))]
        for node in _all_statements([s for m in methods for s in m.body]):
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
                name = _dotted(node.value.func)
                if name is None or _given_categories(node.value):
                    continue
                for target in node.targets:
                    for key in _target_keys(target):
                        if key.startswith("self."):
                            out.setdefault(key, name)
        return out

    def _local_constructed(self, fn: _Function) -> dict[str, str]:
        out: dict[str, str] = {}
        if fn.cls is not None:
            if fn.cls.name not in self._class_attrs:
                self._class_attrs[fn.cls.name] = self._constructed(fn.cls)
            out.update(self._class_attrs[fn.cls.name])
        for node in fn.nodes:
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
                name = _dotted(node.value.func)
                if name is not None and not _given_categories(node.value):
                    for target in node.targets:
                        for key in _target_keys(target):
                            out[key] = name
        return out

    def _receiver_class(self, receiver: ast.expr, constructed: Mapping[str, str]) -> str | None:
        if isinstance(receiver, ast.Call):
            return None if _given_categories(receiver) else _dotted(receiver.func)
        key = receiver.id if isinstance(receiver, ast.Name) else None
        if isinstance(receiver, ast.Attribute) and isinstance(receiver.value, ast.Name) and receiver.value.id == "self":
            key = f"self.{receiver.attr}"
        return constructed.get(key) if key else None

    def _stat(self, call: ast.Call, taint: Mapping[str, str], constructed: Mapping[str, str]) -> tuple[str, str] | None:
        """(seed parameter, what is fitted) when ``call`` fits a statistic on tainted data."""
        func = call.func
        if isinstance(func, ast.Attribute):
            owner = _dotted(func.value)
            if func.attr in _STAT_METHODS and (origin := taint.get(_root(func.value))):
                if func.attr in {"max", "amax"} and _labels(func.value):
                    return None  # ``labels.max() + 1``: the class count of the prediction target (schema)
                return origin, f"`.{func.attr}()`"
            if func.attr in _STAT_FUNCS and owner in _LIB_ROOTS and call.args:
                if origin := taint.get(_root(call.args[0])):
                    return origin, f"`{owner}.{func.attr}`"
            if func.attr in _FIT_METHODS and call.args and (origin := taint.get(_root(call.args[0]))):
                cls = self._receiver_class(func.value, constructed)
                if cls and cls.split(".")[-1] in _ENCODERS:
                    return origin, f"a `{cls.split('.')[-1]}`"
        elif isinstance(func, ast.Name) and call.args:
            if func.id in _NAME_STATS:
                if origin := taint.get(_root(call.args[0])):
                    return origin, f"`{func.id}`"
            if func.id in {"set", "frozenset"} and _values_of(call.args[0]) \
                    and (origin := taint.get(_root(call.args[0]))):
                return origin, f"the distinct values (`{func.id}(…)`)"
        return None

    def _fitters(self) -> dict[str, list[list[Any]]]:
        direct: dict[str, dict[str, list[_Site]]] = {}
        by_key = {f.key: f for f in self.functions}
        for fn in self.functions:
            if not fn.params or not _may_fit_text(self._text(fn)):
                continue
            candidates = [c for c in fn.calls if _may_fit(c)]
            if not candidates:
                continue
            taint = fn.taint()
            constructed = self._local_constructed(fn)
            parents: dict[ast.AST, ast.AST] | None = None
            for node in candidates:
                if hit := self._stat(node, taint, constructed):
                    if _shadowed_fit(fn, node):
                        continue  # (dp202fp45) the live copy in the class's ``fit_transform`` is checked
                    if parents is None:
                        parents = {c: p for p in ast.walk(fn.node) for c in ast.iter_child_nodes(p)}
                    site = self._site(node, hit[1])
                    site.acknowledged = _acknowledged(node, parents)
                    site.guards = _guards(node, parents, fn.params)
                    direct.setdefault(fn.key, {}).setdefault(hit[0], []).append(site)
                    if fn.key not in self._returning and _returns_stat(fn, node):
                        self._returning.add(fn.key)
        # a function handing its parameter to a fitting helper of this module fits too
        fitters = {k: {p: list(s) for p, s in v.items()} for k, v in direct.items()}
        # every call of this module's own functions: a fitter two calls down is found by iterating
        called = tuple({f"{key.rsplit('.', 1)[-1]}(" for key in by_key}) if fitters else ()
        local_calls = [
            (fn, node, callee) for fn in self.functions if called and any(c in self._text(fn) for c in called)
            for node in fn.calls
            if (callee := self._local_callee(node.func, fn)) in by_key and callee != fn.key
        ]
        for _ in range(4):
            changed = False
            for fn, node, callee in local_calls:
                if callee in fitters and not _fed_to_mechanism(fn, node):
                    target = by_key[callee]
                    for index, origin in _tainted_args(node, target.params, fn.taint()):
                        sites = fitters[callee].get(target.params[index])
                        if not sites:
                            continue
                        mine = fitters.setdefault(fn.key, {}).setdefault(origin, [])
                        for site in sites:
                            if site not in mine:
                                mine.append(site)
                                changed = True
                        if callee in self._returning and fn.key not in self._returning and _returns_stat(fn, node):
                            self._returning.add(fn.key)  # hands back what its helper returns
                            changed = True
            if not changed:
                break
        out: dict[str, list[list[Any]]] = {}
        for key, per_param in fitters.items():
            params = by_key[key].params
            for param, sites in per_param.items():
                if param in params:
                    out.setdefault(key, []).append([params.index(param), param, [s.row() for s in sites]])
        return out

    def _text(self, fn: _Function) -> str:
        return "\n".join(self.lines[fn.node.lineno - 1: fn.node.end_lineno or fn.node.lineno])

    def _local_callee(self, func: ast.expr, fn: _Function) -> str | None:
        if isinstance(func, ast.Name):
            return func.id
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in self._classes:
            return f"{func.value.id}.{func.attr}"  # a static or class method called through its class
        if (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)
                and func.value.id in {"self", "cls"} and fn.cls is not None):
            return f"{fn.cls.name}.{func.attr}"
        return None

    # -- preprocessing that loads the data itself ------------------------------------------

    def _loaded_by(self) -> set[str]:
        """Top-level functions that return a dataset they read (``read_cardio_data(path)``)."""
        out: set[str] = set()
        for fn in self.functions:
            if fn.cls is not None:
                continue
            seeds = _load_seeds(fn)
            if not seeds:
                continue
            taint = _tainted(fn.nodes, seeds)
            for node in fn.nodes:
                if isinstance(node, ast.Return) and node.value is not None and any(
                        taint.get(_root(n)) for n in _carried(node.value) if isinstance(n, (ast.Name, ast.Call))):
                    out.add(fn.key)
                    break
        return out

    def _loadfits(self, fitters: Mapping[str, list[list[Any]]]) -> dict[str, list[list[Any]]]:
        """Top-level functions that read a dataset, fit a statistic on it and return the statistic
        (``col_maps = {'SEA': valid_values(original_df, 'SEA')}`` … ``return …, col_maps``): a DP
        script that calls them gets the private statistic without passing any data."""
        loaders = self._loaded_by()
        out: dict[str, list[list[Any]]] = {}
        by_key = {f.key: f for f in self.functions}
        switched_off = off_switch_nodes(self.tree)
        for fn in self.functions:
            if fn.cls is not None:
                continue
            seeds = _load_seeds(fn, loaders)
            if not seeds:
                continue
            taint = _tainted(fn.nodes, seeds)
            constructed = self._local_constructed(fn)
            rows: list[list[Any]] = []
            for node in fn.calls:
                if id(node) in switched_off:
                    continue  # behind a switch the module leaves off
                if hit := self._stat(node, taint, constructed):
                    if _returns_stat(fn, node):
                        rows.append(self._site(node, hit[1]).row())
                    continue
                callee = self._local_callee(node.func, fn)
                if callee in fitters and callee in self._returning and callee in by_key \
                        and _returns_stat(fn, node):
                    target = by_key[callee]
                    for index, _origin in _tainted_args(node, target.params, taint):
                        for entry in fitters[callee]:
                            if entry[0] == index:
                                rows.extend(r for r in entry[2] if r not in rows)
            if rows:
                out[fn.key] = rows
        return out

    def _dpcalls(self) -> list[list[Any]]:
        """Every called dotted name of a DP module (first call of each), to resolve in the join."""
        seen: dict[str, list[Any]] = {}
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Call):
                name = _dotted(node.func)
                if name and not name.startswith(("self.", "cls.")) and name not in seen:
                    seen[name] = [name, node.lineno, self._col(node.lineno, node.col_offset)]
        return sorted(seen.values(), key=lambda r: (r[1], r[2]))

    # -- DP call sites -----------------------------------------------------------------------

    def _dp_context(self, fn: _Function) -> str | None:
        """Why ``fn`` belongs to a DP model, or ``None``."""
        for name in fn.params:
            if _PRIVACY_PARAMS.match(name) and self._privacy_param(fn, fn.node, name):
                return f"takes `{name}`"
        if fn.cls is not None:
            if DP_NAME.search(fn.cls.name):
                return f"class `{fn.cls.name}`"
            doc = ast.get_docstring(fn.cls) or ""
            if dp_claim(doc):
                return f"`{fn.cls.name}` claims differential privacy"
            for item in fn.cls.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name == "__init__":
                    for name in _params(item, True):
                        if _PRIVACY_PARAMS.match(name) and self._privacy_param(fn, item, name):
                            return f"`{fn.cls.name}` takes `{name}`"
        if dp_claim(ast.get_docstring(fn.node) or ""):
            return f"`{fn.key}` claims differential privacy"
        scope = fn.cls if fn.cls is not None else fn.node
        text = "\n".join(self.lines[scope.lineno - 1: scope.end_lineno or scope.lineno])
        if match := _NOISE_CALL.search(text):
            return f"calls `{match.group(1)}`"
        if dp_claim(ast.get_docstring(self.tree) or ""):
            return "its module claims differential privacy"
        return None

    def _privacy_param(self, fn: _Function, declared: ast.FunctionDef | ast.AsyncFunctionDef, name: str) -> bool:
        """``name`` (a ``_PRIVACY_PARAMS`` match of ``declared``'s parameters) is a privacy parameter:
        unambiguous, or its class (else function) or the module's imports speak of DP (a mechanism,
        sensitivity, privacy), and an epsilon-like default is not a numerical constant (``eps=1e-3``)."""
        if not _AMBIGUOUS_PARAMS.match(name):
            return True
        if name in ("eps", "epsilon") and _small_default(declared, name):
            return False
        if self._dp_vocabulary is None:
            imported = " ".join(f"{row[2]}.{row[3] or ''}" for row in self._imports())
            self._dp_vocabulary = bool(_DP_VOCABULARY.search(imported))
        if self._dp_vocabulary:
            return True
        scope = fn.cls if fn.cls is not None else fn.node
        text = "\n".join(self.lines[scope.lineno - 1: scope.end_lineno or scope.lineno])
        return bool(_DP_VOCABULARY.search(text) or _NOISE_CALL.search(text))

    def _calls(self) -> list[list[Any]]:
        by_key = {f.key: f for f in self.functions}
        rows: list[list[Any]] = []
        for fn in self.functions:
            name = fn.key.rsplit(".", 1)[-1]
            if name not in _ENTRY_NAMES and not name.startswith(("train_", "fit_")):
                continue
            reason = self._dp_context(fn)
            if reason is None:
                continue
            seeds = [p for p in fn.params if not _NOT_DATA_PARAM.match(p)]
            if not seeds:
                continue
            # follow private data into this class's own helpers (self._prepare(data) …)
            work = [(fn, {p: p for p in seeds})]
            seen: set[tuple[str, str]] = set()
            while work:
                current, origins = work.pop()
                self._current = current
                taint = {k: origins[v] for k, v in _tainted(current.nodes, origins).items()}
                constructed = self._local_constructed(current)
                for node in current.calls:
                    local = self._local_callee(node.func, current)
                    if local and local in by_key:
                        helper = by_key[local]
                        passed = {helper.params[i]: o for i, o in _tainted_args(node, helper.params, taint)}
                        for param, origin in passed.items():
                            if (local, param) not in seen:
                                seen.add((local, param))
                                work.append((helper, {param: origin}))
                        continue
                    callee = self._callee(node.func, constructed)
                    if callee is None:
                        continue
                    rows.extend(self._tainted_call_rows(fn, callee, node, taint, reason))
        return rows

    def _tainted_call_rows(self, fn: _Function, callee: tuple[str, str | None], node: ast.Call,
                           taint: Mapping[str, str], reason: str) -> list[list[Any]]:
        """One row per argument of ``node`` (positional up to a ``*args``, then keywords) that
        carries private data."""
        chain, method = callee
        rows: list[list[Any]] = []
        for pos, arg in enumerate(node.args):
            if isinstance(arg, ast.Starred):
                break
            if origin := taint.get(_root(arg)):
                rows.append(self._call_row(fn, chain, method, pos, None, origin, node, reason))
        for kw in node.keywords:
            if kw.arg and (origin := taint.get(_root(kw.value))):
                rows.append(self._call_row(fn, chain, method, None, kw.arg, origin, node, reason))
        return rows

    def _script_calls(self) -> list[list[Any]]:
        """Calls of a module that speaks of DP, outside a training entry point (any function, and the
        module's own script code), that pass a top-level function (of another module or this one)
        the dataset read right here (``df = pd.read_csv(path)`` … ``lo, hi = get_bounds(df[col])``) and use what it returns.
        Rows are marked ``script`` (index 16): the join reports them only for a helper that returns
        its statistic, so a metric that merely reads the real data stays quiet."""
        loaders = self._loaded_by()
        module = _Function("<module>", self.tree, None, [])  # type: ignore[arg-type]
        own = {f.key for f in self.functions}
        #: a top-level helper of this module is resolved like an imported one (same-file flow)
        rows: list[list[Any]] = []
        switched_off: set[int] | None = None
        for fn in [*self.functions, module]:
            name = fn.key.rsplit(".", 1)[-1]
            if fn is not module and (name in _ENTRY_NAMES or name.startswith(("train_", "fit_"))):
                continue  # a DP model's entry point: ``_calls`` follows its parameters
            seeds = _private_loads(fn, loaders)
            if not seeds:
                continue
            self._current = fn
            taint = _tainted(fn.nodes, seeds)
            constructed = self._local_constructed(fn)
            where = "its module speaks of differential privacy" if _dp_module_text(self.source) else \
                "its module feeds the project's DP code"
            if switched_off is None:
                switched_off = off_switch_nodes(self.tree)
            for node in fn.calls:
                if id(node) in switched_off:
                    continue  # behind a switch the module leaves off
                if self._local_callee(node.func, fn) in own and not isinstance(node.func, ast.Name):
                    continue  # a method of this module's class: ``_calls`` follows a DP model's own
                callee = self._callee(node.func, constructed)
                if callee is None:
                    continue
                rows.extend([*row, "script", _dp_module_text(self.source)]
                            for row in self._tainted_call_rows(fn, callee, node, taint, where))
        self._current = None
        return rows

    def _call_row(self, fn: _Function, chain: str, method: str | None, pos: int | None, kw: str | None,
                  origin: str, node: ast.Call, reason: str) -> list[Any]:
        positional = 0
        for arg in node.args:
            if isinstance(arg, ast.Starred):
                break
            positional += 1
        given = sorted(k.arg for k in node.keywords
                       if k.arg and not (isinstance(k.value, ast.Constant) and k.value.value is None))
        site = self._site(node, "")
        return [fn.key, chain, method, pos, kw, origin, node.lineno, self._col(node.lineno, node.col_offset), reason,
                positional, given,
                _result_used(self._current, node) and not (self._current and _fed_to_mechanism(self._current, node)),
                site.end_line, site.end_col, site.snippet,
                site.suppressed]

    def _callee(self, func: ast.expr, constructed: Mapping[str, str]) -> tuple[str, str | None] | None:
        """(dotted name to resolve through the imports, method called on its instance or None)."""
        if isinstance(func, ast.Name):
            return func.id, None
        if not isinstance(func, ast.Attribute):
            return None
        cls = self._receiver_class(func.value, constructed)
        if cls is not None:
            return cls, func.attr
        name = _dotted(func)
        if name is None or name.startswith("self."):
            return None
        return name, None


#: calls that only show a value (a log line, a progress bar), not use it
_SHOW_CALLS = frozenset({
    "print", "format", "info", "debug", "warning", "warn", "log", "write", "set_description", "set_postfix",
    "add_scalar", "pprint", "tqdm", "echo", "error",
})
#: calls that pass their argument's value through (``np.prod(X.nunique())``, ``list(df[c].unique())``)
_THROUGH_CALLS = frozenset({
    "prod", "int", "float", "len", "list", "tuple", "sorted", "set", "dict", "tolist", "sum", "enumerate", "zip",
    "reversed", "round", "OrderedDict", "array", "asarray", "frozenset",
})


def _load_seeds(fn: _Function, loaders: set[str] | frozenset[str] = frozenset()) -> list[str]:
    """Names ``fn`` binds to a dataset it reads (``df = pd.read_csv(path)``, ``df = read_data(p)``)."""
    seeds: list[str] = []
    for node in fn.nodes:
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(node.value, ast.Call):
            call = node.value
            while isinstance(call.func, ast.Attribute) and isinstance(call.func.value, ast.Call) \
                    and call.func.attr in _PASS_METHODS:
                call = call.func.value  # pd.read_csv(p).astype(np.int32)
            name = func_name(call.func)
            if name in _LOAD_CALLS or (isinstance(call.func, ast.Name) and name in loaders):
                seeds.extend(k for t in _targets(node) for k in _target_keys(t) if "." not in k)
    return seeds


#: word pieces of a name or a file name that hold public metadata or released data, not the records
_PUBLIC_WORDS = frozenset({
    "schema", "meta", "metadata", "domain", "config", "cfg", "bounds", "spec", "info", "public", "synth",
    "synthetic", "fake", "generated", "sampled", "noisy", "released", "sanitized", "perturbed", "anon",
})


def _private_loads(fn: _Function, loaders: set[str]) -> list[str]:
    """``_load_seeds`` less the reads of public metadata or released data: a target or a literal
    file name whose word pieces name a schema, a domain, a config or synthetic output."""
    public: set[str] = set()
    for node in fn.nodes:
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(node.value, ast.Call):
            texts = [k for t in _targets(node) for k in _target_keys(t)]
            texts += [c.value for c in ast.walk(node.value) if isinstance(c, ast.Constant) and isinstance(c.value, str)]
            if any(words(re.sub(r"\W+", "_", t)) & _PUBLIC_WORDS for t in texts):
                public.update(k for t in _targets(node) for k in _target_keys(t))
    return [s for s in _load_seeds(fn, loaders) if s not in public]


def _parents(fn: _Function) -> dict[ast.AST, ast.AST]:
    return {c: p for p in ast.walk(fn.node) for c in ast.iter_child_nodes(p)}


def _assigned_names(stmt: ast.AST) -> set[str]:
    return {k for t in _targets(stmt) for k in _target_keys(t)}


def _carried(expr: ast.AST) -> Iterator[ast.AST]:
    """The sub-expressions whose value ``expr`` hands on unchanged: itself, and through containers
    (tuple, list, dict, comprehension), conditional branches, subscripts, attribute reads and
    pass-through calls (``np.prod``, ``int``, ``list``, ``.tolist()``, ``.to_dict()``)."""
    yield expr
    if isinstance(expr, (ast.Tuple, ast.List, ast.Set)):
        for elt in expr.elts:
            yield from _carried(elt)
    elif isinstance(expr, ast.Dict):
        for part in (*expr.keys, *expr.values):
            if part is not None:
                yield from _carried(part)
    elif isinstance(expr, (ast.ListComp, ast.SetComp, ast.GeneratorExp)):
        yield from _carried(expr.elt)
        for gen in expr.generators:  # [v for v in x.unique()]: the elements are the statistic's
            yield from _carried(gen.iter)
    elif isinstance(expr, ast.DictComp):
        yield from _carried(expr.key)
        yield from _carried(expr.value)
        for gen in expr.generators:
            yield from _carried(gen.iter)
    elif isinstance(expr, ast.IfExp):
        yield from _carried(expr.body)
        yield from _carried(expr.orelse)
    elif isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add) \
            and any(isinstance(side, (ast.List, ast.Tuple)) for side in (expr.left, expr.right)):
        # a sequence concatenation (``["Other"] + values``), not arithmetic on the statistic
        yield from _carried(expr.left)
        yield from _carried(expr.right)
    elif isinstance(expr, (ast.Subscript, ast.Attribute)):
        yield from _carried(expr.value)
    elif isinstance(expr, ast.Call) and func_name(expr.func)[:1].isupper() and func_name(expr.func) not in _THROUGH_CALLS:
        # an object built from the value (``return Mapping(name, codes)``) carries it
        for arg in expr.args:
            yield from _carried(arg)
        for kw in expr.keywords:
            yield from _carried(kw.value)
    elif isinstance(expr, ast.Call) and func_name(expr.func) in _THROUGH_CALLS | _CARRY_METHODS:
        if isinstance(expr.func, ast.Attribute) and func_name(expr.func) in _CARRY_METHODS:
            yield from _carried(expr.func.value)
        for arg in expr.args:
            yield from _carried(arg)
        for kw in expr.keywords:
            yield from _carried(kw.value)


#: methods that hand on their receiver's values (``marginal.index.tolist()``)
_CARRY_METHODS = frozenset({"tolist", "to_dict", "to_numpy", "to_list", "item", "copy", "astype", "items", "keys"})


def _returns_stat(fn: _Function, stat: ast.Call) -> bool:
    """Does ``fn`` hand back what ``stat`` computes: the ``return`` expression carries the
    statistic (``return np.prod(X.nunique())``) or a name assigned it (``states = {c:
    x.unique().tolist()}``, two assignments at most), not merely a value computed with it (a
    clipped mean, data shifted by the minimum)? A function that also draws noise or calls a
    mechanism returns a privatised value, not the statistic."""
    if any(_MECHANISM_CALL.search(func_name(c.func)) for c in fn.calls if c is not stat):
        return False
    #: a constructor keeping the statistic on the instance (``self.categories = {c: np.unique(d[c])
    #: …}``): the object it builds carries it to whoever uses it (an encoder decoding synthetic rows)
    keeps = fn.cls is not None and fn.node.name == "__init__"
    holders: set[str] = set()
    fresh = {k for node in fn.nodes if isinstance(node, ast.Assign) and _empty_container(node.value)
             for k in _assigned_names(node)}
    for _ in range(2):
        for node in fn.nodes:
            value = getattr(node, "value", None)
            if value is None or not _targets(node):
                continue
            carried = list(_carried(value))
            if any(n is stat for n in carried) or any(isinstance(n, ast.Name) and n.id in holders for n in carried):
                if keeps and any(k.startswith("self.") for k in _assigned_names(node)):
                    return True
                holders |= {k for k in _assigned_names(node) if "." not in k}
                # ``domains[col] = Categorical(values=x[col].unique())`` into a container made
                # empty here (not the data frame itself, rewritten in place): the container holds it
                holders |= {t.value.id for t in _targets(node)
                            if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) and t.value.id in fresh}
    for node in fn.nodes:
        if isinstance(node, ast.Return) and node.value is not None:
            for n in _carried(node.value):
                if n is stat or (isinstance(n, ast.Name) and n.id in holders):
                    return True
    return False


def _empty_container(value: ast.expr) -> bool:
    """``{}``, ``[]``, ``dict()``, ``list()``, ``OrderedDict()``, ``defaultdict(list)``."""
    if isinstance(value, (ast.Dict, ast.List)):
        return not (value.keys if isinstance(value, ast.Dict) else value.elts)
    return isinstance(value, ast.Call) and func_name(value.func) in {"dict", "list", "OrderedDict", "defaultdict"} \
        and not value.keywords and (not value.args or func_name(value.func) == "defaultdict")


def _used_here(node: ast.AST, parents: Mapping[ast.AST, ast.AST]) -> bool:
    """Is the value of ``node`` used here (arithmetic, a test, an argument, stored) rather than
    discarded, returned or only shown (``print``, a log call, an f-string)?"""
    parent = parents.get(node)
    while isinstance(parent, ast.Call) and node is not parent.func and func_name(parent.func) in _THROUGH_CALLS:
        node, parent = parent, parents.get(parent)
    if parent is None or isinstance(parent, (ast.Expr, ast.Return)):
        # dropped, or handed back to an unknown caller (the fitting site's finding covers that)
        return False
    if isinstance(parent, (ast.FormattedValue, ast.JoinedStr)):
        return False
    if isinstance(parent, ast.Call):
        return node is parent.func or func_name(parent.func) not in _SHOW_CALLS
    if isinstance(parent, ast.keyword):
        call = parents.get(parent)
        return not (isinstance(call, ast.Call) and func_name(call.func) in _SHOW_CALLS)
    return True


def _result_used(fn: _Function | None, call: ast.Call) -> bool:
    """Is the result of ``call`` used in ``fn`` (not only printed or dropped)?"""
    if fn is None:
        return True
    parents = _parents(fn)
    parent = parents.get(call)
    if isinstance(parent, (ast.Assign, ast.AnnAssign, ast.NamedExpr)):
        # kept on the object (``self.raw_ = helper(X)``): the fitting site's finding covers it
        names = {n for n in _assigned_names(parent) if "." not in n}
        # ``mappings[f] = helper(df)``: the container holds it
        names |= {t.value.id for t in _targets(parent) if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name)}
        line = call.lineno
        return any(isinstance(n, ast.Name) and n.id in names and isinstance(n.ctx, ast.Load)
                   and n.lineno >= line and _used_here(n, parents) for n in fn.nodes)
    return _used_here(call, parents)


def _small_default(fn: ast.FunctionDef | ast.AsyncFunctionDef, name: str) -> bool:
    """Is the parameter's default a literal below 0.01 (a tolerance, never a privacy budget)?"""
    args = fn.args
    positional = [*args.posonlyargs, *args.args]
    pairs = list(zip(positional[len(positional) - len(args.defaults):], args.defaults))
    pairs += [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None]
    for arg, default in pairs:
        if arg.arg == name and isinstance(default, ast.Constant) and isinstance(default.value, (int, float)) \
                and not isinstance(default.value, bool):
            return abs(default.value) < 1e-2
    return False


def _tainted_args(call: ast.Call, params: list[str], taint: Mapping[str, str]) -> Iterator[tuple[int, str]]:
    """(parameter index, seed) for each argument of ``call`` that carries tainted data."""
    for pos, arg in enumerate(call.args):
        if isinstance(arg, ast.Starred):
            return
        if pos < len(params) and (origin := taint.get(_root(arg))):
            yield pos, origin
    for kw in call.keywords:
        if kw.arg in params and (origin := taint.get(_root(kw.value))):
            yield params.index(kw.arg), origin


# ---- project join ------------------------------------------------------------------------------


class _Resolver:
    """Maps dotted names in one file to (file, top-level symbol) among the scanned files."""

    def __init__(self, summaries: Mapping[str, dict[str, Any]]) -> None:
        self.summaries = summaries
        self._pkg_root: dict[str, str] = {}
        #: (importer's folder, level, dotted) -> module file: the same imports recur in every file
        self._modules: dict[tuple[str, int, str], str | None] = {}
        self._listings: dict[str, frozenset[str] | None] = {}
        self.roots = sorted({self._import_root(os.path.dirname(p)) for p in summaries})
        #: folder name -> (root, the folder above it) for each root's first four ancestors, roots in order
        self._named: dict[str, list[tuple[str, str]]] = {}
        for root in self.roots:
            for name, parent in self._ancestors(root):
                self._named.setdefault(name, []).append((root, parent))

    @staticmethod
    def _ancestors(root: str) -> list[tuple[str, str]]:
        """(folder name, the folder above it) from ``root`` up, at most four levels."""
        out = []
        base = root
        for _ in range(4):
            parent = os.path.dirname(base)
            if parent == base:
                break
            out.append((os.path.basename(base), parent))
            base = parent
        return out

    def _may_hold(self, root: str, head: str) -> bool:
        """False when ``root`` has no entry ``head`` or ``head.py`` (so no module ``head…`` there)."""
        if root not in self._listings:
            try:
                self._listings[root] = frozenset(os.listdir(root))
            except OSError:
                self._listings[root] = None
        names = self._listings[root]
        return not head or names is None or head in names or f"{head}.py" in names

    def _import_root(self, folder: str) -> str:
        if folder not in self._pkg_root:
            top = folder
            for _ in range(64):
                if not os.path.isfile(os.path.join(top, "__init__.py")):
                    break
                parent = os.path.dirname(top)
                if parent == top:
                    break
                top = parent
            self._pkg_root[folder] = top
        return self._pkg_root[folder]

    def module_file(self, base: str, dotted: str) -> str | None:
        """A scanned module's file; a package's ``__init__.py`` counts even without a summary (an
        empty one is still the way to its submodules)."""
        folder = os.path.join(base, *dotted.split(".")) if dotted else base
        if folder + ".py" in self.summaries:
            return folder + ".py"
        init = os.path.join(folder, "__init__.py")
        if init in self.summaries or os.path.isfile(init):
            return init
        return None

    def _module(self, importer: str, level: int, dotted: str) -> str | None:
        key = (os.path.dirname(importer), level, dotted)
        if key not in self._modules:
            self._modules[key] = self._find_module(importer, level, dotted)
        return self._modules[key]

    def _find_module(self, importer: str, level: int, dotted: str) -> str | None:
        if level:
            base = os.path.dirname(importer)
            for _ in range(level - 1):
                parent = os.path.dirname(base)
                if parent == base:
                    return None
                base = parent
            if os.path.commonpath([base, self._import_root(os.path.dirname(importer))]) != self._import_root(
                    os.path.dirname(importer)):
                return None  # beyond the top-level package
            return self.module_file(base, dotted)
        own = self._import_root(os.path.dirname(importer))
        head = dotted.split(".")[0]
        for root in [own, *(r for r in self.roots if r != own)]:
            found = self.module_file(root, dotted) if self._may_hold(root, head) else None
            if found:
                return found
        # a namespace package (PEP 420, no ``__init__.py``): ``synthesis.synthesizers.utils`` read
        # from inside ``synthesis/`` resolves from the folder above the one named ``synthesis``
        named = [(own, parent) for name, parent in self._ancestors(own) if name == head]
        for _, parent in [*named, *(n for n in self._named.get(head, ()) if n[0] != own)]:
            found = self.module_file(parent, dotted)
            if found:
                return found
        return None

    def resolve(self, importer: str, dotted: str, depth: int = 0) -> tuple[str, str] | None:
        """The file and top-level symbol ``dotted`` names in ``importer``, else ``None``."""
        if depth > 8:
            return None
        head, *rest = dotted.split(".")
        summary = self.summaries.get(importer) or {}
        if head in summary.get("defs", ()) and len(rest) <= 1:
            # ``Cls.method(…)``: a static or class method called through its class
            return importer, ".".join([head, *rest])
        for local, level, module, name in reversed(summary.get("imports", [])):
            if local != head:
                continue
            if name is None:
                file = self._module(importer, level, module)
                if file is None:
                    return None
                return self._walk(file, module, level, rest, importer, depth)
            sub = f"{module}.{name}" if module else name
            file = self._module(importer, level, sub)
            if file is not None:
                return self._walk(file, sub, level, rest, importer, depth)
            file = self._module(importer, level, module)
            if file is None or file == importer:
                return None
            return self.resolve(file, ".".join([name, *rest]), depth + 1)
        for level, module in summary.get("stars", []):  # ``from pkg.features import *``
            file = self._module(importer, level, module)
            if file is not None and file != importer and head in (self.summaries.get(file) or {}).get("defs", ()):
                return self.resolve(file, dotted, depth + 1)
        return None

    def _walk(self, file: str, module: str, level: int, rest: list[str], importer: str,
              depth: int) -> tuple[str, str] | None:
        """Descend ``rest`` (submodules, then one symbol) from module ``file``."""
        for i, part in enumerate(rest):
            module = f"{module}.{part}"
            sub = self._module(importer, level, module)
            if sub is not None:
                file = sub
                continue
            return self.resolve(file, ".".join(rest[i:]), depth + 1)
        return None


def _fitter_entries(summary: Mapping[str, Any], symbol: str, method: str | None) -> tuple[str, list[list[Any]]]:
    """(fitter key, its entries) for a call of ``symbol`` (or of ``method`` on its instance)."""
    fitters = summary.get("fitters", {})
    if method is None:
        key = symbol if symbol in fitters else f"{symbol}.__init__"
    else:
        key = f"{symbol}.{method}"
        if key not in fitters and method in _FIT_METHODS:
            key = f"{symbol}.fit"
    return key, fitters.get(key, [])


def _reaches(site: list[Any], params: list[str], positional: int, given: list[str]) -> bool:
    """False when the call passes every parameter whose absence alone leads to ``site``."""
    guards = site[8] if len(site) > 8 else []
    if not guards:
        return True
    passed = [g in given or (g in params and params.index(g) < positional) for g in guards]
    return not all(passed)


def join(summaries: Mapping[str, dict[str, Any]], display: Mapping[str, str]) -> list[Finding]:
    """DP202 findings at fitting sites fed private data by a DP model in another scanned file.

    ``summaries`` maps absolute file paths to their summaries; ``display`` maps them to the paths
    findings show.
    """
    summaries = {p: s for p, s in summaries.items() if isinstance(s, dict) and s.get("v") == VERSION}
    prepared = preprocessing.join(summaries, display, _Resolver, _finding, _judged(summaries))
    if not (any(s.get("calls") for s in summaries.values()) and any(s.get("fitters") for s in summaries.values())) \
            and not (any(s.get("dpcalls") for s in summaries.values())
                     and any(s.get("loadfits") for s in summaries.values())):
        return prepared
    resolver = _Resolver(summaries)
    feeding: dict[str, str] | None = None
    found: dict[tuple[str, int, int], tuple[list[Any], str, set[RelatedLocation], list[str]]] = {}
    #: call sites in a DP model that use what a helper returns, the helper's statistic:
    #: (caller file, line, col) -> (row, fitted, fitting sites)
    uses: dict[tuple[str, int, int], tuple[list[Any], str, str, list[list[Any]]]] = {}
    for caller, summary in sorted(summaries.items()):
        for row in summary.get("calls", []):
            entry, chain, method, pos, kw, origin, line, col, reason, positional, given = row[:11]
            target = resolver.resolve(caller, chain)
            script = len(row) > 16 and row[16] == "script"
            if target is None or (target[0] == caller and not script):
                continue
            if script and len(row) > 17 and not row[17] and target[0] == caller:
                continue  # a loader's own helper: the fitting site's finding covers it
            if script and len(row) > 17 and not row[17] and not summary.get("claim"):
                # a loader or a preparation script: only when DP code reaches it through the imports
                if feeding is None:
                    feeding = _feeding(summaries, resolver)
                if caller not in feeding:
                    continue
            file, symbol = target
            key, entries = _fitter_entries(summaries[file], symbol, method)
            params = summaries[file].get("params", {}).get(key, [])
            returning = method is None and key in summaries[file].get("returns", ()) and len(row) > 11 and row[11]
            if script and (
                    not returning or preprocessing.evaluates(os.path.basename(file), symbol)
                    or preprocessing.evaluates(os.path.basename(caller), entry)):
                continue  # script code: only a helper that hands back its statistic, used here, not a score
            for index, param, sites in entries:
                if not (index == pos or (kw is not None and kw == param)):
                    continue
                fitted = f"{symbol}.{method}" if method else symbol
                where = f"{display.get(caller, caller)}:{line}"
                related = RelatedLocation(
                    display.get(caller, caller), line, col,
                    f"{_who(row)} ({reason}) passes its private training data `{origin}` to `{fitted}`",
                )
                for site in sites:
                    if not _reaches(site, params, positional, given):
                        continue
                    slot = found.setdefault((file, site[0], 0), (site, fitted, set(), []))
                    slot[2].add(related)
                    slot[3].append(f"{_who(row)} ({where})")
                    if returning:
                        use = uses.setdefault((caller, line, col), (row, fitted, file, []))
                        if site not in use[3]:
                            use[3].append(site)
    for caller, summary in sorted(summaries.items()):
        for name, line, col in summary.get("dpcalls", []):
            target = resolver.resolve(caller, name)
            if target is None or target[0] == caller:
                continue
            file, symbol = target
            sites = summaries[file].get("loadfits", {}).get(symbol)
            if not sites:
                continue
            related = RelatedLocation(
                display.get(caller, caller), line, col,
                f"the DP code calls `{symbol}`, which reads the private data and returns this statistic",
            )
            for site in sites:
                slot = found.setdefault((file, site[0], 0), (site, symbol, set(), []))
                slot[2].add(related)
                slot[3].append(f"script `{display.get(caller, caller)}` ({display.get(caller, caller)}:{line})")
    findings = []
    for (caller, line, col), (row, fitted, file, sites) in uses.items():
        entry, origin, reason = row[0], row[5], row[8]
        end_line, end_col, snippet, suppressed = (row[12:16] + [0, 0, "", False])[:4] if len(row) > 12 else (0, 0, "", False)
        if suppressed:
            continue
        what = ", ".join(dict.fromkeys(s[4] for s in sites))
        acknowledged = next((s[7] for s in sites if len(s) > 7 and isinstance(s[7], str) and s[7]), "")
        if acknowledged and not all(len(s) > 7 and s[7] for s in sites):
            acknowledged = ""
        message = (
            f"`{fitted}` returns {what} of the data it is given, and the {_who(row)} ({reason}) uses "
            f"it here on its private data `{origin}` with no DP mechanism: the statistic (a domain "
            f"size, categories, bounds) shapes the model or the release outside the privacy budget. Take it "
            f"from public metadata or estimate it with a DP mechanism charged to the budget"
        )
        if acknowledged:
            message += f" (acknowledged: {acknowledged})"
        related = tuple(sorted(
            RelatedLocation(display.get(file, file), s[0], s[1], f"{s[4]} computed here by `{fitted}`") for s in sites
        ))
        findings.append(Finding(
            path=display.get(caller, caller), line=line, col=col, rule=RULE_ID,
            category=ACKNOWLEDGED if acknowledged else CATEGORY, severity="note" if acknowledged else "error",
            message=message, name=RULE_NAME, end_line=end_line or line, end_col=end_col or col, snippet=snippet,
            related=related,
        ))
    for (file, _, _), (site, fitted, related, models) in found.items():
        line, col, end_line, end_col, what, snippet, suppressed, acknowledged = site[:8]
        acknowledged = acknowledged if isinstance(acknowledged, str) else ""
        if suppressed:
            continue
        models = sorted(set(models))
        scripts = [m for m in models if m.startswith("script ")]
        models = [m for m in models if not m.startswith("script ")]
        if scripts and not models:
            message = (
                f"{what} is fitted here on the dataset `{fitted}` reads, and `{fitted}` returns it to the DP code "
                f"({', '.join(s.split(' (', 1)[1].rstrip(')') for s in scripts)}): the statistic (bounds, categories, "
                f"frequencies) of the private data shapes the DP release outside the privacy budget. Take it as "
                f"public metadata or estimate it with a DP mechanism charged to the budget"
            )
        else:
            message = (
                f"{what} is fitted here on the data given to `{fitted}`, and the {', '.join(models)} "
                f"passes its private training data to it: the statistic (bounds, categories, frequencies) leaves "
                f"the privacy budget un-noised. Take it as public metadata or estimate it with a DP mechanism "
                f"charged to the budget"
            )
        if acknowledged:
            message += f" (acknowledged: {acknowledged})"
        findings.append(Finding(
            path=display.get(file, file), line=line, col=col, rule=RULE_ID,
            category=ACKNOWLEDGED if acknowledged else CATEGORY, severity="note" if acknowledged else "error",
            message=message, name=RULE_NAME, end_line=end_line, end_col=end_col, snippet=snippet,
            related=tuple(sorted(related)),
        ))
    taken = {(f.path, f.line) for f in findings}
    return sorted(findings + [f for f in prepared if (f.path, f.line) not in taken])


def _judged(summaries: Mapping[str, dict[str, Any]]) -> set[tuple[str, int]]:
    """(file, line) of the fitting sites of every fitter some call row of the project resolves to:
    the call sites decide whether private data reaches them (a class kept-domain site defers)."""
    resolver = _Resolver(summaries)
    out: set[tuple[str, int]] = set()
    for caller, summary in sorted(summaries.items()):
        targets = [(resolver.resolve(caller, row[1]), row[2]) for row in summary.get("calls", [])]
        if os.path.basename(caller) != "__init__.py":
            # a fitter class or function imported by name into a module: its call sites there decide
            # (its constructor, or the function itself: what the importer's call runs at once)
            targets += [(resolver.resolve(caller, row[0]), "__init__") for row in summary.get("imports", []) if row[3]]
        for target, method in targets:
            if target is None or target[0] == caller:
                continue
            fitters = summaries[target[0]].get("fitters", {})
            for key in sorted(fitters):
                if key == target[1] or key.startswith(f"{target[1]}.") and (method is None or key.endswith(f".{method}")):
                    out.update((target[0], site[0]) for entry in fitters[key] for site in entry[2])
    return out


def _feeding(summaries: Mapping[str, dict[str, Any]], resolver: _Resolver) -> set[str]:
    """Files the DP code reaches through its imports, and files that import DP code themselves (a
    driver or an init script handing the DP model what it prepared)."""
    claiming = {p for p, s in summaries.items() if s.get("claim")}
    edges = preprocessing._import_edges(summaries, resolver)
    return set(preprocessing.reached(summaries, resolver)) | {p for p, deps in edges.items() if deps & claiming}


def _who(row: list[Any]) -> str:
    """The DP code a call row comes from, as messages name it."""
    if len(row) > 16 and row[16] == "script":
        return "DP script" if row[0] == "<module>" else f"DP code `{row[0]}`"
    return f"DP model `{row[0]}`"


def _finding(path: str, site: list[Any], message: str, related: tuple[RelatedLocation, ...]) -> Finding | None:
    """A DP202 finding at a summary's site row (``None`` when the line suppresses it)."""
    line, col, end_line, end_col, _what, snippet, suppressed = site[:7]
    if suppressed:
        return None
    return Finding(path=path, line=line, col=col, rule=RULE_ID, category=CATEGORY, severity="error",
                   message=message, name=RULE_NAME, end_line=end_line, end_col=end_col, snippet=snippet,
                   related=related)
