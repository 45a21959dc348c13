"""Adapters for ``turing`` (reprosyn's PATEGAN rebuilt) and ``turing-fixed`` (a real PATE-GAN)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from dpcheck.vendored_impls._common import as_numeric_array, seed_everything
from dpcheck.vendored_impls._tf import (SessionHolder, graph_session, integral_columns, merge_hyperparams,
                                        public_bounds)

HERE = Path(__file__).parent
UPSTREAM = "github.com/alan-turing-institute/reprosyn src/reprosyn/methods/gans/pate_gan.py"

#: Table 3, column turing: batch 128, 100 iterations; λ and L are inert upstream (no PATE)
DEFAULTS: dict[str, Any] = dict(max_iterations=100, num_teachers=10, lamda=1e-3, num_moments=20, batch_size=128,
                                bounds=None, integer_columns=None, categorical_columns=())



def prepare(name: str, data: Any, hyperparams: dict[str, Any]) -> tuple[dict[str, Any], np.ndarray, dict[str, Any]]:
    """Merged hyperparameters, the numeric array, and reprosyn's metadata (public bounds)."""
    hp = merge_hyperparams(name, DEFAULTS, hyperparams)
    array, _ = as_numeric_array(data, min_rows=int(hp["num_teachers"]))
    lower, upper = public_bounds(name, hp["bounds"], array.shape[1])
    integers = hp["integer_columns"]
    metadata = {"min": lower, "max": upper,
                "integer_columns": integral_columns(array) if integers is None else tuple(integers),
                # reprosyn's "finite" columns: one-hot with the metadata's categories
                "finite_columns": tuple(int(c) % array.shape[1] for c in hp["categorical_columns"] or ())}
    return hp, array, metadata

class _Base(SessionHolder):
    framework = "tensorflow"
    upstream = UPSTREAM
    name = ""

    def __init__(self) -> None:
        self._model: Any = None
        self._seed = 0
        self._draws = 0

    def fit(self, data: Any, *, epsilon: float, delta: float, seed: int, probe: Any = None,
            **hyperparams: Any) -> "_Base":
        hp, array, metadata = prepare(self.name, data, hyperparams)
        model = self._model_class()(epsilon=float(epsilon), delta=float(delta), num_teachers=int(hp["num_teachers"]),
                                    n_iters=int(hp["max_iterations"]), batch_size=int(hp["batch_size"]),
                                    **self._extra(hp))
        seed_everything(seed)
        tf1, _, sess = graph_session(seed)
        self._set_session(sess)
        model.fit(array, metadata, tf1=tf1, sess=sess, probe=probe)
        self._model, self._seed, self._draws = model, seed, 0
        return self

    def _model_class(self) -> Any:
        raise NotImplementedError

    def _extra(self, hp: dict[str, Any]) -> dict[str, Any]:
        return {}

    def sample(self, n: int) -> np.ndarray:
        if self._model is None:
            raise RuntimeError(f"{self.name}: call fit before sample")
        self._draws += 1
        np.random.seed((self._seed + 7919 * self._draws) % 2**32)
        return np.asarray(self._model.generate(int(n)), np.float64)


class Upstream(_Base):
    name = "turing"
    source_files = [str(HERE / "upstream.py")]

    def _model_class(self) -> Any:
        from dpcheck.vendored_impls.turing.upstream import PATEGAN

        return PATEGAN


class Fixed(_Base):
    name = "turing-fixed"
    source_files = [str(HERE / "fixed.py"), str(HERE.parent / "original" / "fixed.py")]

    @staticmethod
    def accountant_update(n0: np.ndarray, n1: np.ndarray, *, lamda: float, num_moments: int) -> np.ndarray:
        """The increment of alpha(1..L) computed by the twin's own accountant code."""
        from dpcheck.vendored_impls.original.fixed import moments_increment

        return moments_increment(n0, n1, lamda, num_moments)

    def _model_class(self) -> Any:
        from dpcheck.vendored_impls.turing.fixed import PATEGAN

        return PATEGAN

    def _extra(self, hp: dict[str, Any]) -> dict[str, Any]:
        return {"lamda": float(hp["lamda"]), "num_moments": int(hp["num_moments"])}
