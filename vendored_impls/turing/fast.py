"""Fast path of ``turing`` (buggy version) for audits: K shadow runs trained at once.

Each model replays :meth:`dpcheck.vendored_impls.turing.upstream.PATEGAN.fit` as the adapter
runs it: encoding and decoding are upstream's own methods; the numpy draws (mini-batch indices,
latent codes, label noise with σ = sqrt(2 log(1.25 · 10**δ)) / ε) come from ``RandomState(seed)``
in upstream's order, the same values the plain path draws after ``np.random.seed(seed)``; the
generation uses the adapter's sampling seed. What upstream draws inside TF (initial weights, GP
interpolation) comes from the model's own generator (:mod:`dpcheck.vendored_impls._tf_stack`).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from dpcheck.vendored_impls._tf_stack import Shape, aux_rng, initial_weights, stacked
from dpcheck.vendored_impls.turing.adapter import prepare
from dpcheck.vendored_impls.turing.upstream import PATEGAN

NAME = "turing"


def fit_sample_batch(data: np.ndarray, seeds: list[int], rows: int, *, epsilon: float, delta: float,
                     **hyperparams: Any) -> list[np.ndarray]:
    """The released data of one plain run per seed (fit on ``data``, then ``sample(rows)``)."""
    hp, array, metadata = prepare(NAME, data, hyperparams)
    codec = PATEGAN(epsilon=float(epsilon), delta=float(delta), num_teachers=int(hp["num_teachers"]),
                    n_iters=int(hp["max_iterations"]), batch_size=int(hp["batch_size"]))
    x_train = codec.encode(array, metadata)
    no, x_dim = x_train.shape
    z_dim, h_dim = max(int(x_dim / 4), 1), int(x_dim)
    sigma = np.sqrt(2 * np.log(1.25 * (10 ** codec.delta))) / codec.epsilon
    mb, teachers = codec.batch_size, codec.num_teachers

    k = len(seeds)
    model = stacked(Shape(k, x_dim, z_dim, h_dim, 0, float(teachers), float(hp["learning_rate"])))
    main = [np.random.RandomState(int(s) % 2**32) for s in seeds]
    aux = [aux_rng(s) for s in seeds]
    model.reset([initial_weights(a, x_dim, h_dim, 1) for a in aux],
                [initial_weights(a, z_dim, h_dim, x_dim) for a in aux])
    m = min(no, mb)
    for _ in range(codec.n_iters):
        for _ in range(teachers):
            x_mb, z_mb, r_real, r_fake, eps = (np.empty((k, m, d), np.float32) for d in (x_dim, z_dim, 1, 1, 1))
            for j, rng in enumerate(main):
                x_mb[j] = x_train[rng.permutation(no)[:mb]]
                z_mb[j] = rng.uniform(-1.0, 1.0, size=[m, z_dim])
                r_real[j] = (1.0 + rng.normal(0.0, sigma, size=[m, 1])) > 0.5
                r_fake[j] = (0.0 + rng.normal(0.0, sigma, size=[m, 1])) > 0.5
                eps[j] = aux[j].uniform(0.0, 1.0, size=[m, 1])
            model.critic_step(x_mb, z_mb, None, r_real, r_fake, eps)
        z_mb = np.stack([rng.uniform(-1.0, 1.0, size=[m, z_dim]) for rng in main]).astype(np.float32)
        model.generator_step(z_mb, None)

    # sample(rows): the adapter reseeds numpy with seed + 7919 before its first draw
    z = np.stack([np.random.RandomState((int(s) + 7919) % 2**32).uniform(-1.0, 1.0, size=[rows, z_dim])
                  for s in seeds]).astype(np.float32)
    return [np.asarray(codec.decode(g), np.float64) for g in model.generate(z, None)]
