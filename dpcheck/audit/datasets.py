"""The neighbouring datasets of an audit: D (with the target) and D′ = D − target.

* ``worstcase``: D′ = four (0,0,0) rows over three integer columns, target (1,1,1), domain
  {0,1}^3 (the Querybased setting of the audit paper, Section 6.2).
* ``cervical``: Kaggle Cervical Cancer cleaned as in the audit paper — '?' → missing, the seven
  near-empty STD indicator columns dropped, missing values filled with column modes, a stratified
  80/20 split on ``Biopsy`` with a fixed seed; D is the 80 % training part. The target is a row
  index into D (chosen by :mod:`dpcheck.audit.targets` when not given).

Public bounds (``lower``, ``upper``) are the domain an adversary and a correct implementation
may know: {0,1} for the worst case, the min/max of the full published dataset for cervical.
"""
from __future__ import annotations

import functools
from importlib import resources
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from dpcheck.audit.spec import WORLD_IN

CERVICAL_ENV = "DPCHECK_CERVICAL_CSV"
CERVICAL_FILE = "cervical_cancer.csv.gz"
#: STD indicator columns with at most two positive entries in 858 patients (two are all-zero)
CERVICAL_SPARSE = (
    "STDs_cervical_condylomatosis", "STDs_AIDS", "STDs_genital_herpes",
    "STDs_pelvic_inflammatory_disease", "STDs_Hepatitis_B", "STDs_molluscum_contagiosum", "STDs_HPV",
)
CERVICAL_LABEL = "Biopsy"
CERVICAL_SPLIT_SEED = 0
DATASETS = ("worstcase", "cervical")


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

    @property
    def target(self) -> np.ndarray:
        return self.with_target[self.target_index]

    def world(self, world: int) -> np.ndarray:
        return self.with_target if world == WORLD_IN else self.without_target

    @property
    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        return self.lower.copy(), self.upper.copy()


def load(name: str, target: int | None = None) -> AuditDataset:
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


def cervical_path() -> Path:
    """The Cervical Cancer CSV: ``$DPCHECK_CERVICAL_CSV`` if set, else the copy shipped in
    ``dpcheck/data`` (source and licence in ``dpcheck/data/README.md``)."""
    if os.environ.get(CERVICAL_ENV):
        path = Path(os.environ[CERVICAL_ENV])
        if not path.is_file():
            raise FileNotFoundError(f"{CERVICAL_ENV}={path}: no such file")
        return path
    return Path(str(resources.files("dpcheck.data").joinpath(CERVICAL_FILE)))


@functools.lru_cache(maxsize=2)
def cervical_clean(path: str | None = None) -> tuple[np.ndarray, np.ndarray, tuple[str, ...], np.ndarray, np.ndarray]:
    """(train, test, columns, lower, upper) of the cleaned Cervical Cancer data."""
    import pandas as pd
    from sklearn.model_selection import train_test_split

    frame = pd.read_csv(path or cervical_path(), na_values=["?"])
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
