"""K independent WGAN-GP shadow models trained in one TF1 graph (the audit's fast path; no upstream).

``original`` and ``turing`` (buggy versions) train the same small WGAN-GP: a three-layer tanh
generator with a sigmoid output, a three-layer ReLU critic, the critic loss
``mean((1 - 2 R_fake) D_fake) + mean((1 - 2 R_real) D_real) + gp · mean((|∇D(x̂)| - 1)²)``, the
generator loss ``-mean(D_fake)``, and Adam (β1 = 0.5) for both. Here every weight carries a
leading model axis, so one ``session.run`` steps K models. The loss is the *sum* of the K
per-model losses: each model's gradient is that of its own loss, and Adam is element-wise, so
each model takes exactly the steps it would take alone.

The upstream graphs draw their initial weights and the gradient-penalty interpolation with TF's
stateful RNG; here both come from a numpy generator owned by the model (fed through
placeholders), so a model's result depends only on its own seed and never on its batch-mates.
One graph and session per shape are kept for the life of the process and re-initialised for
every batch.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from dpcheck.vendored_impls._tf import graph_session

_LAYERS = ("W1", "W2", "W3", "b1", "b2", "b3")


@dataclass(frozen=True)
class Shape:
    models: int
    x_dim: int
    z_dim: int
    h_dim: int
    c_dim: int  # conditioning columns fed to both networks (0 = unconditional)
    gp_weight: float
    lr: float


def layer_shapes(in_dim: int, h_dim: int, out_dim: int) -> dict[str, tuple[int, ...]]:
    return {"W1": (in_dim, h_dim), "W2": (h_dim, h_dim), "W3": (h_dim, out_dim),
            "b1": (h_dim,), "b2": (h_dim,), "b3": (out_dim,)}


def initial_weights(rng: np.random.Generator, in_dim: int, h_dim: int, out_dim: int) -> dict[str, np.ndarray]:
    """Xavier-normal weights (stddev 1/sqrt(fan_in/2), as the upstream ``xavier_init``), zero biases."""
    out = {}
    for name, shape in layer_shapes(in_dim, h_dim, out_dim).items():
        if name.startswith("W"):
            out[name] = rng.normal(0.0, 1.0 / np.sqrt(shape[0] / 2.0), size=shape).astype(np.float32)
        else:
            out[name] = np.zeros(shape, np.float32)
    return out


class StackedWGAN:
    """The graph for one :class:`Shape`; :meth:`reset` starts K fresh models on it."""

    def __init__(self, shape: Shape) -> None:
        self.shape = shape
        tf1, graph, sess = graph_session(0)
        self.sess = sess
        k, c = shape.models, shape.c_dim
        with graph.as_default():
            f32 = tf1.float32
            self.X = tf1.placeholder(f32, [k, None, shape.x_dim])
            self.Z = tf1.placeholder(f32, [k, None, shape.z_dim])
            self.Y = tf1.placeholder(f32, [k, None, max(c, 1)])
            self.R_real = tf1.placeholder(f32, [k, None, 1])
            self.R_fake = tf1.placeholder(f32, [k, None, 1])
            self.EPS = tf1.placeholder(f32, [k, None, 1])
            self.init_feeds: dict[str, Any] = {}
            d_vars = self._variables(tf1, "D", shape.x_dim + c, shape.h_dim, 1)
            g_vars = self._variables(tf1, "G", shape.z_dim + c, shape.h_dim, shape.x_dim)

            def dense3(inputs: Any, v: dict[str, Any], act: Any) -> tuple[Any, Any]:
                h1 = act(tf1.matmul(inputs, v["W1"]) + v["b1"])
                h2 = act(tf1.matmul(h1, v["W2"]) + v["b2"])
                return h2, tf1.matmul(h2, v["W3"]) + v["b3"]

            def with_y(t: Any) -> Any:
                return tf1.concat([t, self.Y], axis=2) if c else t

            def generator(z: Any) -> Any:
                return tf1.nn.sigmoid(dense3(with_y(z), g_vars, tf1.nn.tanh)[1])

            def critic(x: Any) -> Any:
                return dense3(with_y(x), d_vars, tf1.nn.relu)[1]

            self.G_sample = generator(self.Z)
            d_real, d_fake = critic(self.X), critic(self.G_sample)

            def per_model_mean(t: Any) -> Any:  # [K, rows, 1] -> [K]
                return tf1.reduce_mean(t, axis=[1, 2])

            d_loss = per_model_mean((1.0 - 2.0 * self.R_fake) * d_fake) + per_model_mean(
                (1.0 - 2.0 * self.R_real) * d_real)
            x_inter = self.EPS * self.X + (1.0 - self.EPS) * self.G_sample
            grad = tf1.gradients(critic(x_inter), [x_inter])[0]
            grad_norm = tf1.sqrt(tf1.reduce_sum(grad ** 2 + 1e-8, axis=2, keepdims=True))
            d_loss = d_loss + shape.gp_weight * per_model_mean((grad_norm - 1) ** 2)
            g_loss = -per_model_mean(d_fake)
            adam = tf1.train.AdamOptimizer
            self.D_solver = adam(learning_rate=shape.lr, beta1=0.5).minimize(
                tf1.reduce_sum(d_loss), var_list=list(d_vars.values()))
            self.G_solver = adam(learning_rate=shape.lr, beta1=0.5).minimize(
                tf1.reduce_sum(g_loss), var_list=list(g_vars.values()))
            self.init = tf1.global_variables_initializer()
        graph.finalize()

    def _variables(self, tf1: Any, prefix: str, in_dim: int, h_dim: int, out_dim: int) -> dict[str, Any]:
        out = {}
        for name, shape in layer_shapes(in_dim, h_dim, out_dim).items():
            stacked = (self.shape.models, 1, *shape) if name.startswith("b") else (self.shape.models, *shape)
            feed = tf1.placeholder(tf1.float32, stacked)
            self.init_feeds[prefix + name] = feed
            out[name] = tf1.Variable(feed)
        return out

    def reset(self, d_init: list[dict[str, np.ndarray]], g_init: list[dict[str, np.ndarray]]) -> None:
        """Fresh models (weights given per model) and fresh Adam state."""
        feed = {}
        for prefix, inits in (("D", d_init), ("G", g_init)):
            for name in _LAYERS:
                stacked = np.stack([w[name] for w in inits])
                if name.startswith("b"):
                    stacked = stacked[:, None, :]
                feed[self.init_feeds[prefix + name]] = stacked
        self.sess.run(self.init, feed_dict=feed)

    def critic_step(self, x: np.ndarray, z: np.ndarray, y: np.ndarray | None, r_real: np.ndarray,
                    r_fake: np.ndarray, eps: np.ndarray) -> None:
        feed = {self.X: x, self.Z: z, self.R_real: r_real, self.R_fake: r_fake, self.EPS: eps}
        if self.shape.c_dim:
            feed[self.Y] = y
        self.sess.run(self.D_solver, feed_dict=feed)

    def generator_step(self, z: np.ndarray, y: np.ndarray | None) -> None:
        feed = {self.Z: z}
        if self.shape.c_dim:
            feed[self.Y] = y
        self.sess.run(self.G_solver, feed_dict=feed)

    def generate(self, z: np.ndarray, y: np.ndarray | None) -> np.ndarray:
        feed = {self.Z: z}
        if self.shape.c_dim:
            feed[self.Y] = y
        return np.asarray(self.sess.run(self.G_sample, feed_dict=feed), np.float64)


_CACHE: dict[Shape, StackedWGAN] = {}


def stacked(shape: Shape) -> StackedWGAN:
    """The process-wide graph and session for ``shape`` (built on first use)."""
    if shape not in _CACHE:
        _CACHE[shape] = StackedWGAN(shape)
    return _CACHE[shape]


def aux_rng(seed: int) -> np.random.Generator:
    """A model's own generator for what upstream draws inside TF (initial weights, GP interpolation)."""
    return np.random.default_rng(np.random.SeedSequence([int(seed), 0x5EED]))
