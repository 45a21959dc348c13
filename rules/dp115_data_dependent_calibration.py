"""DP115: a mechanism's calibration (noise scale, sensitivity, noise centre, contribution bound)
computed from a statistic of the data it protects."""
from __future__ import annotations

import ast
import re
from collections.abc import Mapping
from typing import Any

import libcst as cst

from dpcheck.analysis.off_switch import behind_off_switch
from dpcheck.analysis.dataindex import index_for
from dpcheck.analysis.domainflow import bypassed_fallback
from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.noisedraws import PURE_DRAWS, zero_centred
from dpcheck.analysis.simulation import simulator
from dpcheck.analysis.syntax import (
    call_name, call_params, dotted, number, param_names, target_names, value_refs, walk, words,
)
from dpcheck.rule import Rule

#: calls that summarise an array into one number (a statistic of whatever they are given)
_STATISTICS = frozenset({
    "amax", "amin", "nanmax", "nanmin", "median", "nanmedian", "percentile", "nanpercentile", "quantile",
    "nanquantile", "ptp", "norm", "reduce_max", "reduce_min", "mean", "nanmean", "average", "std", "nanstd",
    "reduce_mean", "reduce_std", "max", "min", "degree",
    # Spark: ``df.stat.approxQuantile("amount", [0.99], 0.001)``, ``F.percentile_approx(col, 0.5)``
    "approxQuantile", "percentile_approx", "approx_percentile",
    # (R3 b69) the spectrum of the data matrix: singular values/eigenvalues (a spectral gap sizing the
    # number of power iterations, hence sigma)
    "svd", "svdvals", "eigvals", "eigvalsh", "eigh", "eig",
})
#: Spark column functions an ``agg`` can take a statistic with (``F.max("n")``, ``F.expr("percentile_approx(n, .9)")``)
_SPARK_AGG_STATS = frozenset({"max", "min", "percentile_approx", "approx_percentile", "approxQuantile", "stddev",
                              "median", "percentile", "mean", "avg"})
_SPARK_EXPR_STAT = re.compile(r"(?i)^\s*(?:max|min|percentile_approx|approx_percentile|percentile|median|stddev)\s*\(")
#: words of public metadata a statistic may be read from, however far back
_PUBLIC_SOURCE = frozenset({"public", "pub", "schema", "metadata", "meta", "config", "cfg"})
_QUANTILES = frozenset({"percentile", "nanpercentile", "quantile", "nanquantile", "approxQuantile"})
#: SQL results fetched in a scope that selects a column's extreme
_FETCHES = frozenset({"fetchone", "fetchall", "fetchmany", "fetchval", "fetchrow", "scalar", "read_sql",
                      "read_sql_query", "first"})
_SQL_EXTREME = re.compile(r"(?is)\bselect\b[^;]{0,200}?\b(?:max|min|stddev|percentile\w*)\s*\(")
#: a statistic of these is of a public or already-released value, or of a configured bound
_NOT_DATA = frozenset({
    "noisy", "noised", "noise", "synthetic", "synth", "fake", "generated", "dp", "private", "priv", "sanitized",
    "released", "public", "bound", "bounds", "lower", "upper", "lo", "hi", "clip", "clipping", "range", "limit",
    "limits", "eps", "epsilon", "delta", "sigma", "sensitivity", "sensitivities", "sens", "budget", "max", "min",
    "threshold", "thresholds", "lr", "alpha", "alphas", "orders", "rdp", "config", "cfg", "args", "params",
    "scale", "scales", "std", "stds", "losses", "loss", "acc", "accuracy", "accuracies", "times", "time",
    "scores", "utility", "errors", "error", "mse", "rmse", "result", "results", "history", "metrics",
    "interval", "intervals", "width", "span", "domain", "q", "query", "queries", "workload", "weights", "weight",
    "distance", "distances", "corners", "c", "strategy", "matrix", "coef", "coefs", "coefficients",
})
_STRUCTURAL = frozenset({"rindex", "index", "split", "rsplit", "find", "rfind", "keys", "startswith", "endswith",
                         "strip", "replace"})
#: names of the records a mechanism protects
_RECORD_WORDS = frozenset({
    "data", "dataset", "records", "record", "df", "db", "table", "rows", "row", "samples", "sample", "values",
    "x", "ages", "age", "col", "column", "array", "arr", "train", "grad", "grads", "gradient", "gradients",
    "update", "updates", "diff", "predicted", "ratings", "r", "y", "labels", "features", "users", "user",
    "graph", "subgraph", "node", "nodes", "edges", "edge", "neighbors", "neighbours", "degree", "degrees",
})
#: calls that bound their input (a clip factor's statistic stays in the clipped data, not in a scale)
_BOUNDING = frozenset({"clamp", "clamp_", "clamp_max", "clamp_min", "clip", "clip_", "clip_by_norm", "minimum",
                       "min"})
_BUDGET_WORDS = frozenset({"eps", "epsilon", "budget", "rho", "private", "noisy", "dp", "noised", "privately"})
#: a value read for its layout, not its values
_LAYOUT_ATTRS = frozenset({"shape", "ndim", "dtype", "device", "size", "numel"})
#: in-place random fills of a tensor (``torch.empty(k, d).uniform_(0, 1)``): its entries are drawn, not read
_INPLACE_FILLS = frozenset({"normal_", "uniform_", "bernoulli_", "exponential_", "cauchy_", "log_normal_",
                            "geometric_", "random_"})
#: attributes that are the same values rearranged: ``w.T`` reads ``w``
_VIEW_ATTRS = frozenset({"T", "mT", "H"})
_LAYOUT_CALLS = frozenset({"len", "size", "numel", "zeros_like", "ones_like", "empty_like", "range", "enumerate"})
#: an index range, or a constant table of a given length (``np.ones(n + 1)``: a constant query function)
_ENUMERATIONS = frozenset({"arange", "range", "linspace", "ones", "zeros", "full"})
_MODULES = frozenset({"np", "numpy", "torch", "tf", "jnp", "math", "statistics", "scipy", "pd", "linalg", "F",
                      "stats", "random", "jax", "cp", "sp"})
_SCALE_KEYWORDS = frozenset({"scale", "std", "stddev", "sigma", "b", "noise_scale", "beta", "lam", "lambda_"})
_LOC_KEYWORDS = frozenset({"loc", "mean", "mu"})
_TWO_PARAM_DRAWS = frozenset({"normal", "laplace", "gumbel", "Laplace", "Normal", "logistic", "gauss",
                              "normalvariate"})
_SCALE_PARAM_WORDS = frozenset({"sensitivity", "sens", "scale", "std", "stddev", "sigma", "b"})
_MECHANISM_WORDS = frozenset({"laplace", "laplacian", "gaussian", "gauss", "noise", "mechanism", "privacy",
                              "dp", "privatize", "privatise", "perturb", "perturbation", "noisy", "lap"})
#: keywords that set a DP library's contribution bounds or a mechanism's sensitivity
_BOUND_KEYWORDS = frozenset({
    "max_partitions_contributed", "max_contributions_per_partition", "max_contributions",
    "max_contributions_per_user", "contribution_bound", "sensitivity", "l1_sensitivity", "l2_sensitivity",
    "linf_sensitivity", "l0_sensitivity",
})
#: a DP parameter written into a generated spec/config: ``f"MaxValue = {max(ages)}"``
#: DP libraries that take a query's clamping bounds in one call and its budget in another: Tumult
#: Analytics' ``QueryBuilder(...).average(col, low=, high=)`` (budget at ``session.evaluate``), OpenDP's
#: ``make_clamp``/``then_clamp`` and bounded constructors (scale or budget set further down the chain)
_TMLT_AGGREGATES = frozenset({"sum", "average", "variance", "stdev", "quantile", "median", "min", "max",
                              "get_bounds"})
_OPENDP_BOUNDED = re.compile(r"^(?:make|then)_(?:clamp|(?:sized_)?bounded_\w+)$")
_SPEC_PARAM = re.compile(
    r"(?i)(?:min_?value|max_?value|max_?partitions_?contributed|max_?contributions\w*|sensitivity|"
    r"lower_?bound|upper_?bound|clamp\w*|clip(?:ping)?_?(?:bound|norm|value))[\"']?\s*[=:]\s*$")
#: a DP library's contribution bounds named in the text: the file configures a DP pipeline
_DP_SPEC_TEXT = re.compile(r"(?i)max_?partitions_?contributed|max_?contributions_?per_?partition")
#: a privacy parameter in a noise helper's argument makes that argument the calibration
_CALIBRATION_WORDS = frozenset({"sigma", "epsilon", "eps", "multiplier", "sensitivity", "sens", "scale"})
_NOISE_WORDS = frozenset({"noise", "noises", "lap", "ln", "laplace", "gauss", "perturbation"})
#: methods that draw from a distribution object (``noise.sample(b, b)``, ``lap.rvs(scale=b)``)
_SAMPLER_METHODS = frozenset({"sample", "draw", "rvs"})
#: words of an object whose draws are a mechanism's noise
_NOISE_OWNER_WORDS = frozenset({"noise", "laplace", "laplacian", "gaussian", "mechanism", "mech"})


def _released_values(value: cst.CSTNode) -> set[int]:
    """Nodes of ``value`` inside a statistic a mechanism helper privatises where it is computed (the
    first positional argument of ``perturb_mechanism(G.degree(v), scale=4 / eps)``): the call's
    result is the noisy statistic. A statistic first kept in a name (``m = max(m, deg[u])``, then
    ``perturb(m, ...)``) stays a source: its sensitivity is not the one the helper's scale assumes
    as plainly. A draw's own arguments (``laplace(x.max(), b)``) and a helper's scale or
    sensitivity arguments are not privatised values either."""
    out: set[int] = set()
    for n in walk(value, into_scopes=False):
        if isinstance(n, cst.Call) and call_name(n) not in PURE_DRAWS \
                and words(call_name(n) or "") & _MECHANISM_WORDS:
            first = next((a.value for a in n.args if a.keyword is None and not a.star), None)
            if isinstance(first, cst.Call):
                out.update(id(m) for m in walk(first))
    return out | _noised_operands(value)


#: draws that perturb a value when added to it (zero-centred, with a scale of their own)
_ADDITIVE_DRAWS = frozenset({"laplace", "normal", "gumbel", "Laplace", "Normal", "gauss", "normalvariate"})


def _additive_noise(expr: cst.BaseExpression) -> bool:
    """``np.random.laplace(0, b)``, ``rng.normal(0, s, n)``, ``laplace(scale=b)`` (or one of them times a
    factor): a zero-centred draw given its own scale."""
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Multiply):
        return _additive_noise(expr.left) or _additive_noise(expr.right)
    if not isinstance(expr, cst.Call) or call_name(expr) not in _ADDITIVE_DRAWS or not zero_centred(expr):
        return False
    positional = [a for a in expr.args if a.keyword is None and not a.star]
    return len(positional) >= 2 or any(a.keyword is not None and a.keyword.value in _SCALE_KEYWORDS for a in expr.args)


def _noised_operands(value: cst.CSTNode) -> set[int]:
    """Nodes of ``value`` inside an operand a noise draw is added to (``np.std(v) + np.random.laplace(0, b)``):
    the sum is the noisy statistic, a release, and what is done with it afterwards (the scale of a synthetic
    draw) is post-processing. The draw's own scale and centre are sinks of their own, checked apart."""
    out: set[int] = set()
    for n in walk(value, into_scopes=False):
        if isinstance(n, cst.BinaryOperation) and isinstance(n.operator, (cst.Add, cst.Subtract)):
            for side, other in ((n.left, n.right), (n.right, n.left)):
                if _additive_noise(other) and not any(isinstance(m, cst.Call) and call_name(m) in _ADDITIVE_DRAWS
                                                      for m in walk(side)):
                    out.update(id(m) for m in walk(side))
    return out


def _blend_weight(weight: cst.BaseExpression, product: cst.BinaryOperation, fa) -> bool:
    """``(1 - w) * vol + w * rng.normal(mu, s)``: ``w`` mixes the draw into the data (alpha blending, a convex
    combination whose other term carries ``1 - w``); it weighs the two, it sets no noise scale."""
    parent = fa.parent(product)
    if not (isinstance(parent, cst.BinaryOperation) and isinstance(parent.operator, cst.Add)):
        return False
    rest = parent.left if parent.right is product else parent.right
    code = fa.code(weight).strip()
    for n in walk(rest):
        if isinstance(n, cst.BinaryOperation) and isinstance(n.operator, cst.Subtract) \
                and isinstance(n.left, (cst.Integer, cst.Float)) and n.left.value in ("1", "1.0") \
                and fa.code(n.right).strip().strip("()") == code.strip("()"):
            return True
    return False


class _DropShape(cst.CSTTransformer):
    """``x.shape`` / ``x.ndim`` / ``x.dtype`` -> ``0``: the schema of an array, not a read of its values."""

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
        if original.attr.value in ("shape", "ndim", "dtype"):
            return cst.Integer("0")
        return updated


#: a helper that measures a signal's own noise level (``_estimate_lung_noise(vol)``, ``estimate_sigma(img)``)
_OWN_NOISE_WORDS = frozenset({"noise", "sigma", "grain"})
_ESTIMATE_WORDS = frozenset({"estimate", "estimated", "measure", "level"})


def _mimics_own_noise(fn: cst.FunctionDef, param: str) -> bool:
    """Does ``fn`` turn ``param`` into a noise scale only through an estimate of the signal's own noise level
    (``sigma = self._estimate_lung_noise(base, mask)`` then grain at that level)? That matches the texture
    of the input (a realism device): it is no privacy calibration, the target is to look like the data."""
    found = False
    for n in walk(fn.body):
        if isinstance(n, cst.Call) and any(param in value_refs(a.value) for a in n.args):
            w = words(call_name(n) or "")
            if w & _OWN_NOISE_WORDS and w & _ESTIMATE_WORDS:
                found = True
            elif n is not None and w & {"laplace", "gaussian", "normal", "mechanism", "privatize", "privatise", "dp"}:
                return False
    return found


class _DropNoised(cst.CSTTransformer):
    """Replaces the operands a noise draw is added to by ``_`` (their names are released, not carried)."""

    def __init__(self, noised: set[int]) -> None:
        super().__init__()
        self.noised = noised

    def on_leave(self, original: cst.CSTNode, updated: cst.CSTNode):  # type: ignore[override]
        if id(original) in self.noised and isinstance(original, cst.BaseExpression):
            return cst.Name("_")
        return updated


def _carried_names(value: cst.BaseExpression) -> set[str]:
    """``_value_names`` of ``value`` less those only read inside an operand a noise draw is added to."""
    if not any(isinstance(n, cst.Call) and call_name(n) in _ADDITIVE_DRAWS for n in walk(value, into_scopes=False)):
        return _value_names(value)
    noised = _noised_operands(value)
    if not noised:
        return _value_names(value)
    return _value_names(value.visit(_DropNoised(noised)))  # type: ignore[arg-type]


#: words of a privacy parameter: a function calibrating a mechanism takes or names one
_PRIVACY_PARAM_WORDS = frozenset({"eps", "epsilon", "epsilons", "delta", "rho", "budget", "privacy", "private", "dp",
                                  "ldp", "sensitivity", "sens", "multiplier", "sigma", "mu", "gdp", "rdp", "zcdp",
                                  "alpha", "privately", "mechanism"})


def _unparameterised(scope: cst.CSTNode, draw: str | None) -> bool:
    """A function drawing non-Laplace noise that names no privacy parameter anywhere (its name, its
    parameters, its locals, the attributes it reads): noise sized by the data there is a
    statistical-disclosure baseline or an augmentation (``normal(0, k * np.std(y))``), which claims
    no guarantee to calibrate; a DP mechanism always takes epsilon, a sensitivity or a multiplier."""
    if not isinstance(scope, cst.FunctionDef) or draw in ("laplace", "Laplace"):
        return False
    found = {scope.name.value, *param_names(scope)}
    for n in walk(scope.body):
        if isinstance(n, cst.Name):
            found.add(n.value)
        elif isinstance(n, cst.Attribute):
            found.add(n.attr.value)
        elif isinstance(n, cst.Arg) and n.keyword is not None:
            found.add(n.keyword.value)
    return not any(words(n) & _PRIVACY_PARAM_WORDS for n in found)


#: keyword words of a range a mechanism clips to or derives its sensitivity from
#: ``norm`` too: a DP estimator's ``data_norm=`` is the row-norm bound its sensitivity assumes
_RANGE_KEYWORD_WORDS = frozenset({"bounds", "bound", "range", "ranges", "lower", "upper", "clip", "clipping",
                                  "clamp", "norm"})


def _budgeted(call: cst.Call) -> bool:
    """Is the call handed a privacy budget (``epsilon=``, ``eps=self.x_eps``, a name ``epsilon``)?"""
    for arg in call.args:
        if arg.keyword is not None and words(arg.keyword.value) & {"eps", "epsilon", "rho"}:
            return True
        if arg.keyword is None and words(dotted(arg.value) or "") & {"eps", "epsilon", "rho"}:
            return True
    return False


def _read_names(expr: cst.CSTNode) -> set[str]:
    """``_value_names`` less the names a comprehension in ``expr`` binds (``c`` of ``[float(c) for c in
    cats]``) and the functions it calls."""
    out = _value_names(expr)
    for n in walk(expr):
        if isinstance(n, cst.CompFor):
            out -= {m.value for m in walk(n.target) if isinstance(m, cst.Name)}
        elif isinstance(n, cst.Call) and isinstance(n.func, cst.Name):
            out.discard(n.func.value)
    return out


def _sensitivity_name(name: str | None) -> bool:
    pieces = words(name or "")
    return bool(pieces & {"sensitivity", "sens"}) and not pieces & {
        "map", "maps", "analysis", "fn", "func", "message", "msg", "text", "str", "string", "report", "log"}


def _textual(value: cst.BaseExpression) -> bool:
    """A string, an f-string or a list of them: a message about a sensitivity, not a number."""
    if isinstance(value, (cst.SimpleString, cst.FormattedString, cst.ConcatenatedString)):
        return True
    return isinstance(value, (cst.List, cst.Tuple)) and bool(value.elements) and all(
        _textual(e.value) for e in value.elements)


def _value_names(expr: cst.CSTNode) -> set[str]:
    """Names and ``self.x`` chains whose values ``expr`` reads (not those read for a shape or length)."""
    out: set[str] = set()
    stack: list[cst.CSTNode] = [expr]
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is cst.Call:
            if call_name(node) in _LAYOUT_CALLS or call_name(node) in _BOUNDING:  # type: ignore[arg-type]
                continue
            func = node.func  # type: ignore[attr-defined]
            if type(func) is cst.Attribute:
                stack.append(func.value)
            stack.extend(a.value for a in node.args)  # type: ignore[attr-defined]
            continue
        if kind is cst.Attribute:
            if node.attr.value in _LAYOUT_ATTRS:  # type: ignore[attr-defined]
                continue
            if node.attr.value in _VIEW_ATTRS:  # type: ignore[attr-defined]
                stack.append(node.value)  # type: ignore[attr-defined]
                continue
            name = dotted(node)
            if name is not None:
                out.add(name)
            stack.append(node.value)  # type: ignore[attr-defined]
            continue
        if kind is cst.Name:
            out.add(node.value)  # type: ignore[attr-defined]
            continue
        if kind in (cst.Lambda, cst.FunctionDef):
            continue
        if kind is cst.BinaryOperation and type(node.operator) is cst.Divide:  # type: ignore[attr-defined]
            stack.append(node.left)  # type: ignore[attr-defined]
            continue  # ``x / norm`` normalises x: the quotient is not the statistic
        stack.extend(c for c in node.children if isinstance(c, cst.CSTNode))
    return out


def _statistic(call: cst.Call) -> bool:
    """A call summarising an array of values into a number: ``np.max(x)``, ``x.norm()``,
    ``max(ages)``, ``np.median(norms)``, ``G.degree(v)`` (not ``max(a, b)`` of scalars)."""
    name = call_name(call)
    if name in ("agg", "aggregate") and isinstance(call.func, cst.Attribute):
        # ``df.agg({"age": "max"})``, ``col.agg(["min", "max"])`` (pandas, Spark)
        # a grouped aggregate (``groupby(...).agg(...)``) is the query's own per-group answer
        if any(isinstance(n, cst.Call) and call_name(n) in ("groupby", "groupBy") for n in walk(call.func)):
            return False
        asked = {n.evaluated_value for a in call.args if a.keyword is None
                 for n in walk(a.value) if isinstance(n, cst.SimpleString)}
        if asked & _STATISTICS:
            return True
        # Spark column statistics: ``df.agg(F.max("num_cells").alias("max"), F.expr("percentile_approx(n, 0.9)"))``
        for a in call.args:
            for n in walk(a.value):
                if isinstance(n, cst.Call) and isinstance(n.func, cst.Attribute) \
                        and (dotted(n.func.value) or "") in ("F", "functions", "pyspark.sql.functions", "sf"):
                    if call_name(n) in _SPARK_AGG_STATS:
                        return True
                    if call_name(n) == "expr" and n.args and isinstance(n.args[0].value, cst.SimpleString) \
                            and _SPARK_EXPR_STAT.match(str(n.args[0].value.evaluated_value)):
                        return True
        return False
    if name not in _STATISTICS:
        return False
    func = call.func
    positional = [a for a in call.args if a.keyword is None]
    subject: list[cst.CSTNode] = [a.value for a in positional]
    if name in _QUANTILES and isinstance(func, cst.Attribute):
        # ``np.percentile(x, 95)``, ``x.quantile(0.99)``: the level is a parameter, not the data
        module_call = (dotted(func.value) or "").split(".")[0] in _MODULES
        subject = subject[:1] if module_call else []
    if isinstance(func, cst.Name):
        if name in ("max", "min"):
            if len(positional) != 1 or isinstance(positional[0].value, (cst.List, cst.Tuple, cst.Set)):
                return False
        elif name not in ("mean", "median", "average", "norm"):
            return False
    elif isinstance(func, cst.Attribute):
        receiver = dotted(func.value)
        if receiver is None or receiver.split(".")[0] not in _MODULES:
            subject.append(func.value)
        if name in ("max", "min") and receiver is not None and receiver.split(".")[0] in _MODULES \
                and len(positional) >= 2 and not isinstance(positional[1].value, cst.Integer):
            return False  # torch.max(a, b): elementwise
    if not subject:
        return False
    for part in subject:
        for node in walk(part):
            if isinstance(node, cst.Call) and (call_name(node) in PURE_DRAWS or call_name(node) == "exp"):
                return False  # a statistic of noise, or a smoothed one (exp(-beta k))
            if isinstance(node, cst.Call) and call_name(node) in _STRUCTURAL:
                return False  # parsed from names or keys: the layout, not the records' values
            if isinstance(node, cst.Name) and words(node.value) & _NOT_DATA:
                return False
            if isinstance(node, (cst.Integer, cst.Float)) and part is node:
                return False
    return True


def _axis_one(call: cst.Call) -> bool:
    """``axis=1``/``dim=1``/``dim=-1`` (or the second positional argument of ``np.linalg.norm(X, 2, 1)``)."""
    for a in call.args:
        if a.keyword is not None and a.keyword.value in ("axis", "dim"):
            v = a.value
            if isinstance(v, cst.Integer) and v.value == "1" or isinstance(v, cst.UnaryOperation) \
                    and isinstance(v.operator, cst.Minus) and isinstance(v.expression, cst.Integer) \
                    and v.expression.value == "1":
                return True
    return False


def _row_norm_extreme(node: cst.CSTNode) -> bool:
    """The maximum of the row norms of a matrix: ``x.norm(p=2, dim=1).max()``, ``np.max(np.linalg.norm(X,
    axis=1))``, ``max(np.linalg.norm(X, axis=1))``, ``np.linalg.norm(X, axis=1).max()`` — the size of the
    largest record (the ``||x|| <= R`` a sensitivity assumes), not a column or a matrix norm."""
    if not isinstance(node, cst.Call) or call_name(node) not in ("max", "amax", "nanmax"):
        return False
    inner: list[cst.CSTNode] = [a.value for a in node.args if a.keyword is None][:1]
    if isinstance(node.func, cst.Attribute):
        inner.append(node.func.value)
    return any(isinstance(i, cst.Call) and call_name(i) == "norm" and _axis_one(i) for i in inner)


#: a name holding a number of classes or categories
_COUNT_WORDS = frozenset({"num", "n", "nb", "number", "count", "classes", "class", "categories", "labels", "size", "k"})


#: summaries of many values (the units' norms) that make a clip bound the data's own
_CLIP_SUMMARIES = frozenset({"median", "nanmedian", "percentile", "nanpercentile", "quantile", "nanquantile", "mean",
                             "nanmean", "average", "max", "amax", "nanmax", "sort", "sorted"})
#: calls that clip to a norm bound given as their second argument (or ``max_norm=``/``clip_norm=``)
_NORM_CLIPS = frozenset({"clip_grad_norm_", "clip_grad_norm", "clip_by_norm", "clip_by_global_norm"})


def _normish(expr: cst.BaseExpression) -> bool:
    """``norms[i][key]``, ``grad_norm``, ``torch.norm(g)``, ``g.norm(2)``: a norm of what is being clipped."""
    return any(isinstance(n, cst.Name) and words(n.value) & {"norm", "norms", "l2norm", "l2"}
               or isinstance(n, cst.Call) and call_name(n) in ("norm", "vector_norm") for n in walk(expr))


def _unwrapped(expr: cst.BaseExpression) -> cst.BaseExpression:
    while isinstance(expr, cst.Call) and call_name(expr) in ("float", "int") and len(expr.args) == 1:
        expr = expr.args[0].value
    return expr


def _clip_bound(call: cst.Call, name: str) -> cst.BaseExpression | None:
    """(g39-2) The bound ``C`` of a norm clip: ``max(1, norm / C)``, ``min(1, C / norm)``,
    ``clip_grad_norm_(params, C)``, ``clip_by_norm(g, clip_norm=C)``. A ``C`` computed from the clipped values
    themselves (the median of the clients' update norms) makes the sensitivity, and the noise sized to it,
    this dataset's."""
    args = [a for a in call.args if not a.star]
    if name in ("max", "maximum", "min", "minimum") and len(args) == 2 and all(a.keyword is None for a in args):
        for one, other in ((args[0].value, args[1].value), (args[1].value, args[0].value)):
            if number(one) != 1:
                continue
            ratio = _unwrapped(other)
            if not (isinstance(ratio, cst.BinaryOperation) and isinstance(ratio.operator, cst.Divide)):
                continue
            if name in ("max", "maximum") and _normish(ratio.left) and not _normish(ratio.right):
                return ratio.right
            if name in ("min", "minimum") and _normish(ratio.right) and not _normish(ratio.left):
                return ratio.left
        return None
    if name in _NORM_CLIPS:
        keyed = next((a.value for a in args if a.keyword is not None
                      and a.keyword.value in ("max_norm", "clip_norm")), None)
        if keyed is not None:
            return keyed
        positional = [a.value for a in args if a.keyword is None]
        return positional[1] if len(positional) > 1 else None
    return None


def _category_count(value: cst.BaseExpression) -> bool:
    """``int(labels.max()) + 1``, ``max(y) + 1``: the size of a label set read as its largest code plus one."""
    if not (isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Add)
            and isinstance(value.right, cst.Integer) and value.right.value == "1"):
        return False
    left = value.left
    if isinstance(left, cst.Call) and call_name(left) == "int" and left.args:
        left = left.args[0].value
    if isinstance(left, cst.Call) and call_name(left) == "item" and isinstance(left.func, cst.Attribute):
        left = left.func.value
    return isinstance(left, cst.Call) and call_name(left) in ("max", "amax", "nanmax")


class DataDependentCalibration(Rule):
    id = "DP115"
    name = "data-dependent-calibration"
    category = "general"
    severity = "error"
    summary = ("the noise scale, sensitivity, noise centre or contribution bound of a mechanism is a "
               "statistic (max, min, norm, median, mean, degree, SQL MAX) of the data it protects")
    rationale = (
        "A mechanism is ε-DP only if its calibration is fixed before it sees the data: the noise "
        "scale, the sensitivity, the clip or contribution bound and the noise's centre must be "
        "public constants or themselves released privately. When they are a statistic of the "
        "private data (`sensitivity = np.max(np.abs(x))`, `std = grad.norm() * k`, "
        "`S = np.median(update_norms)`, `SELECT MAX(col)`, a node's own degree, the mean the "
        "noise is centred on), the output distribution itself reveals that statistic, and the "
        "noise is calibrated to this dataset's local sensitivity rather than to every neighbour's. "
        "Reported at the statement computing the statistic when its value reaches, within the "
        "function (through names, appended lists and the module's own helpers), the scale or "
        "centre of a noise draw, the arguments of a noise object's sampler (`noise.speed.sample(w, w)`, "
        "`laplace_noise.rvs(b)`), a mechanism helper's sensitivity/scale parameter, a variable or "
        "function named `sensitivity`, a DP library's contribution-bound keyword, the range "
        "or norm keyword (`bounds=`, `input_range=`, `lower=`/`upper=`, `data_norm=`) of a call handed a budget "
        "(`epsilon=`), or a DP parameter written into a generated spec. The spectrum of the data matrix counts "
        "as a statistic: singular values or eigenvalues (`np.linalg.svd(A)`, `eigvalsh`) that set a noisy power "
        "method's iteration count and with it sigma leak the spectral gap (bad: `L = gap(svd(A))`, "
        "`sigma = f(L) / eps`; good: a public iteration count). Not reported: a statistic "
        "only computed behind a parameter that defaults off and that every call in the module leaves off "
        "(`bound = 1.0 if not use_peak else np.max(x)` with `use_peak=False` passed), statistics "
        "of noisy, released, public or configured values (names such as `noisy_*`, `bound`, "
        "`clip`, `epsilon`, or a comprehension of a `public_*`/schema entry), a statistic "
        "privatised where it is computed (`perturb_mechanism(G.degree(v), ...)`), noise in a "
        "function that names no privacy parameter at all (a disclosure-control baseline), "
        "smoothed statistics (`exp(-beta*k)`), shapes and lengths, a public query function "
        "tabulated over an index range (`h = np.arange(n + 1) / 2`, or the constant `np.ones(n + 1)`, never "
        "filled in afterwards; its maximum up to a public degree bound), noise set to a target signal-to-noise ratio with no privacy parameter (`power / snr`), "
        "statistics of a data set the code simulates itself (a helper whose parameters are all declared "
        "scalars or literal defaults, that draws at random and reads no file), "
        "code with no DP context. "
        "Fix: use a public bound (clip the data to it), or spend budget on a private estimate."
    )
    TRIGGERS = ("max", "min", "ptp", "norm", "median", "mean", "MAX", "percentile", "quantile", "degree", "std", "sensitiv",
                "laplace")
    requires_dp_context = False

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding needs DP context, a Laplace draw (DP context whatever the names), a noise
        object's sampler (``noise.sample(b, b)``), a DP library's contribution-bound parameter in the text (a script writing a DP pipeline's spec),
        or a call handed a budget by keyword (``eps=``)."""
        return facts.may_have_dp_context or facts.calls_any({"laplace", "Laplace"}) or any(
            isinstance(c.func, ast.Attribute) and c.func.attr in _SAMPLER_METHODS
            and words(ast.unparse(c.func.value)) & _NOISE_OWNER_WORDS for c in facts.calls) \
            or bool(_DP_SPEC_TEXT.search(facts.source)) \
            or any(k.arg and words(k.arg) & {"eps", "epsilon", "rho"} for c in facts.calls for k in c.keywords)

    VALID = (
        # (S5 h48) per-round weights read by a no-argument helper from a fixed file, divided by their minimum:
        # the factor is >= 1 and no protected record reaches it
        """
import math
import torch
from schedule import round_weights
def local_step(model, sigma):
    for p in model.parameters():
        p.grad += torch.randn_like(p.grad) * sigma
def run(models, rounds, noise_multiplier, epsilon):
    table = round_weights()
    for r in range(rounds):
        chunk = table[r * len(models):(r + 1) * len(models)]
        for i, m in enumerate(models):
            local_step(m, noise_multiplier * math.sqrt(float(chunk[i]) / float(min(chunk))))
""",
        # (fp47) a mask blended into the image with its complement: the weight mixes, it scales no noise
        """
import numpy as np
def add_vessel(img, epsilon, rng):
    w = np.clip(img / np.max(img), 0, 1)
    return (1 - w) * img + w * rng.normal(40.0, 10.0, size=img.shape)
""",
        # (fp47) grain at the level the scan's own noise is measured at: a texture match, no calibration
        """
import numpy as np
class Synth:
    def __init__(self, epsilon):
        self.epsilon = epsilon
    def _estimate_noise_level(self, vol, mask):
        return float(np.median(np.abs(vol[mask] - np.median(vol[mask]))))
    def _grain(self, delta, level):
        return delta + self.rng.normal(0, 1, size=delta.shape) * (0.15 * level)
    def lesion(self, base, mask, delta):
        level = self._estimate_noise_level(base, mask)
        return self._grain(delta, level)
""",
        # ordinary ML: mixup of two images with a Beta weight
        """
import numpy as np
def mixup(a, b, alpha=0.2):
    lam = np.random.beta(alpha, alpha)
    return lam * a + (1 - lam) * b + np.random.normal(0, 0.01, a.shape)
""",
        # (R3 b69) noisy power method: a public iteration count sizes sigma
        """
import numpy as np


def private_top_k(data, k, epsilon, delta, start, rounds=50):
    cov = data.T @ data
    sigma = np.sqrt(4.0 * k * rounds * np.log(1.0 / delta)) / epsilon
    basis = start
    for _ in range(rounds):
        noisy = cov @ basis + np.random.normal(0.0, sigma, basis.shape)
        basis, _ = np.linalg.qr(noisy)
    return basis
""",
        # (R3 b69) ordinary ML: whitening with the singular values, no noise
        """
import numpy as np


def whiten(features, eps=1e-5):
    centred = features - features.mean(axis=0)
    u, s, vt = np.linalg.svd(centred, full_matrices=False)
    return centred @ vt.T / (s + eps)
""",
        # (R3 b65) the data-peak bound only behind a flag that defaults off and every call here leaves off
        """
import numpy as np


def perturb_channels(frames, noise_multiplier, use_peak=False):
    columns = np.split(frames, frames.shape[1], axis=1)
    for j, column in enumerate(columns):
        bound = 1.0 if not use_peak else np.max(column)
        columns[j] = column + np.random.laplace(scale=bound * noise_multiplier, size=column.shape)
    return np.concatenate(columns, axis=1)


def run(frames):
    return perturb_channels(frames, noise_multiplier=0.5, use_peak=False)
""",
        # (R3 b65) the same switch as an ``if`` statement
        """
import numpy as np


def noisy_total(values, epsilon, data_bound=None):
    bound = 1.0
    if data_bound:
        bound = np.max(np.abs(values))
    clipped = np.clip(values, -bound, bound)
    return clipped.sum() + np.random.laplace(scale=bound / epsilon)


def report(values):
    return noisy_total(values, epsilon=1.0, data_bound=False)
""",
        # (q3 h46) twin of the per-group means: the sensitivity function divides a public cap, and the values are clipped to it
        """
import numpy as np
def noisy_group_means(groups, sensitivity_fn, epsilon):
    return {g: np.mean(v) + np.random.laplace(0, sensitivity_fn(v) / epsilon) for g, v in groups.items()}
def clicks_by_region(frame, epsilon, cap=500):
    frame = frame.assign(clicks=frame["clicks"].clip(0, cap))
    groups = frame.groupby("region")["clicks"].apply(list).to_dict()
    return noisy_group_means(groups, lambda v: cap / len(v), epsilon)
""",
        # (q3 h46) ordinary ML: a learning-rate schedule lambda beside a data maximum, no sensitivity
        """
import torch
def train(model, data, epochs):
    peak = data.max()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, eps=1e-8)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lr_lambda=lambda e: 1.0 / (1 + e))
    return model(data / peak), sched
""",
        # (q3 h46) the data-range fallback of an optional ``limits`` that every caller in the module fills:
        # it never runs here (the callers' limits are judged where they are built)
        """
import numpy as np
def perturb(X, mult, limits=None):
        out = X.astype(float)
        for j in range(X.shape[1]):
            if limits is not None:
                width = limits[j][1] - limits[j][0]
            else:
                width = np.max(X[:, j]) - np.min(X[:, j])
            out[:, j] += np.random.laplace(0.0, mult * width, size=len(X))
        return out
def release(X, epsilon, schema):
        limits = [(schema[c]["lo"], schema[c]["hi"]) for c in range(X.shape[1])]
        return perturb(np.clip(X, 0, 1), 1.0 / epsilon, limits)
if __name__ == "__main__":
    print(release(np.random.rand(10, 2), 1.0, [{"lo": 0, "hi": 1}] * 2))
""",
        # twin: the rows are clipped to a public radius and the sensitivity is that radius
        """
import math
import torch
def dp_noise_std(epsilon, delta):
    return math.sqrt(2 * math.log(1.25 / delta)) / epsilon
def clip_rows(embedded, radius):
    return embedded * torch.clamp(radius / embedded.norm(p=2, dim=1, keepdim=True), max=1.0)
def sensitivity(radius):
    return float(radius)
def privatize(class_vectors, epsilon, delta_f, delta=1e-5):
    return class_vectors + torch.normal(0.0, delta_f * dp_noise_std(epsilon, delta), size=class_vectors.shape)
""",
        # the matrix mechanism's L2 sensitivity: the largest column norm of the public strategy matrix
        """
import numpy as np
def sensitivity(strategy):
    return np.linalg.norm(strategy, axis=0).max()
def answer(strategy, x, epsilon):
    return strategy @ x + np.random.laplace(0, sensitivity(strategy) / epsilon, size=strategy.shape[0])
""",
        # Tumult and OpenDP queries whose clamping bounds are public constants or metadata
        """
from tmlt.analytics.query_builder import QueryBuilder
from tmlt.analytics.privacy_budget import PureDPBudget
def mean_age(session, schema, epsilon):
    lo, hi = schema["age"]["lower"], schema["age"]["upper"]
    query = QueryBuilder("people").average("age", low=lo, high=hi)
    return session.evaluate(query, privacy_budget=PureDPBudget(epsilon))
""",
        """
import opendp.prelude as dp
def dp_sum(data, scale):
    space = dp.vector_domain(dp.atom_domain(T=float)), dp.symmetric_distance()
    meas = space >> dp.t.then_clamp((0.0, 100.0)) >> dp.t.then_sum() >> dp.m.then_laplace(scale)
    return meas(data)
""",
        # pandas/Spark aggregates that are not clamping bounds: the release itself, scored after noise
        """
from tmlt.analytics.query_builder import QueryBuilder
def error(session, spark_df, budget):
    noisy = session.evaluate(QueryBuilder("t").sum("x", low=0, high=10), privacy_budget=budget).first()[0]
    exact = spark_df.agg({"x": "sum"}).first()[0]
    return abs(noisy - exact)
""",
        # the aggregator takes the largest of the parties' sensitivity estimates (each computed privately upstream)
        """
import numpy as np
from mpyc.runtime import mpc
def aggregate(reports, epsilon):
    total, sens = 0, []
    for r in reports_sens_estimates(reports):
        total = total + r[1]
        sens.append(r[0])
    bound = mpc.max(sens)
    return total + np.random.laplace(0, bound / epsilon)
""",
        # the class count read off the labels sizes the model; the sensitivity is a fixed bound
        """
import torch
def output_perturbation_sensitivity(data, epsilon, lam):
    num_classes = int(data["targets"].max()) + 1
    model = torch.nn.Linear(data["features"].shape[1], num_classes)
    sensitivity = 2.0 / (len(data["targets"]) * lam)
    return model, sensitivity / epsilon
""",
        # smooth sensitivity: the smoothed term is built two assignments back from exp(-beta k)
        """
import numpy as np
def smooth_sensitivity(counts, beta):
    best, k, prev = 0.0, 0, 0.0
    p = counts / np.sum(counts)
    while True:
        decay = np.exp(-beta * k)
        term = k / p.min()
        smoothed = decay * term
        if best <= smoothed:
            best = smoothed
        elif prev > smoothed:
            break
        k += 1
        prev = smoothed
    return best
""",
        # a script that reuses one query table: first the edge query, then a constant query (every node
        # counts 1), each with its maximum up to a literal degree bound as the sensitivity
        """
import numpy as np
n = 2 ** 7
bound = 2 ** 3
table = np.arange(n + 1) / 2.0
def release(graph, epsilon):
    exact = sum(table[d] for _, d in graph.degree())
    sensitivity = np.max(table[:(bound + 1)]) + np.max(table[1:(bound + 1)] - table[:bound])
    return exact + np.random.laplace(0, sensitivity / epsilon)
table = np.ones(n + 1)
def release_nodes(graph, epsilon):
    sensitivity = np.max(table[:(bound + 1)])
    return graph.number_of_nodes() + np.random.laplace(0, sensitivity / epsilon)
""",
        # the statistic is of a network the code simulates from its own scalar knobs (sizes, a seed)
        """
import numpy as np
def make_network(nodes: int, blocks: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    probs = rng.uniform(0.1, 0.5, size=(nodes, nodes))
    adj = rng.binomial(1, probs)
    return {"adj": adj, "scale": float(probs.sum(axis=1).max())}
def run(nodes: int, epsilon: float):
    net = make_network(nodes, 2)
    bound = net["scale"]
    return net["adj"].sum() + np.random.laplace(0, bound / epsilon)
""",
        # the same with knobs given literal defaults instead of annotations, and a tuple returned
        """
import numpy as np
def toy_regression(n=500, noise_sd=0.3, seed=1):
    gen = np.random.default_rng(seed)
    x = gen.normal(size=n)
    y = 2.0 * x + gen.normal(0, noise_sd, n)
    return x, y, np.abs(y).max()
def experiment(eps):
    x, y, top = toy_regression()
    return y.mean() + np.random.laplace(0, top / (len(y) * eps))
""",
        # the noise object's sampler handed a public bound
        """
import numpy as np
def publish(frame, noise, epsilon, max_speed):
    return frame["speed"].clip(0, max_speed) + noise.speed.sample(max_speed / epsilon, max_speed / epsilon)
""",
        # a frozen Laplace distribution with a configured bound as its scale
        """
import numpy as np
def dp_total(values, laplace_noise, epsilon, upper):
    return np.clip(values, 0, upper).sum() + laplace_noise.rvs(upper / epsilon)
""",
        # a data sampler (not noise) handed a statistic: a subsample, no calibration
        """
import numpy as np
def release(readings, sampler, rho):
    spread = np.std(readings)
    return sampler.draw(spread, rho)
""",
        # public clip bound, noise sized by it
        """
import numpy as np
def dp_sum(values, lower, upper, epsilon):
    clipped = np.clip(values, lower, upper)
    sensitivity = max(abs(lower), abs(upper))
    return clipped.sum() + np.random.laplace(0, sensitivity / epsilon)
""",
        # DP-SGD: the norm sets the clip factor, the noise uses the public clip bound
        """
import torch
def private_grad(per_sample_grads, max_grad_norm, noise_multiplier):
    norms = per_sample_grads.flatten(1).norm(dim=1)
    factor = (max_grad_norm / (norms + 1e-6)).clamp(max=1.0)
    clipped = per_sample_grads * factor.view(-1, 1)
    std = noise_multiplier * max_grad_norm / len(clipped)
    return clipped.mean(0) + torch.normal(0.0, std, size=clipped.shape[1:])
""",
        # a statistic of the noisy release (post-processing)
        """
import numpy as np
def release(counts, epsilon):
    noisy = counts + np.random.laplace(0, 1 / epsilon, len(counts))
    peak = np.max(noisy)
    return noisy / peak
""",
        # server-side: the median of clipped norms is released with noise (adaptive clipping)
        """
import numpy as np
def server_round(updates, clip, sigma, rng):
    norms = [np.linalg.norm(u) for u in updates]
    clipped = [u * min(1.0, clip / n) for u, n in zip(updates, norms)]
    total = np.sum(clipped, axis=0) + rng.normal(0, sigma * clip, clipped[0].shape)
    return total / len(updates)
""",
        # Laplace noise perturbing a value (centred at it): the value is what is released
        """
import numpy as np
def randomise(counts, b):
    return [np.random.laplace(c, b) for c in counts]
""",
        # a running maximum of a public list of query sensitivities... named as such
        """
def workload_sensitivity(queries, epsilon):
    max_sens = 0
    for q in queries:
        if q.sensitivity > max_sens:
            max_sens = q.sensitivity
    return max_sens
""",
        # a query's public sensitivity from a public domain
        """
def calculate_sensitivity(query, domain):
    if "sum" in query:
        return domain["upper"] - domain["lower"]
    return 1
""",
        # a jitter sized to the value it perturbs (no privacy parameter in the scale): not a calibration
        """
import numpy as np
def reseed_atom(Y, dictionary, k, delta, sigma, rng):
    atom = Y[rng.integers(len(Y))]
    level = 0.01 * (atom.std() or 1)
    dictionary[k] = atom + rng.normal(0, level, size=len(atom))
""",
        # a sensitivity computed in a demo and never used: it calibrates nothing
        """
import numpy as np
def demo(data, epsilon_list):
    sensitivity_ = max(data)
    return [np.sum(data) + np.random.laplace(0, 100 / e) for e in epsilon_list]
""",
        # a message about sensitivities, not a sensitivity
        """
def report(rel_diffs, initial, sigma, delta):
    sensitivity_message = [f"timing0={max(rel_diffs):.3f}"]
    return ", ".join(sensitivity_message)
""",
        # the largest row norm of a random projection matrix: independent of the records
        """
import numpy as np
def project(X, k, epsilon, delta, rng):
    P = rng.standard_normal((X.shape[1], k)) / np.sqrt(k)
    sens = np.max(np.linalg.norm(P, axis=1))
    return X @ P + rng.normal(0, sens * np.sqrt(2 * np.log(1.25 / delta)) / epsilon, (X.shape[0], k))
""",
        # the projection is filled in place by a draw and read through its transpose: still independent of the records
        """
import numpy as np
import torch
def hash_rows(rows, n_hash, width):
    W = torch.empty(n_hash, width).uniform_(0, 1)
    codes = rows @ W.T
    bound = max(np.linalg.norm(W.T, axis=0))
    return codes, bound

def release(rows, n_hash, width, delta, epsilon):
    codes, bound = hash_rows(rows, n_hash, width)
    sigma = bound * np.sqrt(2 * np.log(1.25 / delta)) / epsilon
    return codes + np.random.normal(0, sigma, codes.shape)
""",
        # ``np.add(noise, mean)`` adds the noise to the mean; numpy itself is no container of the mean
        """
import numpy as np
def noisy_average(D_i, diameter, epsilon, delta):
    m_roof = len(D_i) + np.random.laplace(scale=5 / epsilon)
    sigma = 5 * diameter / (4 * epsilon * m_roof) * np.sqrt(2 * np.log(3.5 / delta))
    noise = np.random.normal(scale=sigma, size=(1, D_i.shape[1]))
    average = D_i.mean(axis=0)
    return np.add(noise, average)
""",
        # a helper's noise scale from a public width, and a sorted list of public budgets
        """
import numpy as np
def finish(hist, width, epsilon):
    return hist + np.random.laplace(0, width / epsilon, hist.shape)

def release(ages, lower, upper, epsilons):
    epsilon = sorted(epsilons)[0]
    hist, _ = np.histogram(np.clip(ages, lower, upper), bins=10, range=(lower, upper))
    return finish(hist, upper - lower, epsilon)
""",
        # each degree privatised by a mechanism helper where it is read: the helper's noisy output
        # bounds the local sensitivity
        """
from graphutil import perturb_mechanism
def upper_local_sensitivity(graph, epsilon_0, delta):
    noisy_degree = {}
    for v in graph.nodes:
        noisy_degree[v] = perturb_mechanism(graph.degree(v), scale=4 / epsilon_0, delta=delta)
    return {v: 2 * d for v, d in noisy_degree.items()}
""",
        # a column's sensitivity from the range of its public category list, a dict entry away
        """
def column_sensitivity(columns, public_categories, epsilon):
    sensitivity = {}
    for col in columns:
        cats = public_categories.get(col)
        nums = [float(c) for c in cats]
        sensitivity[col] = max(max(nums) - min(nums), 1.0)
    return sensitivity
""",
        # a statistical-disclosure baseline beside the DP method: Gaussian noise k standard deviations
        # wide, with no privacy parameter anywhere in it
        """
import numpy as np
def additive_noise_protection(series_list, num_stdev):
    sigmas = [np.std(x) for x in series_list]
    rng = np.random.default_rng(0)
    return [rng.normal(loc=0, scale=sigmas[i] * num_stdev, size=len(r)) + r for i, r in enumerate(series_list)]
def dp_protection(x, epsilon, lo, hi):
    return np.clip(x, lo, hi) + np.random.laplace(0, (hi - lo) / epsilon, len(x))
""",
        # a DP estimator handed its budget and public bounds
        """
from diffprivlib.models import GaussianNB
def train(X, y, epsilon, lower, upper):
    return GaussianNB(epsilon=epsilon, bounds=(lower, upper)).fit(X, y)
""",
        # a perturbation handed its budget and a configured value range
        """
import torch
class Perturb:
    def __init__(self, eps, value_range=(0.0, 1.0)):
        self.eps, self.value_range = eps, value_range
    def __call__(self, x):
        return RangeMechanism(eps=self.eps, input_range=self.value_range)(x)
""",
        # a clipping range fixed by the caller, the budget passed positionally
        """
import numpy as np
def release_mean(ages, epsilon):
    lo, hi = 0, 120
    return BoundedMean(epsilon, lower=lo, upper=hi).release(np.asarray(ages))
""",
        # the query function tabulated over the degrees 0..n (a literal k): its maximum up to the public
        # degree bound is the query's sensitivity, read from no record
        """
import numpy as np
from scipy.special import comb
K = 3
def kstar_count(graph, degree_bound, epsilon):
    query = comb(np.arange(graph.number_of_nodes() + 1), K)
    exact = sum(query[d] for _, d in graph.degree())
    sensitivity = np.max(query[:degree_bound + 1]) + np.max(query[1:degree_bound + 1] - query[:degree_bound])
    return exact + np.random.laplace(0, sensitivity / epsilon)
""",
        # the same with the edge query (half the degree): still a tabulated public function
        """
import numpy as np
def edge_count(graph, degree_bound, epsilon):
    per_node = np.arange(graph.number_of_nodes() + 1) / 2.0
    exact = sum(per_node[d] for _, d in graph.degree())
    sensitivity = np.max(per_node[:degree_bound + 1])
    return exact + np.random.laplace(0, sensitivity / epsilon)
""",
        # noise set to a chosen signal-to-noise ratio (the weights' power over `snr`) in an attack
        # experiment: no privacy parameter is involved, so the scale calibrates no DP guarantee
        """
import numpy as np
import torch
def noisy_weights(model, snr):
    params = list(model.parameters())
    W = params[0]
    w_norm2 = 0.0
    for i in range(W.shape[0]):
        w_norm2 += torch.norm(W[i]).item() ** 2
    sigma2 = w_norm2 / (snr * W.numel())
    std = np.sqrt(sigma2)
    with torch.no_grad():
        W.add_(torch.normal(0, std, size=W.shape))
    return model, std
""",
        """
import numpy as np
def add_channel_noise(signal, snr_db, epsilon):
    sigma = np.sqrt(np.mean(signal ** 2) / (10 ** (snr_db / 10)))
    return signal + np.random.normal(0, sigma, signal.shape)
""",
        # the row-norm bound of a DP estimator is configured, and the rows are clipped to it
        """
import numpy as np
from diffprivlib.models import LogisticRegression
def fit_model(features, labels, epsilon, row_bound=1.0):
    norms = np.linalg.norm(features, axis=1, keepdims=True)
    features = features / np.maximum(1.0, norms / row_bound)
    return LogisticRegression(epsilon=epsilon, data_norm=row_bound).fit(features, labels)
""",
        # the norm bound comes from the public schema; the data's largest norm is only printed
        """
import numpy as np
from diffprivlib.models import PCA
def reduce(table, schema, eps):
    print("largest row norm", np.max(np.linalg.norm(table, axis=1)))
    return PCA(n_components=2, epsilon=eps, data_norm=schema["norm"]).fit(table)
""",
        # a regression's norm bound is a literal, the data's norms only scale it down
        """
import numpy as np
from diffprivlib.models import LinearRegression
def regress(X, y, epsilon):
    X = X / np.linalg.norm(X, axis=1).reshape(-1, 1).clip(min=1.0)
    return LinearRegression(epsilon=epsilon, data_norm=1.0, bounds_X=(-1, 1), bounds_y=(0, 1)).fit(X, y)
""",
        # (g39-2) twin of the median clip bound: the bound is a public constant; the noise comes from the project's
        # own sampler, sized to it
        """
import numpy as np
def mcmc_normal(density, n):
    x, out = 0.0, []
    for _ in range(n):
        y = x + np.random.uniform(-1, 1)
        if np.random.uniform() < density(y) / density(x):
            x = y
        out.append(x)
    return np.array(out)

def sanitize(deltas, norms, clip_bound, noise_multiplier):
    total = 0
    for d, norm in zip(deltas, norms):
        total = total + d / max(1, norm / clip_bound)
    std = clip_bound * noise_multiplier
    return total + mcmc_normal(lambda x: np.exp(-x * x / (2 * std * std)), total.size)
""",
        # (g39-2) ordinary ML: gradient clipping at a percentile of the recent gradient norms (no privacy at all)
        """
import numpy as np
import torch
def train_step(model, loss, history, optimizer):
    loss.backward()
    bound = np.percentile(history, 10) if history else 1.0
    total = torch.nn.utils.clip_grad_norm_(model.parameters(), bound)
    history.append(float(total))
    optimizer.step()
""",
        # (q2 h45) a statistic with Laplace noise added to it is the release: using the noisy spread as the
        # scale of a synthetic draw is post-processing (the draws' own scales are public)
        """
import numpy as np


def synth_scores(group_values, n_out, epsilon):
    vals = np.asarray(group_values, dtype=float)
    step = 1.0 / len(vals)
    raw_spread = np.std(vals)
    spread = raw_spread + np.random.laplace(0, step / epsilon)
    centre = float(np.mean(vals) + np.random.laplace(0, step / epsilon))
    return np.random.normal(centre, max(spread, 0.01), n_out)
""",
        # (q2 h45) ``cap, features = load(path)``: only the element a name unpacks is what it holds; the
        # public cap is the scale, the min-max normalised features are not
        """
import numpy as np


def load(path, cap=5.0):
    table = np.loadtxt(path)
    spread = table.max(axis=0) - table.min(axis=0)
    return cap, (table - table.min(axis=0)) / spread


def noisy_counts(counts, scale, epsilon):
    return counts + np.random.laplace(0, scale / epsilon, len(counts))


def main(path, epsilon):
    cap, features = load(path)
    counts = np.histogram(features[:, 0], bins=10, range=(0, 1))[0]
    return noisy_counts(counts, cap, epsilon)
""",
        # (QA h46) the per-dimension range of a token-embedding table loaded from a file: the
        # vocabulary's, public, a sensitivity for perturbing one token's embedding
        """
import json
import numpy as np
def perturb_token(vec, epsilon):
    with open("assets/token_embeddings.json") as fh:
        table = json.load(fh)
    emb = np.array(list(table.values()))
    widths = np.zeros(emb.shape[1])
    for d in range(emb.shape[1]):
        col = np.sort(emb[:, d])
        span_d = col[-1] - col[0]
        widths[d] = span_d
    sensitivity = widths
    return vec + np.random.laplace(0, sensitivity / epsilon, vec.shape)
""",
        # (QA h46) ``for c in frame`` walks a DataFrame's column labels: the helper's value is the layout's
        """
import numpy as np
import pandas as pd
def label_spread(frame):
    vals = []
    for c in frame:
        vals.append(float(c))
    return (max(vals) - min(vals)) / max(vals)
def noisy_features(path, epsilon):
    table = pd.read_csv(path, header=None)
    feats = table.iloc[:, 1:-1]
    sensitivity = label_spread(feats)
    return feats + np.random.laplace(0, sensitivity / epsilon, feats.shape)
""",
        # ordinary ML: an embedding table's range used to init a projection, no noise
        """
import numpy as np
def init_projection(path):
    emb = np.load(path)
    lo, hi = emb.min(), emb.max()
    return np.random.uniform(lo, hi, (emb.shape[1], 16))
""",
    )

    INVALID = (
        # (S5 h48 twin) the same ratio over scores the caller computed from the private data
        """
import math
import torch
def local_step(model, sigma):
    for p in model.parameters():
        p.grad += torch.randn_like(p.grad) * sigma
def run(models, rounds, noise_multiplier, epsilon, private_scores):
    for r in range(rounds):
        chunk = private_scores[r * len(models):(r + 1) * len(models)]
        for i, m in enumerate(models):
            local_step(m, noise_multiplier * math.sqrt(float(chunk[i]) / float(min(chunk))))  # <-
""",
        # (fp47) twin of the blend: the image's own spread multiplies the Gaussian noise added to it
        """
import numpy as np
def add_vessel(img, epsilon, rng):
    w = np.std(img)  # <-
    return img + w * rng.normal(0.0, 1.0 / epsilon, size=img.shape)
""",
        # (R3 b69) the iteration count (hence sigma) from the exact spectral gap of the private matrix
        """
import numpy as np


def private_top_k(data, k, epsilon, delta, start):
    cov = data.T @ data
    _, spectrum, _ = np.linalg.svd(cov)  # <-
    rounds = int(10 * spectrum[k - 1] * np.log(cov.shape[0]) / (spectrum[k - 1] - spectrum[k]))
    sigma = np.sqrt(4.0 * k * rounds * np.log(1.0 / delta)) / epsilon
    basis = start
    for _ in range(rounds):
        noisy = cov @ basis + np.random.normal(0.0, sigma, basis.shape)
        basis, _ = np.linalg.qr(noisy)
    return basis
""",
        """
import numpy as np


def noisy_power_method(X, k, epsilon, delta, iters_scale=10):
    gram = X.T @ X
    values = np.linalg.eigvalsh(gram)[::-1]  # <-
    steps = int(iters_scale * values[0] / (values[k - 1] - values[k]))
    noise_std = np.sqrt(steps * np.log(1.0 / delta)) / epsilon
    basis = np.linalg.qr(np.random.randn(gram.shape[0], k))[0]
    for _ in range(steps):
        basis = np.linalg.qr(gram @ basis + np.random.normal(0.0, noise_std, basis.shape))[0]
    return basis
""",
        # (R3 b65) the twins: the call turns the data-peak bound on
        """
import numpy as np


def perturb_channels(frames, noise_multiplier, use_peak=False):
    columns = np.split(frames, frames.shape[1], axis=1)
    for j, column in enumerate(columns):
        bound = 1.0 if not use_peak else np.max(column)  # <-
        columns[j] = column + np.random.laplace(scale=bound * noise_multiplier, size=column.shape)
    return np.concatenate(columns, axis=1)


def run(frames):
    return perturb_channels(frames, noise_multiplier=0.5, use_peak=True)
""",
        """
import numpy as np


def noisy_total(values, epsilon, data_bound=None):
    bound = 1.0
    if data_bound:
        bound = np.max(np.abs(values))  # <-
    clipped = np.clip(values, -bound, bound)
    return clipped.sum() + np.random.laplace(scale=bound / epsilon)


def report(values):
    return noisy_total(values, epsilon=1.0, data_bound=True)
""",
        # (q3 h46) the data's own maximum inside the sensitivity function handed to a per-group mean helper
    """
import numpy as np
def noisy_group_means(groups, sensitivity_fn, epsilon):
    return {g: np.mean(v) + np.random.laplace(0, sensitivity_fn(v) / epsilon) for g, v in groups.items()}
def clicks_by_region(frame, epsilon):
    top = frame["clicks"].max()  # <-
    groups = frame.groupby("region")["clicks"].apply(list).to_dict()
    return noisy_group_means(groups, lambda v: top / len(v), epsilon)
""",
        # (q3 h46) the filled ``limits`` in a library module: an importer may call ``perturb`` without them
    """
import numpy as np
def perturb(X, mult, limits=None):
    out = X.astype(float)
    for j in range(X.shape[1]):
        if limits is not None:
            width = limits[j][1] - limits[j][0]
        else:
            width = np.max(X[:, j]) - np.min(X[:, j])  # <-
        out[:, j] += np.random.laplace(0.0, mult * width, size=len(X))
    return out
def release(X, epsilon, schema):
    limits = [(schema[c]["lo"], schema[c]["hi"]) for c in range(X.shape[1])]
    return perturb(np.clip(X, 0, 1), 1.0 / epsilon, limits)
""",
        # (q3 h46) twin of the filled ``limits``: one caller leaves them out, so the data-range fallback runs
    """
import numpy as np
def perturb(X, mult, limits=None):
    out = X.astype(float)
    for j in range(X.shape[1]):
        if limits is not None:
            width = limits[j][1] - limits[j][0]
        else:
            width = np.max(X[:, j]) - np.min(X[:, j])  # <-
        out[:, j] += np.random.laplace(0.0, mult * width, size=len(X))
    return out
def release(X, epsilon, schema):
    limits = [(schema[c]["lo"], schema[c]["hi"]) for c in range(X.shape[1])]
    return perturb(np.clip(X, 0, 1), 1.0 / epsilon, limits)
def release_quick(X, epsilon):
    return perturb(X, 1.0 / epsilon)
if __name__ == "__main__":
    print(release_quick(np.random.rand(10, 2), 1.0))
""",
        # the sensitivity function returns the largest row norm of the encoded private samples, whatever
        # the matrix is named (hypervectors, embeddings)
        """
import math
import torch
def dp_noise_std(epsilon, delta):
    return math.sqrt(2 * math.log(1.25 / delta)) / epsilon
def sensitivity(embedded):
    return embedded.norm(p=2, dim=1).max().item()  # <-
def privatize(class_vectors, epsilon, delta_f, delta=1e-5):
    return class_vectors + torch.normal(0.0, delta_f * dp_noise_std(epsilon, delta), size=class_vectors.shape)
""",
        # Tumult: bounds from the private column's min/max (Spark's dict aggregate), budget given later
        """
from tmlt.analytics.query_builder import QueryBuilder
from tmlt.analytics.privacy_budget import PureDPBudget
def mean_age(session, spark_df, epsilon):
    lo = spark_df.agg({"age": "min"}).first()[0]  # <-
    hi = spark_df.agg({"age": "max"}).first()[0]  # <-
    query = QueryBuilder("people").average("age", low=lo, high=hi)
    return session.evaluate(query, privacy_budget=PureDPBudget(epsilon))
""",
        # OpenDP: the clamp's bounds from the data, the scale set further down the chain
        """
import opendp.prelude as dp
def dp_sum(data, scale):
    bounds = (min(data), max(data))  # <-
    space = dp.vector_domain(dp.atom_domain(T=float)), dp.symmetric_distance()
    meas = space >> dp.t.then_clamp(bounds) >> dp.t.then_sum() >> dp.m.then_laplace(scale)
    return meas(data)
""",
        # the twin collects the parties' raw values and takes their largest as the sensitivity
        """
import numpy as np
from mpyc.runtime import mpc
def aggregate(reports, epsilon):
    total, vals = 0, []
    for r in reports:
        total = total + r[1]
        vals.append(r[0])
    bound = mpc.max(vals)  # <-
    return total + np.random.laplace(0, bound / epsilon)
""",
        # the sensitivity is the data's largest value plus one
        """
import numpy as np
def release_sum(values, epsilon):
    sensitivity = int(np.max(values)) + 1  # <-
    return np.sum(values) + np.random.laplace(0, sensitivity / epsilon)
""",
        # a zero table filled with the records afterwards holds data: its extremes are statistics
        """
import numpy as np
def release(rows, epsilon):
    data = np.zeros(len(rows), dtype=int)
    for i in range(len(rows)):
        data[i] = rows[i][0]
    low = min(data)  # <-
    return np.clip(data, low, 10).sum() + np.random.laplace(0, (10 - low) / epsilon)
""",
        # the same script whose second table holds the observed degrees: its maximum is data
        """
import numpy as np
n = 2 ** 7
bound = 2 ** 3
def release_nodes(graph, epsilon):
    table = np.array([d for _, d in graph.degree()], dtype=float)  # <-
    sensitivity = np.max(table[:(bound + 1)])
    return graph.number_of_nodes() + np.random.laplace(0, sensitivity / epsilon)
""",
        # a helper given the records returns their largest row sum, which then scales the noise
        """
import numpy as np
def summarise(adj):
    return {"adj": adj, "scale": float(adj.sum(axis=1).max())}  # <-
def run(adj, epsilon: float):
    net = summarise(adj)  # <-
    bound = net["scale"]
    return net["adj"].sum() + np.random.laplace(0, bound / epsilon)
""",
        # a helper with scalar knobs that loads the records from disk is no simulator
        """
import numpy as np
def load_sample(path: str, n: int = 500, seed: int = 1):
    rows = np.loadtxt(path)[:n]
    gen = np.random.default_rng(seed)
    return gen.permutation(rows), np.abs(rows).max()  # <-
def experiment(path: str, eps: float):
    y, top = load_sample(path)  # <-
    return y.mean() + np.random.laplace(0, top / (len(y) * eps))
""",
        # a noise object's sampler handed the width of the private speeds
        """
import numpy as np
def publish(frame, noise, epsilon):
    width = np.ptp(frame["speed"])  # <-
    return frame["speed"] + noise.speed.sample(width / epsilon, width / epsilon)
""",
        # a frozen Laplace distribution drawn with the private maximum as its scale
        """
import numpy as np
def dp_total(values, laplace_noise, epsilon):
    top = values.max()  # <-
    return values.sum() + laplace_noise.rvs(top / epsilon)
""",
        # a mechanism object's draw sized by the private standard deviation
        """
import numpy as np
def release(readings, gaussian_mech, rho):
    spread = np.std(readings)  # <-
    return readings.mean() + gaussian_mech.draw(spread, rho)
""",
        # a DP estimator handed its budget and bounds read from the data it trains on
        """
from diffprivlib.models import GaussianNB
def train(X, y, epsilon):
    lower, upper = X.min(axis=0), X.max(axis=0)  # <-
    return GaussianNB(epsilon=epsilon, bounds=(lower, upper)).fit(X, y)
""",
        # a perturbation whose value range falls back to the tensor's own extremes
        """
import torch
class Perturb:
    def __init__(self, eps, value_range=None):
        self.eps, self.value_range = eps, value_range
    def __call__(self, x):
        if self.value_range is None:
            self.value_range = (float(torch.min(x)), float(torch.max(x)))  # <-
        return RangeMechanism(eps=self.eps, input_range=self.value_range)(x)
""",
        # a clipping range at the data's own percentiles, the budget passed positionally
        """
import numpy as np
def release_mean(ages, epsilon):
    lo, hi = np.percentile(ages, 1), np.percentile(ages, 99)  # <-
    return BoundedMean(epsilon, lower=lo, upper=hi).release(np.asarray(ages))
""",
        # the largest neighbour degree kept in a name, then privatised with a degree's scale
        """
import networkx as nx
from graphutil import perturb_mechanism
def upper_local_sensitivity(graph, epsilon_0):
    degree = dict(nx.degree(graph))  # <-
    out = {}
    for v in graph.nodes:
        m = 0
        for u in graph[v]:
            m = max(m, degree[u])
        out[v] = perturb_mechanism(m, scale=2 / epsilon_0)
    return out
""",
        # a column's sensitivity from the range of the values the column holds
        """
def column_sensitivity(columns, data, epsilon):
    sensitivity = {}
    for col in columns:
        cats = data[col].unique()
        nums = [float(c) for c in cats]
        sensitivity[col] = max(max(nums) - min(nums), 1.0)  # <-
    return sensitivity
""",
        # the same noise k standard deviations wide, divided by epsilon: a mechanism calibrated to the data
        """
import numpy as np
def gaussian_protection(series_list, num_stdev, epsilon):
    sigmas = [np.std(x) for x in series_list]  # <-
    rng = np.random.default_rng(0)
    return [rng.normal(loc=0, scale=sigmas[i] * num_stdev / epsilon, size=len(r)) + r
            for i, r in enumerate(series_list)]
""",
        # numpy: the empirical local sensitivity sets the Laplace scale
        """
import numpy as np
def output_perturbation(P, Q, R, epsilon):
    pred = P @ Q.T
    sensitivity = np.max(np.abs(pred - R))  # <-
    return P + np.random.laplace(0, sensitivity / epsilon, P.shape)
""",
        # torch: the noise std is the gradient's own norm
        """
import torch
def noisy_step(model, sigma, epsilon):
    for p in model.parameters():
        g_norm = p.grad.norm()  # <-
        p.grad += torch.randn_like(p.grad) * g_norm * sigma
""",
        # the twin: the bound is the largest column norm of the records themselves, read through a transpose
        """
import numpy as np
def hash_rows(rows, W):
    codes = rows @ W.T
    bound = max(np.linalg.norm(rows.T, axis=0))  # <-
    return codes, bound

def release(rows, W, delta, epsilon):
    codes, bound = hash_rows(rows, W)  # <-
    sigma = bound * np.sqrt(2 * np.log(1.25 / delta)) / epsilon
    return codes + np.random.normal(0, sigma, codes.shape)
""",
        # jax/tf-free plain Python: the sensitivity helper returns the data's maximum
        """
def sensitivity_of(ages):
    return max(ages)  # <-

def dp_total_age(ages, epsilon, rng):
    return sum(ages) + rng.laplace(0, sensitivity_of(ages) / epsilon)  # <-
""",
        # the server's clip bound is the median of the clients' norms, passed to a helper
        """
import numpy as np
def add_gaussian(total, scale):
    return total + np.random.normal(0, scale, total.shape)

def aggregate(updates, noise_multiplier, epsilon):
    bound = float(np.median([np.linalg.norm(u) for u in updates]))  # <-
    total = sum(u * min(1, bound / np.linalg.norm(u)) for u in updates)
    return add_gaussian(total, bound * noise_multiplier)
""",
        # SQL: the SUM query's sensitivity is the column's maximum
        """
def sum_sensitivity(cursor, column):
    cursor.execute(f"SELECT MAX({column}) FROM patients")
    row = cursor.fetchone()  # <-
    sensitivity = row[0]
    return sensitivity

def dp_sum(cursor, column, epsilon, rng):
    cursor.execute(f"SELECT SUM({column}) FROM patients")
    return cursor.fetchone()[0] + rng.laplace(0, sum_sensitivity(cursor, column) / epsilon)  # <-
""",
        # the noise is centred at the mean of the private counts
        """
import numpy as np
def publish(counts, epsilon):
    mu = np.mean(list(counts.values()))  # <-
    noise = [np.random.laplace(mu, 1 / epsilon) for _ in counts]
    return {k: v + n for (k, v), n in zip(counts.items(), noise)}
""",
        # a contribution bound written into a DP pipeline spec from the data
        """
def write_spec(ages, epsilon):
    print(f"epsilon = {epsilon}")
    print(f"MaxValue = {max(ages)}")  # <-
""",
        # a maximum kept by hand, returned by a sensitivity helper
        """
import random
class AgeQuery:
    def sensitivity(self):
        top, n = 0, 0
        for r in self.records:
            n += 1
            if r.age > top:
                top = r.age  # <-
        return top / n

    def answer(self, epsilon):
        b = self.sensitivity() / epsilon
        return self.mean_age() + random.expovariate(1 / b) - random.expovariate(1 / b)
""",
        # no DP names, but Laplace noise: centred at the mean of the true counts
        """
import numpy as np
from statistics import mean
def publish_paths(counts, b):
    u = mean(counts.values())  # <-
    lap = [np.random.laplace(u, b) for _ in counts]
    return [c + n for c, n in zip(counts.values(), lap)]
""",
        # the clip bound is the median of the clients' update norms, computed in a helper method
        """
import torch
from statistics import median
class Server:
    def clip_bounds(self, updates):
        bounds = {}
        for name, p in self.model.named_parameters():
            norms = [(p.detach() - u[name]).norm(2) for u in updates]
            bounds[name] = min(median(norms), 10)  # <-
        return bounds

    def aggregate(self, updates):
        bounds = self.clip_bounds(updates)  # <-
        for name, p in self.model.named_parameters():
            total = sum((u[name] - p) * min(1, bounds[name] / (u[name] - p).norm(2)) for u in updates)
            total += torch.normal(0, bounds[name] * self.noise_multiplier, p.shape)
            p.data += total / len(updates)
""",
        # a length quantile picked by hand from the sorted records, handed to a helper as its noise scale
        """
import numpy as np
def add_noise_to_hist(hist, scale):
    return hist + np.random.normal(0, scale, len(hist))

def noisy_lengths(traces, sigma, fraction, delta):
    ranked = sorted(traces, key=len)
    bound = len(ranked[int(fraction * len(ranked))])  # <-
    hist = np.bincount([min(len(t), bound) for t in traces])
    return add_noise_to_hist(hist, sigma * bound)
""",
        # the helper draws the noise: the data's range given as its width
        """
import numpy as np
def finish(hist, width, epsilon):
    return hist + np.random.laplace(0, width / epsilon, hist.shape)

def release(ages, epsilon):
    width = np.max(ages) - np.min(ages)  # <-
    hist, _ = np.histogram(ages, bins=10)
    return finish(hist, width, epsilon)
""",
        # per-node local sensitivity from the node's actual degree
        """
import numpy as np
def star_counts(graph, k, epsilon):
    out = []
    for v in graph.nodes():
        d = graph.degree(v)  # <-
        out.append(d ** k + np.random.laplace(0, d ** (k - 1) / epsilon))
    return out
""",
        # the twin's query takes its exponent from the largest degree in the graph: data, not a table
        """
import numpy as np
from scipy.special import comb
def kstar_count(graph, degree_bound, epsilon):
    degrees = np.array([d for _, d in graph.degree()])
    query = comb(np.arange(graph.number_of_nodes() + 1), degrees.max())  # <-
    exact = sum(query[d] for d in degrees)
    sensitivity = np.max(query[:degree_bound + 1]) + np.max(query[1:degree_bound + 1] - query[:degree_bound])
    return exact + np.random.laplace(0, sensitivity / epsilon)
""",
        # the twin tabulates the sorted degrees themselves: the maximum is the graph's
        """
import numpy as np
def edge_count(graph, degree_bound, epsilon):
    per_node = np.sort(np.array([d for _, d in graph.degree()])) / 2.0  # <-
    exact = per_node.sum()
    sensitivity = np.max(per_node[:degree_bound + 1])
    return exact + np.random.laplace(0, sensitivity / epsilon)
""",
        # the twins: the same power-based scale, but divided by the privacy budget: a DP calibration
        """
import numpy as np
import torch
def noisy_weights(model, epsilon):
    params = list(model.parameters())
    W = params[0]
    w_norm2 = 0.0
    for i in range(W.shape[0]):
        w_norm2 += torch.norm(W[i]).item() ** 2  # <-
    sigma2 = w_norm2 / (epsilon * W.numel())
    std = np.sqrt(sigma2)
    with torch.no_grad():
        W.add_(torch.normal(0, std, size=W.shape))
    return model, std
""",
        """
import numpy as np
def add_channel_noise(signal, snr_db, epsilon):
    sigma = np.sqrt(np.mean(signal ** 2) / (10 ** (snr_db / 10))) / epsilon  # <-
    return signal + np.random.normal(0, sigma, signal.shape)
""",
        # a DP estimator's row-norm bound is the largest norm of the rows it is fitted on
        """
import numpy as np
from diffprivlib.models import LogisticRegression
def fit_model(features, labels, epsilon):
    row_bound = np.max(np.linalg.norm(features, axis=1))  # <-
    return LogisticRegression(epsilon=epsilon, data_norm=row_bound).fit(features, labels)
""",
        # the same bound written inline as the keyword's value
        """
import numpy as np
from diffprivlib.models import PCA
def reduce(table, eps):
    return PCA(n_components=2, epsilon=eps, data_norm=float(np.linalg.norm(table, axis=1).max())).fit(table)  # <-
""",
        # the bound taken row by row with a generator, then given to a regression with its budget
        """
import numpy as np
from diffprivlib.models import LinearRegression
def regress(X, y, epsilon):
    biggest = max(np.linalg.norm(row) for row in X)  # <-
    return LinearRegression(epsilon=epsilon, data_norm=biggest, bounds_X=(-1, 1), bounds_y=(0, 1)).fit(X, y)
""",
        # (g39-2) the clip bound is the median of the clients' raw update norms; the noise is drawn by a hand-written
        # sampler, so only the clip bound shows the calibration
        """
import numpy as np
def mcmc_normal(density, n):
    x, out = 0.0, []
    for _ in range(n):
        y = x + np.random.uniform(-1, 1)
        if np.random.uniform() < density(y) / density(x):
            x = y
        out.append(x)
    return np.array(out)

def sanitize(deltas, norms, noise_multiplier):
    bound = np.median(norms)  # <-
    total = 0
    for d, norm in zip(deltas, norms):
        total = total + d / max(1, norm / bound)
    std = bound * noise_multiplier
    return total + mcmc_normal(lambda x: np.exp(-x * x / (2 * std * std)), total.size)
""",
        # (g39-2) DP-SGD whose clip norm is the mean norm of this batch's per-example gradients
        """
import torch
def private_step(model, per_example_grads, noise_multiplier, optimizer):
    norms = torch.stack([g.norm(2) for g in per_example_grads])
    clip = norms.mean().item()  # <-
    for g in per_example_grads:
        torch.nn.utils.clip_grad_norm_([g], max_norm=clip)
    model.weight.grad = torch.stack(per_example_grads).mean(0) + torch.randn_like(model.weight) * noise_multiplier
    optimizer.step()
""",
        # (q2 h45) twin: the exact spread, not a noisy one, scales the synthetic draw
        """
import numpy as np


def synth_scores(group_values, n_out, epsilon):
    vals = np.asarray(group_values, dtype=float)
    step = 1.0 / len(vals)
    spread = np.std(vals)  # <-
    centre = float(np.mean(vals) + np.random.laplace(0, step / epsilon))
    return np.random.normal(centre, max(spread, 0.01), n_out)
""",
        # (q2 h45) twin: the noise added to the spread is itself sized by the data's range
        """
import numpy as np


def synth_scores(group_values, n_out, epsilon):
    vals = np.asarray(group_values, dtype=float)
    spread = np.std(vals) + np.random.laplace(0, np.ptp(vals) / epsilon)  # <-
    return np.random.normal(0.0, max(spread, 0.01), n_out)
""",
        # (q2 h45) twin: the unpacked element is the data's largest range, and it is the scale
        """
import numpy as np


def load(path):
    table = np.loadtxt(path)
    spread = table.max(axis=0) - table.min(axis=0)
    return spread.max(), table / spread  # <-


def noisy_counts(counts, scale, epsilon):
    return counts + np.random.laplace(0, scale / epsilon, len(counts))


def main(path, epsilon):
    cap, features = load(path)  # <-
    counts = np.histogram(features[:, 0], bins=10, range=(0, 1))[0]
    return noisy_counts(counts, cap, epsilon)
""",
        # (QA h46) twins of the quiet shapes: the range is over the user's own text embeddings, and the
        # helper walks the rows of a numpy matrix (not a DataFrame's labels)
        """
import json
import numpy as np
def perturb_text(encoder, sentences, epsilon):
    hidden = np.array([encoder(s) for s in sentences])
    spread = hidden.max(axis=0) - hidden.min(axis=0)  # <-
    return hidden + np.random.laplace(0, spread / epsilon, hidden.shape)
""",
        """
import numpy as np
def row_spread(m):
    norms = []
    for r in m:
        norms.append(np.linalg.norm(r))
    return max(norms) - min(norms)  # <-
def noisy_inputs(path, epsilon):
    m = np.loadtxt(path, delimiter=",")[:, :-1]
    sensitivity = row_spread(m)  # <-
    return m + np.random.laplace(0, sensitivity / epsilon, m.shape)
""",
    )

    def visit_Module(self, node: cst.Module) -> None:
        fa = self.ctx.analysis
        self._taints: dict[cst.CSTNode, dict[str, list[cst.CSTNode]]] = {}
        self._reported: set[cst.CSTNode] = set()
        scopes: list[cst.CSTNode] = [node, *fa.nodes(cst.FunctionDef)]
        for scope in scopes:
            self._check_scope(scope)

    # ---- where the statistic goes -----------------------------------------------------------
    def _check_scope(self, scope: cst.CSTNode) -> None:
        fa = self.ctx.analysis
        tainted = self._taint(scope)
        body = scope.body if isinstance(scope, cst.FunctionDef) else scope
        nodes = list(walk(body, into_scopes=False))
        sensitivity_fn = isinstance(scope, cst.FunctionDef) and _sensitivity_name(scope.name.value) and not (
            words(scope.name.value) & {"bound", "bounded", "clip", "clamp", "enforce", "limit", "normalize"})
        for n in nodes:
            if isinstance(n, cst.Call):
                for sink, what in self._call_sinks(n, nodes, scope):
                    self._check(sink, what, tainted, scope)
            elif isinstance(n, cst.Assign) and not _textual(n.value) and any(
                    _sensitivity_name(dotted(t.target)) and self._read_later(dotted(t.target), n, scope)
                    for t in n.targets):
                self._check(n.value, "a sensitivity", tainted, scope, records=True)
            elif isinstance(n, cst.AnnAssign) and n.value is not None and not _textual(n.value) \
                    and _sensitivity_name(dotted(n.target)) and self._read_later(dotted(n.target), n, scope):
                self._check(n.value, "a sensitivity", tainted, scope, records=True)
            elif isinstance(n, cst.Return) and sensitivity_fn and n.value is not None:
                self._check(n.value, "the sensitivity function's result", tainted, scope, records=True)
            elif isinstance(n, cst.FormattedString):
                self._check_spec(n, tainted, scope)

    def _read_later(self, name: str | None, stmt: cst.CSTNode, scope: cst.CSTNode) -> bool:
        """Is the sensitivity ``stmt`` assigns read after it (anywhere, when ``stmt`` is in a loop; an
        attribute anywhere in the module)? A value assigned and never read calibrates nothing."""
        if name is None:
            return False
        fa = self.ctx.analysis
        attribute = "." in name
        where = fa.module if attribute else scope
        body = where.body if isinstance(where, cst.FunctionDef) else where
        targets = set()
        if isinstance(stmt, cst.Assign):
            targets = {id(t.target) for t in stmt.targets}
        elif isinstance(stmt, cst.AnnAssign):
            targets = {id(stmt.target)}
        looped = any(isinstance(a, (cst.For, cst.While)) for a in fa.ancestors(stmt))
        after = fa.line_of(stmt)
        for n in walk(body, into_scopes=attribute):
            if isinstance(n, (cst.Name, cst.Attribute)) and id(n) not in targets and dotted(n) == name \
                    and (looped or attribute or fa.line_of(n) > after):
                return True
        return False

    def _fixed_multiple(self, scales: list[cst.BaseExpression], scope: cst.CSTNode) -> bool:
        """The draw's scale is a literal multiple of a statistic and nothing else (``0.01 * x.std()``,
        one assignment back): a jitter sized to the value it perturbs, not a calibration, which always
        involves a privacy parameter (epsilon, sigma, a noise multiplier)."""
        bindings = self.ctx.analysis.bindings_in(scope)
        stat = False
        rest: set[str] = set()

        def inputs(expr: cst.CSTNode) -> set[str]:
            """Every name ``expr`` mentions (a divisor too) outside its statistics."""
            nonlocal stat
            inside: set[int] = set()
            out: set[str] = set()
            for n in walk(expr, into_scopes=False):
                if isinstance(n, cst.Call) and _statistic(n):
                    stat = True
                    inside |= {id(m) for m in walk(n)}
                elif isinstance(n, cst.Name) and id(n) not in inside:
                    out.add(n.value)
            return out

        for scale in scales:
            for name in inputs(scale):
                found = [b.value for b in bindings.get(name, []) if b.value is not None]
                if len(found) == 1 and any(isinstance(n, cst.Call) and _statistic(n) for n in walk(found[0])):
                    rest |= inputs(found[0])
                else:
                    rest.add(name)
        return stat and not {n for n in rest if n.split(".")[0] not in _MODULES}

    def _target_snr(self, scales: list[cst.BaseExpression], scope: cst.CSTNode) -> bool:
        """The scale is the signal's own power over a chosen signal-to-noise ratio (``sigma2 =
        power / snr``, a few assignments back) and reads no privacy parameter: noise set to a target
        SNR (a robustness or attack experiment), not a DP calibration."""
        bindings = self.ctx.analysis.bindings_in(scope)
        seen: set[str] = set()
        todo = [(scale, 0) for scale in scales]
        while todo:
            expr, depth = todo.pop()
            # every name, divisors too (``power / snr``): ``_read_names`` keeps only dividends
            for name in {dotted(n) or "" for n in walk(expr) if isinstance(n, (cst.Name, cst.Attribute))} - seen - {""}:
                seen.add(name)
                if depth < 3:
                    todo.extend((b.value, depth + 1) for b in bindings.get(name, []) if b.value is not None)
        named = {w for n in seen for w in words(n)}
        return "snr" in named and not named & (_BUDGET_WORDS | {"multiplier", "delta", "privacy"})

    def _call_sinks(self, call: cst.Call, nodes: list[cst.CSTNode],
                    scope: cst.CSTNode | None = None) -> list[tuple[cst.BaseExpression, str]]:
        fa = self.ctx.analysis
        name = call_name(call)
        out: list[tuple[cst.BaseExpression, str]] = []
        for arg in call.args:
            if arg.keyword is not None and arg.keyword.value in _BOUND_KEYWORDS:
                out.append((arg.value, f"`{arg.keyword.value}=`"))
        out.extend(self._library_bounds(call, name))
        if name not in PURE_DRAWS and _budgeted(call):
            # a mechanism or DP estimator handed its budget and the data's range (``bounds=``,
            # ``input_range=``, ``lower=``/``upper=``): the range sets its sensitivity and clipping
            for arg in call.args:
                if arg.keyword is not None and arg.keyword.value not in _BOUND_KEYWORDS \
                        and words(arg.keyword.value) & _RANGE_KEYWORD_WORDS:
                    callee_text = f"`{name}`" if name else "a mechanism"
                    out.append((arg.value, f"`{arg.keyword.value}=` of {callee_text}, which is given a privacy budget"))
        if name in PURE_DRAWS:
            positional = [a.value for a in call.args if a.keyword is None and not a.star]
            for arg in call.args:
                if arg.keyword is not None and arg.keyword.value in _SCALE_KEYWORDS:
                    out.append((arg.value, "the noise scale"))
            if name in _TWO_PARAM_DRAWS and len(positional) >= 2:
                out.append((positional[1], "the noise scale"))
            child: cst.CSTNode = call
            parent = fa.parent(call)
            while isinstance(parent, cst.BinaryOperation) and isinstance(parent.operator, (cst.Multiply, cst.Divide)):
                other = parent.right if parent.left is child else parent.left
                if not (isinstance(parent.operator, cst.Multiply) and _blend_weight(other, parent, fa)):
                    out.append((other, "the noise scale"))
                child, parent = parent, fa.parent(parent)
            scales = [sink for sink, what in out if what == "the noise scale"]
            if scope is not None and scales and (self._fixed_multiple(scales, scope) or _unparameterised(scope, name)
                                                 or self._target_snr(scales, scope)):
                out = [(sink, what) for sink, what in out if what != "the noise scale"]
            if not zero_centred(call) and self._used_as_noise(call, nodes):
                loc = next((a.value for a in call.args if a.keyword is not None and a.keyword.value in _LOC_KEYWORDS),
                           positional[0] if positional else None)
                if loc is not None:
                    out.append((loc, "the centre of the noise"))
        if name in _SAMPLER_METHODS and isinstance(call.func, cst.Attribute) \
                and words(dotted(call.func.value) or "") & _NOISE_OWNER_WORDS:
            # ``noise.speed.sample(width, width)``: a noise object's sampler, its arguments parameterise the draw
            for arg in call.args:
                if not arg.star:
                    out.append((arg.value, f"a parameter of the noise sampler `{dotted(call.func) or name}`"))
        bound = _clip_bound(call, name)
        if bound is not None:
            out.append((bound, "the clip bound (and so the sensitivity the noise must cover)"))
        callee = fa.callee(call)
        if callee is None and words(name) & _MECHANISM_WORDS and name not in PURE_DRAWS:
            # an imported mechanism helper: the argument named for the scale or sensitivity
            for arg in call.args:
                label = dotted(arg.value) or ""
                named = {"sensitivity", "sens", "scale"}  # not std/sigma: ``laplace_mechanism(std, sens, eps)``
                if words(label) & named or arg.keyword is not None and words(arg.keyword.value) & named:
                    out.append((arg.value, f"`{label or arg.keyword.value}` given to `{name}`"))  # type: ignore[union-attr]
        if callee is not None and scope is not None and callee is not scope:
            # a helper that draws the noise with this argument as (part of) its scale
            scaled = self._scale_params(callee)
            if scaled:
                params = call_params(call, callee)
                for i, arg in enumerate(call.args):
                    if arg.star:
                        break
                    param = arg.keyword.value if arg.keyword is not None else (params[i] if i < len(params) else None)
                    if param in scaled and not _mimics_own_noise(callee, param):
                        out.append((arg.value, f"the noise scale in `{callee.name.value}` (its `{param}`)"))
        # (q3 h46) a sensitivity function handed over as a lambda (``get_dp_mean(df, lambda x: top / len(x),
        # eps)`` into ``global_sensitivity_func``): what the lambda computes is the sensitivity
        params = call_params(call, callee) if callee is not None else []
        for i, arg in enumerate(call.args):
            if arg.star:
                break
            param = arg.keyword.value if arg.keyword is not None else (params[i] if i < len(params) else None)
            if isinstance(arg.value, cst.Lambda) and param is not None \
                    and words(param) & {"sensitivity", "sens"} and words(param) & {"fn", "func", "function"}:
                out.append((arg.value.body, f"the sensitivity `{param}` computes"))
        if callee is not None and self._mechanism(callee):
            params = call_params(call, callee)
            for i, arg in enumerate(call.args):
                if arg.star:
                    break
                param = arg.keyword.value if arg.keyword is not None else (params[i] if i < len(params) else None)
                if param is not None and words(param) & _SCALE_PARAM_WORDS:
                    out.append((arg.value, f"the `{param}` of `{callee.name.value}`"))
        return out

    def _library_bounds(self, call: cst.Call, name: str | None) -> list[tuple[cst.BaseExpression, str]]:
        """The clamping bounds of a DP library query whose budget is passed in another call."""
        if not name or name not in _TMLT_AGGREGATES and not _OPENDP_BOUNDED.match(name):
            return []
        libs = {full.split(".")[0] for full in self.ctx.analysis.index.imports.values()}
        out: list[tuple[cst.BaseExpression, str]] = []
        positional = [a.value for a in call.args if a.keyword is None and not a.star]
        keyed = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
        if "tmlt" in libs and name in _TMLT_AGGREGATES and isinstance(call.func, cst.Attribute):
            bounds = [keyed.get("low"), keyed.get("high")]
            if name in ("sum", "average", "variance", "stdev", "get_bounds") or "low" in keyed:
                bounds += positional[1:3]
            for b in bounds:
                if b is not None:
                    out.append((b, f"the clamping bounds of Tumult's `{name}` query, from which the library "
                                   "derives the sensitivity of the noise"))
        if "opendp" in libs and _OPENDP_BOUNDED.match(name):
            given = keyed.get("bounds")
            if given is None and positional:
                given = positional[2] if name == "make_clamp" and len(positional) > 2 else (
                    positional[0] if name != "make_clamp" else None)
            if given is not None:
                out.append((given, f"the `bounds` of OpenDP's `{name}`, from which the library derives the "
                                   "sensitivity of the noise"))
        return out

    @staticmethod
    def _mechanism(fn: cst.FunctionDef) -> bool:
        if words(fn.name.value) & _MECHANISM_WORDS:
            return True
        return any(isinstance(n, cst.Call) and call_name(n) in PURE_DRAWS for n in walk(fn.body, into_scopes=False))

    def _used_as_noise(self, call: cst.Call, nodes: list[cst.CSTNode]) -> bool:
        """The draw is noise added to something else (named noise, or a term of a sum), not
        ``laplace(value, b)`` perturbing its centre."""
        fa = self.ctx.analysis
        parent = fa.parent(call)
        if isinstance(parent, cst.BinaryOperation) and isinstance(parent.operator, (cst.Add, cst.Subtract)):
            return True
        for anc in fa.ancestors(call):
            if isinstance(anc, cst.Assign):
                names = [dotted(t.target) for t in anc.targets]
                if any(words(n or "") & _NOISE_WORDS for n in names):
                    return True
                return any(isinstance(n, cst.Call) and call_name(n) == "append" and isinstance(n.func, cst.Attribute)
                           and words(dotted(n.func.value) or "") & _NOISE_WORDS
                           and any(dotted(a.value) in names for a in n.args) for n in nodes)
            if isinstance(anc, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
                break
        return False

    def _check_spec(self, fstring: cst.FormattedString, tainted: dict[str, list[cst.CSTNode]], scope: cst.CSTNode) -> None:
        text = ""
        for part in fstring.parts:
            if isinstance(part, cst.FormattedStringText):
                text += part.value
            elif isinstance(part, cst.FormattedStringExpression):
                match = _SPEC_PARAM.search(text)
                if match:
                    self._check(part.expression, f"the DP parameter `{match.group(0).rstrip(' =:')}`",
                                tainted, scope, spec=True)
                text = ""

    def _check(self, sink: cst.BaseExpression, what: str, tainted: dict[str, list[cst.CSTNode]], scope: cst.CSTNode,
               *, spec: bool = False, records: bool = False) -> None:
        fa = self.ctx.analysis
        origin: cst.CSTNode | None = None
        for n in walk(sink, into_scopes=False):
            if isinstance(n, cst.Call) and (self._source_call(n, scope) or spec and self._sorted_max(n, scope)):
                origin = fa.enclosing_statement(n)
                break
            if isinstance(n, cst.Subscript) and spec and self._sorted_max(n, scope):
                origin = fa.enclosing_statement(n)
                break
        if origin is None:
            at = fa.line_of(sink)
            for name in sorted(_value_names(sink)):
                if name in tainted:
                    found = tainted[name]
                    before = [o for o in found if fa.line_of(o) <= at]
                    origin = max(before, key=fa.line_of) if before else found[0]
                    break
        if origin is None or origin in self._reported:
            return
        if what.startswith("the clip bound"):
            stats = {call_name(n) for n in walk(origin, into_scopes=False) if isinstance(n, cst.Call) and _statistic(n)}
            if stats and not stats & _CLIP_SUMMARIES:
                return  # (g39-2) a radius measured once (``scale * norm(a - b)``, an attacker's step), not a summary
        if any(isinstance(n, cst.Call) and simulator(fa.callee(n)) for n in walk(origin, into_scopes=False)):
            return  # a statistic of a data set the code made up itself
        if records and not self._reads_records(origin, scope):
            return
        if not fa.in_dp_context(origin) and not fa.in_dp_context(sink) and not self._draws_laplace(sink) and not (
                spec and _DP_SPEC_TEXT.search(self.ctx.analysis.code(self.ctx.analysis.module))) \
                and not self._budgeted_argument(sink):
            return
        if bypassed_fallback(self.ctx.module, origin):
            return  # (q3 h46) the no-bounds fallback every caller here bypasses by passing bounds
        if self._switched_off(origin, scope):
            return  # (R3 b65) ``1 if not clip_max else np.max(x)`` with every call passing clip_max=False
        if self._public_table(origin, scope):
            return  # (QA h46) the range of a token-embedding table read from a file: public, the vocabulary's
        if self._ratio_over_fixed_minimum(origin, scope):
            return  # (S5 h48) ``s * sqrt(v[i] / min(v))`` of a table a no-argument helper reads: only raises the noise
        if self._frame_labels(origin, scope):
            return  # (QA h46) ``for v in frame`` in the helper walks a DataFrame's column labels, not its rows
        self._reported.add(origin)
        stat = " ".join(fa.code(origin).strip().split())
        if len(stat) > 90:
            stat = stat[:87] + "..."
        self.report(origin, f"`{stat}` computes a statistic of the data the mechanism protects, and it sets "
                            f"{what}: the calibration is this dataset's, not a public bound, so the output's "
                            f"distribution reveals it; use a fixed bound (and clip to it) or estimate it privately")
        inner = self._helper_origin(origin, scope)
        if inner is not None and inner not in self._reported:
            # the helper computing it is where the fix goes: a public bound instead of the statistic
            self._reported.add(inner)
            code = " ".join(fa.code(inner).strip().split())
            self.report(inner, f"`{code[:87] + '...' if len(code) > 90 else code}` computes a statistic of the data "
                               f"the mechanism protects, and its caller uses it to set {what}: the calibration is "
                               f"this dataset's, not a public bound; use a fixed bound (and clip to it) or "
                               f"estimate it privately")

    def _public_table(self, origin: cst.CSTNode, scope: cst.CSTNode) -> bool:
        """Every value ``origin`` reads comes, a few assignments back, from a token-embedding table or
        vocabulary: a file loaded by a path naming embeddings/vocabulary (``json.load(f)`` of
        ``open("data/cl100_embeddings.json")``), or a model's embedding weight
        (``model.get_input_embeddings().weight``). Its range is the vocabulary's, the same for every
        user's text, so it is a public sensitivity for perturbing one token's embedding."""
        fa = self.ctx.analysis
        bindings = fa.bindings_in(scope)
        body = scope.body if isinstance(scope, cst.FunctionDef) else scope
        withs = {n.asname.name.value: n.item for n in walk(body, into_scopes=False)
                 if isinstance(n, cst.WithItem) and n.asname is not None and isinstance(n.asname.name, cst.Name)}
        loops = {t for n in walk(body, into_scopes=False) if isinstance(n, cst.For) for t in target_names(n.target)}

        def texts(expr: cst.CSTNode, depth: int) -> str:
            out = [n.value for n in walk(expr) if isinstance(n, cst.SimpleString)]
            out += [n.value for n in walk(expr) if isinstance(n, cst.Name)]
            if depth < 3:
                for name in _read_names(expr):
                    if name in withs:
                        out.append(texts(withs[name], depth + 1))
                    for b in bindings.get(name, []):
                        if b.value is not None:
                            out.append(texts(b.value, depth + 1))
            return " ".join(out).lower()

        roots = 0
        seen: set[str] = set()
        todo: list[tuple[cst.CSTNode, int]] = [(origin, 0)]
        while todo:
            part, depth = todo.pop()
            for name in _read_names(part) - seen - loops:
                seen.add(name)
                if name is None or name.split(".")[0] in _MODULES:
                    continue
                found = [b.value for b in bindings.get(name, []) if b.value is not None
                         and not (isinstance(b.value, cst.Name) and b.value.value == "None")]
                if not found or depth > 6:
                    return False
                for v in found:
                    loads = [c for c in walk(v) if isinstance(c, cst.Call)
                             and call_name(c) in ("load", "loads", "loadtxt", "read_csv", "read_json", "load_state_dict")]
                    embed = [a for a in walk(v) if isinstance(a, cst.Attribute) and a.attr.value == "weight"
                             and re.search(r"(?i)embed|wte|vocab", fa.code(a.value))]
                    if loads or embed:
                        where = " ".join(texts(c, 0) for c in loads) + " ".join(fa.code(a) for a in embed).lower()
                        if not re.search(r"embed|vocab|glove|word2vec|fasttext|wte", where):
                            return False
                        roots += 1
                    elif isinstance(v, cst.Call) and fa.callee(v) is not None:
                        return False
                    else:
                        todo.append((v, depth + 1))
        return roots > 0

    def _ratio_over_fixed_minimum(self, origin: cst.CSTNode, scope: cst.CSTNode) -> bool:
        """(S5 h48, MQG-QY/NDPP-FL fed_main.py:211) Every statistic in ``origin`` is the ``min`` of a table
        that is divided by it entry by entry (``v[i] / min(v)``, a factor >= 1 that can only raise the noise
        above the accountant's σ), and the table comes, a few assignments back, from a helper called with no
        argument (``table = mi()`` reading a fixed file): no protected record reaches it here."""
        fa = self.ctx.analysis
        stats = [c for c in walk(origin, into_scopes=False) if isinstance(c, cst.Call) and _statistic(c)]
        if not stats:
            return False
        ratios: list[str] = []
        for c in stats:
            if call_name(c) != "min" or len(c.args) != 1 or not isinstance(c.args[0].value, cst.Name):
                return False
            table = c.args[0].value.value
            divided = False
            for n in walk(origin, into_scopes=False):
                if isinstance(n, cst.BinaryOperation) and isinstance(n.operator, cst.Divide) \
                        and any(m is c for m in walk(n.right)) \
                        and any(isinstance(m, cst.Subscript) and isinstance(m.value, cst.Name)
                                and m.value.value == table for m in walk(n.left)):
                    divided = True
            if not divided:
                return False
            ratios.append(table)
        module_bindings = fa.bindings_in(fa.module)
        bindings = fa.bindings_in(scope)
        for table in ratios:
            name, depth, rooted = table, 0, False
            while depth < 4 and not rooted:
                found = [b.value for b in bindings.get(name, []) or module_bindings.get(name, []) if b.value is not None]
                if len(found) != 1:
                    return False
                value = found[0]
                while isinstance(value, cst.Subscript):
                    value = value.value
                if isinstance(value, cst.Call) and not value.args and isinstance(value.func, cst.Name) \
                        and not words(value.func.value) & {"load", "read", "data", "dataset", "records", "fetch", "get"}:
                    rooted = True
                elif isinstance(value, cst.Name):
                    name = value.value
                else:
                    return False
                depth += 1
            if not rooted:
                return False
        return True

    def _frame_labels(self, origin: cst.CSTNode, scope: cst.CSTNode) -> bool:
        """``origin`` calls a helper of this module on a pandas DataFrame (``x = data.iloc[:, :-1]``)
        and the helper reads that parameter only as ``for v in param``: iterating a DataFrame yields
        its column labels, so the result is a function of the public column layout, not the rows."""
        fa = self.ctx.analysis
        bindings = fa.bindings_in(scope)
        for call in walk(origin, into_scopes=False):
            if not isinstance(call, cst.Call):
                continue
            callee = fa.callee(call)
            if callee is None:
                continue
            params = call_params(call, callee)
            frames = []
            for i, arg in enumerate(call.args):
                if arg.keyword is not None or i >= len(params) or not isinstance(arg.value, cst.Name):
                    continue
                at = fa.line_of(call)
                found = [b.value for b in bindings.get(arg.value.value, [])
                         if b.value is not None and fa.line_of(b.value) < at]
                found = found[-1:]  # the binding the call reads (the last one before it)
                if found and all(isinstance(v, cst.Subscript) and isinstance(v.value, cst.Attribute)
                                 and v.value.attr.value in ("iloc", "loc")
                                 or isinstance(v, cst.Call) and (dotted(v.func) or "") in (
                                     "pd.DataFrame", "pd.read_csv", "pandas.DataFrame", "pandas.read_csv")
                                 for v in found):
                    frames.append(params[i])
            if not frames:
                continue
            for param in frames:
                uses = [n for n in walk(callee.body) if isinstance(n, cst.Name) and n.value == param]
                iters = [n.iter for n in walk(callee.body) if isinstance(n, cst.For)
                         and isinstance(n.iter, cst.Name) and n.iter.value == param]
                if uses and len(iters) == len(uses):
                    return True
        return False

    def _switched_off(self, origin: cst.CSTNode, scope: cst.CSTNode) -> bool:
        """``origin``, or every statistic it computes, runs only when a parameter that defaults to off is
        on, and every call of the function in the module leaves it off (``off_switch``)."""
        index = index_for(self.ctx)
        if behind_off_switch(origin, index):
            return True
        stats = [n for n in walk(origin, into_scopes=False) if isinstance(n, cst.Call) and self._source_call(n, scope)]
        return bool(stats) and all(behind_off_switch(n, index) for n in stats)

    def _budgeted_argument(self, sink: cst.CSTNode) -> bool:
        """``sink`` is an argument of a call handed a privacy budget (``eps=self.x_eps``): a DP
        mechanism whatever the module's other names."""
        arg = self.ctx.analysis.parent(sink)
        call = self.ctx.analysis.parent(arg) if isinstance(arg, cst.Arg) else None
        return isinstance(call, cst.Call) and _budgeted(call)

    def _helper_origin(self, origin: cst.CSTNode, scope: cst.CSTNode) -> cst.CSTNode | None:
        """When ``origin`` calls a helper of this module whose result is the statistic (a method
        ``self.get_median_norm(updates)``), the helper's statement computing it."""
        fa = self.ctx.analysis
        for call in walk(origin, into_scopes=False):
            if not isinstance(call, cst.Call) or _statistic(call):
                continue
            callee = fa.callee(call)
            if callee is None or callee is scope or _sensitivity_name(callee.name.value):
                continue  # a sensitivity helper's return is reported by its own scope
            inner = self._taint(callee)
            for ret in fa.returns_of(callee):
                if ret.value is None:
                    continue
                for n in walk(ret.value, into_scopes=False):
                    if isinstance(n, cst.Call) and self._source_call(n, callee, 1):
                        return fa.enclosing_statement(n)
                for name in sorted(_value_names(ret.value)):
                    if name in inner:
                        return max(inner[name], key=fa.line_of)
        return None

    def _draws_laplace(self, node: cst.CSTNode) -> bool:
        """The function holding ``node`` draws Laplace noise (a DP mechanism whatever its names)."""
        fn = self.ctx.analysis.enclosing_function(node)
        return fn is not None and any(isinstance(n, cst.Call) and call_name(n) in ("laplace", "Laplace")
                                      for n in walk(fn.body, into_scopes=False))

    def _sorted_max(self, node: cst.CSTNode, scope: cst.CSTNode) -> bool:
        """``pairs[0][1]`` of a list sorted in descending order (its maximum)."""
        base = node
        while isinstance(base, cst.Subscript):
            base = base.value
        name = dotted(base)
        if name is None or not isinstance(node, cst.Subscript):
            return False
        body = scope.body if isinstance(scope, cst.FunctionDef) else scope
        for n in walk(body, into_scopes=False):
            if isinstance(n, cst.Call) and call_name(n) in ("sort", "sorted") and any(
                    a.keyword is not None and a.keyword.value == "reverse" and isinstance(a.value, cst.Name)
                    and a.value.value == "True" for a in n.args):
                target = dotted(n.func.value) if isinstance(n.func, cst.Attribute) else None
                if target == name:
                    return True
        return False

    # ---- where statistics come from ---------------------------------------------------------
    def _source_call(self, call: cst.Call, scope: cst.CSTNode, depth: int = 0) -> bool:
        if _statistic(call):
            subject = [a.value for a in call.args]
            # ``mpc.max(xs)``: an imported library's function given its operand, not a method of the data
            if isinstance(call.func, cst.Attribute) and not (
                    call.args and isinstance(call.func.value, cst.Name) and call.func.value.value in self._imported()):
                subject.append(call.func.value)
            noisy = self._noisy(scope)
            if any(_value_names(part) & noisy for part in subject):
                return False
            return not self._public(subject, scope) and not self._random_object(subject, scope)
        name = call_name(call)
        if name in _FETCHES and _SQL_EXTREME.search(self.ctx.analysis.code(scope)):
            return True
        if depth == 0:
            callee = self.ctx.analysis.callee(call)
            # given a budget or a public bound, the helper estimates privately or from public values;
            # model weights handed to a helper are the clients' updates (its own statistics decide)
            private = any(words(n.value) & (_BUDGET_WORDS | _NOT_DATA) - {"weights", "weight"}
                          for a in call.args for n in walk(a.value) if isinstance(n, cst.Name))
            if callee is not None and not private and not words(callee.name.value) & (_MECHANISM_WORDS | _BUDGET_WORDS):
                inner = self._taint(callee)
                for ret in self.ctx.analysis.returns_of(callee):
                    if ret.value is None:
                        continue
                    if any(isinstance(n, cst.Call) and self._source_call(n, callee, depth + 1)
                           for n in walk(ret.value, into_scopes=False)) or _value_names(ret.value) & inner.keys():
                        return True
        return False

    def _order_statistic(self, node: cst.Subscript, scope: cst.CSTNode) -> bool:
        """``ranked[k]`` of a list sorted in this scope (``sorted(traces, key=len)[int(0.8 * n)]``):
        a quantile, minimum or maximum of the records picked by hand."""
        name = dotted(node.value)
        if name is None or len(node.slice) != 1 or not isinstance(node.slice[0].slice, cst.Index):
            return False
        if isinstance(node.slice[0].slice.value, cst.SimpleString):
            return False
        found = [b.value for b in self.ctx.analysis.bindings_in(scope).get(name, []) if b.value is not None]
        if len(found) != 1 or not isinstance(found[0], cst.Call) or call_name(found[0]) not in ("sorted", "sort"):
            return False
        sort = found[0]
        subject = [a.value for a in sort.args if a.keyword is None]
        if isinstance(sort.func, cst.Attribute) and (dotted(sort.func.value) or "").split(".")[0] not in _MODULES:
            subject.append(sort.func.value)
        if not subject or any(words(n) & _NOT_DATA for part in subject for n in _value_names(part)):
            return False
        if any(_value_names(part) & self._noisy(scope) for part in subject):
            return False
        return not self._public(subject, scope) and not self._random_object(subject, scope)

    def _scale_params(self, fn: cst.FunctionDef) -> set[str]:
        """Parameters of a helper of this module whose value sets the scale of a noise draw in it."""
        cache = self.__dict__.setdefault("_scale_param_cache", {})
        known = cache.get(fn)
        if known is not None:
            return known
        cache[fn] = set()  # recursion guard
        fa = self.ctx.analysis
        nodes = list(walk(fn.body, into_scopes=False))
        scales = [sink for n in nodes if isinstance(n, cst.Call)
                  for sink, what in self._call_sinks(n, nodes) if what != "the centre of the noise"]
        # a noise helper given a privacy parameter times something: ``add_noise(hist, sigma * thres)``
        scales += [a.value for n in nodes if isinstance(n, cst.Call) and call_name(n) not in PURE_DRAWS
                   and words(call_name(n) or "") & _MECHANISM_WORDS for a in n.args
                   if isinstance(a.value, cst.BinaryOperation) and isinstance(a.value.operator, (cst.Multiply, cst.Divide))
                   and any(words(v) & _CALIBRATION_WORDS for v in _value_names(a.value))]
        out: set[str] = set()
        if scales:
            for param in param_names(fn):
                if param in ("self", "cls"):
                    continue
                derived = self._derived_unnoised(fn, param)
                if any(_value_names(sink) & derived for sink in scales):
                    out.add(param)
        cache[fn] = out
        return out

    def _derived_unnoised(self, fn: cst.FunctionDef, param: str) -> set[str]:
        """Names of ``fn`` derived from ``param`` (as ``derived_names``), not through an operand a noise draw
        is added to: ``noisy_std = np.std(vals) + laplace(0, b)`` is a release, whatever it then scales."""
        fa = self.ctx.analysis
        pending = []
        for name, found in fa.bindings_in(fn).items():
            for b in found:
                if b.value is None:
                    continue
                value = b.value
                if any(isinstance(n, cst.Call) and call_name(n) in _ADDITIVE_DRAWS for n in walk(value, into_scopes=False)):
                    noised = _noised_operands(value)
                    if noised:
                        value = value.visit(_DropNoised(noised))
                # (fp47) ``tube_field(pts, vol.shape)``: the array's shape is its size, not its values
                value = value.visit(_DropShape())
                pending.append((name, value_refs(value)))
        derived = {param}
        changed = True
        while changed:
            changed = False
            for name, read in pending:
                if name not in derived and read & derived:
                    derived.add(name)
                    changed = True
        return derived

    def _random_object(self, subject: list[cst.CSTNode], scope: cst.CSTNode, depth: int = 0) -> bool:
        """The statistic reads only objects built by a random constructor or draw (a random projection,
        ``rng.standard_normal(...)``), directly or a few assignments back: their entries do not depend
        on the records."""
        bindings = self.ctx.analysis.bindings_in(scope)
        roots = {name.split(".")[0] for part in subject for name in _value_names(part)} - _MODULES
        if not roots or depth > 3:
            return False
        for root in roots:
            found = [b.value for b in bindings.get(root, []) if b.value is not None]
            if not found:
                return False
            if any(isinstance(n, cst.Call) and ("random" in words(call_name(n) or "") or call_name(n) in PURE_DRAWS
                                                or call_name(n) in _INPLACE_FILLS)
                   for v in found for n in walk(v, into_scopes=False)):
                continue
            if not self._random_object(found, scope, depth + 1):
                return False
        return True

    def _reads_records(self, origin: cst.CSTNode, scope: cst.CSTNode) -> bool:
        """A value only named a sensitivity must come from the records (data, rows, gradients,
        updates, a fetched SQL result), one assignment back; a sensitivity of a public structure
        (a strategy matrix, a tree) is computed the same way."""
        if any(isinstance(n, cst.Call) and call_name(n) in _FETCHES for n in walk(origin)):
            return True
        if any(_row_norm_extreme(n) for n in walk(origin)):
            return True  # the largest norm along the rows: the largest record, whatever the matrix is named
        bindings = self.ctx.analysis.bindings_in(scope)
        names = _value_names(origin)
        for name in list(names):
            for b in bindings.get(name, []):
                if b.value is not None:
                    names |= _value_names(b.value)
        return any(words(n) & _RECORD_WORDS for n in names)

    def _public(self, subject: list[cst.CSTNode], scope: cst.CSTNode) -> bool:
        """Every name the statistic reads is, one assignment back, built only from configured
        bounds or public values (``corners = [lo * lo, lo * hi, ...]``)."""
        bindings = self.ctx.analysis.bindings_in(scope)
        if self._tabulated(subject, scope):
            return True
        leaves: set[str] = set()
        body = scope.body if isinstance(scope, cst.FunctionDef) else scope
        for part in subject:
            for name in _value_names(part):
                found = [b.value for b in bindings.get(name, []) if b.value is not None]
                # a list filled by ``xs.append(v)``: what is appended, a loop variable read as its collection
                # (``for x in sens_estimates: xs.append(x[0])`` collects sensitivity estimates, not records)
                appended = [n.args[0].value for n in walk(body, into_scopes=False)
                            if isinstance(n, cst.Call) and call_name(n) == "append" and len(n.args) == 1
                            and isinstance(n.func, cst.Attribute) and dotted(n.func.value) == name]
                if appended and all(isinstance(v, cst.List) and not v.elements for v in found):
                    loops = {t: loop.iter for loop in walk(body, into_scopes=False) if isinstance(loop, cst.For)
                             for t in target_names(loop.target)}
                    for v in appended:
                        for ref in _value_names(v):
                            leaves |= _value_names(loops[ref]) if ref in loops else {ref}
                    continue
                if found and all(not isinstance(v, (cst.Call,)) or call_name(v) in ("array", "asarray", "list", "tuple")
                                 for v in found):
                    for v in found:
                        leaves |= _value_names(v)
                else:
                    leaves.add(name)
        leaves = {n for n in leaves if n.split(".")[0] not in _MODULES}
        return bool(leaves) and all(words(n) & _NOT_DATA for n in leaves) or self._from_public_source(subject, scope)

    def _imported(self) -> frozenset[str]:
        """Names the module binds by ``import`` (``from mpyc.runtime import mpc``): a library, not a value."""
        known = self.__dict__.get("_imported_names")
        if known is None:
            names: set[str] = set()
            for n in walk(self.ctx.module):
                if isinstance(n, (cst.Import, cst.ImportFrom)) and not isinstance(n.names, cst.ImportStar):
                    for alias in n.names:
                        bound = alias.asname.name if alias.asname is not None else alias.name
                        if isinstance(bound, cst.Name):
                            names.add(bound.value)
                        elif isinstance(bound, cst.Attribute):
                            names.add((dotted(bound) or "").split(".")[0])
            known = self.__dict__["_imported_names"] = frozenset(names)
        return known

    def _tabulated(self, subject: list[cst.CSTNode], scope: cst.CSTNode) -> bool:
        """Every name the statistic reads is a public function tabulated over an index range
        (``h = np.arange(n + 1) / 2``, ``h = comb(np.arange(n + 1), k)`` with ``k = 3``): its
        maximum up to a public bound is the query's sensitivity, read from no record."""
        fa = self.ctx.analysis
        local, module = fa.bindings_in(scope), fa.bindings_in(fa.module)
        # the positions a slice picks (``h[:D + 1]``, a public bound) are not values read
        sliced = {id(m) for part in subject for n in walk(part) if isinstance(n, cst.SubscriptElement)
                  for m in walk(n)}
        names = {n.value for part in subject for n in walk(part)
                 if isinstance(n, cst.Name) and id(n) not in sliced} - _MODULES
        if not names:
            return False
        # a table filled in afterwards (``data = np.zeros(n)``; ``data[i] = row[0]``) holds what was written
        filled = {dotted(t.value) for n in walk(fa.module)
                  for t in ([x.target for x in n.targets] if isinstance(n, cst.Assign) else
                            [n.target] if isinstance(n, cst.AugAssign) else [])
                  if isinstance(t, cst.Subscript)}
        if names & filled:
            return False
        for name in names:
            found = [b.value for b in local.get(name, []) if b.value is not None]
            if not found or not all(self._enumerated(v, local, module) for v in found):
                return False
        return True

    @staticmethod
    def _enumerated(value: cst.BaseExpression, local: Mapping[str, Any], module: Mapping[str, Any]) -> bool:
        """``value`` applies literal-configured arithmetic to an ``arange``/``range`` of indices."""
        ranges = [n for n in walk(value) if isinstance(n, cst.Call) and call_name(n) in _ENUMERATIONS]
        if not ranges:
            return False
        inside = {id(m) for r in ranges for m in walk(r)}
        # a function's name (``comb``) is no value
        inside |= {id(m) for c in walk(value) if isinstance(c, cst.Call) for m in walk(c.func)}
        for n in walk(value):
            if not isinstance(n, cst.Name) or id(n) in inside or n.value in _MODULES:
                continue
            found = [b.value for b in [*local.get(n.value, []), *module.get(n.value, [])] if b.value is not None]
            if not found or not all(isinstance(v, (cst.Integer, cst.Float)) for v in found):
                return False
        return True

    def _from_public_source(self, subject: list[cst.CSTNode], scope: cst.CSTNode) -> bool:
        """Every value the statistic reads comes, a few copies, conversions, comprehensions or dict
        look-ups back, from something named public metadata (``cats = public_categories.get(col)``;
        ``nums = [float(c) for c in cats]``; ``max(nums) - min(nums)``)."""
        bindings = self.ctx.analysis.bindings_in(scope)
        leaves: set[str] = set()
        seen: set[str] = set()
        todo: list[tuple[cst.CSTNode, int]] = [(part, 0) for part in subject]
        while todo:
            part, depth = todo.pop()
            for name in _read_names(part) - seen:
                seen.add(name)
                if words(name) & _PUBLIC_SOURCE:
                    leaves.add(name)
                    continue
                found = [b.value for b in bindings.get(name, []) if b.value is not None]
                # a copy, a conversion or a comprehension of a value, or a dict's entry
                # (``cats = public_categories.get(col)``; ``nums = [float(c) for c in cats]``)
                if found and depth < 3 and all(
                        not isinstance(v, cst.Call) or call_name(v) in ("array", "asarray", "list", "tuple")
                        or call_name(v) == "get" and isinstance(v.func, cst.Attribute) for v in found):
                    todo.extend((v.func.value if isinstance(v, cst.Call) and call_name(v) == "get" else v, depth + 1)
                                for v in found)
                else:
                    leaves.add(name)
        leaves = {n for n in leaves if n.split(".")[0] not in _MODULES}
        return bool(leaves) and all(words(n) & _PUBLIC_SOURCE for n in leaves)

    def _noisy(self, scope: cst.CSTNode) -> set[str]:
        """Names of ``scope`` derived from a noise draw: their statistics are post-processing."""
        cache = self.__dict__.setdefault("_noisy_names", {})
        known = cache.get(scope)
        if known is None:
            known = cache[scope] = self.ctx.analysis.derived_names(scope, lambda v: any(
                isinstance(n, cst.Call) and call_name(n) in PURE_DRAWS for n in walk(v, into_scopes=False)))
        return known

    def _taint(self, scope: cst.CSTNode) -> dict[str, list[cst.CSTNode]]:
        """Names of ``scope`` holding a statistic of the data -> the statement computing it."""
        known = self._taints.get(scope)
        if known is not None:
            return known
        fa = self.ctx.analysis
        tainted: dict[str, list[cst.CSTNode]] = {}
        self._taints[scope] = tainted  # recursion guard
        pending: list[tuple[str, cst.CSTNode, cst.CSTNode]] = []
        #: (q2 h45) ``G, feats = build()`` where every return of ``build`` is a tuple of that length: each
        #: name holds its own element (and what the call is handed), not the whole result
        unpacked: dict[int, tuple[cst.Call, cst.FunctionDef, list[cst.BaseExpression]]] = {}
        for name, found in fa.bindings_in(scope).items():
            for b in found:
                if b.value is not None:
                    pending.append((name, b.value, b.stmt))
                    split = self._unpacked_element(b, scope) if b.kind == "unpack" else None
                    if split is not None:
                        unpacked[len(pending) - 1] = split
        body = scope.body if isinstance(scope, cst.FunctionDef) else scope
        for n in walk(body, into_scopes=False):
            # ``xs.append(v)``, ``xs[k] = v``: the container holds v
            if isinstance(n, cst.Call) and call_name(n) in ("append", "extend", "add", "insert") \
                    and isinstance(n.func, cst.Attribute) and n.args:
                target = dotted(n.func.value)
                if target is not None and target.split(".")[0] not in _MODULES:  # not ``np.add(a, b)``
                    pending.append((target, n.args[-1].value, fa.enclosing_statement(n)))
            elif isinstance(n, cst.Assign):
                for t in n.targets:
                    if isinstance(t.target, cst.Subscript):
                        target = dotted(t.target.value)
                        if target is not None:
                            pending.append((target, n.value, n))
        for i, (name, value, stmt) in enumerate(pending):
            if _category_count(value) and words(name) & _COUNT_WORDS:
                continue  # ``int(y.max()) + 1``: the number of classes sizes the model, it is no scale
            released = _released_values(value)
            if any(id(n) not in released and (isinstance(n, cst.Call) and self._source_call(n, scope)
                                              or isinstance(n, cst.Subscript) and self._order_statistic(n, scope))
                   for n in walk(value, into_scopes=False)) \
                    or self._running_extreme(name, value, stmt):
                if i in unpacked and not self._element_statistic(*unpacked[i], scope):
                    continue
                tainted.setdefault(name, []).append(stmt)
        changed = True
        while changed:
            changed = False
            for i, (name, value, stmt) in enumerate(pending):
                if name in tainted:
                    continue
                carrier = cst.Tuple([cst.Element(a.value) for a in unpacked[i][0].args]) if i in unpacked else value
                for ref in sorted(_carried_names(carrier)):  # sorted: the origin must not depend on set order
                    if ref in tainted:
                        tainted[name] = list(tainted[ref])
                        changed = True
                        break
        return tainted

    def _element_statistic(self, call: cst.Call, callee: cst.FunctionDef, elements: list[cst.BaseExpression],
                           scope: cst.CSTNode) -> bool:
        """Does the unpacked element (of any return) hold a statistic, or is the call handed one?"""
        if any(isinstance(n, cst.Call) and self._source_call(n, scope)
               for a in call.args for n in walk(a.value, into_scopes=False)):
            return True
        inner = self._taint(callee)
        return any(_value_names(e) & inner.keys() or any(
            isinstance(n, cst.Call) and self._source_call(n, callee, 1) for n in walk(e, into_scopes=False))
            for e in elements)

    def _unpacked_element(self, b: Any, scope: cst.CSTNode
                          ) -> tuple[cst.Call, cst.FunctionDef, list[cst.BaseExpression]] | None:
        """For ``a, b = helper(x)`` where every ``return`` of the module's ``helper`` is a tuple of as many
        elements (no starred one), the call, the helper and the element each return gives ``b.name``."""
        stmt, value = b.stmt, b.value
        if not isinstance(stmt, cst.Assign) or len(stmt.targets) != 1 or stmt.value is not value \
                or not isinstance(value, cst.Call) or any(a.star for a in value.args):
            return None
        target = stmt.targets[0].target
        if not isinstance(target, (cst.Tuple, cst.List)) or any(
                not isinstance(e, cst.Element) or not isinstance(e.value, (cst.Name, cst.Attribute))
                for e in target.elements):
            return None
        at = next((i for i, e in enumerate(target.elements) if e.value is b.target), None)
        callee = self.ctx.analysis.callee(value)
        if at is None or callee is None or callee is scope:
            return None
        returns = self.ctx.analysis.returns_of(callee)
        if not returns or any(isinstance(n, (cst.Yield, cst.Await)) for n in walk(callee.body, into_scopes=False)):
            return None
        elements: list[cst.BaseExpression] = []
        for ret in returns:
            tup = ret.value
            if not isinstance(tup, (cst.Tuple, cst.List)) or len(tup.elements) != len(target.elements) \
                    or any(isinstance(e, cst.StarredElement) for e in tup.elements):
                return None
            elements.append(tup.elements[at].value)
        return value, callee, elements

    def _running_extreme(self, name: str, value: cst.CSTNode, stmt: cst.CSTNode) -> bool:
        """``if x > m: m = x``: a maximum (or minimum) kept by hand."""
        if isinstance(value, (cst.Integer, cst.Float)) or isinstance(value, cst.UnaryOperation):
            return False
        if any(words(n) & _NOT_DATA for n in _value_names(value)):
            return False
        fa = self.ctx.analysis
        kept = False
        for depth, anc in enumerate(fa.ancestors(stmt)):
            if depth > 3:
                return False
            if isinstance(anc, cst.If):
                test = anc.test
                if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
                    return False
                comp = test.comparisons[0]
                if not isinstance(comp.operator, (cst.GreaterThan, cst.LessThan, cst.GreaterThanEqual,
                                                  cst.LessThanEqual)):
                    return False
                sides = {dotted(test.left), dotted(comp.comparator)}
                kept = name in sides and bool(_value_names(value) & (
                    _value_names(test.left) | _value_names(comp.comparator)))
                break
        if not kept:
            return False
        # only now (the structural test above is cheap, this walk is not): two assignments back,
        # ``x = exp(-beta * k); term = x * k / p`` is smooth sensitivity, max_k exp(-beta k) LS_k
        bindings = fa.bindings_in(fa.scope_of(stmt))
        candidates = [value]
        for _ in range(2):
            candidates += [b.value for v in list(candidates) for ref in _value_names(v) for b in bindings.get(ref, [])
                           if b.value is not None and b.value not in candidates]
        return not any(isinstance(n, cst.Call) and call_name(n) == "exp" for v in candidates for n in walk(v))
