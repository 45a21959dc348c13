"""The contract every real-library audit target follows.

A *target* wraps one documented use of an installed DP library. Synthesizers are fit and
sampled; mechanisms (models, statistics) release an array — exactly what a user of the library
would publish. Data always travels with a :class:`Schema` that carries the *public* domain
(categories or bounds), so a target never has to read its domain from the private data.

This module imports only the standard library, numpy and pandas: it runs inside the foreign
virtualenvs of targets whose library conflicts with the main environment.
"""
from __future__ import annotations

import importlib
import math
import random
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np
import pandas as pd

KINDS = ("integer", "categorical", "continuous")
TARGET_KINDS = ("synthesizer", "mechanism")
ENVS = ("main", "synthcity", "dpmm", "smartnoise")
#: neighbouring relations a library can claim ("none": it claims no DP guarantee at all, e.g. synthcity's
#: ADS-GAN); a dataset name ending in "+replace" plays replace-one
NEIGHBOUR_RELATIONS = ("add/remove", "replace-one", "none")


def audited_relation(dataset: str) -> str:
    """The neighbouring relation an audit on ``dataset`` plays: replace-one for ``…+replace``."""
    return "replace-one" if str(dataset).endswith("+replace") else "add/remove"


def claimed_guarantee(epsilon: float, delta: float, claimed: str, audited: str) -> tuple[float, float] | None:
    """The (ε, δ) a library claiming (ε, δ)-DP under ``claimed`` neighbours promises for a pair of
    ``audited`` neighbours: (ε, δ) when the relations agree; (2ε, (1 + e^ε)·δ) for a replace-one pair under
    an add/remove claim (a replacement is a removal then an addition: group privacy for 2 steps); None —
    no promise at all — for an add/remove pair under a replace-one claim (the row count, public there,
    may be released exactly); None as well when the library claims no DP guarantee (``claimed == "none"``)."""
    if claimed == audited:
        return float(epsilon), float(delta)
    if claimed == "add/remove" and audited == "replace-one":
        return 2.0 * float(epsilon), (1.0 + math.exp(float(epsilon))) * float(delta)
    return None


class TargetError(RuntimeError):
    """A target cannot run: library missing, bad schema, bad output."""


@dataclass(frozen=True)
class Column:
    name: str
    kind: str  # integer | categorical | continuous
    categories: tuple | None = None
    lower: float | None = None
    upper: float | None = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"column {self.name!r}: kind must be one of {', '.join(KINDS)}, got {self.kind!r}")
        if self.kind == "categorical":
            if not self.categories:
                raise ValueError(f"categorical column {self.name!r} needs its public categories")
            if len(set(self.categories)) != len(self.categories):
                raise ValueError(f"categorical column {self.name!r}: categories repeat")
        else:
            if self.lower is None or self.upper is None:
                raise ValueError(f"{self.kind} column {self.name!r} needs public bounds lower and upper")
            if not (np.isfinite(self.lower) and np.isfinite(self.upper)) or self.upper < self.lower:
                raise ValueError(f"column {self.name!r}: need finite lower <= upper, got {self.lower}, {self.upper}")

    @property
    def bounds(self) -> tuple[float, float]:
        """Numeric range; for a categorical column the range of its category codes."""
        if self.kind == "categorical":
            return 0.0, float(len(self.categories or ()) - 1)
        return float(self.lower), float(self.upper)  # type: ignore[arg-type]

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "kind": self.kind}
        if self.kind == "categorical":
            out["categories"] = [_plain(c) for c in self.categories or ()]
        else:
            out["lower"], out["upper"] = float(self.lower), float(self.upper)  # type: ignore[arg-type]
        return out

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Column":
        if not isinstance(d, dict) or "name" not in d or "kind" not in d:
            raise ValueError(f"a schema column needs 'name' and 'kind', got {d!r}")
        cats = d.get("categories")
        return cls(name=str(d["name"]), kind=str(d["kind"]),
                   categories=tuple(cats) if cats is not None else None,
                   lower=None if d.get("lower") is None else float(d["lower"]),
                   upper=None if d.get("upper") is None else float(d["upper"]))


def _plain(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value


@dataclass(frozen=True)
class Schema:
    columns: tuple[Column, ...]
    label: str | None = None

    def __post_init__(self) -> None:
        names = [c.name for c in self.columns]
        if not names:
            raise ValueError("a schema needs at least one column")
        if len(set(names)) != len(names):
            raise ValueError(f"schema column names repeat: {names}")
        if self.label is not None and self.label not in names:
            raise ValueError(f"schema label {self.label!r} is not one of its columns {names}")

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.columns)

    def column(self, name: str) -> Column:
        for c in self.columns:
            if c.name == name:
                return c
        raise KeyError(name)

    @property
    def features(self) -> tuple[Column, ...]:
        return tuple(c for c in self.columns if c.name != self.label)

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """(lower, upper) per column in the numeric encoding of :meth:`encode`."""
        pairs = [c.bounds for c in self.columns]
        return np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs])

    def to_dict(self) -> dict[str, Any]:
        return {"columns": [c.to_dict() for c in self.columns], "label": self.label}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Schema":
        if not isinstance(d, dict) or not isinstance(d.get("columns"), list):
            raise ValueError("a schema is a JSON object with a 'columns' list (and optionally 'label')")
        return cls(tuple(Column.from_dict(c) for c in d["columns"]), d.get("label"))

    def decode(self, values: np.ndarray) -> pd.DataFrame:
        """Numeric array (categorical columns as category codes) → frame in the schema's types."""
        values = np.asarray(values, dtype=float).reshape(-1, len(self.columns))
        data: dict[str, Any] = {}
        for j, c in enumerate(self.columns):
            col = values[:, j]
            if c.kind == "categorical":
                cats = list(c.categories or ())
                data[c.name] = pd.Series([cats[int(v)] for v in np.rint(col)], dtype=object)
                if all(isinstance(x, (int, np.integer)) for x in cats):
                    data[c.name] = data[c.name].astype(np.int64)
            elif c.kind == "integer":
                data[c.name] = np.rint(col).astype(np.int64)
            else:
                data[c.name] = col.astype(float)
        return pd.DataFrame(data, columns=list(self.names))

    def encode(self, frame: pd.DataFrame) -> np.ndarray:
        """Frame → float array in schema column order; unknown categories become NaN."""
        missing = [n for n in self.names if n not in frame.columns]
        if missing:
            raise TargetError(f"output lacks schema columns {missing}; it has {list(frame.columns)}")
        out = np.empty((len(frame), len(self.columns)))
        for j, c in enumerate(self.columns):
            col = frame[c.name]
            if c.kind == "categorical":
                lookup = {_key(cat): i for i, cat in enumerate(c.categories or ())}
                out[:, j] = [lookup.get(_key(v), np.nan) for v in col]
            else:
                out[:, j] = pd.to_numeric(col, errors="coerce").to_numpy(dtype=float)
        return out

    def validate(self, frame: pd.DataFrame) -> None:
        """Raise ValueError when ``frame`` is not inside the schema's public domain."""
        encoded = self.encode(frame)
        lower, upper = self.bounds()
        for j, c in enumerate(self.columns):
            col = encoded[:, j]
            if np.isnan(col).any():
                bad = frame[c.name][np.isnan(col)].iloc[0]
                what = "is not one of its categories" if c.kind == "categorical" else "is not numeric"
                raise ValueError(f"column {c.name!r}: value {bad!r} {what}")
            outside = (col < lower[j]) | (col > upper[j])
            if outside.any():
                raise ValueError(f"column {c.name!r}: value {frame[c.name][outside].iloc[0]!r} is outside the "
                                 f"public bounds [{lower[j]}, {upper[j]}]")
            if c.kind == "integer" and not np.all(col == np.rint(col)):
                raise ValueError(f"integer column {c.name!r} holds non-integer values")


def _key(value: Any) -> str:
    """Categories compare by text, so 1, 1.0 and '1' from a CSV all find category 1."""
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        value = int(value)
    return str(_plain(value))


def seed_everything(seed: int) -> np.random.Generator:
    """Seed every RNG a library may draw from: ``random``, numpy's global state, torch if present."""
    seed = int(seed) & 0x7FFFFFFF
    random.seed(seed)
    np.random.seed(seed)
    try:
        import torch  # noqa: PLC0415 - optional, present only in some envs
    except ImportError:
        pass
    else:
        torch.manual_seed(seed)
    return np.random.default_rng(seed)


@dataclass(frozen=True)
class TargetInfo:
    name: str  # "LIBRARY:NAME", e.g. "diffprivlib:GaussianNB"
    library: str  # distribution name, e.g. "diffprivlib" (used for the version)
    kind: str  # synthesizer | mechanism
    env: str  # main | synthcity | dpmm | smartnoise
    factory: str  # "package.module:Class"; called with no arguments
    #: knobs passed to every fit (synthesizers) or release (mechanisms); shown in the report
    settings: dict[str, Any] = field(default_factory=dict)
    doc: str = ""  # the documentation page / docstring the target follows
    #: default audit dataset: worstcase-categorical | worstcase-continuous | worstcase-classification,
    #: optionally with "@N" background rows (D' = N copies of the background row)
    dataset: str = "worstcase-categorical"
    #: import names that must be importable in ``env`` (checked before any run)
    requires: tuple[str, ...] = ()
    #: documented behaviour worth stating next to the result (e.g. "warns PrivacyLeakWarning")
    note: str = ""
    #: False when the library draws noise from an RNG no seed controls (e.g. OpenDP)
    seedable: bool = True
    #: mechanisms releasing a count table over the public domain: "histogram" (every cell of the
    #: product domain) or "marginals" (every 1-way marginal, columns in order); read by --attack release-query
    release_layout: str | None = None
    #: the neighbouring relation the library's guarantee is stated (or calibrated) for:
    #: "add/remove" (unbounded DP: one record added or removed, the row count is private) or
    #: "replace-one" (bounded DP: one record replaced, the row count is public); "none": no DP claim
    neighbours: str = "add/remove"
    #: what the library treats as public, e.g. ("row count", "bounds"); the audit never tests a leak of these
    public: tuple[str, ...] = ()
    #: where the relation and the public facts are read from (docs page, or file:line of the calibration)
    claim_source: str = ""

    def __post_init__(self) -> None:
        if self.neighbours not in NEIGHBOUR_RELATIONS:
            raise ValueError(f"target {self.name}: neighbours must be one of {NEIGHBOUR_RELATIONS}, "
                             f"got {self.neighbours!r}")
        if self.kind not in TARGET_KINDS:
            raise ValueError(f"target {self.name}: kind must be one of {TARGET_KINDS}, got {self.kind!r}")
        if self.env not in ENVS:
            raise ValueError(f"target {self.name}: env must be one of {ENVS}, got {self.env!r}")
        if ":" not in self.name or ":" not in self.factory:
            raise ValueError(f"target {self.name}: name and factory are 'LIBRARY:NAME' and 'module:Class'")

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "library": self.library, "kind": self.kind, "env": self.env,
                "factory": self.factory, "settings": dict(self.settings), "doc": self.doc,
                "dataset": self.dataset, "requires": list(self.requires), "note": self.note,
                "seedable": self.seedable, "neighbours": self.neighbours, "public": list(self.public),
                "claim_source": self.claim_source}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "TargetInfo":
        d = dict(d)
        d["requires"] = tuple(d.get("requires", ()))
        d["public"] = tuple(d.get("public", ()))
        return cls(**d)


@runtime_checkable
class Synthesizer(Protocol):
    def fit(self, data: pd.DataFrame, *, schema: Schema, epsilon: float, delta: float, seed: int,
            **knobs: Any) -> Any: ...

    def sample(self, n: int) -> pd.DataFrame: ...


@runtime_checkable
class Mechanism(Protocol):
    def release(self, data: pd.DataFrame, *, schema: Schema, epsilon: float, delta: float, seed: int,
                **knobs: Any) -> np.ndarray: ...


def factory_class(info: TargetInfo) -> Any:
    """The target's factory (the class named by ``info.factory``), imported."""
    module_name, _, attr = info.factory.partition(":")
    return getattr(importlib.import_module(module_name), attr)


def build(info: TargetInfo) -> Any:
    """A fresh instance of the target's factory."""
    return factory_class(info)()


def shadow_release(info: TargetInfo, data: pd.DataFrame, schema: Schema, epsilon: float, delta: float,
                   seed: int, n_samples: int, knobs: dict[str, Any] | None = None) -> np.ndarray:
    """ONE shadow run in this process: seed, build, fit+sample or release, encode as floats.

    Synthesizers give an (n, columns) array in schema column order (categorical columns as
    category codes, NaN for a value outside the categories); mechanisms give a flat 1-D array.
    """
    merged = {**info.settings, **(knobs or {})}
    seed_everything(seed)
    target = build(info)
    if info.kind == "mechanism":
        released = target.release(data.copy(), schema=schema, epsilon=epsilon, delta=delta, seed=seed, **merged)
        return np.asarray(released, dtype=np.float64).ravel()
    target.fit(data.copy(), schema=schema, epsilon=epsilon, delta=delta, seed=seed, **merged)
    out = target.sample(int(n_samples))
    if not isinstance(out, pd.DataFrame):
        out = pd.DataFrame(np.asarray(out), columns=list(schema.names))
    return schema.encode(out)
