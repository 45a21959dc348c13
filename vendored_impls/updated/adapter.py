"""Adapters for ``updated`` (2021 pate_gan.py rebuilt) and ``updated-fixed`` (its smallest correction)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from dpcheck.vendored_impls._common import as_numeric_array, seed_everything
from dpcheck.vendored_impls._tf import (SessionHolder, graph_session, integral_columns, merge_hyperparams,
                                        public_bounds)

HERE = Path(__file__).parent
UPSTREAM = "github.com/vanderschaarlab/mlforhealthlabpub alg/pategan/pate_gan.py (2021)"

#: Table 3, column updated: k = 10, λ = 1, L = 20, batch 64, 5 student iterations; budget-driven
DEFAULTS: dict[str, Any] = dict(max_iterations=10_000, num_teachers=10, lamda=1.0, num_moments=20,
                                batch_size=64, student_iters=5, bounds=None)


class _Base(SessionHolder):
    framework = "tensorflow"
    upstream = UPSTREAM
    name = ""

    def __init__(self) -> None:
        self._generate: Any = None
        self._integers: tuple[int, ...] = ()
        self._seed = 0
        self._draws = 0
        self._probe: Any = None

    def fit(self, data: Any, *, epsilon: float, delta: float, seed: int, probe: Any = None,
            **hyperparams: Any) -> "_Base":
        hp = merge_hyperparams(self.name, DEFAULTS, hyperparams)
        array, _ = as_numeric_array(data, min_rows=int(hp["num_teachers"]))
        parameters = dict(n_s=int(hp["student_iters"]), batch_size=int(hp["batch_size"]), k=int(hp["num_teachers"]),
                          epsilon=float(epsilon), delta=float(delta), lamda=float(hp["lamda"]),
                          L=int(hp["num_moments"]), max_iterations=int(hp["max_iterations"]))
        x_train = self._prepare(array, hp, parameters, probe)
        seed_everything(seed)
        tf1, _, sess = graph_session(seed)
        self._set_session(sess)
        self._generate = self._module().pategan(x_train, parameters, tf1=tf1, sess=sess, probe=probe)
        self._integers = integral_columns(array)
        self._seed, self._draws, self._probe = seed, 0, probe
        return self

    def _module(self) -> Any:
        raise NotImplementedError

    def _prepare(self, array: np.ndarray, hp: dict[str, Any], parameters: dict[str, Any], probe: Any) -> np.ndarray:
        raise NotImplementedError

    def sample(self, n: int) -> np.ndarray:
        if self._generate is None:
            raise RuntimeError(f"{self.name}: call fit before sample")
        self._draws += 1
        np.random.seed((self._seed + 7919 * self._draws) % 2**32)
        return self._restore_types(np.asarray(self._generate(int(n)), np.float64))

    def _restore_types(self, out: np.ndarray) -> np.ndarray:
        return out

    def _input_scaling(self) -> tuple[np.ndarray, np.ndarray, bool]:
        """(lower, upper, clipped): how the model maps a record into its [0, 1] input space."""
        raise NotImplementedError

    def release_model(self) -> Any:
        """The trained generator and student critic (weights read from the session's trainable
        variables in creation order: G_W1, G_b1, G_W2, G_b2, G_W3, G_b3, S_W1, S_b1, S_W2, S_b2) and
        the model's input scaling; the critic is evaluated in numpy (dpcheck.audit.attacks.whitebox)."""
        if self._generate is None or self._session is None:
            raise RuntimeError(f"{self.name}: call fit before release_model")
        from dpcheck.audit.attacks.whitebox import ReleasedModel, mlp_critic, relu

        values = self._session.run(self._session.graph.get_collection("trainable_variables"))
        generator, (s_w1, s_b1, s_w2, s_b2) = values[:6], values[6:10]
        if s_w1.ndim != 2 or s_w1.shape[0] != s_w1.shape[1] or s_w2.shape != (s_w1.shape[1], 1):
            raise RuntimeError(f"{self.name}: unexpected variable layout {[v.shape for v in values[:10]]}")
        lower, upper, clipped = self._input_scaling()
        net = mlp_critic([(s_w1, s_b1), (s_w2, s_b2)], relu)

        def critic(x: np.ndarray) -> np.ndarray:
            scaled = (np.asarray(x, np.float64) - lower) / (upper - lower + 1e-8)
            return net(np.clip(scaled, 0.0, 1.0) if clipped else scaled)

        params = {f"generator{i}": v for i, v in enumerate(generator)}
        params.update({"critic_w1": s_w1, "critic_b1": s_b1, "critic_w2": s_w2, "critic_b2": s_b2,
                       "scale_lower": lower, "scale_upper": upper})
        return ReleasedModel(params=params, critic=critic)


class Upstream(_Base):
    name = "updated"
    source_files = [str(HERE / "upstream.py")]

    def _module(self) -> Any:
        from dpcheck.vendored_impls.updated import upstream

        return upstream

    def _prepare(self, array, hp, parameters, probe):  # type: ignore[no-untyped-def]
        # upstream's example driver scales with the data's own min/max; ``bounds`` is ignored
        x_train, self._norm = self._module().normalization(array, probe)
        return x_train

    def release(self, out: np.ndarray) -> np.ndarray:
        """``sample`` output in input units, as a user of upstream's driver must map it back: with
        the driver's own normalisation parameters, i.e. the min/max read from the training data."""
        if self._generate is None:
            raise RuntimeError(f"{self.name}: call fit before release")
        span = self._norm["max_val"] - self._norm["min_val"] + 1e-8
        return np.asarray(out, np.float64) * span + self._norm["min_val"]

    def _input_scaling(self) -> tuple[np.ndarray, np.ndarray, bool]:
        return np.asarray(self._norm["min_val"], np.float64), np.asarray(self._norm["max_val"], np.float64), False


class Fixed(_Base):
    name = "updated-fixed"
    source_files = [str(HERE / "fixed.py")]

    def _module(self) -> Any:
        from dpcheck.vendored_impls.updated import fixed

        return fixed

    def _prepare(self, array, hp, parameters, probe):  # type: ignore[no-untyped-def]
        parameters["bounds"] = public_bounds(self.name, hp["bounds"], array.shape[1])
        self._bounds = parameters["bounds"]
        return array

    def _input_scaling(self) -> tuple[np.ndarray, np.ndarray, bool]:
        lower, upper = self._bounds
        return np.asarray(lower, np.float64), np.asarray(upper, np.float64), True

    def _restore_types(self, out: np.ndarray) -> np.ndarray:
        cols = list(self._integers)
        out[:, cols] = np.rint(out[:, cols])
        if self._probe is not None:
            self._probe.output_transform("round_int", columns=cols)
        return out
