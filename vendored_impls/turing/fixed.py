"""Corrected twin of ``turing``: reprosyn's PATEGAN class with its training replaced by a real
PATE-GAN and integer columns restored by rounding.

The class keeps upstream's metadata-driven encoding. ``fit`` trains the unconditional PATE-GAN
of ``original``'s twin (k teacher discriminators on one fixed disjoint partition, Laplace noise of
scale 1/λ on the votes, a student, a Theorem 5 accountant driving ``while epsilon_hat < epsilon``);
``decode`` rounds integer columns before the cast instead of truncating. See PROVENANCE.md.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from dpcheck.vendored_impls.turing import finite

from dpcheck.vendored_impls.original.fixed import PATE_GAN


class PATEGAN:
    def __init__(self, epsilon: float = 1.0, delta: float = 1e-5, num_teachers: int = 10, n_iters: int = 100,
                 batch_size: int = 128, learning_rate: float = 1e-4, lamda: float = 1e-3,
                 num_moments: int = 20) -> None:
        self.epsilon = epsilon
        self.delta = delta
        self.num_teachers = num_teachers
        self.n_iters = n_iters
        self.batch_size = batch_size
        self.learning_rate = learning_rate
        self.lamda = lamda
        self.num_moments = num_moments
        self.probe: Any = None

    # --- metadata-driven encoding -------------------------------------------------------
    def encode(self, data: np.ndarray, metadata: dict[str, Any]) -> np.ndarray:
        self.lower = np.asarray(metadata["min"], np.float64)
        self.upper = np.asarray(metadata["max"], np.float64)
        self.finite = finite.categories(self.lower, self.upper, metadata.get("finite_columns", ()))
        self.integer_columns = [c for c in metadata["integer_columns"] if c not in self.finite]
        if self.probe is not None:
            self.probe.bounds(self.lower, self.upper, source="parameter")
        scaled = (data - self.lower) / (self.upper - self.lower + 1e-8)
        return finite.expand(scaled, data, self.finite) if self.finite else scaled

    def decode(self, data: np.ndarray) -> np.ndarray:
        if self.finite:
            data = finite.collapse(data, len(self.lower), self.finite)
        out = data * (self.upper - self.lower + 1e-8) + self.lower
        for col in self.finite:
            out[:, col] = data[:, col]
        if self.probe is not None:
            self.probe.output_transform("inverse_minmax")
        for col in self.integer_columns:
            out[:, col] = np.rint(out[:, col]).astype(int)
        if self.probe is not None and self.integer_columns:
            self.probe.output_transform("round_int", columns=self.integer_columns)
        return out

    # --- model ----------------------------------------------------------------------------
    def fit(self, data: np.ndarray, metadata: dict[str, Any], *, tf1: Any, sess: Any, probe: Any = None) -> None:
        self.probe = probe
        X_train = self.encode(data, metadata)
        # the encoding above already maps to [0, 1] with the metadata bounds
        dim = X_train.shape[1]
        self._generate = PATE_GAN(
            X_train, np.zeros([len(X_train), 0]), self.epsilon, self.delta, self.n_iters, self.num_teachers,
            tf1=tf1, sess=sess, lower=np.zeros(dim), upper=np.ones(dim), lamda=self.lamda,
            num_moments=self.num_moments, mb_size=self.batch_size, lr=self.learning_rate, probe=_NoBounds(probe) if probe is not None else None)

    def generate(self, n: int) -> np.ndarray:
        synth, _ = self._generate(n)
        return self.decode(np.asarray(synth, np.float64))


class _NoBounds:
    """Forwards probe events except the inner [0, 1] bounds and transform, which ``encode``/``decode`` report."""

    def __init__(self, probe: Any) -> None:
        self._probe = probe

    def __getattr__(self, name: str) -> Any:
        if name in ("bounds", "output_transform"):
            return lambda *args, **kwargs: None
        return getattr(self._probe, name)
