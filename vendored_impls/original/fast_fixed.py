"""Fast path of ``original-fixed`` (and, through :func:`train_batch`, ``turing-fixed``): K runs at once.

Each model replays :func:`dpcheck.vendored_impls.original.fixed.PATE_GAN` as its adapter runs
it: the fixed disjoint partition, per-teacher batches, latent codes, public-ratio conditions,
Laplace vote noise and the generation draws come from ``RandomState(seed)`` (and the adapter's
sampling seed) in the order the plain path draws them from numpy's global state; the Theorem 5
accountant stops each model on its own (``while epsilon_hat < epsilon and it < niter``). A model
that has stopped keeps being stepped with dummy inputs (so the others can go on in the same
``session.run``) but its generator is snapshotted when it stops and restored before generation,
so what it releases is what it had when its own loop ended. What the plain path draws inside TF
(initial weights) comes from the model's own generator (``aux_rng``).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from dpcheck.vendored_impls._common import as_numeric_array
from dpcheck.vendored_impls._tf import graph_session, integral_columns, merge_hyperparams, public_bounds
from dpcheck.vendored_impls._tf_stack import aux_rng
from dpcheck.vendored_impls.original.adapter import FIXED_DEFAULTS
from dpcheck.vendored_impls.original.fixed import epsilon_from_moments, validity_threshold

NAME = "original-fixed"
LR = 1e-4


@dataclass(frozen=True)
class Shape:
    models: int
    x_dim: int
    c_dim: int
    teachers: int
    mb: int
    lr: float = LR  # Adam's learning rate (the plain core's ``lr``)


def _shapes(s: Shape) -> dict[str, dict[str, tuple[int, ...]]]:
    z_dim, h_dim, xc = max(int(s.x_dim / 4), 1), int(s.x_dim), s.x_dim + s.c_dim
    k = s.teachers
    return {
        "G": {"W1": (z_dim + s.c_dim, h_dim), "b1": (1, h_dim), "W2": (h_dim, h_dim), "b2": (1, h_dim),
              "W3": (h_dim, s.x_dim), "b3": (1, s.x_dim)},
        "T": {"W1": (k, xc, h_dim), "b1": (k, 1, h_dim), "W2": (k, h_dim, 1), "b2": (k, 1, 1)},
        "S": {"W1": (xc, h_dim), "b1": (1, h_dim), "W2": (h_dim, h_dim), "b2": (1, h_dim),
              "W3": (h_dim, 1), "b3": (1, 1)},
    }


def initial_weights(rng: np.random.Generator, s: Shape) -> dict[str, np.ndarray]:
    """Upstream's ``xavier_init`` (stddev 1/sqrt(max(fan_in, 1)/2), fan_in = size[-2]) and zero biases."""
    out = {}
    for net, layers in _shapes(s).items():
        for name, shape in layers.items():
            if name.startswith("W"):
                std = 1.0 / np.sqrt(max(shape[-2], 1) / 2.0)
                out[net + name] = rng.normal(0.0, std, size=shape).astype(np.float32)
            else:
                out[net + name] = np.zeros(shape, np.float32)
    return out


class StackedPateGan:
    """The fixed PATE-GAN graph with a leading model axis on every weight and input."""

    def __init__(self, s: Shape) -> None:
        self.s = s
        tf1, graph, self.sess = graph_session(0)
        K, k, m = s.models, s.teachers, s.mb
        z_dim, xc = max(int(s.x_dim / 4), 1), s.x_dim + s.c_dim
        self.z_dim = z_dim
        with graph.as_default():
            f32 = tf1.float32
            self.Z = tf1.placeholder(f32, [K, None, z_dim])
            self.C = tf1.placeholder(f32, [K, None, s.c_dim])
            self.T_real = tf1.placeholder(f32, [K, k, m, xc])
            self.S_X = tf1.placeholder(f32, [K, None, s.x_dim])
            self.S_R = tf1.placeholder(f32, [K, None, 1])
            self.feeds: dict[str, Any] = {}
            v: dict[str, Any] = {}
            for net, layers in _shapes(s).items():
                for name, shape in layers.items():
                    feed = tf1.placeholder(f32, (K, *shape))
                    self.feeds[net + name] = feed
                    v[net + name] = tf1.Variable(feed)
            self.g_names = [n for n in v if n.startswith("G")]
            self.g_vars = [v[n] for n in self.g_names]
            self.restore_g = [var.assign(self.feeds[n]) for n, var in zip(self.g_names, self.g_vars)]

            def generator(z: Any, c: Any) -> Any:
                h1 = tf1.nn.tanh(tf1.matmul(tf1.concat([z, c], axis=2), v["GW1"]) + v["Gb1"])
                h2 = tf1.nn.tanh(tf1.matmul(h1, v["GW2"]) + v["Gb2"])
                return tf1.nn.sigmoid(tf1.matmul(h2, v["GW3"]) + v["Gb3"])

            def teachers(xc_in: Any) -> Any:  # [K, k, rows, xc] -> [K, k, rows, 1]
                h1 = tf1.nn.relu(tf1.matmul(xc_in, v["TW1"]) + v["Tb1"])
                return tf1.matmul(h1, v["TW2"]) + v["Tb2"]

            def student(x: Any, c: Any) -> Any:
                h1 = tf1.nn.relu(tf1.matmul(tf1.concat([x, c], axis=2), v["SW1"]) + v["Sb1"])
                h2 = tf1.nn.relu(tf1.matmul(h1, v["SW2"]) + v["Sb2"])
                return tf1.matmul(h2, v["SW3"]) + v["Sb3"]

            sce = tf1.nn.sigmoid_cross_entropy_with_logits
            self.G_sample = generator(self.Z, self.C)
            fake_xc = tf1.tile(tf1.expand_dims(tf1.concat([self.G_sample, self.C], axis=2), 1), [1, k, 1, 1])
            t_real, t_fake = teachers(self.T_real), teachers(fake_xc)
            t_loss = (tf1.reduce_mean(sce(labels=tf1.ones_like(t_real), logits=t_real), axis=[1, 2, 3])
                      + tf1.reduce_mean(sce(labels=tf1.zeros_like(t_fake), logits=t_fake), axis=[1, 2, 3]))
            self.n1_votes = tf1.reduce_sum(tf1.cast(t_fake[:, :, :, 0] > 0.0, f32), axis=1)
            s_logit = student(self.S_X, self.C)
            s_loss = tf1.reduce_mean(sce(labels=self.S_R, logits=s_logit), axis=[1, 2])
            s_fake = student(self.G_sample, self.C)
            g_loss = tf1.reduce_mean(sce(labels=tf1.ones_like(s_fake), logits=s_fake), axis=[1, 2])
            adam = tf1.train.AdamOptimizer
            self.T_solver = adam(learning_rate=s.lr, beta1=0.5).minimize(
                tf1.reduce_sum(t_loss), var_list=[v[n] for n in v if n.startswith("T")])
            self.S_solver = adam(learning_rate=s.lr, beta1=0.5).minimize(
                tf1.reduce_sum(s_loss), var_list=[v[n] for n in v if n.startswith("S")])
            self.G_solver = adam(learning_rate=s.lr, beta1=0.5).minimize(tf1.reduce_sum(g_loss), var_list=self.g_vars)
            self.init = tf1.global_variables_initializer()
        graph.finalize()

    def reset(self, inits: list[dict[str, np.ndarray]]) -> None:
        self.sess.run(self.init, feed_dict={f: np.stack([w[n] for w in inits]) for n, f in self.feeds.items()})

    def generator_weights(self) -> list[np.ndarray]:
        return self.sess.run(self.g_vars)

    def set_generator(self, weights: list[np.ndarray]) -> None:
        self.sess.run(self.restore_g, feed_dict={self.feeds[n]: w for n, w in zip(self.g_names, weights)})


def moments_increment_batch(n0: np.ndarray, n1: np.ndarray, lamda: float, L: int) -> np.ndarray:
    """:func:`dpcheck.vendored_impls.original.fixed.moments_increment` for every row of ``n0``/``n1``
    (one model each) and every order l at once: [models, L]."""
    gap = lamda * np.abs(n0 - n1)
    q = (2.0 + gap) / (4.0 * np.exp(gap))
    valid = q < validity_threshold(lamda)
    safe_q = np.where(valid, q, 0.0)
    l = np.arange(1, L + 1)[:, None, None]
    data_independent = 2.0 * lamda ** 2 * l * (l + 1)
    data_dependent = np.log((1.0 - safe_q) * ((1.0 - safe_q) / (1.0 - np.exp(2.0 * lamda) * safe_q)) ** l
                            + safe_q * np.exp(2.0 * lamda * l))
    term = np.where(valid, np.minimum(data_independent, data_dependent), data_independent)
    return np.sum(term, axis=2).T


_CACHE: dict[Shape, StackedPateGan] = {}


def _stacked(s: Shape) -> StackedPateGan:
    if s not in _CACHE:
        _CACHE[s] = StackedPateGan(s)
    return _CACHE[s]


def train_batch(x_train: np.ndarray, y_train: np.ndarray, seeds: list[int], rows: int, *, epsilon: float,
                delta: float, niter: int, num_teachers: int, lower: np.ndarray, upper: np.ndarray,
                label_ratio: float = 0.5, lamda: float = 1e-3, num_moments: int = 20, mb_size: int = 128,
                teacher_iters: int = 1, student_iters: int = 1, lr: float = LR) -> list[tuple[np.ndarray, np.ndarray]]:
    """``PATE_GAN(...)`` followed by ``generate(rows)`` for every seed: [(X, Y)] in input units."""
    no, x_dim = x_train.shape
    c_dim, k, mb = y_train.shape[1], int(num_teachers), int(mb_size)
    K = len(seeds)
    model = _stacked(Shape(K, x_dim, c_dim, k, mb, float(lr)))
    z_dim = model.z_dim
    min_val = np.asarray(lower, np.float64)
    max_val = np.asarray(upper, np.float64) - min_val
    x_scaled = np.clip((x_train - min_val) / (max_val + 1e-8), 0.0, 1.0)
    xy_train = np.concatenate([x_scaled, y_train], axis=1)

    rngs = [np.random.RandomState(int(s) % 2**32) for s in seeds]
    partitions = [np.array_split(rng.permutation(no), k) for rng in rngs]
    model.reset([initial_weights(aux_rng(s), model.s) for s in seeds])

    def sample_c(rng: np.random.RandomState, m: int) -> np.ndarray:
        return (rng.uniform(size=[m, c_dim]) < label_ratio).astype(np.float64)

    alpha = np.zeros((K, int(num_moments)))
    eps_hat = np.zeros(K)
    its = np.zeros(K, dtype=int)
    active = np.ones(K, dtype=bool)
    snapshots: list[list[np.ndarray] | None] = [None] * K
    active &= (eps_hat < epsilon) & (its < niter)
    while active.any():
        for _ in range(teacher_iters):
            t_real = np.zeros((K, k, mb, x_dim + c_dim), np.float32)
            z, c = np.zeros((K, mb, z_dim), np.float32), np.zeros((K, mb, c_dim), np.float32)
            for j in np.flatnonzero(active):
                rng = rngs[j]
                batches = [part[rng.randint(0, len(part), size=mb)] for part in partitions[j]]
                t_real[j] = np.stack([xy_train[r] for r in batches])
                z[j] = rng.uniform(-1.0, 1.0, size=[mb, z_dim])
                c[j] = sample_c(rng, mb)
            model.sess.run(model.T_solver, feed_dict={model.T_real: t_real, model.Z: z, model.C: c})
        for _ in range(student_iters):
            z, c = np.zeros((K, mb, z_dim), np.float32), np.zeros((K, mb, c_dim), np.float32)
            for j in np.flatnonzero(active):
                z[j] = rngs[j].uniform(-1.0, 1.0, size=[mb, z_dim])
                c[j] = sample_c(rngs[j], mb)
            g_mb, n1_all = model.sess.run([model.G_sample, model.n1_votes], feed_dict={model.Z: z, model.C: c})
            r = np.zeros((K, mb, 1), np.float32)
            live = np.flatnonzero(active)
            n1 = n1_all[live].astype(np.float64)
            n0 = k - n1
            noise = np.stack([rngs[j].laplace(loc=0.0, scale=1.0 / lamda, size=(2, mb)) for j in live])
            r[live, :, 0] = (n1 + noise[:, 1]) > (n0 + noise[:, 0])
            alpha[live] += moments_increment_batch(n0, n1, lamda, int(num_moments))
            for j in live:
                eps_hat[j] = epsilon_from_moments(alpha[j], delta)
            model.sess.run(model.S_solver, feed_dict={model.S_X: g_mb, model.S_R: r, model.C: c})
        z, c = np.zeros((K, mb, z_dim), np.float32), np.zeros((K, mb, c_dim), np.float32)
        for j in np.flatnonzero(active):
            z[j] = rngs[j].uniform(-1.0, 1.0, size=[mb, z_dim])
            c[j] = sample_c(rngs[j], mb)
        model.sess.run(model.G_solver, feed_dict={model.Z: z, model.C: c})
        its[active] += 1
        stopping = active & ~((eps_hat < epsilon) & (its < niter))
        if stopping.any():
            weights = model.generator_weights()
            for j in np.flatnonzero(stopping):
                snapshots[j] = [w[j].copy() for w in weights]
            active &= ~stopping

    current = model.generator_weights()
    model.set_generator([np.stack([snapshots[j][i] if snapshots[j] is not None else current[i][j]
                                   for j in range(K)]) for i in range(len(current))])
    # generate(rows): the adapter reseeds numpy with seed + 7919; upstream draws C, then Z
    gen_rngs = [np.random.RandomState((int(s) + 7919) % 2**32) for s in seeds]
    new_y = [sample_c(rng, rows) for rng in gen_rngs]
    z = np.stack([rng.uniform(-1.0, 1.0, size=[rows, z_dim]) for rng in gen_rngs]).astype(np.float32)
    new_x = model.sess.run(model.G_sample, feed_dict={model.Z: z, model.C: np.stack(new_y).astype(np.float32)})
    return [(np.asarray(x, np.float64) * (max_val + 1e-8) + min_val, y) for x, y in zip(new_x, new_y)]


def fit_sample_batch(data: np.ndarray, seeds: list[int], rows: int, *, epsilon: float, delta: float,
                     **hyperparams: Any) -> list[np.ndarray]:
    """The released data of one plain ``original-fixed`` run per seed."""
    hp = merge_hyperparams(NAME, FIXED_DEFAULTS, hyperparams)
    array, _ = as_numeric_array(data, min_rows=int(hp["num_teachers"]))
    dim = array.shape[1]
    if dim < 2:
        raise ValueError(f"{NAME} needs at least one feature column besides the label column")
    label = int(hp["label_column"]) % dim
    features = [j for j in range(dim) if j != label]
    lower, upper = public_bounds(NAME, hp["bounds"], dim)
    outs = train_batch(array[:, features], array[:, [label]], seeds, rows, epsilon=epsilon, delta=delta,
                       niter=int(hp["max_iterations"]), num_teachers=int(hp["num_teachers"]),
                       lower=lower[features], upper=upper[features], label_ratio=float(hp["label_ratio"]),
                       lamda=float(hp["lamda"]), num_moments=int(hp["num_moments"]), mb_size=int(hp["batch_size"]),
                       teacher_iters=int(hp["teacher_iters"]), student_iters=int(hp["student_iters"]))
    integers = list(integral_columns(array))
    released = []
    for x, y in outs:
        out = np.insert(x, label, y.reshape(-1), axis=1)
        out[:, integers] = np.rint(out[:, integers])
        released.append(out)
    return released
