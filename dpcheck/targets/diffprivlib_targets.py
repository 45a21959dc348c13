"""diffprivlib 0.6.6 (IBM) as audit targets: models with and without public bounds, and tools.

Every target calls the public API as the diffprivlib documentation shows
(https://diffprivlib.readthedocs.io/en/latest/modules/models.html and .../tools.html): construct
the estimator with ``epsilon``, the public bounds/norm and ``random_state``, call ``fit``, read
the fitted attributes. The ``-nobounds`` variants leave bounds/norm unset — the documented
fallback, which computes them from the data and warns ``PrivacyLeakWarning``. What the attacker
sees is the fitted parameters as one flat float array in a fixed order.

diffprivlib is imported inside the targets only (never at module import).
"""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from dpcheck.targets.base import Schema, TargetInfo

DOCS = "https://diffprivlib.readthedocs.io/en/latest/modules/"


def features_and_label(data: pd.DataFrame, schema: Schema) -> tuple[np.ndarray, np.ndarray | None]:
    """Features in schema order as floats (categories as codes), and the label codes if any."""
    encoded = schema.encode(data)
    if schema.label is None:
        return encoded, None
    j = schema.names.index(schema.label)
    return np.delete(encoded, j, axis=1), encoded[:, j]


def feature_bounds(schema: Schema) -> tuple[np.ndarray, np.ndarray]:
    lower, upper = schema.bounds()
    keep = [c.name != schema.label for c in schema.columns]
    return lower[keep], upper[keep]


def data_norm(schema: Schema) -> float:
    """The largest L2 norm any row inside the public box can have."""
    lower, upper = feature_bounds(schema)
    return float(np.sqrt(np.sum(np.maximum(np.abs(lower), np.abs(upper)) ** 2)))


def label_bounds(schema: Schema) -> tuple[float, float]:
    if schema.label is None:
        raise ValueError("this target needs a schema with a label column")
    return schema.column(schema.label).bounds


class DiffprivlibTarget:
    """Shared release(): flat float array of what ``compute`` returns (warnings propagate)."""

    bounded = True

    def __init__(self) -> None:
        self.model: Any = None

    def release(self, data: pd.DataFrame, *, schema: Schema, epsilon: float, delta: float, seed: int,
                **knobs: Any) -> np.ndarray:
        out = self.compute(data, schema, float(epsilon), int(seed), **knobs)
        return np.asarray(out, dtype=np.float64).ravel()

    def compute(self, data: pd.DataFrame, schema: Schema, epsilon: float, seed: int, **knobs: Any) -> Any:
        raise NotImplementedError


def _sorted_rows(matrix: np.ndarray) -> np.ndarray:
    """Rows in lexicographic order: cluster labels are arbitrary, the set of centres is the release."""
    matrix = np.asarray(matrix, dtype=float)
    return matrix[np.lexsort(matrix.T[::-1])]


def _fixed_signs(components: np.ndarray) -> np.ndarray:
    """Each principal axis with its largest-magnitude entry positive (an axis has no sign)."""
    components = np.asarray(components, dtype=float)
    pivot = components[np.arange(len(components)), np.argmax(np.abs(components), axis=1)]
    return components * np.where(pivot < 0, -1.0, 1.0)[:, None]


class GaussianNBBounded(DiffprivlibTarget):
    """``diffprivlib.models.GaussianNB(epsilon=, bounds=(lower, upper), random_state=)`` then ``fit(X, y)``.

    Doc: models.html#gaussian-naive-bayes ("bounds: ... If not specified, bounds are computed on the
    data when .fit() is first called, resulting in a PrivacyLeakWarning"). Released: ``theta_``,
    ``var_``, ``class_count_``.
    """

    def compute(self, data: pd.DataFrame, schema: Schema, epsilon: float, seed: int, **knobs: Any) -> Any:
        from diffprivlib.models import GaussianNB

        x, y = features_and_label(data, schema)
        bounds = feature_bounds(schema) if self.bounded else None
        self.model = GaussianNB(epsilon=epsilon, bounds=bounds, random_state=seed, **knobs).fit(x, y)
        return np.concatenate([self.model.theta_.ravel(), self.model.var_.ravel(), self.model.class_count_])


class GaussianNBNoBounds(GaussianNBBounded):
    bounded = False


class LogisticRegressionBounded(DiffprivlibTarget):
    """``diffprivlib.models.LogisticRegression(epsilon=, data_norm=, random_state=)`` then ``fit(X, y)``.

    Doc: models.html#logistic-regression ("data_norm: The max l2 norm of any row of the data ...
    If not specified, the max norm is taken from the data when .fit() is first called, but will
    result in a PrivacyLeakWarning"). ``data_norm`` = the largest norm inside the public feature
    box. Released: ``coef_``, ``intercept_``.
    """

    def compute(self, data: pd.DataFrame, schema: Schema, epsilon: float, seed: int, **knobs: Any) -> Any:
        from diffprivlib.models import LogisticRegression

        x, y = features_and_label(data, schema)
        norm = data_norm(schema) if self.bounded else None
        self.model = LogisticRegression(epsilon=epsilon, data_norm=norm, random_state=seed, **knobs).fit(x, y)
        return np.concatenate([self.model.coef_.ravel(), np.ravel(self.model.intercept_)])


class LogisticRegressionNoBounds(LogisticRegressionBounded):
    bounded = False


class LinearRegressionBounded(DiffprivlibTarget):
    """``diffprivlib.models.LinearRegression(epsilon=, bounds_X=, bounds_y=, random_state=)`` then ``fit(X, y)``.

    Doc: models.html#linear-regression ("bounds_X / bounds_y: ... If not specified, the bounds are
    computed from the data when .fit() is first called, resulting in a PrivacyLeakWarning").
    The label column is the regression target. Released: ``coef_``, ``intercept_``.
    """

    def compute(self, data: pd.DataFrame, schema: Schema, epsilon: float, seed: int, **knobs: Any) -> Any:
        from diffprivlib.models import LinearRegression

        x, y = features_and_label(data, schema)
        bx = feature_bounds(schema) if self.bounded else None
        by = label_bounds(schema) if self.bounded else None
        self.model = LinearRegression(epsilon=epsilon, bounds_X=bx, bounds_y=by, random_state=seed,
                                      **knobs).fit(x, y)
        return np.concatenate([np.ravel(self.model.coef_), np.ravel(self.model.intercept_)])


class LinearRegressionNoBounds(LinearRegressionBounded):
    bounded = False


class KMeansBounded(DiffprivlibTarget):
    """``diffprivlib.models.KMeans(n_clusters, epsilon=, bounds=, random_state=)`` then ``fit(X)``.

    Doc: models.html#k-means ("bounds: ... If not specified, bounds are computed on the data when
    .fit() is first called, resulting in a PrivacyLeakWarning"). Released: ``cluster_centers_``,
    rows sorted (cluster numbering is arbitrary).
    """

    def compute(self, data: pd.DataFrame, schema: Schema, epsilon: float, seed: int, *, n_clusters: int = 2,
                **knobs: Any) -> Any:
        from diffprivlib.models import KMeans

        x, _ = features_and_label(data, schema)
        bounds = feature_bounds(schema) if self.bounded else None
        self.model = KMeans(n_clusters=int(n_clusters), epsilon=epsilon, bounds=bounds, random_state=seed,
                            **knobs).fit(x)
        return _sorted_rows(self.model.cluster_centers_)


class KMeansNoBounds(KMeansBounded):
    bounded = False


class StandardScalerBounded(DiffprivlibTarget):
    """``diffprivlib.models.StandardScaler(epsilon=, bounds=, random_state=)`` then ``fit(X)``.

    Doc: models.html#standard-scaler ("bounds: ... If not specified, bounds are computed on the
    data when .fit() is first called, resulting in a PrivacyLeakWarning"). Released: ``mean_``,
    ``scale_``.
    """

    def compute(self, data: pd.DataFrame, schema: Schema, epsilon: float, seed: int, **knobs: Any) -> Any:
        from diffprivlib.models import StandardScaler

        x, _ = features_and_label(data, schema)
        bounds = feature_bounds(schema) if self.bounded else None
        self.model = StandardScaler(epsilon=epsilon, bounds=bounds, random_state=seed, **knobs).fit(x)
        return np.concatenate([self.model.mean_, self.model.scale_])


class StandardScalerNoBounds(StandardScalerBounded):
    bounded = False


class PCABounded(DiffprivlibTarget):
    """``diffprivlib.models.PCA(n_components, epsilon=, data_norm=, bounds=, random_state=)`` then ``fit(X)``.

    Doc: models.html#pca ("data_norm: ... If not specified, the max norm is taken from the data
    when .fit() is first called, but will result in a PrivacyLeakWarning"; "bounds: ... If not
    specified, bounds are computed on the data ..., resulting in a PrivacyLeakWarning" — used for
    the private mean when ``centered=False``, the default). Released: ``mean_`` and
    ``components_`` (each axis with its largest entry positive).
    """

    def compute(self, data: pd.DataFrame, schema: Schema, epsilon: float, seed: int, *, n_components: int = 2,
                **knobs: Any) -> Any:
        from diffprivlib.models import PCA

        x, _ = features_and_label(data, schema)
        norm = data_norm(schema) if self.bounded else None
        bounds = feature_bounds(schema) if self.bounded else None
        self.model = PCA(n_components=int(n_components), epsilon=epsilon, data_norm=norm, bounds=bounds,
                         random_state=seed, **knobs).fit(x)
        return np.concatenate([np.ravel(self.model.mean_), _fixed_signs(self.model.components_).ravel()])


class PCANoBounds(PCABounded):
    bounded = False


class MeanTool(DiffprivlibTarget):
    """``diffprivlib.tools.mean(X, epsilon=, bounds=, axis=0, random_state=)`` — per-column means.

    Doc: tools.html#diffprivlib.tools.mean (Laplace noise; with ``axis`` the budget is split over the
    outputs). A calibration reference: correct with public bounds.
    """

    def compute(self, data: pd.DataFrame, schema: Schema, epsilon: float, seed: int, **knobs: Any) -> Any:
        from diffprivlib.tools import mean

        x, _ = features_and_label(data, schema)
        return mean(x, epsilon=epsilon, bounds=feature_bounds(schema), axis=0, random_state=seed, **knobs)


class VarTool(DiffprivlibTarget):
    """``diffprivlib.tools.var(X, epsilon=, bounds=, axis=0, random_state=)`` — per-column variances.

    Doc: tools.html#diffprivlib.tools.var. A calibration reference: correct with public bounds.
    """

    def compute(self, data: pd.DataFrame, schema: Schema, epsilon: float, seed: int, **knobs: Any) -> Any:
        from diffprivlib.tools import var

        x, _ = features_and_label(data, schema)
        return var(x, epsilon=epsilon, bounds=feature_bounds(schema), axis=0, random_state=seed, **knobs)


class HistogramTool(DiffprivlibTarget):
    """``diffprivlib.tools.histogram(column, epsilon=, bins=, range=, random_state=)`` — first column.

    Doc: tools.html#diffprivlib.tools.histogram ("range: ... If not provided, range is simply
    (a.min(), a.max()) ... PrivacyLeakWarning"); ``range`` is the column's public range and there
    is one bin per value of a small integer/categorical domain (16 bins otherwise). Released: the
    counts. A calibration reference: correct with a public range.
    """

    def compute(self, data: pd.DataFrame, schema: Schema, epsilon: float, seed: int, **knobs: Any) -> Any:
        from diffprivlib.tools import histogram

        x, _ = features_and_label(data, schema)
        column = schema.features[0]
        lo, hi = column.bounds
        discrete = column.kind != "continuous" and hi - lo <= 64
        bins = int(hi - lo) + 1 if discrete else 16
        value_range = (lo - 0.5, hi + 0.5) if discrete else (lo, hi)
        counts, _ = histogram(x[:, 0], epsilon=epsilon, bins=bins, range=value_range, random_state=seed, **knobs)
        return counts


_LEAK = "fallback documented to leak: warns PrivacyLeakWarning (bounds/norm computed from the data)"


#: diffprivlib's documentation states no neighbouring relation; each target declares the one its
#: calibration in the installed source (diffprivlib 0.6.6, paths relative to site-packages) is correct
#: for, and what that calibration takes as public.
_REPLACE = "replace-one"
_ADD_REMOVE = "add/remove"
_CLAIMS: dict[str, tuple[str, tuple[str, ...], str]] = {
    "GaussianNB": (_REPLACE, ("row count", "class labels", "bounds"),
                   "diffprivlib/models/naive_bayes.py:289–302: class counts are forced to sum to the exact row "
                   "count `n_total = y.shape[0]`"),
    "LogisticRegression": (_REPLACE, ("row count", "data_norm"),
                           "diffprivlib/models/logistic_regression.py:397–399: objective perturbation with "
                           "`n=n_samples` and regularisation 1/(C·n_samples) (Chaudhuri et al., replace-one)"),
    "LinearRegression": (_ADD_REMOVE, ("bounds_X", "bounds_y"),
                         "diffprivlib/models/linear_regression.py:118–151: Laplace noise on sums of per-record "
                         "terms, sensitivity = one record's largest term (no row count)"),
    "KMeans": (_ADD_REMOVE, ("bounds",),
               "diffprivlib/models/k_means.py:239–254: cluster counts with sensitivity 1 and sums with "
               "sensitivity = the range, per record (no row count)"),
    "StandardScaler": (_REPLACE, ("row count", "bounds"),
                       "diffprivlib/models/standard_scaler.py:74–84 → tools nanmean/nanvar, whose sensitivity is "
                       "(upper − lower)/n (tools/utils.py:293)"),
    "PCA": (_REPLACE, ("row count", "data_norm", "bounds"),
            "diffprivlib/models/pca.py:223: `mean_` by tools.mean, sensitivity (upper − lower)/n "
            "(tools/utils.py:293)"),
    "mean": (_REPLACE, ("row count", "bounds"),
             "diffprivlib/tools/utils.py:293: sensitivity (upper − lower)/array.size"),
    "var": (_REPLACE, ("row count", "bounds"),
            "diffprivlib/tools/utils.py:451: sensitivity ((upper − lower)/n)²·(n − 1)"),
    "histogram": (_ADD_REMOVE, ("bins", "range"),
                  "diffprivlib/tools/histograms.py:143: geometric noise with sensitivity 1 per count"),
}


def _claim(name: str, *, bounds_public: bool = True) -> dict[str, Any]:
    neighbours, public, source = _CLAIMS[name]
    if not bounds_public:  # the -nobounds fallback computes them from the data: they are not public there
        public = tuple(p for p in public if p not in ("bounds", "data_norm", "bounds_X", "bounds_y"))
    return {"neighbours": neighbours, "public": public, "claim_source": source}


def _pair(name: str, bounded: type, unbounded: type, dataset: str, settings: dict[str, Any],
          public: str) -> list[TargetInfo]:
    doc = (bounded.__doc__ or "").strip().splitlines()[0]
    common = dict(library="diffprivlib", kind="mechanism", env="main", dataset=dataset, requires=("diffprivlib",))
    return [
        TargetInfo(name=f"diffprivlib:{name}", factory=f"{__name__}:{bounded.__name__}",
                   settings=dict(settings), doc=f"{doc} {DOCS}models.html", note=f"public {public} from the schema",
                   **common, **_claim(name)),
        TargetInfo(name=f"diffprivlib:{name}-nobounds", factory=f"{__name__}:{unbounded.__name__}",
                   settings=dict(settings), doc=f"{doc} (without {public}) {DOCS}models.html", note=_LEAK,
                   **common, **_claim(name, bounds_public=False)),
    ]


def _tool(name: str, cls: type, dataset: str) -> TargetInfo:
    doc = (cls.__doc__ or "").strip().splitlines()[0]
    return TargetInfo(name=f"diffprivlib:{name}", library="diffprivlib", kind="mechanism", env="main",
                      factory=f"{__name__}:{cls.__name__}", settings={}, doc=f"{doc} {DOCS}tools.html",
                      dataset=dataset, requires=("diffprivlib",),
                      note="calibration reference: correct with public bounds (no violation expected)",
                      **_claim(name))


TARGETS: list[TargetInfo] = [
    *_pair("GaussianNB", GaussianNBBounded, GaussianNBNoBounds, "worstcase-classification", {}, "bounds"),
    *_pair("LogisticRegression", LogisticRegressionBounded, LogisticRegressionNoBounds,
           "worstcase-classification", {}, "data_norm"),
    *_pair("LinearRegression", LinearRegressionBounded, LinearRegressionNoBounds,
           "worstcase-classification", {}, "bounds_X/bounds_y"),
    *_pair("KMeans", KMeansBounded, KMeansNoBounds, "worstcase-continuous", {"n_clusters": 2}, "bounds"),
    *_pair("StandardScaler", StandardScalerBounded, StandardScalerNoBounds, "worstcase-continuous", {}, "bounds"),
    *_pair("PCA", PCABounded, PCANoBounds, "worstcase-continuous", {"n_components": 2}, "data_norm/bounds"),
    _tool("mean", MeanTool, "worstcase-continuous"),
    _tool("var", VarTool, "worstcase-continuous"),
    _tool("histogram", HistogramTool, "worstcase-categorical"),
]
