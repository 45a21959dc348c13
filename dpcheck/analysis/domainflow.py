"""Value sets and ranges read from private data, followed inside a function to where they shape a
DP release (DP204).

A *domain read* is a call that returns what values the data holds, or its extremes: ``np.unique``,
``set``, ``Counter``, ``.unique()``, ``.value_counts()``, ``.nunique()``, ``min``/``max`` (builtin,
numpy, method), median/quantile/percentile and ``np.histogram`` edges with a bin count. Its result
taints what is computed from it; a *sink* is where a tainted value meets the mechanism: an
argument of a noise draw or of a mechanism-named call, an expression together with the privacy
budget, a loop over observed values that adds noise, a value returned next to noisy output.
"""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import libcst as cst

from dpcheck.cstwalk import children
from dpcheck.analysis.syntax import (
    SCOPE_TYPES,
    call_name,
    dotted,
    param_names,
    target_names,
    value_refs,
    walk,
    words,
)

_SET_FUNCS = frozenset({"unique", "set", "Counter"})
_SET_METHODS = frozenset({"unique", "value_counts", "nunique", "drop_duplicates"})
_RANGE_FUNCS = frozenset({
    "min", "max", "amin", "amax", "nanmin", "nanmax", "median", "nanmedian", "quantile", "percentile",
    "nanquantile", "nanpercentile", "ptp",
})
_HIST_FUNCS = frozenset({"histogram", "histogram_bin_edges"})
_LIB_ROOTS = frozenset({"np", "numpy", "pd", "pandas", "torch", "tf", "jnp", "math", "statistics", "collections"})
#: calls that draw noise or sample a randomised output
DRAWS = frozenset({
    "laplace", "normal", "gumbel", "geometric", "choice", "choices", "binomial", "bernoulli", "exponential",
    "randint",
    # the standard library's draws (Laplace noise as the difference of two ``expovariate`` draws)
    "expovariate", "gauss", "normalvariate",
})
#: draws that add noise to a value (not a uniform pick of an index or a seed)
NOISE_DRAWS = DRAWS - {"choice", "choices", "randint"}
#: words of a call that applies a DP mechanism
MECHANISM_WORDS = frozenset({
    "mechanism", "mech", "laplace", "gaussian", "randomized", "randomised", "perturb", "perturbation",
    "privatize", "privatise", "noisy", "lap", "piecewise", "duchi", "grr", "oue", "olh", "sue",
})
BUDGET_WORDS = frozenset({"epsilon", "eps", "epslon", "budget", "rho"})
_NOISY_WORDS = frozenset({"noisy", "noised", "privatized", "privatised", "perturbed", "dp"})
#: a name with one of these words is not the private records (a public input, a budget, model
#: state, a score or a count of something public)
_NOT_DATA = frozenset({
    "self", "cls", "public", "pub", "domain", "domains", "bounds", "bound", "lower", "upper", "lo", "hi",
    "range", "ranges", "schema", "meta", "metadata", "config", "cfg", "args", "opt", "opts", "params",
    "epsilon", "eps", "delta", "budget", "sigma", "noise", "noisy", "fake", "synth", "synthetic", "syn",
    "generated", "gen", "votes", "vote", "scores", "score", "utility", "utilities", "util", "logits",
    "probs", "prob", "proba", "pred", "preds", "predictions", "loss", "losses", "grad", "grads",
    "gradient", "gradients", "norm", "norms", "columns", "cols", "names", "keys", "attrs", "attributes",
    "queries", "query", "workload", "cliques", "marginals", "categories", "cats", "classes", "bins",
    "size", "shape", "idx", "indices", "seed", "rng", "model", "net", "kwargs", "test", "val", "valid",
    "history", "orders", "alphas", "steps", "epochs", "template", "rho", "edge", "edges", "eta",
    "release", "released", "releases", "sanitized", "sanitised", "privatized", "privatised",
})
#: words of ``self`` attributes holding the records
_DATA_ATTR_WORDS = frozenset({
    "data", "df", "dataframe", "frame", "table", "records", "x", "values", "samples", "train",
    "col", "column", "series", "dataset", "rows",
})
#: a range (max/min/quantile) of these is a score, a count or a distance: the exponential
#: mechanism's shift or a selection, not the data's range
_NOT_RANGE = frozenset({
    "counts", "count", "errors", "error", "qualities", "quality", "q", "s", "u", "mutual", "info", "mi",
    "gain", "gains", "dist", "distances", "distance", "err", "freq", "freqs", "frequencies", "hist",
})
#: a set of these is a set of attribute names or cliques, not of the data's values
_NOT_SET = frozenset({"attr", "att", "pair", "attpair", "clique", "marginal", "key", "col", "cols", "feature"})
#: a call that maps observed values onto a declared domain, so the set no longer depends on the data
_ONTO_DOMAIN = frozenset({"reindex", "searchsorted", "isin", "in1d"})


@dataclass
class Flow:
    """Taint of one function: name -> the domain-read calls its value comes from."""

    taint: dict[str, set[cst.BaseExpression]] = field(default_factory=dict)
    private: set[str] = field(default_factory=set)
    #: domain read -> "set" (which values occur) or "range" (extremes, quantiles)
    kinds: dict[cst.BaseExpression, str] = field(default_factory=dict)
    #: names bound to a category encoder or binner (``LabelEncoder()``, ``KBinsDiscretizer(...)``)
    encoders: set[str] = field(default_factory=set)
    #: names holding records a mechanism randomised in place, and values built from them
    randomised: set[str] = field(default_factory=set)
    #: names bound to an equality test on the records (``mask = groups == g``): a row selection
    masks: set[str] = field(default_factory=set)
    #: maxima kept in a name only ever subtracted from what they are the maximum of (a softmax's shift)
    shifts: set[cst.CSTNode] = field(default_factory=set)
    #: the module's functions returning loaded records (``module_records``)
    loaders: frozenset[str] = frozenset()
    #: parameters holding a number (an ``int`` default or annotation): a bin count, not given edges
    counts: set[str] = field(default_factory=set)
    #: histogram calls whose edges are kept (``hist, edges = np.histogram(...)``), not thrown away (``h, _ =``)
    edged: set[cst.CSTNode] = field(default_factory=set)

    def sources(self, expr: cst.CSTNode) -> set[cst.BaseExpression]:
        """Domain reads ``expr`` carries: tainted names it reads, and reads written inside it."""
        out: set[cst.BaseExpression] = set()
        direct, lookups = carried(expr, frozenset(self.masks))
        for name in direct:
            out |= self.taint.get(name, set())
        for name in lookups - direct:
            # ``counts[v]`` / ``counts.get(v)``: one entry looked up, not the set of keys
            out |= {s for s in self.taint.get(name, set()) if self.kind(s) == "range"}
        lookups_inline = {n for n in walk(expr, into_scopes=False)
                          if isinstance(n, cst.Subscript) and isinstance(n.value, cst.Call)}
        found = _domain_calls(expr, self)
        looked_up = {sub.value for sub in lookups_inline}
        return out | {s for s in found if s not in looked_up or self.kind(s) == "range"}

    def kind(self, call: cst.BaseExpression) -> str:
        return self.kinds.get(call, "set")


#: calls whose result carries their arguments' values (sizes, arrays, arithmetic); any other
#: function (a model constructor, an evaluation) stops the flow
_CARRY = frozenset({
    "len", "list", "sorted", "set", "tuple", "dict", "enumerate", "zip", "range", "int", "float", "abs",
    "round", "min", "max", "sum", "array", "asarray", "zeros", "ones", "full", "empty", "linspace", "arange",
    "exp", "log", "sqrt", "where", "clip", "maximum", "minimum", "concatenate", "stack", "tensor",
    "Series", "deepcopy", "copy", "reversed", "filter", "map", "ceil", "floor", "log2", "log10", "log1p", "power",
    "pow", "fromkeys",
    # the pairs / orderings of an alphabet are as data-dependent as the alphabet (candidate relations)
    "product", "permutations", "combinations", "combinations_with_replacement",
})


#: words of a function that maps values onto given bounds (``scale_data(sample, target_bounds=b)``):
#: the bounds it is given shape its result, as a clip's do
_RESCALE_WORDS = frozenset({
    "rescale", "scale", "unscale", "denormalize", "denormalise", "unnormalize", "unnormalise", "clip", "clamp",
})


def _rescales(call: cst.Call) -> bool:
    name = call_name(call)
    return bool(name) and bool(words(name) & _RESCALE_WORDS) and not name[:1].isupper()


#: methods re-coding each record's value through a lookup table (``df[c].map(ids)``)
_RELABEL = frozenset({"map", "replace"})


def _selects_rows(index: cst.BaseExpression, masks: frozenset[str]) -> bool:
    """``x[groups == g]`` / ``x[mask]`` with a mask so bound: the rows picked are records, whichever key
    picked them."""
    return _equality(index) or isinstance(index, cst.Name) and index.value in masks


def _equality(expr: cst.BaseExpression) -> bool:
    """``groups == g``: the rows holding one key (``cats[cats != c]`` keeps the other observed values)."""
    return isinstance(expr, cst.Comparison) and len(expr.comparisons) == 1 \
        and isinstance(expr.comparisons[0].operator, cst.Equal)


def carried(expr: cst.CSTNode, masks: frozenset[str] = frozenset()) -> tuple[set[str], set[str]]:
    """Names whose value ``expr`` carries, and names it only looks entries up in (``c[k]``,
    ``c.get(k)``). Like ``value_refs``, but a call outside ``_CARRY`` carries only its receiver
    (``x.tolist()`` carries x, ``Model(k)`` carries nothing), and a row selection by a boolean mask
    (``masks``) carries the rows, not the key of the mask."""
    out: set[str] = set()
    lookups: set[str] = set()
    stack: list[cst.CSTNode] = [expr]
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is cst.Subscript and dotted(node.value) is not None:  # type: ignore[attr-defined]
            lookups.add(dotted(node.value))  # type: ignore[arg-type, attr-defined]
            stack.extend(el for el in node.slice  # type: ignore[attr-defined]
                         if not (isinstance(el.slice, cst.Index) and _selects_rows(el.slice.value, masks)))
            continue
        if kind is cst.Call:
            func = node.func  # type: ignore[attr-defined]
            if type(func) is cst.Attribute:
                if func.attr.value == "get" and dotted(func.value) is not None:
                    lookups.add(dotted(func.value))  # type: ignore[arg-type]
                else:
                    stack.append(func.value)
                if func.attr.value in _RELABEL:
                    # ``col.map(ids)``: each record's value looked up in the table, not its key set
                    tables = [dotted(a.value) for a in node.args]  # type: ignore[attr-defined]
                    if tables and all(t is not None for t in tables):
                        lookups.update(t for t in tables if t is not None)
                        continue
            if call_name(node) in _CARRY or call_name(node) == "get":  # type: ignore[arg-type]
                stack.extend(a.value for a in node.args)  # type: ignore[attr-defined]
            elif _rescales(node):  # type: ignore[arg-type]
                stack.extend(a.value for a in node.args)  # type: ignore[attr-defined]
            continue
        if kind is cst.Attribute:
            name = dotted(node)
            if name is not None:
                out.add(name)
                out.add(name.split(".")[0])
                continue
        if kind is cst.Name:
            out.add(node.value)  # type: ignore[attr-defined]
            continue
        if kind in SCOPE_TYPES:
            continue
        stack.extend(children(node))
    return out, lookups


def _not_data(name: str) -> bool:
    return bool(words(name) & _NOT_DATA) or name.isupper()


#: constructors that wrap the records they are given
_WRAPPERS = frozenset({"Series", "DataFrame", "array", "asarray", "tensor", "as_tensor", "from_numpy", "list"})
#: attributes and methods of a frame that are its schema, not its values
_SCHEMA_ATTRS = frozenset({"columns", "index", "shape", "dtypes", "dtype", "keys", "names", "ndim", "size"})


def _root(expr: cst.BaseExpression) -> cst.BaseExpression | None:
    """``df`` of ``df[c].astype(str)`` / ``df.col``; ``self.data`` of ``self.data[c]``; None for
    the frame's schema (``df.columns``, ``x.shape``)."""
    while True:
        if isinstance(expr, cst.Attribute) and (expr.attr.value in _SCHEMA_ATTRS
                                                or words(expr.attr.value) & _NOT_DATA):
            return None
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) \
                and expr.func.attr.value in _SCHEMA_ATTRS - {"size"}:
            return None
        if isinstance(expr, cst.Subscript):
            expr = expr.value
        elif isinstance(expr, cst.Call) and call_name(expr) in _WRAPPERS and expr.args:
            expr = expr.args[0].value  # ``pd.Series(y)``: the records wrapped
        elif isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute):
            expr = expr.func.value
        elif isinstance(expr, cst.Attribute) and not (isinstance(expr.value, cst.Name)
                                                     and expr.value.value in ("self", "cls")):
            expr = expr.value
        else:
            return expr


def is_private(expr: cst.BaseExpression, flow: Flow) -> bool:
    """Is ``expr`` the private records (a parameter or a local holding them, ``self.data``…)?"""
    if isinstance(expr, (cst.List, cst.Tuple, cst.Set)) and all(
            isinstance(e.value, (cst.SimpleString, cst.Integer, cst.Float)) for e in expr.elements):
        return False
    root = _root(expr)
    if root is None:
        return False
    name = dotted(root)
    if name is None:
        if isinstance(root, (cst.GeneratorExp, cst.ListComp)):
            # ``[u.epsilon for u in users]``: what is collected per record is a budget or another non-datum
            element = dotted(root.elt)
            if element is not None and _not_data(element.rsplit(".", 1)[-1]):
                return False
            return bool(value_refs(root.for_in.iter) & flow.private)
        return False
    if name in flow.taint:
        return False
    if name.startswith(("self.", "cls.")):
        attr = name.split(".", 1)[1]
        return "." not in attr and bool(words(attr) & _DATA_ATTR_WORDS) and not _not_data(attr)
    return name in flow.private


def domain_read(call: cst.Call, flow: Flow) -> str | None:
    """``"set"`` if ``call`` reads which values the private records hold, ``"range"`` if it
    reads their extremes or quantiles, else None."""
    name = call_name(call)
    func = call.func
    positional = [a.value for a in call.args if a.keyword is None and not a.star]
    method = isinstance(func, cst.Attribute) and (dotted(func.value) or "").split(".")[0] not in _LIB_ROOTS
    if method:
        subject: cst.BaseExpression = func.value  # type: ignore[union-attr]
        if name in ("fit", "fit_transform") and positional and _encoder(subject, flow):
            # the encoder's categories (bins) are the values the private column holds
            return "set" if is_private(positional[0], flow) else None
        if name in _SET_METHODS or (name in ("size", "count") and isinstance(subject, cst.Call)
                                    and call_name(subject) == "groupby"):
            return "set" if is_private(subject, flow) and not _named(subject, _NOT_SET) \
                and not _noise_column(subject) else None
        if name in _RANGE_FUNCS and name != "ptp":
            if _within_rows(call, positional):
                return None
            return "range" if is_private(subject, flow) and not _named(subject, _NOT_RANGE) \
                and not _noise_column(subject) else None
        return None
    if not positional:
        return None
    if name == "bincount":
        # one count per integer up to the data's maximum, unless the length is given
        given = any(a.keyword is not None and a.keyword.value == "minlength" for a in call.args)
        return "set" if not given and is_private(positional[0], flow) else None
    if name in _SET_FUNCS or name in _HIST_FUNCS:
        if name in _HIST_FUNCS and _edges_given(call, flow):
            return None
        ok = is_private(positional[0], flow) and not _named(positional[0], _NOT_SET)
        return "set" if ok else None
    if name in _RANGE_FUNCS:
        if isinstance(func, cst.Name) and name in ("min", "max") and (
                len(positional) != 1 or any(a.keyword is not None and a.keyword.value == "key" for a in call.args)):
            return None  # min(a, b) clamps and max(xs, key=f) is an argmax: neither reads a range
        if _within_rows(call, positional[1:]):
            return None
        ok = is_private(positional[0], flow) and not _named(positional[0], _NOT_RANGE)
        return "range" if ok else None
    return None


_AXIS_SECOND = frozenset({"min", "max", "amin", "amax", "nanmin", "nanmax", "median", "nanmedian"})


def _within_rows(call: cst.Call, axes: list[cst.BaseExpression]) -> bool:
    """``torch.max(outputs, 1)``, ``x.max(dim=-1)``: each record's own maximum along its features
    (a predicted class, a row's peak), not the extremes across records."""
    if call_name(call) not in _AXIS_SECOND:
        return False  # ``np.quantile(x, 1)``: the second argument is the quantile
    given = [a.value for a in call.args if a.keyword is not None and a.keyword.value in ("dim", "axis")]
    axis = (given or axes[:1] or [None])[0]
    if isinstance(axis, cst.UnaryOperation) and isinstance(axis.operator, cst.Minus):
        return isinstance(axis.expression, cst.Integer) and axis.expression.value == "1"
    return isinstance(axis, cst.Integer) and axis.value == "1"


#: estimators whose fitted state is the set of values (or bins) of what they are fitted on
_ENCODERS = frozenset({"LabelEncoder", "OrdinalEncoder", "OneHotEncoder", "LabelBinarizer", "KBinsDiscretizer"})


def _encoder(expr: cst.BaseExpression, flow: Flow) -> bool:
    if isinstance(expr, cst.Call):
        return call_name(expr) in _ENCODERS and not any(
            a.keyword is not None and a.keyword.value == "categories" for a in expr.args)
    name = dotted(expr)
    return name is not None and name in flow.encoders


#: a column named for the noise or the released values: what it holds is not the private records
_NOISE_COLUMN = frozenset({"noise", "noisy", "noised", "perturbed", "perturbation", "anonymized", "anonymised",
                           "synthetic", "synth", "fake", "privatized", "privatised", "sanitized", "sanitised"})


def _noise_column(expr: cst.BaseExpression) -> bool:
    """(g2 h40) ``df.groupby(c)['cumm_noise_delta'].min()``: the column selected holds drawn noise or released
    values (its name says so), so its extremes or values are not the records'."""
    for node in walk(expr, into_scopes=False):
        if isinstance(node, cst.Subscript):
            for el in node.slice:
                key = getattr(el.slice, "value", None)
                if isinstance(key, cst.SimpleString) and words(key.evaluated_value if isinstance(
                        key.evaluated_value, str) else "") & _NOISE_COLUMN:
                    return True
    return False


def _named(expr: cst.BaseExpression, vocabulary: frozenset[str]) -> bool:
    root = _root(expr)
    name = dotted(root) if root is not None else None
    return name is not None and bool(words(name.split(".")[-1]) & vocabulary)


def _edges_given(call: cst.Call, flow: Flow) -> bool:
    """``np.histogram(x, bins=edges)``: bins passed in or built elsewhere, not a bin count spread
    over the data's range (absent, a literal, or itself read from the data)."""
    bins = [a.value for a in call.args if a.keyword is not None and a.keyword.value == "bins"]
    positional = [a.value for a in call.args if a.keyword is None]
    bins += positional[1:2]
    span = [a.value for a in call.args if a.keyword is not None and a.keyword.value == "range"] + positional[2:3]
    if span and not (isinstance(span[0], cst.Name) and span[0].value == "None") and not flow.sources(span[0]) \
            and not (value_refs(span[0]) & flow.private):
        return True  # (q3 h46) ``np.histogram(x, bins=k, range=(lo, hi))``: edges spread over a given range
    if not bins:
        return False
    given = bins[0]
    if isinstance(given, cst.Integer):
        return False
    name = dotted(given)
    if name is not None and name in flow.counts:
        # (q3 h46) ``def hist(data, bins: int = 10)``: a bin count spread over the data's range, whose
        # edges are kept (labels, bins); the counts alone have the given length
        return call not in flow.edged
    return name is None or name not in flow.taint


def _domain_calls(expr: cst.CSTNode, flow: Flow) -> set[cst.BaseExpression]:
    out: set[cst.BaseExpression] = set()
    shifts: set[cst.CSTNode] = set(flow.shifts)
    for n in walk(expr, into_scopes=False):
        if isinstance(n, cst.BinaryOperation) and isinstance(n.operator, cst.Subtract):
            shifted = _max_of(n.right)
            if shifted is not None and shifted.deep_equals(n.left):
                shifts.add(n.right)  # ``a - a.max()``: the log-sum-exp shift, not a bound
        kind: str | None = None
        if isinstance(n, cst.Call) and n not in shifts:
            kind = domain_read(n, flow)
        elif isinstance(n, cst.Attribute) and n.attr.value == "categories" and _categorical(n.value, flow):
            kind = "set"
        if kind is not None:
            flow.kinds[n] = kind  # type: ignore[index]
            out.add(n)  # type: ignore[arg-type]
    return out


_LABEL_WORDS = frozenset({"y", "label", "labels", "target", "targets", "class", "classes"})


def reads_labels(read: cst.BaseExpression) -> bool:
    """Is ``read`` a value set or range of a label column (``np.unique(y)``, ``y.max()``)?"""
    if isinstance(read, cst.Call):
        func = read.func
        if isinstance(func, cst.Attribute) and (dotted(func.value) or "").split(".")[0] not in _LIB_ROOTS:
            subject = func.value
        elif read.args:
            subject = read.args[0].value
        else:
            return False
        root = _root(subject)
        name = dotted(root) if root is not None else None
        return name is not None and bool(words(name.split(".")[-1]) & _LABEL_WORDS)
    return False


def _max_of(expr: cst.BaseExpression) -> cst.BaseExpression | None:
    """``a`` of ``a.max(...)`` / ``max(a)`` / ``np.max(a, ...)``."""
    if not isinstance(expr, cst.Call) or call_name(expr) not in ("max", "amax", "nanmax"):
        return None
    if isinstance(expr.func, cst.Attribute) and (dotted(expr.func.value) or "") not in _LIB_ROOTS:
        return expr.func.value
    return expr.args[0].value if expr.args else None


def _categorical(expr: cst.BaseExpression, flow: Flow) -> bool:
    """``pd.Categorical(x)`` / ``x.astype("category").cat`` / ``x.cat`` of private ``x``."""
    if isinstance(expr, cst.Call) and call_name(expr) == "Categorical" and expr.args:
        return is_private(expr.args[0].value, flow)
    if isinstance(expr, cst.Attribute) and expr.attr.value == "cat":
        return is_private(expr.value, flow)
    return False


def _loads(expr: cst.CSTNode) -> bool:
    """Does ``expr`` read a data file (``pd.read_csv``, ``np.loadtxt``, ``load_dataset``)?"""
    for n in walk(expr):
        if isinstance(n, cst.Call):
            name = call_name(n)
            if name.startswith(("read", "load")) or name in ("genfromtxt", "fetch_openml"):
                return True
    return False


def _random(expr: cst.CSTNode) -> bool:
    """Is ``expr`` drawn at random (simulated data, not records)?"""
    return any(isinstance(n, cst.Call) and "random" in (dotted(n.func) or "").split(".") for n in walk(expr))


def _given_budget(call: cst.Call) -> bool:
    """``community_init(g, epsilon=e1)``, ``private_partition(x, eps)``: a project helper (not a library
    array call) handed a privacy budget returns that mechanism's output."""
    if call_name(call) in _CARRY or (dotted(call.func) or "").split(".")[0] in _LIB_ROOTS:
        return False
    for arg in call.args:
        if arg.keyword is not None and words(arg.keyword.value) & BUDGET_WORDS:
            return True
        if arg.keyword is None and isinstance(arg.value, cst.Name) and words(arg.value.value) & BUDGET_WORDS:
            return True
    return False


def _dp_output(expr: cst.CSTNode) -> bool:
    """Is ``expr`` (or a part of it) noise drawn for a release or a mechanism's output? What is computed
    from it is post-processing, not a read of the records."""
    return any(isinstance(n, cst.Call) and (call_name(n) in NOISE_DRAWS or is_mechanism(n) or _given_budget(n))
               for n in walk(expr, into_scopes=False))


def _onto_domain(expr: cst.CSTNode) -> bool:
    return any(isinstance(n, cst.Call) and call_name(n) in _ONTO_DOMAIN for n in walk(expr))


Scope = cst.FunctionDef | cst.Module


def body_of(scope: Scope) -> cst.CSTNode:
    return scope if isinstance(scope, cst.Module) else scope.body


def statements(fn: Scope) -> Iterator[cst.CSTNode]:
    """Small statements and ``for`` loops of ``fn`` (a function, or a module's top-level code) in
    order, nested functions and classes left out."""
    for node in walk(body_of(fn), into_scopes=False):
        if isinstance(node, (cst.Assign, cst.AnnAssign, cst.AugAssign, cst.Expr, cst.Return, cst.For)):
            yield node
        elif type(node) in SCOPE_TYPES:
            continue


def _bind(flow: Flow, targets: set[str], value: cst.CSTNode) -> None:
    if isinstance(value, cst.Call) and _encoder(value, flow):
        flow.encoders |= targets
    if isinstance(value, cst.Call) and call_name(value) == "fit_transform" and isinstance(value.func, cst.Attribute):
        owner = dotted(value.func.value)
        if owner is not None and owner in flow.encoders:
            targets = targets | {owner}  # the encoder keeps the categories it returned codes for
    srcs = set() if _onto_domain(value) else flow.sources(value)
    if srcs and any(isinstance(n, cst.Call) and (is_draw(n) or is_mechanism(n)) for n in walk(value)):
        # a range noised where it is read is a DP estimate of it; which values occur stays exact
        srcs = {s for s in srcs if flow.kind(s) == "set"}
    if srcs:
        for t in targets:
            flow.taint.setdefault(t, set()).update(srcs)
        return
    if _random(value) or value_refs(value) & flow.randomised or _dp_output(value):
        flow.private -= targets
        if not _random(value) or _dp_output(value):
            flow.randomised |= targets
    elif _loads(value) or _loader_call(value, flow.loaders):
        flow.private |= {t for t in targets if not _not_data(t)}
    elif value_refs(value) & flow.private or (isinstance(value, cst.BaseExpression) and is_private(value, flow)):
        flow.private |= {t for t in targets if not _not_data(t)}


def _empty_mapping(value: cst.BaseExpression) -> bool:
    """``{}``, ``dict()``, ``Counter()``, ``defaultdict(int)``: a mapping with no declared keys."""
    if isinstance(value, cst.Dict):
        return not value.elements
    return isinstance(value, cst.Call) and (
        call_name(value) in ("dict", "Counter", "OrderedDict") and not value.args
        or call_name(value) == "defaultdict" and len(value.args) <= 1)


def _counters(fn: Scope) -> set[str]:
    """Names stepped by a constant (``n += 1``, ``n = n + 1``): a running code, not a value of the records."""
    out: set[str] = set()
    for stmt in statements(fn):
        if isinstance(stmt, cst.AugAssign) and isinstance(stmt.target, cst.Name) \
                and isinstance(stmt.operator, cst.AddAssign) and isinstance(stmt.value, cst.Integer):
            out.add(stmt.target.value)
        elif isinstance(stmt, cst.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0].target, cst.Name) \
                and isinstance(stmt.value, cst.BinaryOperation) and isinstance(stmt.value.operator, cst.Add) \
                and {type(stmt.value.left), type(stmt.value.right)} == {cst.Name, cst.Integer} \
                and stmt.targets[0].target.value in value_refs(stmt.value):
            out.add(stmt.targets[0].target.value)
    return out


def _next_code(stmt: cst.Assign, counters: set[str]) -> bool:
    """``codes[v] = len(codes)`` / ``codes[v] = next_id`` (a counter): the next code for a new value."""
    owners = {dotted(t.target.value) for t in stmt.targets if isinstance(t.target, cst.Subscript)}
    value = stmt.value
    if isinstance(value, cst.Call) and call_name(value) == "len" and len(value.args) == 1:
        return dotted(value.args[0].value) in owners
    return isinstance(value, cst.Name) and value.value in counters


def _keyed_by_records(stmt: cst.CSTNode, empties: set[str], flow: Flow, indices: set[str],
                      counters: set[str] = frozenset()) -> list[cst.Subscript]:  # type: ignore[assignment]
    """``counts[row[c]] += 1`` into a mapping that started empty: its keys are the values the records hold."""
    seen = {n for n, srcs in flow.taint.items() if any(flow.kind(s) == "set" for s in srcs)} - indices
    if isinstance(stmt, cst.AugAssign):
        targets = [stmt.target]
        step: cst.CSTNode | None = stmt.value if isinstance(stmt.operator, cst.AddAssign) else None
    elif isinstance(stmt, cst.Assign):
        targets = [t.target for t in stmt.targets]
        # ``d[k] = d.get(k, 0) + 1``: a count kept per key (not a score computed per candidate)
        own = {dotted(t.value) for t in targets if isinstance(t, cst.Subscript)}
        value = stmt.value
        step = None
        if isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Add):
            sides = [value.left, value.right]
            rest = [x for x in sides if not value_refs(x) & own]
            step = rest[0] if len(rest) == 1 else None
    else:
        return []
    keys = {n for t in targets if isinstance(t, cst.Subscript) for el in t.slice for n in value_refs(el.slice)}
    # a count adds a constant or a record's weight; ``sums[k] += delta[k]`` or ``+= noise`` does not count
    counting = step is not None and not value_refs(step) & keys and (
        isinstance(step, (cst.Integer, cst.Float)) or bool(value_refs(step) & flow.private))
    # a codebook: each value the records hold gets the next code (``codes[v] = len(codes)``, a counter)
    counting = counting or isinstance(stmt, cst.Assign) and _next_code(stmt, counters)
    # keys the records hold, counted; or keys already read off them (``out[k] = ... for k in counts``)
    keyed = (flow.private - indices | seen) if counting else seen
    return [t for t in targets if isinstance(t, cst.Subscript) and dotted(t.value) in empties
            and any(value_refs(el.slice) & keyed for el in t.slice)]


#: a call named for these, given probabilities or scores, returns the index a mechanism picked
_PICK_WORDS = frozenset({"sample", "choice", "choices", "choose", "select", "pick", "exponential"})
_WEIGHT_WORDS = frozenset({"prob", "probs", "probability", "probabilities", "weight", "weights", "score", "scores",
                           "utility", "utilities", "exponential"})


def _weighted_pick(node: cst.CSTNode) -> bool:
    """``sample_prob_list(probs)``, ``np.random.choice(k, p=probs)``: not a uniform pick of a batch."""
    if not isinstance(node, cst.Call) or not words(call_name(node)) & _PICK_WORDS:
        return False
    if words(call_name(node)) & _WEIGHT_WORDS or any(a.keyword is not None and a.keyword.value in ("p", "weights")
                                                       for a in node.args):
        return True
    return any(isinstance(n, cst.Name) and words(n.value) & _WEIGHT_WORDS for a in node.args for n in walk(a.value))


def _picked_from(fn: cst.FunctionDef) -> set[str]:
    """Names indexed by a mechanism's pick (``theta = thetas[sample(probs)]``, also through
    ``i = pick(...); j = int(i / k); thetas[j]``): the candidate list the mechanism chooses from is public."""
    picked: set[str] = set()
    for _ in range(2):
        for stmt in statements(fn):
            if isinstance(stmt, cst.Assign) and any(
                    _weighted_pick(n) or isinstance(n, cst.Name) and n.value in picked
                    for n in walk(stmt.value)) and not isinstance(stmt.value, cst.Subscript):
                picked |= {n for t in stmt.targets for n in target_names(t.target)}
    out: set[str] = set()
    for node in walk(fn):
        if isinstance(node, cst.Subscript) and isinstance(node.value, cst.Name) and any(
                _weighted_pick(n) or isinstance(n, cst.Name) and n.value in picked
                for el in node.slice if isinstance(el.slice, cst.Index) for n in walk(el.slice)):
            out.add(node.value.value)
    return out


def _shift_maxima(fn: Scope) -> set[cst.CSTNode]:
    """``m = max(np.max(s), 0); np.exp(s - m)``: a maximum of ``s`` put in a name that is used only as
    ``s - m``. Subtracting one constant from every score cancels in the normalised probabilities, so the
    maximum shapes nothing that is released."""
    out: set[cst.CSTNode] = set()
    uses: dict[str, int] = {}
    for node in walk(body_of(fn), into_scopes=False):
        if isinstance(node, cst.Name):
            uses[node.value] = uses.get(node.value, 0) + 1
    for stmt in statements(fn):
        if not (isinstance(stmt, cst.Assign) and len(stmt.targets) == 1
                and isinstance(stmt.targets[0].target, cst.Name)):
            continue
        name = stmt.targets[0].target.value
        value = stmt.value
        if isinstance(value, cst.Call) and call_name(value) in ("max", "maximum") and len(value.args) == 2 \
                and isinstance(value.args[1].value, (cst.Integer, cst.Float)):
            value = value.args[0].value  # ``max(m, 0)``: the shift kept non-negative
        subject = _max_of(value)
        if subject is None:
            continue
        shifted = [n for n in walk(body_of(fn), into_scopes=False)
                   if isinstance(n, cst.BinaryOperation) and isinstance(n.operator, cst.Subtract)
                   and isinstance(n.right, cst.Name) and n.right.value == name and n.left.deep_equals(subject)]
        if shifted and len(shifted) == uses.get(name, 0) - 1:  # every read of the name is ``subject - name``
            out.add(value)
    return out


def _completed(loop: cst.For, flow: Flow) -> set[str]:
    """Mappings of observed keys that ``loop`` completes over a public universe: it runs over something not
    read from the records (``range(m)``, a declared domain) and fills each key that is missing
    (``counts.setdefault(key, 0)``, ``counts[key] = counts.get(key, 0)``). Afterwards the keys no longer
    depend on which values occur."""
    numbered = isinstance(loop.iter, cst.Call) and call_name(loop.iter) == "range"
    if flow.sources(loop.iter) or not numbered and value_refs(loop.iter) & flow.private:
        return set()
    out: set[str] = set()
    for node in walk(loop.body, into_scopes=False):
        if isinstance(node, cst.Call) and call_name(node) == "setdefault" and isinstance(node.func, cst.Attribute) \
                and len(node.args) == 2:
            out.add(dotted(node.func.value) or "")
        elif isinstance(node, cst.Assign) and isinstance(node.value, cst.Call) and call_name(node.value) == "get" \
                and isinstance(node.value.func, cst.Attribute) and len(node.value.args) == 2:
            owner = dotted(node.value.func.value)
            if owner is not None and any(isinstance(t.target, cst.Subscript) and dotted(t.target.value) == owner
                                         for t in node.targets):
                out.add(owner)
    return out & flow.taint.keys()


def _empty_collection(value: cst.BaseExpression) -> bool:
    """``set()``, ``[]``, ``list()``: a collection with no declared members."""
    if isinstance(value, cst.List):
        return not value.elements
    return isinstance(value, cst.Call) and call_name(value) in ("set", "list") and not value.args


def _member_test(test: cst.BaseExpression) -> tuple[cst.BaseExpression, str] | None:
    """``x not in seen`` / ``not x in seen`` -> (``x``, ``seen``)."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        inner = test.expression
        if isinstance(inner, cst.Comparison) and len(inner.comparisons) == 1 \
                and isinstance(inner.comparisons[0].operator, cst.In):
            owner = dotted(inner.comparisons[0].comparator)
            return (inner.left, owner) if owner else None
        return None
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1 \
            and isinstance(test.comparisons[0].operator, cst.NotIn):
        owner = dotted(test.comparisons[0].comparator)
        return (test.left, owner) if owner else None
    return None


def _deduplicated_appends(fn: Scope) -> set[cst.Call]:
    """``if v not in seen: seen.append(v)``: appends that keep each value once, so ``seen`` ends up
    the set of values that occurred (an alphabet collected while reading the records)."""
    out: set[cst.Call] = set()
    for node in walk(body_of(fn), into_scopes=False):
        if not isinstance(node, cst.If):
            continue
        test = _member_test(node.test)
        if test is None:
            continue
        member, owner = test
        for call in walk(node.body, into_scopes=False):
            if isinstance(call, cst.Call) and call_name(call) == "append" and isinstance(call.func, cst.Attribute) \
                    and dotted(call.func.value) == owner and len(call.args) == 1:
                arg = call.args[0].value
                if arg.deep_equals(member) or value_refs(arg) == value_refs(member) and value_refs(arg):
                    out.add(call)
    return out


def function_flow(fn: Scope, seed: dict[str, set[cst.BaseExpression]] | None = None,
                  records: frozenset[str] = frozenset(),
                  kinds: dict[cst.BaseExpression, str] | None = None) -> Flow:
    """Taint of ``fn``'s locals (two passes, so a loop's later assignments reach its start); the
    records are its parameters, what it loads from files, and the module's ``records`` (globals
    holding loaded data) it does not shadow with a parameter."""
    flow = Flow(taint={k: set(v) for k, v in (seed or {}).items()}, shifts=_shift_maxima(fn),
                loaders=getattr(records, "loaders", frozenset()))
    if kinds:  # the seeds' kinds known from the start: a looked-up entry of a seeded range carries it
        flow.kinds.update(kinds)
    if isinstance(fn, cst.FunctionDef):
        flow.counts = {p.name.value for p in (*fn.params.params, *fn.params.kwonly_params)
                       if isinstance(p.default, cst.Integer) or p.annotation is not None
                       and isinstance(p.annotation.annotation, cst.Name) and p.annotation.annotation.value == "int"}
        flow.edged = {stmt.value for stmt in statements(fn) if isinstance(stmt, cst.Assign)
                      and isinstance(stmt.value, cst.Call) and call_name(stmt.value) in _HIST_FUNCS
                      and any(isinstance(t.target, (cst.Tuple, cst.List)) and len(t.target.elements) == 2
                              and isinstance(t.target.elements[1].value, cst.Name)
                              and t.target.elements[1].value.value != "_" for t in stmt.targets)}
    if isinstance(fn, cst.FunctionDef):
        params = param_names(fn)
        flow.private = {p for p in params if not _not_data(p) and p not in _picked_from(fn)} \
            | (set(records) - set(params))
    empties = {n for stmt in statements(fn) if isinstance(stmt, cst.Assign) and _empty_mapping(stmt.value)
               for t in stmt.targets for n in target_names(t.target)}
    #: sets and lists that start empty: filled with values read off the records, they are the records'
    #: alphabet (``acts = set()`` ... ``acts.add(row.activity)``; ``if v not in seen: seen.append(v)``)
    collections = {n for stmt in statements(fn) if isinstance(stmt, cst.Assign) and _empty_collection(stmt.value)
                   for t in stmt.targets for n in target_names(t.target)}
    deduplicated = _deduplicated_appends(fn) if collections else set()
    drawn = _drawn_names(fn) if collections else set()
    counters = _counters(fn) if empties else set()
    #: loop counters over ``range(...)``: positions, not values the records hold
    indices = {n for stmt in statements(fn) if isinstance(stmt, cst.For) and isinstance(stmt.iter, cst.Call)
               and call_name(stmt.iter) == "range" for n in target_names(stmt.target)}
    for _ in range(2):
        for stmt in statements(fn):
            for t in _keyed_by_records(stmt, empties, flow, indices, counters):
                keys = {n for el in t.slice for n in value_refs(el.slice)}
                seen = {src for n in keys for src in flow.taint.get(n, ()) if flow.kind(src) == "set"}
                if not seen:  # keyed by the records themselves: the subscript is the read
                    flow.kinds[t] = "set"
                    seen = {t}
                flow.taint.setdefault(dotted(t.value), set()).update(seen)  # type: ignore[arg-type]
            if isinstance(stmt, cst.Assign):
                if _equality(stmt.value):
                    flow.masks |= {n for t in stmt.targets if isinstance(t.target, cst.Name)
                                   for n in target_names(t.target)}
                names: set[str] = set()
                for t in stmt.targets:
                    names |= target_names(t.target)
                    if isinstance(t.target, cst.Subscript) and dotted(t.target.value) is not None:
                        filled = flow.sources(stmt.value)  # ``domains[c] = set(col)`` fills ``domains``
                        if filled:
                            flow.taint.setdefault(dotted(t.target.value), set()).update(filled)  # type: ignore[arg-type]
                _bind(flow, names, stmt.value)
            elif isinstance(stmt, (cst.AnnAssign, cst.AugAssign)) and stmt.value is not None:
                if isinstance(stmt, cst.AugAssign) and isinstance(stmt.operator, cst.SubtractAssign) \
                        and (shifted := _max_of(stmt.value)) is not None and shifted.deep_equals(stmt.target):
                    continue  # ``a -= a.max()``: the log-sum-exp shift, not a bound
                _bind(flow, target_names(stmt.target), stmt.value)
            elif isinstance(stmt, cst.For):
                _bind(flow, target_names(stmt.target), stmt.iter)
                for name in _completed(stmt, flow):
                    kept = {src for src in flow.taint[name] if flow.kind(src) == "range"}
                    if kept:
                        flow.taint[name] = kept
                    else:
                        del flow.taint[name]
            elif isinstance(stmt, cst.Expr) and isinstance(stmt.value, cst.Call):
                call = stmt.value
                if call_name(call) in ("append", "extend", "add") and isinstance(call.func, cst.Attribute) \
                        and call.args:
                    owner = dotted(call.func.value)
                    if owner is not None:
                        _bind(flow, {owner}, call.args[0].value)
                        # a collection named for attribute names or a public domain (``relevant_attrs``) holds no values
                        if owner in collections and (call_name(call) == "add" or call in deduplicated) \
                                and not _not_data(owner.rsplit(".", 1)[-1]) and not words(owner) & _NOT_SET \
                                and _collects_records(call.args[0].value, flow) \
                                and not value_refs(call.args[0].value) & drawn:
                            flow.kinds[call] = "set"  # the call is the read: which values occurred
                            flow.taint.setdefault(owner, set()).add(call)
                elif call_name(call) == "fit" and isinstance(call.func, cst.Attribute):
                    owner = dotted(call.func.value)
                    if owner is not None and owner in flow.encoders:
                        _bind(flow, {owner}, call)
                elif is_mechanism(call) and not flow.taint.keys() & {dotted(a.value) for a in call.args}:
                    # ``randomized_response(data, k, p)`` called for its effect: it randomises the
                    # records in place, so what is computed from them afterwards is the mechanism's output
                    done = {dotted(a.value) for a in call.args if a.keyword is None} & flow.private
                    flow.private -= done
                    flow.randomised |= done  # type: ignore[arg-type]
    return flow


def _drawn_names(fn: Scope) -> set[str]:
    """Names holding values drawn at random (``u = int(rng.randint(0, n))``) and what is built only from
    them and constants (``pair = (u, v)``): sampled candidates, not values of the records."""
    out: set[str] = set()
    assigns = [s for s in statements(fn) if isinstance(s, cst.Assign)]
    for _ in range(3):
        for stmt in assigns:
            drawn = any(isinstance(n, cst.Call) and (is_draw(n) or call_name(n) in (
                "randint", "rand", "randn", "random", "sample", "permutation", "integers", "uniform"))
                for n in walk(stmt.value))
            refs = value_refs(stmt.value)
            if drawn or refs and refs <= out:
                out |= {n for t in stmt.targets for n in target_names(t.target)}
    return out


def _collects_records(value: cst.BaseExpression, flow: Flow) -> bool:
    """A value read off the records (not a count, a position or a name of a public thing)."""
    if isinstance(value, (cst.SimpleString, cst.Integer, cst.Float, cst.FormattedString)):
        return False
    if isinstance(value, cst.Call) and call_name(value) in ("len", "sum", "range", "id"):
        return False
    refs = value_refs(value)
    return bool(refs & flow.private) and not any(_not_data(r.rsplit(".", 1)[-1]) for r in refs & flow.private) \
        or is_private(value, flow)


def is_draw(call: cst.Call) -> bool:
    return call_name(call) in DRAWS


#: words of a distribution helper or a model named after a distribution, not a mechanism
_NOT_MECHANISM = frozenset({
    "cmf", "pmf", "cdf", "pdf", "mixture", "kernel", "normalizing", "constant", "process", "nb",
    "blur", "filter", "unnormalized", "prob", "probability", "scale", "variance", "std", "sigma",
    # an accountant computing a mechanism's privacy loss from public parameters (``_compute_gaussian_rdp``)
    "rdp", "renyi", "zcdp", "accountant", "accounting",
    # (R3 b66) dp_accounting's ``GaussianDpEvent(nm)``: the description of a mechanism an accountant composes
    "event",
})


def is_mechanism(call: cst.Call) -> bool:
    pieces = words(call_name(call))
    return bool(pieces & MECHANISM_WORDS) and not pieces & _NOT_MECHANISM


def budget_refs(expr: cst.CSTNode) -> set[str]:
    return {n for n in value_refs(expr) if words(n.split(".")[-1]) & BUDGET_WORDS}


#: (R3 b66) ``dp_event``/``dp_accounting``: the accountant's module and its events, no noisy value
_ACCOUNTING_WORDS = frozenset({"event", "events", "accounting", "accountant"})


def noisy_refs(expr: cst.CSTNode) -> set[str]:
    return {n for n in value_refs(expr) if words(n.split(".")[-1]) & _NOISY_WORDS
            and not words(n.split(".")[-1]) & _ACCOUNTING_WORDS}


class Records(frozenset):
    """Module-level names holding records, and (``loaders``) the module's functions returning loaded data."""

    loaders: frozenset[str] = frozenset()


def _loaders(module: cst.Module) -> frozenset[str]:
    """Top-level functions of ``module`` that return what they read from a file, directly or through
    another such function (``def dataprocessing(): return build_matrix(path)`` with ``build_matrix``
    calling ``pd.read_csv``) and take no records to read: ``ratings = dataprocessing()`` holds records."""
    fns = [s for s in module.body if isinstance(s, cst.FunctionDef) and not s.params.params]
    fns += [s for s in module.body if isinstance(s, cst.FunctionDef) and s.params.params]
    found: set[str] = set()
    for _ in range(3):
        for fn in fns:
            name = fn.name.value
            if name in found or words(name) & (_NOT_DATA | _EVALUATION_WORDS | {"model", "train", "fit"}):
                continue
            returns = [r.value for r in walk(fn.body, into_scopes=False) if isinstance(r, cst.Return) and r.value]
            if not returns:
                continue
            body_loads = any(isinstance(n, cst.Call) and (_loads(n) and not _random(n)
                             or isinstance(n.func, cst.Name) and n.func.value in found)
                             for n in walk(fn.body, into_scopes=False))
            if body_loads:
                found.add(name)
    return frozenset(found)


def _loader_call(value: cst.CSTNode, loaders: frozenset[str]) -> bool:
    return isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value in loaders


def module_records(module: cst.Module) -> frozenset[str]:
    """Module-level names holding loaded records: loaded at top level (``df = pd.read_csv(...)``) or
    assigned a load in a function that declares them ``global``, or the result of one of the module's
    loading functions (``_loaders``)."""
    loaders = _loaders(module)
    seed = Records()
    seed.loaders = loaders
    out = set(function_flow(module, None, seed).private)
    for fn in (n for n in walk(module) if isinstance(n, cst.FunctionDef)):
        declared = {name.name.value for g in walk(fn.body, into_scopes=False) if isinstance(g, cst.Global)
                    for name in g.names}
        if declared:
            out |= declared & function_flow(fn).private
    result = Records(out)
    result.loaders = loaders
    return result


#: a function with one of these words runs an experiment on the mechanism or plots it; what it computes
#: is a measurement, not the release
_EVALUATION_WORDS = frozenset({"plot", "figure", "fig", "experiment", "experiments", "benchmark", "evaluate",
                               "evaluation", "test", "neighbour", "neighbor", "neighbouring", "neighboring",
                               "plotting", "plots", "simulation", "simulations", "simulate"})


def evaluation(fn: Scope) -> bool:
    """A function named for an experiment, a plot or a test (``drawFigure3``, ``test_cms``)."""
    return isinstance(fn, cst.FunctionDef) and bool(
        {w.rstrip("0123456789") for w in words(fn.name.value)} & _EVALUATION_WORDS)


def _path_to(root: cst.CSTNode, target: cst.CSTNode) -> list[cst.CSTNode] | None:
    """The nodes from ``root`` down to ``target`` (identity), or None."""
    stack: list[tuple[cst.CSTNode, int]] = [(root, 0)]
    path: list[cst.CSTNode] = []
    while stack:
        node, depth = stack.pop()
        del path[depth:]
        path.append(node)
        if node is target:
            return path
        stack.extend((c, depth + 1) for c in reversed(list(children(node))))
    return None


def _given_test(test: cst.BaseExpression, param: str) -> bool | None:
    """``param`` / ``param is not None`` / ``param and ...`` -> True (the branch runs when it is given);
    ``not param`` / ``param is None`` -> False; anything else -> None."""
    if isinstance(test, cst.Name) and test.value == param:
        return True
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        return True if _given_test(test.left, param) is True else None
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        inner = _given_test(test.expression, param)
        return None if inner is None else not inner
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1 and isinstance(test.left, cst.Name) \
            and test.left.value == param:
        comp = test.comparisons[0]
        if isinstance(comp.comparator, cst.Name) and comp.comparator.value == "None":
            if isinstance(comp.operator, cst.IsNot):
                return True
            if isinstance(comp.operator, cst.Is):
                return False
    return None


def bypassed_fallback(module: cst.Module, node: cst.CSTNode) -> bool:
    """(q3 h46) ``node`` runs only when an optional parameter (default ``None``) is left out -- the
    ``else`` of ``if bounds: ... else: <from the data>`` -- and every call of its function in this module
    passes that parameter with a value: the fallback never runs here (the callers' argument is judged at
    the call). False when the function is never called in the module, or any call could leave it out."""
    path = _path_to(module, node)
    if path is None:
        return False
    fns = [i for i, n in enumerate(path) if isinstance(n, cst.FunctionDef)]
    if not fns:
        return False
    at = fns[-1]
    fn = path[at]
    assert isinstance(fn, cst.FunctionDef)
    optional = {p.name.value for p in (*fn.params.params, *fn.params.kwonly_params)
                if isinstance(p.default, cst.Name) and p.default.value == "None"}
    if not optional:
        return False
    param: str | None = None
    for i in range(at + 1, len(path) - 1):
        branch = path[i]
        if isinstance(branch, cst.If):
            child = path[i + 1]
            for p in optional:
                given = _given_test(branch.test, p)
                if given is None:
                    continue
                in_else = child is branch.orelse
                in_body = child is branch.body
                if given and in_else or not given and in_body:
                    param = p
    if param is None:
        return False
    # a library's public function may be called without it by the code that imports it: only a script's
    # functions (``if __name__ == "__main__":``) or a private helper (``_f``) have all their callers here
    if not (fn.name.value.startswith("_") and not fn.name.value.startswith("__") or _script(module)):
        return False
    names = param_names(fn)
    method = bool(names) and names[0] in ("self", "cls")
    calls = [n for n in walk(module) if isinstance(n, cst.Call) and call_name(n) == fn.name.value]
    if not calls:
        return False
    for call in calls:
        positional = names[1:] if method and isinstance(call.func, cst.Attribute) else names
        given = False
        for i, arg in enumerate(call.args):
            if arg.star:
                return False
            if arg.keyword is not None:
                hit = arg.keyword.value == param
            else:
                hit = i < len(positional) and positional[i] == param
            if hit:
                if not _surely_given(module, call, arg.value):
                    return False
                given = True
        if not given:
            return False
    return True


_BUILT = (cst.List, cst.Tuple, cst.Dict, cst.ListComp, cst.DictComp, cst.Integer, cst.Float, cst.SimpleString)


def _surely_given(module: cst.Module, call: cst.Call, value: cst.BaseExpression) -> bool:
    """``value`` handed at ``call`` is not None: a literal or comprehension, or a local name the calling
    function binds only to such (``bounds = []`` then filled) and never takes as a parameter."""
    if isinstance(value, _BUILT):
        return True
    if not isinstance(value, cst.Name):
        return False
    path = _path_to(module, call) or []
    fns = [n for n in path if isinstance(n, cst.FunctionDef)]
    if not fns:
        return False
    scope = fns[-1]
    if value.value in param_names(scope):
        return False
    bound = [n.value for n in walk(scope) if isinstance(n, cst.Assign)
             and any(isinstance(t.target, cst.Name) and t.target.value == value.value for t in n.targets)]
    return bool(bound) and all(isinstance(b, _BUILT) for b in bound)


def _script(module: cst.Module) -> bool:
    """The module runs as a program: it has an ``if __name__ == "__main__":`` block."""
    for stmt in module.body:
        if isinstance(stmt, cst.If) and isinstance(stmt.test, cst.Comparison) \
                and isinstance(stmt.test.left, cst.Name) and stmt.test.left.value == "__name__":
            return True
    return False
