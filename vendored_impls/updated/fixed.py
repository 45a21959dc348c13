"""Corrected twin of ``updated``: upstream's pate_gan.py with the smallest edits that remove its
Table 2 entries.

Edits: teacher ``j`` is trained on partition ``j`` (not the stale ``i``); the teachers are k neural
discriminators {d, 1} trained incrementally (one step per iteration) instead of LogisticRegression
models re-fitted from scratch; PATE_λ draws Laplace noise of scale 1/λ; min-max scaling uses public
bounds passed in, and generated data is mapped back to the input scale. See PROVENANCE.md.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np


def normalization(data: np.ndarray, lower: np.ndarray, upper: np.ndarray,
                  probe: Any = None) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Min-max scaling with public bounds passed in as metadata."""
    min_val = np.asarray(lower, np.float64)
    max_val = np.asarray(upper, np.float64)
    norm_data = np.clip((data - min_val) / (max_val - min_val + 1e-8), 0.0, 1.0)
    if probe is not None:
        probe.bounds(min_val, max_val, source="parameter")
    return norm_data, {"min_val": min_val, "max_val": max_val}


def renormalization(norm_data: np.ndarray, norm_parameters: dict[str, np.ndarray]) -> np.ndarray:
    """Map [0, 1] data back to the input scale."""
    min_val, max_val = norm_parameters["min_val"], norm_parameters["max_val"]
    return norm_data * (max_val - min_val + 1e-8) + min_val


def xavier_init(tf1: Any, size: list[int]) -> Any:
    in_dim = size[0]
    xavier_stddev = 1.0 / np.sqrt(in_dim / 2.0)
    return tf1.random_normal(shape=size, stddev=xavier_stddev)


def sample_Z(m: int, n: int) -> np.ndarray:
    return np.random.uniform(0.0, 1.0, size=[m, n])


def pate_lamda(x: np.ndarray, teacher_predict: Callable[[np.ndarray], np.ndarray], lamda: float,
               probe: Any = None, iteration: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """PATE_λ: teacher votes, Laplace noise on n1, label = noisy share of 'real' votes > 1/2."""
    y_hat = teacher_predict(x)
    n0 = np.sum(y_hat == 0, axis=0)
    n1 = np.sum(y_hat == 1, axis=0)
    lap_noise = np.random.laplace(loc=0.0, scale=1 / lamda, size=n0.shape)
    out = (n1 + lap_noise) / (n0 + n1)
    out = (out > 0.5).astype(np.float32)
    if probe is not None:
        probe.votes(n0, n1, iteration=iteration)
        probe.noise(lap_noise, distribution="laplace", scale=float(1 / lamda), applied_to="votes", iteration=iteration)
    return n0, n1, out


def pategan(x_train: np.ndarray, parameters: dict[str, Any], *, tf1: Any, sess: Any,
            probe: Any = None) -> Callable[[int], np.ndarray]:
    """Train PATE-GAN on ``x_train``, scaled with the public ``parameters["bounds"]``; returns
    ``generate(n)`` in the input scale."""
    x_train, norm_parameters = normalization(x_train, *parameters["bounds"], probe=probe)
    n_s = parameters["n_s"]
    batch_size = parameters["batch_size"]
    k = parameters["k"]
    epsilon = parameters["epsilon"]
    delta = parameters["delta"]
    lamda = parameters["lamda"]
    L = parameters["L"]
    max_iterations = parameters["max_iterations"]

    no, dim = x_train.shape
    z_dim = int(dim)
    student_h_dim = int(dim)
    generator_h_dim = int(4 * dim)

    # Partitioning the data into k subsets
    x_partition = []
    idx_partition = []
    partition_data_no = int(no / k)
    idx = np.random.permutation(no)
    for i in range(k):
        temp_idx = idx[int(i * partition_data_no):int((i + 1) * partition_data_no)]
        temp_x = x_train[temp_idx, :]
        x_partition = x_partition + [temp_x]
        idx_partition = idx_partition + [temp_idx]

    teacher_h_dim = int(dim)
    with sess.graph.as_default():
        Z = tf1.placeholder(tf1.float32, shape=[None, z_dim])
        Y = tf1.placeholder(tf1.float32, shape=[None, 1])
        T_real = tf1.placeholder(tf1.float32, shape=[k, None, dim])
        T_fake = tf1.placeholder(tf1.float32, shape=[None, dim])

        G_W1 = tf1.Variable(xavier_init(tf1, [z_dim, generator_h_dim]))
        G_b1 = tf1.Variable(tf1.zeros(shape=[generator_h_dim]))
        G_W2 = tf1.Variable(xavier_init(tf1, [generator_h_dim, generator_h_dim]))
        G_b2 = tf1.Variable(tf1.zeros(shape=[generator_h_dim]))
        G_W3 = tf1.Variable(xavier_init(tf1, [generator_h_dim, dim]))
        G_b3 = tf1.Variable(tf1.zeros(shape=[dim]))
        theta_G = [G_W1, G_W2, G_W3, G_b1, G_b2, G_b3]

        S_W1 = tf1.Variable(xavier_init(tf1, [dim, student_h_dim]))
        S_b1 = tf1.Variable(tf1.zeros(shape=[student_h_dim]))
        S_W2 = tf1.Variable(xavier_init(tf1, [student_h_dim, 1]))
        S_b2 = tf1.Variable(tf1.zeros(shape=[1]))
        theta_S = [S_W1, S_W2, S_b1, S_b2]

        # k teacher discriminators {d, 1}, stacked, trained one step per iteration
        T_W1 = tf1.Variable(tf1.random_normal(shape=[k, dim, teacher_h_dim], stddev=1.0 / np.sqrt(dim / 2.0)))
        T_b1 = tf1.Variable(tf1.zeros(shape=[k, 1, teacher_h_dim]))
        T_W2 = tf1.Variable(tf1.random_normal(shape=[k, teacher_h_dim, 1], stddev=1.0 / np.sqrt(teacher_h_dim / 2.0)))
        T_b2 = tf1.Variable(tf1.zeros(shape=[k, 1, 1]))
        theta_T = [T_W1, T_b1, T_W2, T_b2]

        def generator(z: Any) -> Any:
            G_h1 = tf1.nn.tanh(tf1.matmul(z, G_W1) + G_b1)
            G_h2 = tf1.nn.tanh(tf1.matmul(G_h1, G_W2) + G_b2)
            return tf1.nn.sigmoid(tf1.matmul(G_h2, G_W3) + G_b3)

        def student(x: Any) -> Any:
            S_h1 = tf1.nn.relu(tf1.matmul(x, S_W1) + S_b1)
            return tf1.matmul(S_h1, S_W2) + S_b2

        def teachers(x: Any) -> Any:
            T_h1 = tf1.nn.relu(tf1.matmul(x, T_W1) + T_b1)
            return tf1.matmul(T_h1, T_W2) + T_b2

        G_sample = generator(Z)
        T_logit_real = teachers(T_real)
        T_logit_fake = teachers(tf1.tile(tf1.expand_dims(T_fake, 0), [k, 1, 1]))
        T_loss = (tf1.reduce_mean(tf1.nn.sigmoid_cross_entropy_with_logits(
            labels=tf1.ones_like(T_logit_real), logits=T_logit_real))
            + tf1.reduce_mean(tf1.nn.sigmoid_cross_entropy_with_logits(
                labels=tf1.zeros_like(T_logit_fake), logits=T_logit_fake)))
        T_votes = tf1.cast(T_logit_fake[:, :, 0] > 0.0, tf1.float32)
        S_fake = student(G_sample)

        # WGAN-style losses on the teacher-labelled samples, with weight clipping
        S_loss = tf1.reduce_mean((1.0 - Y) * S_fake) - tf1.reduce_mean(Y * S_fake)
        G_loss = -tf1.reduce_mean(S_fake)

        S_solver = tf1.train.RMSPropOptimizer(learning_rate=1e-4).minimize(S_loss, var_list=theta_S)
        G_solver = tf1.train.RMSPropOptimizer(learning_rate=1e-4).minimize(G_loss, var_list=theta_G)
        T_solver = tf1.train.RMSPropOptimizer(learning_rate=1e-4).minimize(T_loss, var_list=theta_T)
        clip_S = [p.assign(tf1.clip_by_value(p, -0.01, 0.01)) for p in theta_S]
        init = tf1.global_variables_initializer()

    sess.run(init)
    if probe is not None:
        probe.latent("uniform", phase="train")

    def teacher_predict(x: np.ndarray) -> np.ndarray:
        return sess.run(T_votes, feed_dict={T_fake: x})

    # Moments accountant
    alpha = np.zeros([L])
    epsilon_hat = 0
    iteration = 0

    while epsilon_hat < epsilon:
        if iteration >= max_iterations:
            break

        # 1. Teacher training
        z_mb = sample_Z(batch_size, z_dim)
        g_mb = sess.run(G_sample, feed_dict={Z: z_mb})

        x_real = []
        for j in range(k):
            temp_x = x_partition[j]
            idx = np.random.permutation(len(temp_x[:, 0]))[:batch_size]
            x_real = x_real + [temp_x[idx, :]]
            if probe is not None:
                probe.teacher_data(j, idx_partition[j][idx], iteration=iteration)
        sess.run(T_solver, feed_dict={T_real: np.stack(x_real), T_fake: g_mb})

        # 2. Student training
        for _ in range(n_s):
            z_mb = sample_Z(batch_size, z_dim)
            g_mb = sess.run(G_sample, feed_dict={Z: z_mb})
            n0, n1, y_hat = pate_lamda(g_mb, teacher_predict, lamda, probe, iteration)

            # Update moments accountant
            q = (2 + lamda * np.abs(n0 - n1)) / (4 * np.exp(lamda * np.abs(n0 - n1)))
            # PATE 2017, Theorem 2: the data-dependent term needs q < (e^{2λ}-1)/(e^{4λ}-1); this
            # also keeps 1 - q·e^{2λ} > 0 (no division by zero). Elsewhere: data-independent only.
            valid = q < (np.exp(2 * lamda) - 1) / (np.exp(4 * lamda) - 1)
            safe_q = np.where(valid, q, 0.0)
            for l in range(L):
                temp1 = 2 * (lamda ** 2) * (l + 1) * (l + 2)
                temp2 = ((1 - safe_q) * (((1 - safe_q) / (1 - safe_q * np.exp(2 * lamda))) ** (l + 1))
                         + safe_q * np.exp(2 * lamda * (l + 1)))
                alpha[l] = alpha[l] + np.sum(np.where(valid, np.minimum(temp1, np.log(temp2)), temp1))
            if probe is not None:
                probe.accountant(alpha.copy(), float(np.min((alpha + np.log(1 / delta)) / np.arange(1, L + 1))),
                                 iteration=iteration)

            sess.run([S_solver], feed_dict={Z: z_mb, Y: np.reshape(y_hat, [-1, 1])})
            sess.run(clip_S)

        # 3. Generator training
        z_mb = sample_Z(batch_size, z_dim)
        sess.run([G_solver], feed_dict={Z: z_mb})

        # epsilon_hat computation
        curr_list = []
        for l in range(L):
            temp_alpha = (alpha[l] + np.log(1 / delta)) / float(l + 1)
            curr_list = curr_list + [temp_alpha]
        epsilon_hat = np.min(curr_list)
        iteration += 1

    if probe is not None:
        probe.training_end(iteration, reason="budget" if epsilon_hat >= epsilon else "max_iterations")

    def generate(n: int) -> np.ndarray:
        if probe is not None:
            probe.latent("uniform", phase="generate")
        x_train_hat = sess.run(G_sample, feed_dict={Z: sample_Z(n, z_dim)})
        x_train_hat = renormalization(x_train_hat, norm_parameters)
        if probe is not None:
            probe.output_transform("inverse_minmax")
        return x_train_hat

    return generate
