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
                                learning_rate=1e-4, bounds=None, integer_columns=None, categorical_columns=())


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

    def _split_variables(self, values: list[np.ndarray]) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """(critic weights W1, b1, W2, b2, W3, b3; generator weights) from the trainable variables."""
        raise NotImplementedError

    def _critic_input(self, encoded: np.ndarray) -> np.ndarray:
        return encoded

    def release_model(self) -> Any:
        """The trained generator and the released critic (upstream: its one discriminator, trained on
        every row; twin: the student), on records encoded as the model encodes them: scaled with the
        metadata bounds, finite columns one-hot (dpcheck.audit.attacks.whitebox)."""
        if self._model is None or self._session is None:
            raise RuntimeError(f"{self.name}: call fit before release_model")
        from dpcheck.audit.attacks.whitebox import ReleasedModel, mlp_critic, relu
        from dpcheck.vendored_impls.turing import finite

        values = self._session.run(self._session.graph.get_collection("trainable_variables"))
        critic_weights, generator = self._split_variables(values)
        model = self._model
        lower, upper, categories = model.lower.copy(), model.upper.copy(), dict(model.finite)
        net = mlp_critic(list(zip(critic_weights[0::2], critic_weights[1::2])), relu)

        def critic(x: np.ndarray) -> np.ndarray:
            x = np.asarray(x, np.float64).reshape(-1, len(lower))
            scaled = (x - lower) / (upper - lower + 1e-8)
            encoded = finite.expand(scaled, x, categories) if categories else scaled
            return net(self._critic_input(encoded))

        if critic_weights[4].shape[1:] != (1,):
            raise RuntimeError(f"{self.name}: unexpected variable layout {[v.shape for v in values]}")
        params = {f"generator{i}": v for i, v in enumerate(generator)}
        params.update({f"critic{i}": v for i, v in enumerate(critic_weights)})
        params.update({"scale_lower": lower, "scale_upper": upper})
        return ReleasedModel(params=params, critic=critic)


class Upstream(_Base):
    name = "turing"
    source_files = [str(HERE / "upstream.py")]

    def _model_class(self) -> Any:
        from dpcheck.vendored_impls.turing.upstream import PATEGAN

        return PATEGAN

    def _extra(self, hp: dict[str, Any]) -> dict[str, Any]:
        return {"learning_rate": float(hp["learning_rate"])}  # reprosyn's PATEGAN(learning_rate=...)

    def _split_variables(self, values: list[np.ndarray]) -> tuple[list[np.ndarray], list[np.ndarray]]:
        return values[:6], values[6:12]  # D_W1, D_b1, D_W2, D_b2, D_W3, D_b3, then G_*


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
        return {"learning_rate": float(hp["learning_rate"]), "lamda": float(hp["lamda"]),
                "num_moments": int(hp["num_moments"])}

    def _split_variables(self, values: list[np.ndarray]) -> tuple[list[np.ndarray], list[np.ndarray]]:
        return values[10:16], values[:6]  # original-fixed's PATE_GAN: G_* (6), T_* (4), then the student S_*

    def _critic_input(self, encoded: np.ndarray) -> np.ndarray:
        return np.clip(encoded / (1.0 + 1e-8), 0.0, 1.0)  # its inner normalisation with bounds [0, 1]
