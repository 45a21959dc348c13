"""Corrected twin of ``original``: a real (conditional) PATE-GAN in the 2018 code's TF1 style.

Against upstream: k teacher discriminators on one fixed disjoint partition, Laplace noise of
scale 1/λ on the vote counts, a student trained on the noisy labels, a Theorem 5 moments
accountant driving the loop (``while epsilon_hat < epsilon``), bounds passed in as public
metadata, and generation conditioned on labels drawn from a public ratio, not the training labels.
With ``Y_train`` of width 0 it is the unconditional PATE-GAN that ``turing``'s twin uses.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np


def xavier_init(tf1: Any, size: list[int]) -> Any:
    in_dim = size[-2]
    xavier_stddev = 1.0 / np.sqrt(max(in_dim, 1) / 2.0)
    return tf1.random_normal(shape=size, stddev=xavier_stddev)


def sample_Z(m: int, n: int) -> np.ndarray:
    return np.random.uniform(-1.0, 1.0, size=[m, n])


def validity_threshold(lamda: float) -> float:
    """(e^{2λ} - 1)/(e^{4λ} - 1), written as 1/(e^{2λ} + 1): equal, and exact as λ -> 0."""
    return float(np.exp(-np.logaddexp(0.0, 2.0 * lamda)))


def moments_increment(n0: np.ndarray, n1: np.ndarray, lamda: float, L: int) -> np.ndarray:
    """Theorem 5 of the PATE-GAN paper: the increase of alpha(1..L) for one batch of votes."""
    gap = lamda * np.abs(np.asarray(n0, np.float64) - np.asarray(n1, np.float64))
    q = (2.0 + gap) / (4.0 * np.exp(gap))
    increment = np.zeros(L)
    # PATE 2017, Theorem 2: the data-dependent term holds only while q < (e^{2λ}-1)/(e^{4λ}-1)
    # (= 1/(e^{2λ}+1), which also keeps 1 - e^{2λ}q > 0); elsewhere only the data-independent one
    valid = q < validity_threshold(lamda)
    safe_q = np.where(valid, q, 0.0)
    for l in range(1, L + 1):
        data_independent = 2.0 * lamda ** 2 * l * (l + 1)
        data_dependent = np.log((1.0 - safe_q) * ((1.0 - safe_q) / (1.0 - np.exp(2.0 * lamda) * safe_q)) ** l
                                + safe_q * np.exp(2.0 * lamda * l))
        term = np.where(valid, np.minimum(data_independent, data_dependent), data_independent)
        increment[l - 1] = np.sum(term)
    return increment


def epsilon_from_moments(alpha: np.ndarray, delta: float) -> float:
    orders = np.arange(1, len(alpha) + 1)
    return float(np.min((alpha + np.log(1.0 / delta)) / orders))


def PATE_GAN(X_train: np.ndarray, Y_train: np.ndarray, epsilon: float, delta: float, niter: int,
             num_teachers: int, *, tf1: Any, sess: Any, lower: np.ndarray, upper: np.ndarray,
             label_ratio: float = 0.5, lamda: float = 1e-3, num_moments: int = 20, mb_size: int = 128,
             teacher_iters: int = 1, student_iters: int = 1, lr: float = 1e-4,
             probe: Any = None) -> Callable[[int], tuple[np.ndarray, np.ndarray]]:
    X_dim = len(X_train[0, :])
    No = len(X_train[:, 0])
    z_dim = max(int(X_dim / 4), 1)
    h_dim = int(X_dim)
    C_dim = Y_train.shape[1]
    k = num_teachers
    L = num_moments

    # Normalization with public bounds
    Min_Val = np.asarray(lower, np.float64)
    Max_Val = np.asarray(upper, np.float64) - Min_Val
    X_train = np.clip((X_train - Min_Val) / (Max_Val + 1e-8), 0.0, 1.0)
    if probe is not None:
        probe.bounds(Min_Val, Min_Val + Max_Val, source="parameter")

    # One fixed disjoint partition: teacher i only ever sees rows partitions[i]
    partitions = np.array_split(np.random.permutation(No), k)

    with sess.graph.as_default():
        Z = tf1.placeholder(tf1.float32, shape=[None, z_dim])
        C = tf1.placeholder(tf1.float32, shape=[None, C_dim])
        T_real = tf1.placeholder(tf1.float32, shape=[k, None, X_dim + C_dim])
        S_X = tf1.placeholder(tf1.float32, shape=[None, X_dim])
        S_R = tf1.placeholder(tf1.float32, shape=[None, 1])

        G_W1 = tf1.Variable(xavier_init(tf1, [z_dim + C_dim, h_dim]))
        G_b1 = tf1.Variable(tf1.zeros(shape=[h_dim]))
        G_W2 = tf1.Variable(xavier_init(tf1, [h_dim, h_dim]))
        G_b2 = tf1.Variable(tf1.zeros(shape=[h_dim]))
        G_W3 = tf1.Variable(xavier_init(tf1, [h_dim, X_dim]))
        G_b3 = tf1.Variable(tf1.zeros(shape=[X_dim]))
        theta_G = [G_W1, G_W2, G_W3, G_b1, G_b2, G_b3]

        # k teachers {d, 1} held as one stacked set of weights, trained in one step
        T_W1 = tf1.Variable(xavier_init(tf1, [k, X_dim + C_dim, h_dim]))
        T_b1 = tf1.Variable(tf1.zeros(shape=[k, 1, h_dim]))
        T_W2 = tf1.Variable(xavier_init(tf1, [k, h_dim, 1]))
        T_b2 = tf1.Variable(tf1.zeros(shape=[k, 1, 1]))
        theta_T = [T_W1, T_b1, T_W2, T_b2]

        S_W1 = tf1.Variable(xavier_init(tf1, [X_dim + C_dim, h_dim]))
        S_b1 = tf1.Variable(tf1.zeros(shape=[h_dim]))
        S_W2 = tf1.Variable(xavier_init(tf1, [h_dim, h_dim]))
        S_b2 = tf1.Variable(tf1.zeros(shape=[h_dim]))
        S_W3 = tf1.Variable(xavier_init(tf1, [h_dim, 1]))
        S_b3 = tf1.Variable(tf1.zeros(shape=[1]))
        theta_S = [S_W1, S_W2, S_W3, S_b1, S_b2, S_b3]

        def generator(z: Any, c: Any) -> Any:
            inputs = tf1.concat([z, c], axis=1)
            G_h1 = tf1.nn.tanh(tf1.matmul(inputs, G_W1) + G_b1)
            G_h2 = tf1.nn.tanh(tf1.matmul(G_h1, G_W2) + G_b2)
            return tf1.nn.sigmoid(tf1.matmul(G_h2, G_W3) + G_b3)

        def teachers(xc: Any) -> Any:
            T_h1 = tf1.nn.relu(tf1.matmul(xc, T_W1) + T_b1)
            return tf1.matmul(T_h1, T_W2) + T_b2

        def student(x: Any, c: Any) -> Any:
            inputs = tf1.concat([x, c], axis=1)
            S_h1 = tf1.nn.relu(tf1.matmul(inputs, S_W1) + S_b1)
            S_h2 = tf1.nn.relu(tf1.matmul(S_h1, S_W2) + S_b2)
            return tf1.matmul(S_h2, S_W3) + S_b3

        G_sample = generator(Z, C)
        fake_xc = tf1.tile(tf1.expand_dims(tf1.concat([G_sample, C], axis=1), 0), [k, 1, 1])
        T_logit_real = teachers(T_real)
        T_logit_fake = teachers(fake_xc)
        T_loss = (tf1.reduce_mean(tf1.nn.sigmoid_cross_entropy_with_logits(
            labels=tf1.ones_like(T_logit_real), logits=T_logit_real))
            + tf1.reduce_mean(tf1.nn.sigmoid_cross_entropy_with_logits(
                labels=tf1.zeros_like(T_logit_fake), logits=T_logit_fake)))
        # votes of the k teachers on each generated sample: n1 say "real"
        n1_votes = tf1.reduce_sum(tf1.cast(T_logit_fake[:, :, 0] > 0.0, tf1.float32), axis=0)

        S_logit = student(S_X, C)
        S_loss = tf1.reduce_mean(tf1.nn.sigmoid_cross_entropy_with_logits(labels=S_R, logits=S_logit))
        S_logit_fake = student(G_sample, C)
        G_loss = tf1.reduce_mean(tf1.nn.sigmoid_cross_entropy_with_logits(
            labels=tf1.ones_like(S_logit_fake), logits=S_logit_fake))

        T_solver = tf1.train.AdamOptimizer(learning_rate=lr, beta1=0.5).minimize(T_loss, var_list=theta_T)
        S_solver = tf1.train.AdamOptimizer(learning_rate=lr, beta1=0.5).minimize(S_loss, var_list=theta_S)
        G_solver = tf1.train.AdamOptimizer(learning_rate=lr, beta1=0.5).minimize(G_loss, var_list=theta_G)
        init = tf1.global_variables_initializer()

    sess.run(init)
    if probe is not None:
        probe.latent("uniform", phase="train")

    def sample_C(m: int) -> np.ndarray:
        # generator conditions come from the public label ratio
        return (np.random.uniform(size=[m, C_dim]) < label_ratio).astype(np.float64)

    XY_train = np.concatenate([X_train, Y_train], axis=1)
    alpha = np.zeros([L])
    epsilon_hat = 0.0
    it = 0
    while epsilon_hat < epsilon and it < niter:
        # 1. Teachers: each on a batch sampled from its own partition only
        for _ in range(teacher_iters):
            batches = [part[np.random.randint(0, len(part), size=mb_size)] for part in partitions]
            if probe is not None:
                for i, rows in enumerate(batches):
                    probe.teacher_data(i, rows, iteration=it)
            sess.run(T_solver, feed_dict={T_real: np.stack([XY_train[rows] for rows in batches]),
                                          Z: sample_Z(mb_size, z_dim), C: sample_C(mb_size)})

        # 2. Student: PATE_λ labels on generated samples, accountant charged per batch
        for _ in range(student_iters):
            Z_mb, C_mb = sample_Z(mb_size, z_dim), sample_C(mb_size)
            G_mb, n1 = sess.run([G_sample, n1_votes], feed_dict={Z: Z_mb, C: C_mb})
            n1 = n1.astype(np.float64)
            n0 = k - n1
            noise0 = np.random.laplace(loc=0.0, scale=1.0 / lamda, size=n0.shape)
            noise1 = np.random.laplace(loc=0.0, scale=1.0 / lamda, size=n1.shape)
            R_mb = ((n1 + noise1) > (n0 + noise0)).astype(np.float32).reshape(-1, 1)
            alpha = alpha + moments_increment(n0, n1, lamda, L)
            epsilon_hat = epsilon_from_moments(alpha, delta)
            if probe is not None:
                probe.votes(n0, n1, iteration=it)
                probe.noise(np.concatenate([noise0, noise1]), distribution="laplace", scale=1.0 / lamda,
                            applied_to="votes", iteration=it)
                probe.accountant(alpha.copy(), epsilon_hat, iteration=it)
            sess.run(S_solver, feed_dict={S_X: G_mb, S_R: R_mb, C: C_mb})

        # 3. Generator against the student
        sess.run(G_solver, feed_dict={Z: sample_Z(mb_size, z_dim), C: sample_C(mb_size)})
        it += 1

    if probe is not None:
        probe.training_end(it, reason="budget" if epsilon_hat >= epsilon else "max_iterations")

    def generate(n: int) -> tuple[np.ndarray, np.ndarray]:
        New_Y = sample_C(n)
        if probe is not None:
            if C_dim:
                probe.generation_labels(New_Y[:, 0], source="public")
            probe.latent("uniform", phase="generate")
        New_X = sess.run(G_sample, feed_dict={Z: sample_Z(n, z_dim), C: New_Y})
        New_X = New_X * (Max_Val + 1e-8) + Min_Val
        if probe is not None:
            probe.output_transform("inverse_minmax")
        return New_X, New_Y

    return generate
