"""Adapters for ``original`` (2018 PATE_GAN.py rebuilt) and ``original-fixed`` (a real conditional PATE-GAN)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from dpcheck.vendored_impls._common import as_numeric_array, seed_everything
from dpcheck.vendored_impls._tf import (SessionHolder, graph_session, integral_columns, merge_hyperparams,
                                        public_bounds)

HERE = Path(__file__).parent
UPSTREAM = "bitbucket.org/mvdschaar/mlforhealthlabpub alg/pategan/PATE_GAN.py (2018)"

#: Table 3, column original (batch 128, 10,000 iterations); λ and L are inert upstream
UPSTREAM_DEFAULTS: dict[str, Any] = dict(max_iterations=10_000, num_teachers=10, lamda=1e-3, num_moments=20,
                                         batch_size=128, label_column=-1, bounds=None)
FIXED_DEFAULTS: dict[str, Any] = dict(UPSTREAM_DEFAULTS, label_ratio=0.5, teacher_iters=1, student_iters=1)


class _Base(SessionHolder):
    framework = "tensorflow"
    upstream = UPSTREAM
    name = ""
    _defaults: dict[str, Any] = {}

    def __init__(self) -> None:
        self._generate: Any = None
        self._layout: tuple[int, int] | None = None
        self._integers: tuple[int, ...] = ()
        self._seed = 0
        self._draws = 0
        self._probe: Any = None

    def fit(self, data: Any, *, epsilon: float, delta: float, seed: int, probe: Any = None,
            **hyperparams: Any) -> "_Base":
        hp = merge_hyperparams(self.name, self._defaults, hyperparams)
        array, _ = as_numeric_array(data, min_rows=int(hp["num_teachers"]))
        dim = array.shape[1]
        if dim < 2:
            raise ValueError(f"{self.name} needs at least one feature column besides the label column")
        label = int(hp["label_column"]) % dim
        features = [j for j in range(dim) if j != label]
        seed_everything(seed)
        tf1, _, sess = graph_session(seed)
        self._set_session(sess)
        self._generate = self._train(array, features, label, epsilon, delta, hp, tf1, sess, probe)
        self._layout = (dim, label)
        self._integers = integral_columns(array)
        self._seed, self._draws, self._probe = seed, 0, probe
        return self

    def _train(self, array: np.ndarray, features: list[int], label: int, epsilon: float, delta: float,
               hp: dict[str, Any], tf1: Any, sess: Any, probe: Any) -> Any:
        raise NotImplementedError

    def sample(self, n: int) -> np.ndarray:
        if self._generate is None or self._layout is None:
            raise RuntimeError(f"{self.name}: call fit before sample")
        self._draws += 1
        np.random.seed((self._seed + 7919 * self._draws) % 2**32)
        X, Y = self._generate(int(n))
        dim, label = self._layout
        out = np.insert(np.asarray(X, np.float64), label, np.asarray(Y, np.float64).reshape(-1), axis=1)
        return self._restore_types(out)

    def _restore_types(self, out: np.ndarray) -> np.ndarray:
        return out

    def _split_variables(self, values: list[np.ndarray]) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """(critic weights W1, b1, W2, b2, W3, b3; generator weights) from the trainable variables."""
        raise NotImplementedError

    def release_model(self) -> Any:
        """The trained generator and the released critic (upstream: its one discriminator; twin: the
        student), with the model's feature scaling; the critic's input is the scaled features and
        the label value, as in training (dpcheck.audit.attacks.whitebox)."""
        if self._generate is None or self._session is None or self._layout is None:
            raise RuntimeError(f"{self.name}: call fit before release_model")
        from dpcheck.audit.attacks.whitebox import ReleasedModel, mlp_critic, relu

        values = self._session.run(self._session.graph.get_collection("trainable_variables"))
        critic_weights, generator = self._split_variables(values)
        dim, label = self._layout
        if critic_weights[0].shape[0] != dim or critic_weights[4].shape[1:] != (1,):
            raise RuntimeError(f"{self.name}: unexpected variable layout {[v.shape for v in values]}")
        lower, span, clipped = self._scaling
        net = mlp_critic(list(zip(critic_weights[0::2], critic_weights[1::2])), relu)

        def critic(x: np.ndarray) -> np.ndarray:
            x = np.asarray(x, np.float64).reshape(-1, dim)
            scaled = (np.delete(x, label, axis=1) - lower) / (span + 1e-8)
            return net(np.column_stack([np.clip(scaled, 0.0, 1.0) if clipped else scaled, x[:, label]]))

        params = {f"generator{i}": v for i, v in enumerate(generator)}
        params.update({f"critic{i}": v for i, v in enumerate(critic_weights)})
        params.update({"scale_lower": lower, "scale_span": span})
        return ReleasedModel(params=params, critic=critic)


class Upstream(_Base):
    name = "original"
    source_files = [str(HERE / "upstream.py")]
    _defaults = UPSTREAM_DEFAULTS

    def _train(self, array, features, label, epsilon, delta, hp, tf1, sess, probe):  # type: ignore[no-untyped-def]
        from dpcheck.vendored_impls.original import upstream

        # bounds are ignored: upstream reads min/max from the data; lamda/num_moments are inert
        lowest = array[:, features].min(axis=0)
        self._scaling = (lowest, (array[:, features] - lowest).max(axis=0), False)  # upstream's own normalisation
        return upstream.PATE_GAN(array[:, features], array[:, label], epsilon, delta, int(hp["max_iterations"]),
                                 int(hp["num_teachers"]), tf1=tf1, sess=sess, mb_size=int(hp["batch_size"]),
                                 probe=probe)

    def _split_variables(self, values: list[np.ndarray]) -> tuple[list[np.ndarray], list[np.ndarray]]:
        return values[:6], values[6:12]  # D_W1, D_b1, D_W2, D_b2, D_W3, D_b3, then G_*


class Fixed(_Base):
    name = "original-fixed"
    source_files = [str(HERE / "fixed.py")]
    _defaults = FIXED_DEFAULTS

    @staticmethod
    def accountant_update(n0: np.ndarray, n1: np.ndarray, *, lamda: float, num_moments: int) -> np.ndarray:
        """The increment of alpha(1..L) computed by the twin's own accountant code."""
        from dpcheck.vendored_impls.original.fixed import moments_increment

        return moments_increment(n0, n1, lamda, num_moments)

    def _train(self, array, features, label, epsilon, delta, hp, tf1, sess, probe):  # type: ignore[no-untyped-def]
        from dpcheck.vendored_impls.original import fixed

        lower, upper = public_bounds(self.name, hp["bounds"], array.shape[1])
        self._scaling = (lower[features], upper[features] - lower[features], True)
        return fixed.PATE_GAN(array[:, features], array[:, [label]], epsilon, delta, int(hp["max_iterations"]),
                              int(hp["num_teachers"]), tf1=tf1, sess=sess, lower=lower[features],
                              upper=upper[features], label_ratio=float(hp["label_ratio"]),
                              lamda=float(hp["lamda"]), num_moments=int(hp["num_moments"]),
                              mb_size=int(hp["batch_size"]), teacher_iters=int(hp["teacher_iters"]),
                              student_iters=int(hp["student_iters"]), probe=probe)

    def _split_variables(self, values: list[np.ndarray]) -> tuple[list[np.ndarray], list[np.ndarray]]:
        return values[10:16], values[:6]  # G_* (6), T_* (4), then the student S_W1, S_b1, ..., S_b3

    def _restore_types(self, out: np.ndarray) -> np.ndarray:
        cols = list(self._integers)
        out[:, cols] = np.rint(out[:, cols])
        if self._probe is not None:
            self._probe.output_transform("round_int", columns=cols)
        return out
