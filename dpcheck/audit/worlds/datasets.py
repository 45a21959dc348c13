"""The neighbouring datasets of an audit: D (with the target) and D′ = D − target.

* ``worstcase``: D′ = four (0,0,0) rows over three integer columns, target (1,1,1), domain
  {0,1}^3 (the Querybased setting of the audit paper, Section 6.2).
* ``cervical``: Kaggle Cervical Cancer cleaned as in the audit paper — '?' → missing, the seven
  near-empty STD indicator columns dropped, missing values filled with column modes, a stratified
  80/20 split on ``Biopsy`` with a fixed seed; D is the 80 % training part. The target is a row
  index into D (chosen by :mod:`dpcheck.audit.runners.targets` when not given).

* ``worstcase-categorical`` / ``worstcase-continuous`` / ``worstcase-classification``: the same
  worst case for real-library targets (:mod:`dpcheck.targets`), with a :class:`Schema` carrying the
  public domain — three categorical columns with categories (0, 1); three continuous columns in
  [0, 1] (the target sits at the upper bound); or two continuous features in [0, 1] and a
  categorical label ``y`` in (0, 1), whose D′ holds both labels (half each) so every model sees both
  classes in both worlds. A suffix ``@N`` makes D′ N background rows instead of 4 (for libraries
  that need more rows); the target is always the last row of D. A suffix ``+replace`` plays the
  replace-one game instead of add/remove: D′ is D with the target replaced by a background row
  (of the target's class), so both worlds have the same number of rows.
* ``csv``: the user's own data (``--data FILE.csv --schema FILE.json --target ROW``).

Public bounds (``lower``, ``upper``) are the domain an adversary and a correct implementation
may know: {0,1} for the worst case, the min/max of the full published dataset for cervical, the
schema's bounds (category codes for categorical columns) for the others.
"""
from __future__ import annotations

import functools
from importlib import resources
import os
from dataclasses import dataclass
from pathlib import Path

from typing import TYPE_CHECKING

import numpy as np

from dpcheck.audit.core.canary import candidate_index, candidates
from dpcheck.audit.core.seeds import CERVICAL_SPLIT_SEED
from dpcheck.audit.core.spec import WORLD_IN
from dpcheck.targets.base import Column, Schema

CERVICAL_ENV = "DPCHECK_CERVICAL_CSV"
CERVICAL_FILE = "cervical_cancer.csv.gz"
#: STD indicator columns with at most two positive entries in 858 patients (two are all-zero)
CERVICAL_SPARSE = (
    "STDs_cervical_condylomatosis", "STDs_AIDS", "STDs_genital_herpes",
    "STDs_pelvic_inflammatory_disease", "STDs_Hepatitis_B", "STDs_molluscum_contagiosum", "STDs_HPV",
)
CERVICAL_LABEL = "Biopsy"
#: the columns of the Kaggle/UCI file, in its order (the shipped copy's names)
CERVICAL_COLUMNS = (
    "Age", "N_sex_partners", "First_sex_intercourse", "N_pregnancies", "Smokes", "Smokes_years",
    "Smokes_packs_year", "Hormonal_Contraceptives", "Hormonal_Contraceptives_years", "IUD", "IUD_years", "STDs",
    "STDs_number", "STDs_condylomatosis", "STDs_cervical_condylomatosis", "STDs_vaginal_condylomatosis",
    "STDs_vulvo_perineal_condylomatosis", "STDs_syphilis", "STDs_pelvic_inflammatory_disease",
    "STDs_genital_herpes", "STDs_molluscum_contagiosum", "STDs_AIDS", "STDs_HIV", "STDs_Hepatitis_B", "STDs_HPV",
    "STDs_N_diagnosis", "STDs_Time_since_first_diagnosis", "STDs_Time_since_last_diagnosis", "Dx_Cancer",
    "Dx_CIN", "Dx_HPV", "Dx", "Hinselmann", "Schiller", "Citology", "Biopsy",
)
#: fewer rows leave teachers or the stratified split without data (5 teachers, 2+ per Biopsy class)
CERVICAL_MIN_ROWS = 50
WORST_CASE_KINDS = ("worstcase-categorical", "worstcase-continuous", "worstcase-classification")
DATASETS = ("worstcase", *WORST_CASE_KINDS, "cervical")
WORST_CASE_BACKGROUND = 4

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class AuditDataset:
    name: str
    with_target: np.ndarray  # D
    without_target: np.ndarray  # D′
    target_index: int
    columns: tuple[str, ...]
    lower: np.ndarray
    upper: np.ndarray
    default_synth_rows: int
    #: public domain and column kinds; None = integer columns within (lower, upper)
    schema: Schema | None = None

    def get_schema(self) -> Schema:
        if self.schema is not None:
            return self.schema
        return Schema(tuple(Column(n, "integer", lower=float(lo), upper=float(hi))
                            for n, lo, hi in zip(self.columns, self.lower, self.upper)))

    @property
    def target(self) -> np.ndarray:
        return self.with_target[self.target_index]

    def world(self, world: int) -> np.ndarray:
        return self.with_target if world == WORLD_IN else self.without_target

    @property
    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        return self.lower.copy(), self.upper.copy()


REPLACE_SUFFIX = "+replace"


def split_background(name: str) -> tuple[str, int]:
    """``"worstcase-categorical@1000"`` → ("worstcase-categorical", 1000) (a ``+replace`` suffix is dropped)."""
    base, sep, rows = name.removesuffix(REPLACE_SUFFIX).partition("@")
    if not sep:
        return base, WORST_CASE_BACKGROUND
    try:
        count = int(rows)
    except ValueError:
        raise ValueError(f"dataset {name!r}: the part after '@' must be a row count") from None
    if base not in WORST_CASE_KINDS or count < 2:
        raise ValueError(f"dataset {name!r}: '@N' (N >= 2) applies to {', '.join(WORST_CASE_KINDS)}")
    return base, count


def check_name(name: str) -> None:
    """Raise ValueError for a dataset name :func:`load` would not know."""
    base, _ = split_background(name)
    if name.endswith(REPLACE_SUFFIX) and base not in WORST_CASE_KINDS:
        raise ValueError(f"dataset {name!r}: '{REPLACE_SUFFIX}' applies to {', '.join(WORST_CASE_KINDS)}")
    if base not in DATASETS:
        raise ValueError(f"unknown dataset {name!r}; choose from {', '.join(DATASETS)} "
                         "(worst-case kinds take '@N' background rows), or pass --data/--schema/--target")


def load(name: str, target: int | str | None = None, data: dict | None = None) -> AuditDataset:
    if isinstance(target, str):  # "craft:K": D′ = the public rows, D = D′ + a crafted canary
        return crafted_dataset(name, target, data)
    if name == "csv":
        if data is None or target is None:
            raise ValueError("the csv dataset needs its files and a target row")
        return user_csv(data["csv"], data["schema"], int(target), data.get("sha256", ""))
    base, background = split_background(name)
    if base in WORST_CASE_KINDS:
        if target not in (None, background):
            raise ValueError(f"the {name} dataset has a fixed target (row {background}, the last)")
        return worst_case_kind(base, background, name.endswith(REPLACE_SUFFIX))
    if name == "worstcase":
        if target not in (None, 4):
            raise ValueError("the worstcase dataset has a fixed target (row 4, (1,1,1))")
        return worst_case()
    if name == "cervical":
        if target is None:
            raise ValueError("the cervical dataset needs a target index (or automatic selection)")
        return cervical(target)
    raise ValueError(f"unknown dataset {name!r}; choose from {', '.join(DATASETS)}")


@functools.lru_cache(maxsize=1)
def worst_case() -> AuditDataset:
    without = np.zeros((4, 3))
    with_target = np.vstack([without, np.ones((1, 3))])
    return AuditDataset("worstcase", with_target, without, 4, ("a", "b", "c"),
                        np.zeros(3), np.ones(3), default_synth_rows=100)


@functools.lru_cache(maxsize=16)
def worst_case_kind(kind: str, background: int = WORST_CASE_BACKGROUND, replace: bool = False) -> AuditDataset:
    """The worst case with a schema: D′ = ``background`` background rows, target = last row of D.

    With ``replace``, D′ is instead D with the target replaced by a background row of its class.
    """
    name = (kind if background == WORST_CASE_BACKGROUND else f"{kind}@{background}") + (REPLACE_SUFFIX if replace else "")
    if kind == "worstcase-classification":
        without = np.zeros((background, 3))
        without[background // 2:, 2] = 1.0  # both classes in D′
        schema = Schema((Column("a", "continuous", lower=0.0, upper=1.0),
                         Column("b", "continuous", lower=0.0, upper=1.0),
                         Column("y", "categorical", categories=(0, 1))), label="y")
    elif kind in ("worstcase-categorical", "worstcase-continuous"):
        without = np.zeros((background, 3))
        if kind == "worstcase-categorical":
            schema = Schema(tuple(Column(n, "categorical", categories=(0, 1)) for n in "abc"))
        else:
            schema = Schema(tuple(Column(n, "continuous", lower=0.0, upper=1.0) for n in "abc"))
    else:
        raise ValueError(f"unknown worst-case kind {kind!r}; choose from {', '.join(WORST_CASE_KINDS)}")
    with_target = np.vstack([without, np.ones((1, 3))])
    if replace:
        without = np.vstack([without, without[-1:]])  # the last background row has the target's label
    lower, upper = schema.bounds()
    return AuditDataset(name, with_target, without, background, schema.names, lower, upper,
                        default_synth_rows=100, schema=schema)


def read_user_data(csv_path: str | Path, schema_path: str | Path) -> tuple[np.ndarray, Schema]:
    """The user's CSV encoded by its schema JSON; ValueError with a clear message on bad input."""
    import json

    import pandas as pd

    try:
        raw = json.loads(Path(schema_path).read_text())
    except OSError as exc:
        raise ValueError(f"cannot read the schema {schema_path}: {exc.strerror or exc}") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"schema {schema_path} is not valid JSON: {exc}") from None
    try:
        schema = Schema.from_dict(raw)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"schema {schema_path}: {exc}") from None
    try:
        frame = pd.read_csv(csv_path)
    except OSError as exc:
        raise ValueError(f"cannot read the data {csv_path}: {exc.strerror or exc}") from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise ValueError(f"data {csv_path} is not a readable CSV: {exc}") from None
    missing = [n for n in schema.names if n not in frame.columns]
    extra = [n for n in frame.columns if n not in schema.names]
    if missing or extra:
        raise ValueError(f"data {csv_path} and schema {schema_path} disagree: columns only in the schema "
                         f"{missing}, only in the CSV {extra}")
    if len(frame) < 2:
        raise ValueError(f"data {csv_path} needs at least 2 rows (the target and one more), has {len(frame)}")
    if frame[list(schema.names)].isna().any().any():
        raise ValueError(f"data {csv_path} has missing values; fill or drop them first")
    try:
        schema.validate(frame)
    except ValueError as exc:
        raise ValueError(f"data {csv_path}: {exc}") from None
    return schema.encode(frame), schema


@functools.lru_cache(maxsize=4)
def user_csv(csv_path: str, schema_path: str, target: int, digest: str = "") -> AuditDataset:
    values, schema = read_user_data(csv_path, schema_path)
    if not 0 <= target < len(values):
        raise ValueError(f"--target must be a row index in [0, {len(values)}) of {csv_path}, got {target}")
    lower, upper = schema.bounds()
    without = np.delete(values, target, axis=0)
    return AuditDataset("csv", values, without, target, schema.names, lower, upper,
                        default_synth_rows=len(without), schema=schema)


def user_data_spec(csv_path: str | Path, schema_path: str | Path) -> dict:
    """What the audit spec records about user data: absolute paths and a digest of both files."""
    import hashlib

    digest = hashlib.sha256(Path(csv_path).read_bytes() + b"\0" + Path(schema_path).read_bytes()).hexdigest()
    return {"csv": str(Path(csv_path).resolve()), "schema": str(Path(schema_path).resolve()),
            "sha256": digest[:32]}


def cervical_path() -> Path:
    """The Cervical Cancer CSV: ``$DPCHECK_CERVICAL_CSV`` if set, else the copy shipped in
    ``dpcheck/data`` (source and licence in ``dpcheck/data/README.md``)."""
    if os.environ.get(CERVICAL_ENV):
        path = Path(os.environ[CERVICAL_ENV])
        if not path.is_file():
            raise FileNotFoundError(f"{CERVICAL_ENV}={path}: no such file")
        return path
    return Path(str(resources.files("dpcheck.data").joinpath(CERVICAL_FILE)))


def read_cervical(path: str | Path) -> "pd.DataFrame":
    """The raw Cervical Cancer CSV ('?' and empty fields = missing), checked before any run:
    ValueError naming the problem for an unreadable file, missing, renamed or extra columns,
    non-numeric values, an empty column, a bad ``Biopsy`` label or too few rows."""
    import pandas as pd

    try:
        frame = pd.read_csv(path, na_values=["?"])
    except OSError as exc:
        raise ValueError(f"cannot read the Cervical Cancer CSV {path}: {exc.strerror or exc}") from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise ValueError(f"the Cervical Cancer CSV {path} is not a readable CSV: {exc}") from None
    missing = [c for c in CERVICAL_COLUMNS if c not in frame.columns]
    extra = [str(c) for c in frame.columns if c not in CERVICAL_COLUMNS]
    if missing or extra:
        parts = ([f"missing column(s) {', '.join(missing)}"] if missing else []) + (
            [f"unexpected column(s) {', '.join(extra)}"] if extra else [])
        hint = " (renamed?)" if missing and extra else ""
        raise ValueError(f"the Cervical Cancer CSV {path} does not have the expected {len(CERVICAL_COLUMNS)} "
                         f"columns: {'; '.join(parts)}{hint}")
    for column in CERVICAL_COLUMNS:
        numeric = pd.to_numeric(frame[column], errors="coerce")
        bad = frame[column].notna() & numeric.isna()
        if bad.any():
            row = int(np.flatnonzero(bad.to_numpy())[0])
            raise ValueError(f"the Cervical Cancer CSV {path}: column {column} must be numeric; row {row + 1} "
                             f"(line {row + 2}) holds {frame[column].iloc[row]!r}")
        frame[column] = numeric
    empty = [c for c in CERVICAL_COLUMNS if c not in CERVICAL_SPARSE and frame[c].isna().all()]
    if empty:
        raise ValueError(f"the Cervical Cancer CSV {path}: column(s) {', '.join(empty)} hold no values")
    label = frame[CERVICAL_LABEL]
    if label.isna().any() or not label.isin([0, 1]).all():
        raise ValueError(f"the Cervical Cancer CSV {path}: {CERVICAL_LABEL} must be 0 or 1 in every row")
    counts = label.value_counts()
    if len(frame) < CERVICAL_MIN_ROWS or min(counts.get(0, 0), counts.get(1, 0)) < 2:
        raise ValueError(f"the Cervical Cancer CSV {path} has too few rows: {len(frame)} "
                         f"({int(counts.get(1, 0))} with {CERVICAL_LABEL} = 1); the audit needs at least "
                         f"{CERVICAL_MIN_ROWS}, with at least 2 per {CERVICAL_LABEL} class")
    return frame


def check_cervical(target: int | None = None) -> int:
    """Check the Cervical CSV and, if given, the target index before any run; returns the number
    of training rows. ValueError naming the problem otherwise."""
    try:
        path = cervical_path()
    except FileNotFoundError as exc:
        raise ValueError(str(exc)) from None
    train = cervical_clean(str(path))[0]
    if target is not None and not 0 <= target < len(train):
        raise ValueError(f"--target {target} is out of range: the cervical training split has {len(train)} rows "
                         f"(indices 0 to {len(train) - 1})")
    return len(train)


@functools.lru_cache(maxsize=2)
def cervical_clean(path: str | None = None) -> tuple[np.ndarray, np.ndarray, tuple[str, ...], np.ndarray, np.ndarray]:
    """(train, test, columns, lower, upper) of the cleaned Cervical Cancer data."""
    from sklearn.model_selection import train_test_split

    frame = read_cervical(path or cervical_path())
    frame = frame.drop(columns=[c for c in CERVICAL_SPARSE if c in frame.columns])
    for column in frame.columns:
        if frame[column].isna().any():
            frame[column] = frame[column].fillna(frame[column].mode(dropna=True).iloc[0])
    frame = frame.astype(float)
    train, test = train_test_split(frame, test_size=0.2, stratify=frame[CERVICAL_LABEL],
                                   random_state=CERVICAL_SPLIT_SEED)
    values = frame.to_numpy()
    return (train.to_numpy(), test.to_numpy(), tuple(frame.columns),
            values.min(axis=0), values.max(axis=0))


@functools.lru_cache(maxsize=8)
def cervical(target: int) -> AuditDataset:
    train, _, columns, lower, upper = cervical_clean()
    if not 0 <= target < len(train):
        raise ValueError(f"cervical target index must be in [0, {len(train)}), got {target}")
    without = np.delete(train, target, axis=0)
    return AuditDataset("cervical", train, without, target, columns, lower, upper,
                        default_synth_rows=len(without))


def farthest_records(data: np.ndarray, lower: np.ndarray, upper: np.ndarray, count: int,
                     neighbours: int = 5) -> list[int]:
    """Indices of the ``count`` rows farthest from the rest: largest mean Euclidean distance to
    their ``neighbours`` nearest other rows, on data min-max scaled by the public bounds."""
    span = np.where(upper > lower, upper - lower, 1.0)
    scaled = (data - lower) / span
    sq = np.sum(scaled**2, axis=1)
    dist = np.sqrt(np.clip(sq[:, None] + sq[None, :] - 2 * scaled @ scaled.T, 0, None))
    np.fill_diagonal(dist, np.inf)
    k = min(neighbours, len(data) - 1)
    nearest = np.sort(dist, axis=1)[:, :k].mean(axis=1)
    order = np.lexsort((np.arange(len(data)), -nearest))  # ties: lower index first
    return [int(i) for i in order[:count]]


# ---------------------------------------------------------------- crafted canaries (dpcheck.audit.runners.crafting)

def has_public_domain(name: str) -> str | None:
    """None when ``name`` can take a crafted canary, else why not."""
    if name.endswith(REPLACE_SUFFIX):
        return (f"dataset {name!r} plays the replace-one game; a crafted canary is added to D (add/remove "
                "neighbours): drop the '+replace' suffix")
    base, _ = split_background(name)
    if base not in (*DATASETS, "csv"):
        return f"dataset {name!r} has no public domain dpcheck knows"
    return None


def check_craftable(name: str) -> None:
    problem = has_public_domain(name)
    if problem:
        raise ValueError(f"--target craft needs a dataset with a public domain: {problem}")


def public_rows(name: str, data: dict | None) -> tuple[np.ndarray, AuditDataset]:
    """(D′ rows, a dataset giving columns, bounds, schema and the default synthetic row count)."""
    if name == "csv":
        if data is None:
            raise ValueError("the csv dataset needs its files")
        like = user_csv(data["csv"], data["schema"], 0, data.get("sha256", ""))
        return like.with_target, like  # every row of the CSV
    if name == "cervical":
        like = cervical(0)
        return like.with_target, like  # the whole training split
    like = load(name)
    return like.without_target, like


def crafted_dataset(name: str, target: str, data: dict | None = None) -> AuditDataset:
    """The audit dataset with crafted candidate K of ``target = "craft:K"`` added to D."""
    check_craftable(name)
    index = candidate_index(target)
    if index is None:
        raise ValueError("choose the crafted candidate first (dpcheck.audit.runners.crafting.resolve_craft), "
                         "or give 'craft:K'")
    files = (data["csv"], data["schema"], data.get("sha256", "")) if name == "csv" and data else None
    return _crafted(name, index, files)


@functools.lru_cache(maxsize=16)
def _crafted(name: str, index: int, files: tuple[str, str, str] | None) -> AuditDataset:
    data = dict(zip(("csv", "schema", "sha256"), files)) if files else None
    rows, like = public_rows(name, data)
    pool = candidates(like.lower, like.upper, index + 1)
    if index >= len(pool):
        raise ValueError(f"craft:{index}: the public domain of {name} has only {len(pool)} crafted candidates")
    default_rows = len(rows) if name in ("csv", "cervical") else like.default_synth_rows
    return AuditDataset(name, np.vstack([rows, pool[index][None, :]]), rows, len(rows), like.columns,
                        like.lower, like.upper, default_synth_rows=default_rows, schema=like.schema)
