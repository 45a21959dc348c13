"""Fast path of ``original`` (buggy version) for audits: K shadow runs trained at once.

Each model replays :func:`dpcheck.vendored_impls.original.upstream.PATE_GAN` exactly as the
adapter runs it: its numpy draws (mini-batch indices, latent codes, the XOR-σ label noise) come
from ``RandomState(seed)`` in upstream's order — the same values the plain path draws from the
global state after ``np.random.seed(seed)`` — and its generation uses the adapter's sampling seed.
What upstream draws inside TF (initial weights, GP interpolation) comes from the model's own
generator (:func:`dpcheck.vendored_impls._tf_stack.aux_rng`). Every bug is kept: bounds read
from the data, the XOR in σ, one critic seeing all rows on every "teacher" pass, real labels
fed to generation.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from dpcheck.vendored_impls._common import as_numeric_array
from dpcheck.vendored_impls._tf import merge_hyperparams
from dpcheck.vendored_impls._tf_stack import Shape, aux_rng, initial_weights, stacked
from dpcheck.vendored_impls.original.adapter import UPSTREAM_DEFAULTS

NAME = "original"
GP_WEIGHT, LR = 10.0, 1e-4


def fit_sample_batch(data: np.ndarray, seeds: list[int], rows: int, *, epsilon: float, delta: float,
                     **hyperparams: Any) -> list[np.ndarray]:
    """The released data of one plain run per seed (fit on ``data``, then ``sample(rows)``)."""
    hp = merge_hyperparams(NAME, UPSTREAM_DEFAULTS, hyperparams)
    array, _ = as_numeric_array(data, min_rows=int(hp["num_teachers"]))
    dim = array.shape[1]
    if dim < 2:
        raise ValueError(f"{NAME} needs at least one feature column besides the label column")
    label = int(hp["label_column"]) % dim
    features = [j for j in range(dim) if j != label]
    x_train, y_train = array[:, features], array[:, label]
    x_dim, no = len(features), len(array)
    z_dim, h_dim = max(int(x_dim / 4), 1), int(x_dim)
    sigma = np.sqrt(2 * np.log(1.25 * (10 ^ int(delta)))) / epsilon  # upstream's XOR, kept
    min_val = np.min(x_train, 0)
    max_val = np.max(x_train - min_val, 0)
    x_scaled = (x_train - min_val) / (max_val + 1e-8)
    mb, iters, teachers = int(hp["batch_size"]), int(hp["max_iterations"]), int(hp["num_teachers"])

    k = len(seeds)
    model = stacked(Shape(k, x_dim, z_dim, h_dim, 1, GP_WEIGHT, LR))
    main = [np.random.RandomState(int(s) % 2**32) for s in seeds]
    aux = [aux_rng(s) for s in seeds]
    model.reset([initial_weights(a, x_dim + 1, h_dim, 1) for a in aux],
                [initial_weights(a, z_dim + 1, h_dim, x_dim) for a in aux])
    m = min(no, mb)
    for _ in range(iters):
        for _ in range(teachers):
            x_mb, z_mb, y_mb, r_real, r_fake, eps = (np.empty((k, m, d), np.float32)
                                                     for d in (x_dim, z_dim, 1, 1, 1, 1))
            for j, rng in enumerate(main):
                idx = rng.permutation(no)[:mb]
                x_mb[j], y_mb[j, :, 0] = x_scaled[idx], y_train[idx]
                z_mb[j] = rng.uniform(-1.0, 1.0, size=[m, z_dim])
                r_real[j] = (1.0 + rng.normal(0.0, sigma, size=[m, 1])) > 0.5
                r_fake[j] = (0.0 + rng.normal(0.0, sigma, size=[m, 1])) > 0.5
                eps[j] = aux[j].uniform(0.0, 1.0, size=[m, 1])
            model.critic_step(x_mb, z_mb, y_mb, r_real, r_fake, eps)
        z_mb, y_mb = np.empty((k, m, z_dim), np.float32), np.empty((k, m, 1), np.float32)
        for j, rng in enumerate(main):
            idx = rng.permutation(no)[:mb]
            z_mb[j] = rng.uniform(-1.0, 1.0, size=[m, z_dim])
            y_mb[j, :, 0] = y_train[idx]
        model.generator_step(z_mb, y_mb)

    # sample(rows): the adapter reseeds numpy with seed + 7919 before its first draw
    new_y = y_train[np.arange(rows) % no]
    z = np.stack([np.random.RandomState((int(s) + 7919) % 2**32).uniform(-1.0, 1.0, size=[rows, z_dim])
                  for s in seeds]).astype(np.float32)
    y = np.broadcast_to(new_y.reshape(1, rows, 1), (k, rows, 1)).astype(np.float32)
    generated = model.generate(z, y) * (max_val + 1e-8) + min_val
    return [np.insert(g, label, new_y, axis=1) for g in generated]
