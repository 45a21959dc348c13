"""PATE-GAN of the Alan Turing Institute's reprosyn (``methods/gans/pate_gan.py``), rebuilt bug for bug.

A port of the 2018 ``original`` code without label conditioning: one WGAN-GP discriminator
trained for a fixed ``n_iters``, an inner ``for _ in range(num_teachers)`` whose passes all
sample from the whole data, the gradient-penalty weight set to ``num_teachers``, Gaussian noise
on the 0/1 targets with σ = sqrt(2 log(1.25 · 10**δ)) / ε (δ multiplied in, not divided), and
integer columns decoded with ``astype(int)`` (truncation). Bounds come from the metadata.
See PROVENANCE.md.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from dpcheck.vendored_impls.turing import finite


class PATEGAN:
    def __init__(self, epsilon: float = 1.0, delta: float = 1e-5, num_teachers: int = 10, n_iters: int = 100,
                 batch_size: int = 128, learning_rate: float = 1e-4) -> None:
        self.epsilon = epsilon
        self.delta = delta
        self.num_teachers = num_teachers
        self.n_iters = n_iters
        self.batch_size = batch_size
        self.learning_rate = learning_rate
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
            out[:, col] = out[:, col].astype(int)
        if self.probe is not None and self.integer_columns:
            self.probe.output_transform("truncate_int", columns=self.integer_columns)
        return out

    # --- model ----------------------------------------------------------------------------
    def fit(self, data: np.ndarray, metadata: dict[str, Any], *, tf1: Any, sess: Any, probe: Any = None) -> None:
        self.probe = probe
        self.sess = sess
        X_train = self.encode(data, metadata)
        No, X_dim = X_train.shape
        self.z_dim = z_dim = max(int(X_dim / 4), 1)
        h_dim = int(X_dim)
        # gradient-penalty weight
        lam = self.num_teachers

        lamda = np.sqrt(2 * np.log(1.25 * (10 ** self.delta))) / self.epsilon

        with sess.graph.as_default():
            self.X = X = tf1.placeholder(tf1.float32, shape=[None, X_dim])
            self.Z = Z = tf1.placeholder(tf1.float32, shape=[None, z_dim])
            R_real = tf1.placeholder(tf1.float32, shape=[None, 1])
            R_fake = tf1.placeholder(tf1.float32, shape=[None, 1])

            def xavier_init(size: list[int]) -> Any:
                return tf1.random_normal(shape=size, stddev=1.0 / np.sqrt(size[0] / 2.0))

            D_W1 = tf1.Variable(xavier_init([X_dim, h_dim]))
            D_b1 = tf1.Variable(tf1.zeros(shape=[h_dim]))
            D_W2 = tf1.Variable(xavier_init([h_dim, h_dim]))
            D_b2 = tf1.Variable(tf1.zeros(shape=[h_dim]))
            D_W3 = tf1.Variable(xavier_init([h_dim, 1]))
            D_b3 = tf1.Variable(tf1.zeros(shape=[1]))
            theta_D = [D_W1, D_W2, D_W3, D_b1, D_b2, D_b3]

            G_W1 = tf1.Variable(xavier_init([z_dim, h_dim]))
            G_b1 = tf1.Variable(tf1.zeros(shape=[h_dim]))
            G_W2 = tf1.Variable(xavier_init([h_dim, h_dim]))
            G_b2 = tf1.Variable(tf1.zeros(shape=[h_dim]))
            G_W3 = tf1.Variable(xavier_init([h_dim, X_dim]))
            G_b3 = tf1.Variable(tf1.zeros(shape=[X_dim]))
            theta_G = [G_W1, G_W2, G_W3, G_b1, G_b2, G_b3]

            def generator(z: Any) -> Any:
                G_h1 = tf1.nn.tanh(tf1.matmul(z, G_W1) + G_b1)
                G_h2 = tf1.nn.tanh(tf1.matmul(G_h1, G_W2) + G_b2)
                return tf1.nn.sigmoid(tf1.matmul(G_h2, G_W3) + G_b3)

            def discriminator(x: Any) -> Any:
                D_h1 = tf1.nn.relu(tf1.matmul(x, D_W1) + D_b1)
                D_h2 = tf1.nn.relu(tf1.matmul(D_h1, D_W2) + D_b2)
                return tf1.matmul(D_h2, D_W3) + D_b3

            self.G_sample = G_sample = generator(Z)
            D_real = discriminator(X)
            D_fake = discriminator(G_sample)
            D_loss = tf1.reduce_mean((1.0 - 2.0 * R_fake) * D_fake) + tf1.reduce_mean((1.0 - 2.0 * R_real) * D_real)
            G_loss = -tf1.reduce_mean(D_fake)

            eps = tf1.random_uniform([tf1.shape(X)[0], 1], minval=0.0, maxval=1.0)
            X_inter = eps * X + (1.0 - eps) * G_sample
            grad = tf1.gradients(discriminator(X_inter), [X_inter])[0]
            grad_norm = tf1.sqrt(tf1.reduce_sum(grad ** 2 + 1e-8, axis=1))
            D_loss = D_loss + lam * tf1.reduce_mean((grad_norm - 1) ** 2)

            D_solver = tf1.train.AdamOptimizer(learning_rate=self.learning_rate, beta1=0.5).minimize(
                D_loss, var_list=theta_D)
            G_solver = tf1.train.AdamOptimizer(learning_rate=self.learning_rate, beta1=0.5).minimize(
                G_loss, var_list=theta_G)
            init = tf1.global_variables_initializer()

        sess.run(init)
        if probe is not None:
            probe.latent("uniform", phase="train")

        for it in range(self.n_iters):
            # "teachers": every pass draws its batch from the whole data set
            teacher_pass = 0
            for _ in range(self.num_teachers):
                X_idx = np.random.permutation(No)[:self.batch_size]
                X_mb = X_train[X_idx, :]
                Z_mb = np.random.uniform(-1.0, 1.0, size=[len(X_idx), z_dim])
                noise_real = np.random.normal(0.0, lamda, size=[len(X_idx), 1])
                noise_fake = np.random.normal(0.0, lamda, size=[len(X_idx), 1])
                R_real_mb = ((1.0 + noise_real) > 0.5).astype(np.float32)
                R_fake_mb = ((0.0 + noise_fake) > 0.5).astype(np.float32)
                if probe is not None:
                    probe.teacher_data(teacher_pass, X_idx, iteration=it)
                    probe.noise(np.concatenate([noise_real, noise_fake]).ravel(), distribution="gaussian",
                                scale=float(lamda), applied_to="labels", iteration=it)
                teacher_pass += 1
                sess.run(D_solver, feed_dict={X: X_mb, Z: Z_mb, R_real: R_real_mb, R_fake: R_fake_mb})

            Z_mb = np.random.uniform(-1.0, 1.0, size=[min(self.batch_size, No), z_dim])
            sess.run(G_solver, feed_dict={Z: Z_mb})

        if probe is not None:
            probe.training_end(self.n_iters, reason="fixed")

    def generate(self, n: int) -> np.ndarray:
        if self.probe is not None:
            self.probe.latent("uniform", phase="generate")
        Z_mb = np.random.uniform(-1.0, 1.0, size=[n, self.z_dim])
        synth = self.sess.run(self.G_sample, feed_dict={self.Z: Z_mb})
        return self.decode(np.asarray(synth, np.float64))
