"""PATE-GAN as released in 2018 (mlforhealthlabpub, ``alg/pategan/PATE_GAN.py``), rebuilt bug for bug.

A conditional WGAN-GP with one discriminator: the "teachers" are only an inner loop whose passes
all sample from the whole training set; the "PATE noise" is a Gaussian added to the 0/1
real/fake targets, with a standard deviation computed with ``^`` (XOR) where ``**`` was meant;
bounds are read from the data; generation is fed the real training labels. See PROVENANCE.md.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np


def xavier_init(tf1: Any, size: list[int]) -> Any:
    in_dim = size[0]
    xavier_stddev = 1.0 / np.sqrt(in_dim / 2.0)
    return tf1.random_normal(shape=size, stddev=xavier_stddev)


def sample_Z(m: int, n: int) -> np.ndarray:
    return np.random.uniform(-1.0, 1.0, size=[m, n])


def sample_X(m: int, n: int) -> np.ndarray:
    idx = np.random.permutation(m)
    return idx[:n]


def PATE_GAN(X_train: np.ndarray, Y_train: np.ndarray, epsilon: float, delta: float, niter: int,
             num_teachers: int, *, tf1: Any, sess: Any, mb_size: int = 128,
             probe: Any = None) -> Callable[[int], tuple[np.ndarray, np.ndarray]]:
    # Feature no
    X_dim = len(X_train[0, :])
    # Sample no
    No = len(X_train[:, 0])
    # Random variable dimension (at least one: see PROVENANCE.md)
    z_dim = max(int(X_dim / 4), 1)
    # Hidden unit dimensions
    h_dim = int(X_dim)
    # Conditional variable dimension
    C_dim = 1

    # WGAN-GP parameters
    lam = 10
    lr = 1e-4

    # Python 3 rejects a float operand of ^, so delta goes through int() first (PROVENANCE.md)
    lamda = np.sqrt(2 * np.log(1.25 * (10 ^ int(delta)))) / epsilon

    # Data normalization
    Min_Val = np.min(X_train, 0)
    X_train = X_train - Min_Val
    Max_Val = np.max(X_train, 0)
    X_train = X_train / (Max_Val + 1e-8)
    if probe is not None:
        probe.bounds(Min_Val, Min_Val + Max_Val, source="data")

    with sess.graph.as_default():
        X = tf1.placeholder(tf1.float32, shape=[None, X_dim])
        Z = tf1.placeholder(tf1.float32, shape=[None, z_dim])
        Y = tf1.placeholder(tf1.float32, shape=[None, C_dim])
        # noisy real/fake targets of the real and of the generated batch
        R_real = tf1.placeholder(tf1.float32, shape=[None, 1])
        R_fake = tf1.placeholder(tf1.float32, shape=[None, 1])

        D_W1 = tf1.Variable(xavier_init(tf1, [X_dim + C_dim, h_dim]))
        D_b1 = tf1.Variable(tf1.zeros(shape=[h_dim]))
        D_W2 = tf1.Variable(xavier_init(tf1, [h_dim, h_dim]))
        D_b2 = tf1.Variable(tf1.zeros(shape=[h_dim]))
        D_W3 = tf1.Variable(xavier_init(tf1, [h_dim, 1]))
        D_b3 = tf1.Variable(tf1.zeros(shape=[1]))
        theta_D = [D_W1, D_W2, D_W3, D_b1, D_b2, D_b3]

        G_W1 = tf1.Variable(xavier_init(tf1, [z_dim + C_dim, h_dim]))
        G_b1 = tf1.Variable(tf1.zeros(shape=[h_dim]))
        G_W2 = tf1.Variable(xavier_init(tf1, [h_dim, h_dim]))
        G_b2 = tf1.Variable(tf1.zeros(shape=[h_dim]))
        G_W3 = tf1.Variable(xavier_init(tf1, [h_dim, X_dim]))
        G_b3 = tf1.Variable(tf1.zeros(shape=[X_dim]))
        theta_G = [G_W1, G_W2, G_W3, G_b1, G_b2, G_b3]

        def generator(z: Any, y: Any) -> Any:
            inputs = tf1.concat([z, y], axis=1)
            G_h1 = tf1.nn.tanh(tf1.matmul(inputs, G_W1) + G_b1)
            G_h2 = tf1.nn.tanh(tf1.matmul(G_h1, G_W2) + G_b2)
            G_log_prob = tf1.matmul(G_h2, G_W3) + G_b3
            return tf1.nn.sigmoid(G_log_prob)

        def discriminator(x: Any, y: Any) -> Any:
            inputs = tf1.concat([x, y], axis=1)
            D_h1 = tf1.nn.relu(tf1.matmul(inputs, D_W1) + D_b1)
            D_h2 = tf1.nn.relu(tf1.matmul(D_h1, D_W2) + D_b2)
            return tf1.matmul(D_h2, D_W3) + D_b3

        G_sample = generator(Z, Y)
        D_real = discriminator(X, Y)
        D_fake = discriminator(G_sample, Y)

        # WGAN critic loss with the (noisy) targets deciding the sign of each sample
        D_loss = tf1.reduce_mean((1.0 - 2.0 * R_fake) * D_fake) + tf1.reduce_mean((1.0 - 2.0 * R_real) * D_real)
        G_loss = -tf1.reduce_mean(D_fake)

        # Gradient penalty
        eps = tf1.random_uniform([tf1.shape(X)[0], 1], minval=0.0, maxval=1.0)
        X_inter = eps * X + (1.0 - eps) * G_sample
        grad = tf1.gradients(discriminator(X_inter, Y), [X_inter])[0]
        grad_norm = tf1.sqrt(tf1.reduce_sum(grad ** 2 + 1e-8, axis=1))
        grad_pen = lam * tf1.reduce_mean((grad_norm - 1) ** 2)
        D_loss = D_loss + grad_pen

        D_solver = tf1.train.AdamOptimizer(learning_rate=lr, beta1=0.5).minimize(D_loss, var_list=theta_D)
        G_solver = tf1.train.AdamOptimizer(learning_rate=lr, beta1=0.5).minimize(G_loss, var_list=theta_G)
        init = tf1.global_variables_initializer()

    sess.run(init)
    if probe is not None:
        probe.latent("uniform", phase="train")

    # Iterations
    for it in range(niter):
        teacher_pass = 0
        for _ in range(num_teachers):
            X_idx = sample_X(No, mb_size)
            X_mb = X_train[X_idx, :]
            Z_mb = sample_Z(len(X_idx), z_dim)
            Y_mb = np.reshape(Y_train[X_idx], [len(X_idx), 1])
            # "PATE" noise: Gaussian on the real/fake targets, then thresholded
            noise_real = np.random.normal(0.0, lamda, size=[len(X_idx), 1])
            noise_fake = np.random.normal(0.0, lamda, size=[len(X_idx), 1])
            R_real_mb = ((1.0 + noise_real) > 0.5).astype(np.float32)
            R_fake_mb = ((0.0 + noise_fake) > 0.5).astype(np.float32)
            if probe is not None:
                probe.teacher_data(teacher_pass, X_idx, iteration=it)
                probe.noise(np.concatenate([noise_real, noise_fake]).ravel(), distribution="gaussian",
                            scale=float(lamda), applied_to="labels", iteration=it)
            teacher_pass += 1
            sess.run(D_solver, feed_dict={X: X_mb, Z: Z_mb, Y: Y_mb, R_real: R_real_mb, R_fake: R_fake_mb})

        X_idx = sample_X(No, mb_size)
        Z_mb = sample_Z(len(X_idx), z_dim)
        Y_mb = np.reshape(Y_train[X_idx], [len(X_idx), 1])
        sess.run(G_solver, feed_dict={Z: Z_mb, Y: Y_mb})

    if probe is not None:
        probe.training_end(niter, reason="fixed")

    def generate(n: int) -> tuple[np.ndarray, np.ndarray]:
        # Output generation: one synthetic row per real row, conditioned on the real label
        New_Y_train = Y_train[np.arange(n) % No]
        if probe is not None:
            probe.generation_labels(New_Y_train, source="training")
            probe.latent("uniform", phase="generate")
        New_X_train = sess.run(G_sample, feed_dict={Z: sample_Z(n, z_dim), Y: np.reshape(New_Y_train, [n, 1])})
        # Renormalization
        New_X_train = New_X_train * (Max_Val + 1e-8)
        New_X_train = New_X_train + Min_Val
        if probe is not None:
            probe.output_transform("inverse_minmax")
        return New_X_train, New_Y_train

    return generate
