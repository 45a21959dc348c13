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


class Upstream(_Base):
    name = "original"
    source_files = [str(HERE / "upstream.py")]
    _defaults = UPSTREAM_DEFAULTS

    def _train(self, array, features, label, epsilon, delta, hp, tf1, sess, probe):  # type: ignore[no-untyped-def]
        from dpcheck.vendored_impls.original import upstream

        # bounds are ignored: upstream reads min/max from the data; lamda/num_moments are inert
        return upstream.PATE_GAN(array[:, features], array[:, label], epsilon, delta, int(hp["max_iterations"]),
                                 int(hp["num_teachers"]), tf1=tf1, sess=sess, mb_size=int(hp["batch_size"]),
                                 probe=probe)


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
        return fixed.PATE_GAN(array[:, features], array[:, [label]], epsilon, delta, int(hp["max_iterations"]),
                              int(hp["num_teachers"]), tf1=tf1, sess=sess, lower=lower[features],
                              upper=upper[features], label_ratio=float(hp["label_ratio"]),
                              lamda=float(hp["lamda"]), num_moments=int(hp["num_moments"]),
                              mb_size=int(hp["batch_size"]), teacher_iters=int(hp["teacher_iters"]),
                              student_iters=int(hp["student_iters"]), probe=probe)

    def _restore_types(self, out: np.ndarray) -> np.ndarray:
        cols = list(self._integers)
        out[:, cols] = np.rint(out[:, cols])
        if self._probe is not None:
            self._probe.output_transform("round_int", columns=cols)
        return out
