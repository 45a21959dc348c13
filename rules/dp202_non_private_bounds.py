"""DP202: data bounds (min/max/quantiles/categories) read from the private training data."""
from __future__ import annotations

import re

import libcst as cst

from dpcheck.codetext import code_only
from dpcheck.rule import Rule

from ._dp2_util import (
    PATE_CLAIM_RE,
    Dp2Index,
    assigned,
    call_name,
    dotted,
    has_noise,
    index_for,
    refs,
    walk,
    words,
)

_DP_CONTEXT = re.compile(
    r"(?i)\bprivacy\b|differential(?:ly)?[ _-]priva|private[ _-]data|\bdp[_-]?(?:sgd|gan|synth)|"
    r"privacy_engine|def\s+\w+\s*\([^)]*\b(?:epsilon|eps)\b[^)]*\bdelta\b"
)
_BOUND_FUNCS = {
    "min", "max", "amin", "amax", "nanmin", "nanmax", "ptp", "quantile", "percentile",
    "nanquantile", "nanpercentile", "aminmax", "unique",
}
_BOUND_METHODS = {"min", "max", "amin", "amax", "quantile", "nanquantile", "aminmax", "unique", "ptp", "nunique", "describe"}
_LIB_ROOTS = {"numpy", "torch", "pandas", "np", "pd", "tf", "jnp", "jax.numpy", "tensorflow", "math"}
_FITTED = {
    "MinMaxScaler", "MaxAbsScaler", "RobustScaler", "QuantileTransformer", "KBinsDiscretizer",
    "OneHotEncoder", "OrdinalEncoder",
}
_FIT = {"fit", "fit_transform", "partial_fit"}
_BOUND_CALL_TEXT = re.compile(
    r"(?:min|max|ptp|quantile|percentile|unique|describe|fit|fit_transform|_scale|quantile_transform|qcut)\s*\("
)
_DATA_WORDS = {
    "x", "xs", "data", "df", "dataset", "train", "training", "real", "records", "table",
    "features", "raw", "inputs", "input", "samples", "rows", "col", "column", "orig", "original",
}
_NOT_DATA = {
    "fake", "gen", "generated", "synth", "synthetic", "syn", "noise", "votes", "vote", "alpha",
    "eps", "epsilon", "grad", "grads", "gradient", "loss", "losses", "logits", "pred", "preds",
    "prediction", "predictions", "scores", "score", "weights", "weight", "lamda", "lambda", "q",
    "counts", "count", "z", "latent", "output", "outputs", "public", "pub", "moments", "y",
    "labels", "label", "target", "targets", "lengths", "len", "sizes", "size", "shape", "dims",
    "norms", "norm", "probs", "proba", "dist", "distances", "test", "val", "valid", "bounds",
    "lower", "upper", "metadata", "meta", "schema", "domain", "ranges", "range",
}
_USE_CALLS = {"clip", "clamp", "linspace", "digitize", "searchsorted", "histogram", "interp", "arange"}
_GUARD_WORDS = {"infer", "inferred", "assume", "allow", "unsafe"}


class NonPrivateBounds(Rule):
    id = "DP202"
    name = "non-private-bounds"
    category = "metadata"
    severity = "error"
    summary = "min/max/quantiles/categories of the private training data used to scale or encode it without DP"
    rationale = (
        "Scaling or encoding the training data needs bounds (per-column min and max, "
        "quantiles, the set of categories). Reading them from the private data itself "
        "(`np.min(x, axis=0)`, `data.max()`, `MinMaxScaler().fit(data)`, `df[c].unique()`) "
        "releases them without any noise: the extreme values are often one person's record, "
        "they end up in the model's transform and in every synthetic row, and membership "
        "attacks exploit them (Stadler et al. 2022, Annamalai et al. 2024). The DP guarantee "
        "covers only what the mechanism sees, so these bounds leak outside the budget. "
        "Fix: take bounds as public metadata (parameters, a schema) or estimate them with a DP "
        "mechanism and charge that to the budget."
    )
    TRIGGERS = (
        "PATE", "Pate", "pategan", " pate", "_pate", ".pate", "(pate", "rivacy", "ifferential",
        "rivate data", "rivate-data", "rivate_data", "epsilon",
    )

    @classmethod
    def applies_to(cls, source: str) -> bool:
        """The module's DP claim (read as the rule reads it, comments included) and, in code, a
        call the rule can flag: a bound function/method, a ``fit`` or a scaling function."""
        if not super().applies_to(source):
            return False
        if not (PATE_CLAIM_RE.search(source) or _DP_CONTEXT.search(source)):
            return False
        return _BOUND_CALL_TEXT.search(code_only(source)) is not None

    VALID = (
        # bounds passed in as public parameters
        """
import numpy as np
def normalization(data, lower, upper):
    # PATE-GAN preprocessing with public bounds
    min_val = np.asarray(lower)
    max_val = np.asarray(upper)
    return (data - min_val) / (max_val - min_val + 1e-8)
""",
        # DP bound estimation: noisy extremes, charged to the privacy budget
        """
import numpy as np
def dp_bounds(x, epsilon, delta):
    lo = np.min(x, axis=0) + np.random.laplace(scale=2.0 / epsilon, size=x.shape[1])
    hi = np.max(x, axis=0) + np.random.laplace(scale=2.0 / epsilon, size=x.shape[1])
    return lo, hi
""",
        # no DP context: an ordinary preprocessing helper
        """
import numpy as np
def minmax(x):
    mn, mx = x.min(0), x.max(0)
    return (x - mn) / (mx - mn)
""",
        # range of generated data and of teacher votes are not metadata of the private records
        """
import numpy as np
class PATEGAN:
    def sample(self, n, epsilon):
        fake = self.generator(n)
        fake_min = fake.min(0)
        votes = self.votes(fake)
        return (fake - fake_min) / np.max(votes)
""",
        # a sanity check on the data, not used to scale it
        """
import numpy as np
def fit(self, X, epsilon, delta):
    if X.min() < 0 or X.max() > 1:
        raise ValueError("PATE-GAN expects data scaled to [0, 1] with public bounds")
    self.train(X)
""",
        # encoder with public categories
        """
from sklearn.preprocessing import OneHotEncoder
def encode(df, categories, epsilon, delta):
    enc = OneHotEncoder(categories=categories)
    return enc.fit_transform(df)
""",
    )

    INVALID = (
        # original: min/max of the training data in the PATE-GAN function
        """
import numpy as np
def PATE_GAN(X_train, Y_train, epsilon, delta, niter, num_teachers):
    Min_Val = np.min(X_train, 0)  # <-
    X_train = X_train - Min_Val
    Max_Val = np.max(X_train, 0)  # <-
    X_train = X_train / (Max_Val + 1e-8)
""",
        # synthcity-style encoder storing data bounds on self
        """
class TabularEncoder:
    '''Scaling for the PATE-GAN plugin (differentially private).'''
    def fit(self, X):
        self.min_ = X.min(axis=0)  # <-
        self.max_ = X.max(axis=0)  # <-
        return self
    def transform(self, X):
        return 2 * (X - self.min_) / (self.max_ - self.min_) - 1
""",
        # borealis driver: sklearn MinMaxScaler fitted on the training data
        """
from sklearn.preprocessing import MinMaxScaler
# private-data-generation evaluate driver
def preprocess(x_train):
    scaler = MinMaxScaler()
    x_scaled = scaler.fit_transform(x_train)  # <-
    return x_scaled, scaler
""",
        # torch, inline bounds in the scaling expression
        """
import torch
def fit(self, data, epsilon, delta):
    data = (data - data.amin(0)) / (data.amax(0) - data.amin(0))  # <-
    self.train(data)
""",
        # quantile clipping from the data in a DP-SGD pipeline
        """
import numpy as np
def prepare(features, noise_multiplier):
    # DP-SGD on clipped features; privacy accounting below
    hi = np.percentile(features, 99, axis=0)  # <-
    return np.clip(features, 0, hi)
""",
        # categories read from the private data to one-hot encode it
        """
import pandas as pd
class PATEGAN:
    def fit(self, df, epsilon=1.0, delta=1e-5):
        self.categories = {c: sorted(df[c].unique()) for c in self.cat_cols}  # <-
        encoded = pd.get_dummies(df, columns=self.cat_cols)
""",
        # from-import spelling, builtin tuple unpack
        """
from numpy import amin, amax
def pategan(real_data, epsilon, delta):
    lo, hi = amin(real_data, axis=0), amax(real_data, axis=0)  # <-
    scaled = (real_data - lo) / (hi - lo)
""",
    )

    def visit_Module(self, node: cst.Module) -> None:
        src = self.ctx.source
        if not (PATE_CLAIM_RE.search(src) or _DP_CONTEXT.search(src)):
            return
        index = index_for(self.ctx)
        fitted = _fitted_names(index)
        for call in index.calls:
            data = self._bound_data(call, index, fitted)
            if data is None or not _is_data(data):
                continue
            if _dp_estimated(call, index):
                continue
            if not _used_for_scaling(call, index) and call_name(call) not in _FIT | _SCALE_FUNCS:
                continue
            if call_name(call) in _FIT | _SCALE_FUNCS:
                lead = f"`{self.ctx.module.code_for_node(call.func)}` learns bounds/categories from"
            else:
                lead = f"{self._what(call)} is read from"
            self.report(
                call,
                f"{lead} the training data `{self.ctx.module.code_for_node(data)}` with no DP "
                "mechanism and the data is scaled/encoded with it, so the bounds leak outside the "
                "privacy budget; pass public bounds (metadata) or estimate them with a DP mechanism",
            )

    @staticmethod
    def _bound_data(call: cst.Call, index: Dp2Index, fitted: set[str]) -> cst.BaseExpression | None:
        name = call_name(call)
        func = call.func
        args = [a.value for a in call.args if a.keyword is None]
        if name in _SCALE_FUNCS:
            return args[0] if args else None
        if name in _FIT and isinstance(func, cst.Attribute):
            receiver = func.value
            ctor = receiver if isinstance(receiver, cst.Call) else None
            if ctor is not None and call_name(ctor) in _FITTED and not _public_categories(ctor):
                return args[0] if args else None
            if dotted(receiver) in fitted:
                return args[0] if args else None
            return None
        if name not in _BOUND_FUNCS and name not in _BOUND_METHODS:
            return None
        if isinstance(func, cst.Name):
            qual = index.imports.get(func.value, "")
            if func.value in {"min", "max"} and not qual:
                # builtin min/max over one iterable
                return args[0] if len(args) == 1 and not call.args[0].star else None
            if qual.split(".")[0] in {"numpy", "torch", "pandas", "jax"}:
                return args[0] if args else None
            return None
        if not isinstance(func, cst.Attribute):
            return None
        receiver = func.value
        root = dotted(receiver)
        if root is not None and (root in _LIB_ROOTS or index.imports.get(root.split(".")[0], "").split(".")[0] in {"numpy", "torch", "pandas", "jax", "tensorflow"}):
            if name in _BOUND_FUNCS:
                return args[0] if args else None
            return None
        if name in _BOUND_METHODS:
            if name in {"min", "max"} and len(args) >= 1 and not _is_axis(args[0]):
                return None
            return receiver
        return None

    @staticmethod
    def _what(call: cst.Call) -> str:
        name = call_name(call) or ""
        if "unique" in name:
            return "the set of categories"
        if "quantile" in name or "percentile" in name:
            return "a quantile"
        if "min" in name and "max" in name:
            return "the min and max"
        return f"the {name}"


def _is_axis(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, (cst.Integer, cst.UnaryOperation)) or (
        isinstance(expr, cst.Name) and expr.value in {"axis", "dim"}
    )


def _public_categories(ctor: cst.Call) -> bool:
    for arg in ctor.args:
        if arg.keyword is not None and arg.keyword.value in {"categories", "feature_range_public"}:
            return not (isinstance(arg.value, cst.SimpleString) and "auto" in arg.value.value)
    return False


def _fitted_names(index: Dp2Index) -> set[str]:
    out: set[str] = set()
    for node in walk(index.module):
        if isinstance(node, (cst.Assign, cst.AnnAssign)) and isinstance(node.value, cst.Call):
            ctor = node.value
            if call_name(ctor) in _FITTED and not _public_categories(ctor):
                out |= assigned(node)[0]
    return out


_WRAPPER_METHODS = {"to_numpy", "astype", "float", "double", "numpy", "cpu", "detach", "copy", "dropna"}
_WRAPPER_FUNCS = {"asarray", "array", "tensor", "as_tensor", "from_numpy", "asanyarray", "abs", "absolute", "fabs", "norm"}
#: functions that scale/bin their argument with bounds or quantiles taken from it
_SCALE_FUNCS = {"minmax_scale", "maxabs_scale", "robust_scale", "quantile_transform", "qcut"}


def _data_root(expr: cst.BaseExpression) -> str | None:
    base: cst.BaseExpression = expr
    for _ in range(12):
        if isinstance(base, cst.Subscript):
            base = base.value
        elif isinstance(base, cst.Attribute) and base.attr.value in {"values", "iloc", "loc", "T"}:
            base = base.value
        elif isinstance(base, cst.Call):
            name = call_name(base)
            if name in _WRAPPER_METHODS and isinstance(base.func, cst.Attribute):
                base = base.func.value
            elif name in _WRAPPER_FUNCS and base.args:
                base = base.args[0].value
            else:
                return None
        elif isinstance(base, cst.BinaryOperation):
            base = base.left
        else:
            break
    return dotted(base)


def _is_data(expr: cst.BaseExpression) -> bool:
    name = _data_root(expr)
    if name is None:
        return False
    last = name.split(".")[-1]
    ws = words(last)
    if ws & _NOT_DATA:
        return False
    return bool(ws & _DATA_WORDS) or last in {"X", "x", "D"}


def _dp_estimated(call: cst.Call, index: Dp2Index) -> bool:
    fn = index.enclosing_function(call)
    if fn is not None and words(fn.name.value) & {"dp", "private", "noisy", "privately"}:
        return True
    stmt = _statement(call, index)
    if stmt is not None and has_noise(stmt):
        return True
    for anc in index.ancestors(call):
        if isinstance(anc, cst.If) and words(" ".join(refs(anc.test))) & _GUARD_WORDS:
            return True
    return False


def _statement(node: cst.CSTNode, index: Dp2Index) -> cst.CSTNode | None:
    for anc in index.ancestors(node):
        if isinstance(anc, cst.SimpleStatementLine):
            return anc
    return None


def _used_for_scaling(call: cst.Call, index: Dp2Index) -> bool:
    """Is the bound used in arithmetic/clipping, kept on the object, or handed on as metadata?"""
    for anc in index.ancestors(call):
        if isinstance(anc, cst.BinaryOperation) and isinstance(anc.operator, (cst.Subtract, cst.Divide, cst.Add, cst.Multiply)):
            return True
        if isinstance(anc, cst.Call) and call_name(anc) in _USE_CALLS and anc is not call:
            return True
        if isinstance(anc, (cst.DictComp, cst.Dict)):
            return _stored(anc, index)
        if isinstance(anc, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
            break
    parent = index.parents.get(call)
    stmt = parent
    while stmt is not None and not isinstance(stmt, (cst.Assign, cst.AnnAssign, cst.SimpleStatementLine)):
        stmt = index.parents.get(stmt)
    if not isinstance(stmt, (cst.Assign, cst.AnnAssign)):
        return False
    names = assigned(stmt)[0]
    if any("." in n for n in names):
        return True
    categories = call_name(call) in {"unique", "nunique"}
    scope = index.enclosing_function(call) or index.module
    for sub in walk(scope):
        if index.order.get(sub, -1) <= index.order[stmt] or index.inside(sub, stmt):
            continue
        if categories and isinstance(sub, (cst.Name, cst.Attribute)) and dotted(sub) in names:
            return True
        if isinstance(sub, cst.BinaryOperation) and refs(sub) & names:
            if not has_noise(sub):
                return True
        if isinstance(sub, cst.Call) and call_name(sub) in _USE_CALLS and refs(sub) & names:
            return True
        if isinstance(sub, cst.Return) and sub.value is not None and refs(sub.value) & names:
            return True
        if isinstance(sub, (cst.Assign, cst.AnnAssign)) and sub.value is not None and refs(sub.value) & names:
            if has_noise(sub.value):
                return False
    return False


def _stored(node: cst.CSTNode, index: Dp2Index) -> bool:
    """A dict/dict-comprehension of bounds that is assigned or returned (kept as metadata)."""
    stmt = index.parents.get(node)
    while stmt is not None and not isinstance(stmt, (cst.Assign, cst.AnnAssign, cst.Return, cst.SimpleStatementLine)):
        stmt = index.parents.get(stmt)
    return isinstance(stmt, (cst.Assign, cst.AnnAssign, cst.Return))
