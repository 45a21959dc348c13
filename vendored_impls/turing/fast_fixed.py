"""Fast path of ``turing-fixed`` for audits: K runs at once.

The twin's ``fit`` is upstream's metadata encoding around the unconditional PATE-GAN of
``original``'s twin; this replays it with that twin's stacked trainer
(:func:`dpcheck.vendored_impls.original.fast_fixed.train_batch`) and decodes with the class's own
``decode``. Draw order and seeding are those of the plain path (see that module).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from dpcheck.vendored_impls.original.fast_fixed import train_batch
from dpcheck.vendored_impls.turing.adapter import prepare
from dpcheck.vendored_impls.turing.fixed import PATEGAN

NAME = "turing-fixed"


def fit_sample_batch(data: np.ndarray, seeds: list[int], rows: int, *, epsilon: float, delta: float,
                     **hyperparams: Any) -> list[np.ndarray]:
    """The released data of one plain ``turing-fixed`` run per seed."""
    hp, array, metadata = prepare(NAME, data, hyperparams)
    codec = PATEGAN(epsilon=float(epsilon), delta=float(delta), num_teachers=int(hp["num_teachers"]),
                    n_iters=int(hp["max_iterations"]), batch_size=int(hp["batch_size"]), learning_rate=float(hp["learning_rate"]),
                    lamda=float(hp["lamda"]), num_moments=int(hp["num_moments"]))
    x_train = codec.encode(array, metadata)
    dim = x_train.shape[1]
    outs = train_batch(x_train, np.zeros([len(x_train), 0]), seeds, rows, epsilon=codec.epsilon, delta=codec.delta,
                       niter=codec.n_iters, num_teachers=codec.num_teachers, lower=np.zeros(dim), upper=np.ones(dim),
                       lamda=codec.lamda, num_moments=codec.num_moments, mb_size=codec.batch_size,
                       lr=codec.learning_rate)
    return [np.asarray(codec.decode(np.asarray(x, np.float64)), np.float64) for x, _ in outs]
