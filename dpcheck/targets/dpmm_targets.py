"""dpmm 0.1.9 (SAS) marginal-model pipelines as audit targets: MST, AIM, PrivBayes.

Each target follows the README's "Getting Started" (https://github.com/sassoftware/dpmm#getting-started,
also the package's long description on https://pypi.org/project/dpmm/0.1.9/):
``Pipeline(epsilon=ε, delta=δ, ...)``, ``fit(df, domain)``, ``generate(n_records=n)``.

**Public domain.** ``fit`` takes ``domain`` as a dict per column — ``{"categories": [...]}`` or
``{"lower": l, "upper": u}`` (``GenerativePipeline.fit`` / ``TableBinner.set_domain`` docstrings) —
built here from the schema. Numeric columns are discretised with the ``uniform`` binner over those
public bounds (``binner_type="uniform"``, ``n_bins=10``, ``proc_epsilon=None``: the ``MMPipeline``
docstring's example binner without a budget, since the bounds are given), so the whole ε goes to
the generative model and no bound is estimated from the data.

**Seeding.** ``fit(..., random_state=seed)`` and ``generate(..., random_state=seed)`` take the
documented random state ("deterministic generation", README). Fitting is still not reproducible
from it: the measurements draw OpenDP noise (``seedable=False``).

**Domain read from the data anyway.** ``TableBinner.fit`` (dpmm/processing/table_binner.py) first
drops every column with a single distinct value in the *private* data ("static columns") and
releases that value for it, before the public domain is consulted; with every column constant it
raises ``ValueError: No objects to concatenate``. On the worst case D′ (four (0,0,0) rows) every
run therefore fails while D's runs succeed: the failure itself reveals membership.

dpmm is imported inside the targets only: it lives in the ``dpmm`` env (it pins numpy 1.26.4,
pandas 2.1.0, scikit-learn 1.5.0).
"""
from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import pandas as pd

from dpcheck.targets.base import Schema, TargetError, TargetInfo

DOC = "https://github.com/sassoftware/dpmm#getting-started"
LIBRARY = "dpmm"
#: Private-PGM estimation iterations (dpmm's defaults: 5,000-10,000, about a minute per fit on three
#: binary columns here); fewer iterations only change the post-processing of the noisy marginals
N_ITERS = 300


def public_domain(schema: Schema) -> dict[str, dict[str, Any]]:
    """dpmm's ``domain`` argument from the schema's public categories and bounds."""
    domain: dict[str, dict[str, Any]] = {}
    for column in schema.columns:
        if column.kind == "categorical":
            domain[column.name] = {"categories": list(column.categories or ())}
        else:
            domain[column.name] = {"lower": float(column.lower), "upper": float(column.upper)}
    return domain


def typed_frame(data: pd.DataFrame, schema: Schema) -> pd.DataFrame:
    """Categorical columns as pandas ``category`` dtype over the public categories (dpmm treats
    numeric dtypes as numbers to bin), numeric columns as float/int."""
    out = data[list(schema.names)].reset_index(drop=True).copy()
    for column in schema.columns:
        if column.kind == "categorical":
            out[column.name] = pd.Categorical(out[column.name], categories=list(column.categories or ()))
        elif column.kind == "integer":
            out[column.name] = out[column.name].astype(np.int64)
        else:
            out[column.name] = out[column.name].astype(float)
    return out


class DpmmPipeline:
    """``<Model>Pipeline(epsilon=ε, delta=δ, ...)``, ``fit(df, domain)``, ``generate(n_records=n)``."""

    pipeline: ClassVar[str] = ""

    def __init__(self) -> None:
        self.model: Any = None
        self.schema: Schema | None = None
        self.seed = 0

    def fit(self, data: pd.DataFrame, *, schema: Schema, epsilon: float, delta: float, seed: int,
            n_bins: int = 10, **knobs: Any) -> "DpmmPipeline":
        import dpmm.pipelines

        self.schema, self.seed = schema, int(seed)
        cls = getattr(dpmm.pipelines, self.pipeline)
        self.model = cls(epsilon=float(epsilon), delta=float(delta), binner_type="uniform", proc_epsilon=None,
                         n_bins=int(n_bins), **knobs)
        self.model.fit(typed_frame(data, schema), public_domain(schema), random_state=self.seed)
        return self

    def sample(self, n: int) -> pd.DataFrame:
        if self.model is None or self.schema is None:
            raise TargetError("sample() before fit()")
        out = self.model.generate(n_records=int(n), random_state=self.seed + 1)
        return pd.DataFrame(out)


class MST(DpmmPipeline):
    """MST: ``dpmm.pipelines.MSTPipeline(epsilon, delta)`` — README "Getting Started" (its example)."""

    pipeline = "MSTPipeline"


class AIM(DpmmPipeline):
    """AIM: ``dpmm.pipelines.AIMPipeline(epsilon, delta)`` — README "Models" table, same pipeline API."""

    pipeline = "AIMPipeline"


class PrivBayes(DpmmPipeline):
    """PrivBayes+PGM: ``dpmm.pipelines.PrivBayesPipeline(epsilon, delta)`` — README "Models" table."""

    pipeline = "PrivBayesPipeline"


NOTE = ("not reproducible from a seed (OpenDP noise); TableBinner drops columns that are constant in the "
        "private data (static columns) whatever the public domain says, and fit fails when every column is")


def _info(cls: type, name: str) -> TargetInfo:
    doc = " ".join((cls.__doc__ or "").split())
    return TargetInfo(name=f"{LIBRARY}:{name}", library=LIBRARY, kind="synthesizer", env="dpmm",
                      factory=f"{__name__}:{cls.__name__}", settings={"n_jobs": 1, "gen_kwargs": {"n_iters": N_ITERS}},
                      doc=f"{doc} Public domain through fit(df, domain). {DOC}",
                      dataset="worstcase-categorical", requires=("dpmm",), seedable=False, note=NOTE,
                      neighbours="add/remove", public=("domain (fit(df, domain))",),
                      claim_source="dpmm docs (ε-DP marginal-based synthesizers: MST, AIM, PrivBayes, "
                                   "calibrated per record added or removed)")


TARGETS: list[TargetInfo] = [_info(MST, "mst"), _info(AIM, "aim"), _info(PrivBayes, "privbayes")]
