"""DP626: a diffprivlib estimator or tool built without its bounds (``bounds``, ``data_norm``, ``bounds_X``/
``bounds_y``, ``range``), or with ``None``: diffprivlib then reads them from the private data."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import all_params, dotted, walk
from dpcheck.rule import Rule

#: diffprivlib's estimators and tools -> (keyword, position of that argument when passed positionally)
_NEEDS: dict[str, tuple[tuple[str, int], ...]] = {
    # models
    "LogisticRegression": (("data_norm", 1),),
    "LinearRegression": (("bounds_X", 1), ("bounds_y", 2)),
    "GaussianNB": (("bounds", 1),),
    "KMeans": (("bounds", 2),),
    "StandardScaler": (("bounds", 1),),
    "RandomForestClassifier": (("bounds", 99),),
    "DecisionTreeClassifier": (("bounds", 99),),
    "PCA": (("data_norm", 3),),
    # tools
    "mean": (("bounds", 2),), "nanmean": (("bounds", 2),), "var": (("bounds", 2),), "nanvar": (("bounds", 2),),
    "std": (("bounds", 2),), "nanstd": (("bounds", 2),), "sum": (("bounds", 2),), "nansum": (("bounds", 2),),
    "median": (("bounds", 2),), "quantile": (("bounds", 3),), "percentile": (("bounds", 3),),
    "histogram": (("range", 3),), "histogramdd": (("range", 3),), "histogram2d": (("range", 4),),
}


def _imports(module: cst.Module) -> dict[str, str]:
    """Local name -> dotted origin for the module's imports of ``diffprivlib``."""
    out: dict[str, str] = {}
    for node in walk(module):
        if isinstance(node, cst.Import):
            for alias in node.names:
                full = dotted(alias.name)
                if full and full.split(".")[0] == "diffprivlib":
                    local = dotted(alias.asname.name) if alias.asname else full.split(".")[0]
                    out[local or full] = full if alias.asname else full.split(".")[0]
        elif isinstance(node, cst.ImportFrom) and node.relative == () and node.module is not None:
            base = dotted(node.module)
            if not base or base.split(".")[0] != "diffprivlib" or isinstance(node.names, cst.ImportStar):
                continue
            for alias in node.names:
                name = dotted(alias.name)
                local = dotted(alias.asname.name) if alias.asname else name
                if name and local:
                    out[local] = f"{base}.{name}"
    return out


def _none_parameters(fn: cst.FunctionDef | None) -> set[str]:
    """Parameters of ``fn`` defaulting to ``None`` that the function never rebinds (``if b is None: b = ...``
    would make a public fallback of its own)."""
    if fn is None:
        return set()
    out = {p.name.value for p in all_params(fn) if isinstance(p.default, cst.Name) and p.default.value == "None"}
    for n in walk(fn.body):
        if isinstance(n, cst.Assign):
            for t in n.targets:
                out -= {m.value for m in walk(t.target) if isinstance(m, cst.Name)}
        elif isinstance(n, (cst.AugAssign, cst.AnnAssign)):
            out -= {m.value for m in walk(n.target) if isinstance(m, cst.Name)}
    return out


class DiffprivlibBoundsFromData(Rule):
    id = "DP626"
    name = "diffprivlib-bounds-from-data"
    category = "metadata"
    severity = "error"
    summary = ("a diffprivlib estimator or tool is built without its bounds or norm (or with None): diffprivlib "
               "reads them from the private data, outside the budget")
    rationale = (
        "diffprivlib's models and tools need public bounds to calibrate their noise: `data_norm` for "
        "`LogisticRegression` and `PCA`, `bounds_X`/`bounds_y` for `LinearRegression`, `bounds` for `GaussianNB`, "
        "`KMeans`, `StandardScaler`, the tree models and the `mean`/`var`/`std`/`sum`/`quantile` tools, `range` for "
        "`histogram`. When the argument is left out or is `None`, diffprivlib computes it from the data it is "
        "fitted on (the largest row norm, each feature's min and max) and only emits a `PrivacyLeakWarning`: "
        "the noise is then calibrated to this data set's extremes, which are not protected, so the result is not "
        "epsilon-DP. Reported at a call of a diffprivlib class or tool (resolved through the module's imports "
        "of `diffprivlib`) that omits the argument, passes `None`, or passes a parameter of the enclosing "
        "function that defaults to `None` and is never replaced (a wrapper whose default lets diffprivlib read "
        "the data). Not reported: the argument given (a literal, a schema value, a parameter with a public "
        "default), `**kwargs` forwarded, diffprivlib's own code and tests (`tests/`, `test_*.py`), code that does not import diffprivlib. Fix: "
        "pass public bounds (domain knowledge or a schema) and clip the data to them, or estimate them with a "
        "DP mechanism charged to the budget."
    )
    TRIGGERS = ("diffprivlib",)
    requires_dp_context = False

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        return bool(facts.nodes(ast.Call))

    VALID = (
        # twin: the public norm bound is passed and the data clipped to it by the caller
        """
from diffprivlib.models import LogisticRegression
def train(X, y, epsilon, norm_bound=1.0):
    clf = LogisticRegression(epsilon=epsilon, data_norm=norm_bound)
    return clf.fit(X, y)
""",
        # twin: public feature and target ranges from the schema
        """
from diffprivlib.models import LinearRegression
def fit(X, y, epsilon, schema):
    reg = LinearRegression(epsilon=epsilon, bounds_X=schema["x_bounds"], bounds_y=schema["y_bounds"])
    return reg.fit(X, y).coef_
""",
        # twin: the tool's bounds are given (positionally)
        """
import diffprivlib.tools as dpt
def mean_age(ages, epsilon):
    return dpt.mean(ages, epsilon, (0, 120))
""",
        # a wrapper that replaces the None default with a public fallback of its own
        """
from diffprivlib.models import GaussianNB
class DPNaiveBayes:
    def __init__(self, epsilon, bounds=None, n_features=4):
        if bounds is None:
            bounds = ([0.0] * n_features, [1.0] * n_features)
        self.model = GaussianNB(epsilon=epsilon, bounds=bounds)
""",
        # scikit-learn's own LogisticRegression (no diffprivlib import): ordinary ML
        """
from sklearn.linear_model import LogisticRegression
import numpy as np
def train(X, y):
    return LogisticRegression(C=1.0).fit(X, y), np.mean(X)
""",
        # keyword arguments forwarded: the caller decides
        """
from diffprivlib.models import KMeans
def cluster(X, epsilon, **kwargs):
    return KMeans(n_clusters=3, epsilon=epsilon, **kwargs).fit(X)
""",
    )
    INVALID = (
        # the wrapper builds diffprivlib's regression with only epsilon: the ranges come from the data
        """
from diffprivlib.models import LinearRegression
def linear_regression(X, y, epsilon):
    reg = LinearRegression(epsilon=epsilon)  # <-
    reg.fit(X, y)
    return reg.coef_
""",
        # a wrapper class defaults data_norm to None and hands it on unchanged
        """
from diffprivlib.models import logistic_regression
class DPLogReg:
    def __init__(self, epsilon=1.0, data_norm=None, C=1.0):
        self.model = logistic_regression.LogisticRegression(epsilon=epsilon, data_norm=data_norm, C=C)  # <-
""",
        # the tools module imported under an alias, bounds explicitly None
        """
import diffprivlib as dp
def release(df, epsilon):
    return dp.tools.mean(df["income"], epsilon=epsilon, bounds=None)  # <-
""",
        # a noisy histogram without a range, and a DP k-means without bounds
        """
from diffprivlib.tools import histogram
from diffprivlib.models import KMeans
def summarise(x, X, epsilon):
    counts, edges = histogram(x, epsilon=epsilon / 2, bins=10)  # <-
    km = KMeans(n_clusters=4, epsilon=epsilon / 2).fit(X)  # <-
    return counts, edges, km.cluster_centers_
""",
    )

    def visit_Module(self, node: cst.Module) -> None:
        path = self.ctx.path.replace("\\", "/")
        parts = f"/{path}".split("/")
        base = parts[-1]
        if "diffprivlib" in parts[:-1]:
            return  # the library's own code: its fallbacks are what the rule warns about
        if {"tests", "test", "testing"} & set(parts[:-1]) or base.startswith("test_") or base.endswith("_test.py") \
                or base == "conftest.py":
            return  # a test (of the library's leak warning, of a wrapper): nothing is released
        imports = _imports(node)
        if not imports:
            return
        functions = {id(n): n for n in walk(node) if isinstance(n, cst.FunctionDef)}
        for fn_id, fn in [(0, None), *functions.items()]:
            body = walk(node, into_scopes=False) if fn is None else walk(fn.body, into_scopes=False)
            nones = _none_parameters(fn)
            for call in body:
                if isinstance(call, cst.Call):
                    self._check(call, imports, nones)

    def _check(self, call: cst.Call, imports: dict[str, str], nones: set[str]) -> None:
        name = dotted(call.func)
        if not name:
            return
        head, _, rest = name.partition(".")
        origin = imports.get(head)
        if origin is None:
            return
        full = f"{origin}.{rest}" if rest else origin
        last = full.split(".")[-1]
        if last not in _NEEDS or full.split(".")[0] != "diffprivlib":
            return
        if any(a.star for a in call.args):
            return  # ``**kwargs`` / ``*args`` forwarded
        positional = [a for a in call.args if a.keyword is None]
        keywords = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
        missing: list[str] = []
        for keyword, position in _NEEDS[last]:
            value = keywords.get(keyword)
            if value is None and len(positional) > position:
                value = positional[position].value
            if value is None:
                if len(positional) > 1 and position == 99:
                    return  # positional arguments the table does not map: unsure
                missing.append(f"`{keyword}` left out")
            elif isinstance(value, cst.Name) and value.value == "None":
                missing.append(f"`{keyword}=None`")
            elif isinstance(value, cst.Name) and value.value in nones:
                missing.append(f"`{keyword}` defaulting to None")
        if missing:
            self.report(
                call,
                f"diffprivlib's `{last}` is built with {', '.join(missing)}: diffprivlib then reads the bound from "
                "the private data it is fitted on (only a PrivacyLeakWarning), so the noise is calibrated to "
                "unprotected extremes; pass public bounds and clip the data to them",
            )
