"""Fast path of ``updated`` and ``updated-fixed`` for audits: K shadow runs trained at once.

Each model replays ``pategan`` of :mod:`dpcheck.vendored_impls.updated.upstream` (or ``.fixed``)
as the adapter runs it. Its numpy draws (partition, latent codes, teacher batches, Laplace vote
noise — scale λ upstream, 1/λ in the twin — and the generation's latent codes) come from
``RandomState(seed)`` and the adapter's sampling seed in the plain path's order; each model runs
its own accountant and stops on its own (``while epsilon_hat < epsilon``, ``max_iterations``); a
stopped model's generator is snapshotted and restored before generation. Initial weights come
from the model's own generator (``aux_rng``) instead of TF's.

Upstream's teachers are sklearn ``LogisticRegression()`` fits (L2, C = 1, intercept, lbfgs
stopped at tol 1e-4), re-fitted every iteration, all on the last partition (the stale ``i``, kept).
Here every teacher of every model is solved at once by damped Newton steps on the same strictly
convex objective, to a gradient below 1e-9 — the optimum lbfgs approximates; the equivalence test
checks that the released data's distribution is unchanged.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from dpcheck.vendored_impls._common import as_numeric_array
from dpcheck.vendored_impls._tf import graph_session, integral_columns, merge_hyperparams, public_bounds
from dpcheck.vendored_impls._tf_stack import aux_rng
from dpcheck.vendored_impls.updated.adapter import DEFAULTS

LR = 1e-4


@dataclass(frozen=True)
class Shape:
    models: int
    dim: int
    teachers: int  # 0: no neural teachers (upstream's logistic regressions run outside the graph)


def _layers(s: Shape) -> dict[str, tuple[int, ...]]:
    d, gh, k = s.dim, 4 * s.dim, s.teachers
    shapes = {"GW1": (d, gh), "Gb1": (1, gh), "GW2": (gh, gh), "Gb2": (1, gh), "GW3": (gh, d), "Gb3": (1, d),
              "SW1": (d, d), "Sb1": (1, d), "SW2": (d, 1), "Sb2": (1, 1)}
    if k:
        shapes.update({"TW1": (k, d, d), "Tb1": (k, 1, d), "TW2": (k, d, 1), "Tb2": (k, 1, 1)})
    return shapes


def initial_weights(rng: np.random.Generator, s: Shape) -> dict[str, np.ndarray]:
    """Upstream's ``xavier_init`` (stddev 1/sqrt(size[0]/2)); the twin's teachers use fan-in = size[-2]."""
    out = {}
    for name, shape in _layers(s).items():
        if name[1] == "W":
            fan_in = shape[-2] if name.startswith("T") else shape[0]
            out[name] = rng.normal(0.0, 1.0 / np.sqrt(fan_in / 2.0), size=shape).astype(np.float32)
        else:
            out[name] = np.zeros(shape, np.float32)
    return out


class StackedUpdated:
    def __init__(self, s: Shape) -> None:
        self.s = s
        tf1, graph, self.sess = graph_session(0)
        K, d, k = s.models, s.dim, s.teachers
        with graph.as_default():
            f32 = tf1.float32
            self.Z = tf1.placeholder(f32, [K, None, d])
            self.Y = tf1.placeholder(f32, [K, None, 1])
            self.feeds: dict[str, Any] = {}
            v: dict[str, Any] = {}
            for name, shape in _layers(s).items():
                self.feeds[name] = tf1.placeholder(f32, (K, *shape))
                v[name] = tf1.Variable(self.feeds[name])
            self.g_names = [n for n in v if n.startswith("G")]
            self.g_vars = [v[n] for n in self.g_names]
            self.restore_g = [var.assign(self.feeds[n]) for n, var in zip(self.g_names, self.g_vars)]
            h1 = tf1.nn.tanh(tf1.matmul(self.Z, v["GW1"]) + v["Gb1"])
            h2 = tf1.nn.tanh(tf1.matmul(h1, v["GW2"]) + v["Gb2"])
            self.G_sample = tf1.nn.sigmoid(tf1.matmul(h2, v["GW3"]) + v["Gb3"])
            s_fake = tf1.matmul(tf1.nn.relu(tf1.matmul(self.G_sample, v["SW1"]) + v["Sb1"]), v["SW2"]) + v["Sb2"]
            s_loss = (tf1.reduce_mean((1.0 - self.Y) * s_fake, axis=[1, 2])
                      - tf1.reduce_mean(self.Y * s_fake, axis=[1, 2]))
            g_loss = -tf1.reduce_mean(s_fake, axis=[1, 2])
            theta_s = [v[n] for n in ("SW1", "SW2", "Sb1", "Sb2")]
            rms = tf1.train.RMSPropOptimizer
            self.S_solver = rms(learning_rate=LR).minimize(tf1.reduce_sum(s_loss), var_list=theta_s)
            self.G_solver = rms(learning_rate=LR).minimize(tf1.reduce_sum(g_loss), var_list=self.g_vars)
            self.clip_S = [p.assign(tf1.clip_by_value(p, -0.01, 0.01)) for p in theta_s]
            if k:
                self.T_real = tf1.placeholder(f32, [K, k, None, d])
                self.T_fake = tf1.placeholder(f32, [K, None, d])

                def teachers(x: Any) -> Any:
                    return tf1.matmul(tf1.nn.relu(tf1.matmul(x, v["TW1"]) + v["Tb1"]), v["TW2"]) + v["Tb2"]

                sce = tf1.nn.sigmoid_cross_entropy_with_logits
                t_real = teachers(self.T_real)
                t_fake = teachers(tf1.tile(tf1.expand_dims(self.T_fake, 1), [1, k, 1, 1]))
                t_loss = (tf1.reduce_mean(sce(labels=tf1.ones_like(t_real), logits=t_real), axis=[1, 2, 3])
                          + tf1.reduce_mean(sce(labels=tf1.zeros_like(t_fake), logits=t_fake), axis=[1, 2, 3]))
                self.T_votes = tf1.cast(t_fake[:, :, :, 0] > 0.0, f32)  # [K, k, rows]
                self.T_solver = rms(learning_rate=LR).minimize(
                    tf1.reduce_sum(t_loss), var_list=[v[n] for n in ("TW1", "Tb1", "TW2", "Tb2")])
            self.init = tf1.global_variables_initializer()
        graph.finalize()

    def reset(self, inits: list[dict[str, np.ndarray]]) -> None:
        self.sess.run(self.init, feed_dict={f: np.stack([w[n] for w in inits]) for n, f in self.feeds.items()})

    def generate(self, z: np.ndarray) -> np.ndarray:
        return self.sess.run(self.G_sample, feed_dict={self.Z: z})


_CACHE: dict[Shape, StackedUpdated] = {}


def _stacked(s: Shape) -> StackedUpdated:
    if s not in _CACHE:
        _CACHE[s] = StackedUpdated(s)
    return _CACHE[s]


def logistic_regression_batch(x: np.ndarray, y: np.ndarray, *, C: float = 1.0, tol: float = 1e-9,
                              max_steps: int = 100) -> tuple[np.ndarray, np.ndarray]:
    """The optimum of sklearn ``LogisticRegression()``'s objective, C·Σ log-loss + ½|w|² (intercept
    not penalised), for B problems at once: x [B, n, d], y [B, n] in {0, 1} -> (w [B, d], b [B])."""
    B, n, d = x.shape
    xt = np.concatenate([x, np.ones((B, n, 1))], axis=2)
    reg = np.r_[np.ones(d), 0.0]
    theta = np.zeros((B, d + 1))

    def objective(t: np.ndarray) -> np.ndarray:
        z = np.einsum("bnd,bd->bn", xt, t)
        return C * np.sum(np.logaddexp(0.0, z) - y * z, axis=1) + 0.5 * np.sum(reg * t**2, axis=1)

    value = objective(theta)
    for _ in range(max_steps):
        p = 1.0 / (1.0 + np.exp(-np.einsum("bnd,bd->bn", xt, theta)))
        grad = C * np.einsum("bnd,bn->bd", xt, p - y) + reg * theta
        todo = np.max(np.abs(grad), axis=1) > tol
        if not todo.any():
            break
        hess = C * np.einsum("bnd,bn,bne->bde", xt, p * (1 - p), xt) + np.diag(reg + 1e-12)
        step = np.linalg.solve(hess, grad[:, :, None])[:, :, 0]
        size = np.where(todo, 1.0, 0.0)
        for _ in range(40):  # halve until the objective does not increase
            trial = theta - size[:, None] * step
            new_value = objective(trial)
            worse = new_value > value + 1e-12 * np.abs(value)
            if not worse.any():
                break
            size = np.where(worse, size / 2, size)
        theta, value = trial, new_value
    return theta[:, :d], theta[:, d]


def _train(array: np.ndarray, seeds: list[int], rows: int, *, fixed: bool, epsilon: float, delta: float,
           hp: dict[str, Any], bounds: tuple[np.ndarray, np.ndarray] | None) -> list[np.ndarray]:
    n_s, batch, k = int(hp["student_iters"]), int(hp["batch_size"]), int(hp["num_teachers"])
    lamda, L, max_iterations = float(hp["lamda"]), int(hp["num_moments"]), int(hp["max_iterations"])
    if fixed:
        lower, upper = bounds
        min_val, max_val = np.asarray(lower, np.float64), np.asarray(upper, np.float64)
        x_train = np.clip((array - min_val) / (max_val - min_val + 1e-8), 0.0, 1.0)
    else:
        min_val, max_val = np.min(array, axis=0), np.max(array, axis=0)  # the driver's data bounds, kept
        x_train = (array - min_val) / (max_val - min_val + 1e-8)
    no, dim = x_train.shape
    K = len(seeds)
    model = _stacked(Shape(K, dim, k if fixed else 0))
    rngs = [np.random.RandomState(int(s) % 2**32) for s in seeds]
    p = int(no / k)
    partitions = []
    for rng in rngs:
        idx = rng.permutation(no)
        partitions.append([x_train[idx[int(i * p):int((i + 1) * p)]] for i in range(k)])
    model.reset([initial_weights(aux_rng(s), model.s) for s in seeds])

    alpha = np.zeros((K, L))
    eps_hat = np.zeros(K)
    its = np.zeros(K, dtype=int)
    active = (eps_hat < epsilon) & (its < max_iterations)
    snapshots: list[list[np.ndarray] | None] = [None] * K
    real = min(p, batch)
    orders = np.arange(1, L + 1)
    while active.any():
        live = np.flatnonzero(active)
        z = np.zeros((K, batch, dim), np.float32)
        for j in live:
            z[j] = rngs[j].uniform(0.0, 1.0, size=[batch, dim])
        g_mb = model.generate(z)
        if fixed:
            t_real = np.zeros((K, k, real, dim), np.float32)
            for j in live:
                for t in range(k):
                    part = partitions[j][t]
                    t_real[j, t] = part[rngs[j].permutation(len(part))[:batch]]
            model.sess.run(model.T_solver, feed_dict={model.T_real: t_real, model.T_fake: g_mb})
        else:
            xs = np.empty((len(live), k, real + batch, dim))
            for a, j in enumerate(live):
                last = partitions[j][k - 1]  # every teacher on the last partition (upstream's stale i)
                for t in range(k):
                    xs[a, t, :real] = last[rngs[j].permutation(len(last))[:batch]]
                    xs[a, t, real:] = g_mb[j]
            ys = np.broadcast_to(np.r_[np.ones(real), np.zeros(batch)], (len(live) * k, real + batch))
            w, b = logistic_regression_batch(xs.reshape(len(live) * k, real + batch, dim), ys)
            w, b = w.reshape(len(live), k, dim), b.reshape(len(live), k)
        for _ in range(n_s):
            z = np.zeros((K, batch, dim), np.float32)
            for j in live:
                z[j] = rngs[j].uniform(0.0, 1.0, size=[batch, dim])
            g_mb = model.generate(z)
            if fixed:
                y_hat = model.sess.run(model.T_votes, feed_dict={model.T_fake: g_mb})[live]
            else:
                y_hat = np.einsum("jnd,jtd->jtn", g_mb[live].astype(np.float64), w) + b[:, :, None] > 0
            n0 = np.sum(y_hat == 0, axis=1)
            n1 = np.sum(y_hat == 1, axis=1)
            noise = np.stack([rngs[j].laplace(loc=0.0, scale=1 / lamda if fixed else lamda, size=batch)
                              for j in live])
            y = np.zeros((K, batch, 1), np.float32)
            y[live, :, 0] = ((n1 + noise) / (n0 + n1)) > 0.5
            alpha[live] += _moments(n0, n1, lamda, L, fixed)
            model.sess.run(model.S_solver, feed_dict={model.Z: z, model.Y: y})
            model.sess.run(model.clip_S)
        z = np.zeros((K, batch, dim), np.float32)
        for j in live:
            z[j] = rngs[j].uniform(0.0, 1.0, size=[batch, dim])
        model.sess.run(model.G_solver, feed_dict={model.Z: z})
        for j in live:
            eps_hat[j] = np.min((alpha[j] + np.log(1 / delta)) / orders.astype(float))
        its[active] += 1
        stopping = active & ~((eps_hat < epsilon) & (its < max_iterations))
        if stopping.any():
            weights = model.sess.run(model.g_vars)
            for j in np.flatnonzero(stopping):
                snapshots[j] = [wt[j].copy() for wt in weights]
            active &= ~stopping

    current = model.sess.run(model.g_vars)
    model.sess.run(model.restore_g, feed_dict={model.feeds[n]: np.stack(
        [snapshots[j][i] if snapshots[j] is not None else current[i][j] for j in range(K)])
        for i, n in enumerate(model.g_names)})
    z = np.stack([np.random.RandomState((int(s) + 7919) % 2**32).uniform(0.0, 1.0, size=[rows, dim])
                  for s in seeds]).astype(np.float32)
    out = np.asarray(model.generate(z), np.float64)
    # updated: [0, 1] output, released with the driver's data min/max (adapter.release);
    # the twin renormalises with the public bounds and rounds integer columns
    released = out * (max_val - min_val + 1e-8) + min_val
    if fixed:
        cols = list(integral_columns(array))
        released[:, :, cols] = np.rint(released[:, :, cols])
    return list(released)


def _moments(n0: np.ndarray, n1: np.ndarray, lamda: float, L: int, fixed: bool) -> np.ndarray:
    """The accountant increment of alpha(1..L) per model (rows of n0, n1), as each version's loop
    computes it (its ``for l in range(L)`` evaluated for every l at once)."""
    q = (2 + lamda * np.abs(n0 - n1)) / (4 * np.exp(lamda * np.abs(n0 - n1)))
    if fixed:
        valid = q < (np.exp(2 * lamda) - 1) / (np.exp(4 * lamda) - 1)
        q = np.where(valid, q, 0.0)
    l = np.arange(L)[:, None, None]
    temp1 = 2 * (lamda ** 2) * (l + 1) * (l + 2)
    temp2 = (1 - q) * (((1 - q) / (1 - q * np.exp(2 * lamda))) ** (l + 1)) + q * np.exp(2 * lamda * (l + 1))
    term = np.minimum(temp1, np.log(temp2))
    if fixed:
        term = np.where(valid, term, temp1)
    return np.sum(term, axis=2).T


def _batch(name: str, fixed: bool, data: np.ndarray, seeds: list[int], rows: int, epsilon: float, delta: float,
           hyperparams: dict[str, Any]) -> list[np.ndarray]:
    hp = merge_hyperparams(name, DEFAULTS, hyperparams)
    array, _ = as_numeric_array(data, min_rows=int(hp["num_teachers"]))
    bounds = public_bounds(name, hp["bounds"], array.shape[1]) if fixed else None
    return _train(array, seeds, rows, fixed=fixed, epsilon=float(epsilon), delta=float(delta), hp=hp, bounds=bounds)


def fit_sample_batch(data: np.ndarray, seeds: list[int], rows: int, *, epsilon: float, delta: float,
                     **hyperparams: Any) -> list[np.ndarray]:
    """``updated``: one released dataset per seed (``sample`` then ``release``, as the audit runs it)."""
    return _batch("updated", False, data, seeds, rows, epsilon, delta, hyperparams)


def fit_sample_batch_fixed(data: np.ndarray, seeds: list[int], rows: int, *, epsilon: float, delta: float,
                           **hyperparams: Any) -> list[np.ndarray]:
    """``updated-fixed``: one released dataset per seed."""
    return _batch("updated-fixed", True, data, seeds, rows, epsilon, delta, hyperparams)
