"""PATE-GAN as released in 2021 (vanderschaarlab/mlforhealthlabpub, ``alg/pategan/pate_gan.py``),
rebuilt bug for bug.

Teachers are sklearn ``LogisticRegression`` models re-fitted from scratch every iteration, and
every one of them is fitted on the LAST partition (the teacher loop indexes the partition list
with the stale ``i`` of the partitioning loop); PATE_λ draws Laplace noise of scale λ while the
accountant treats λ as an inverse scale. Input is expected in [0, 1]; ``normalization`` below is
the min-max scaling of upstream's example driver (bounds read from the data) and the generated
data is returned as it leaves the generator, in [0, 1]. See PROVENANCE.md.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np
from sklearn.linear_model import LogisticRegression


def normalization(data: np.ndarray, probe: Any = None) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Min-max scaling of the example driver: bounds taken from the data itself."""
    min_val = np.min(data, axis=0)
    max_val = np.max(data, axis=0)
    norm_data = (data - min_val) / (max_val - min_val + 1e-8)
    if probe is not None:
        probe.bounds(min_val, max_val, source="data")
    return norm_data, {"min_val": min_val, "max_val": max_val}


def xavier_init(tf1: Any, size: list[int]) -> Any:
    in_dim = size[0]
    xavier_stddev = 1.0 / np.sqrt(in_dim / 2.0)
    return tf1.random_normal(shape=size, stddev=xavier_stddev)


def sample_Z(m: int, n: int) -> np.ndarray:
    return np.random.uniform(0.0, 1.0, size=[m, n])


def pate_lamda(x: np.ndarray, teacher_models: list[Any], lamda: float, probe: Any = None,
               iteration: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """PATE_λ: teacher votes, Laplace noise on n1, label = noisy share of 'real' votes > 1/2."""
    y_hat = []
    for teacher in teacher_models:
        temp_y = teacher.predict(x)
        y_hat = y_hat + [temp_y]
    y_hat = np.asarray(y_hat)
    n0 = np.sum(y_hat == 0, axis=0)
    n1 = np.sum(y_hat == 1, axis=0)
    lap_noise = np.random.laplace(loc=0.0, scale=lamda, size=n0.shape)
    out = (n1 + lap_noise) / (n0 + n1)
    out = (out > 0.5).astype(np.float32)
    if probe is not None:
        probe.votes(n0, n1, iteration=iteration)
        probe.noise(lap_noise, distribution="laplace", scale=float(lamda), applied_to="votes", iteration=iteration)
    return n0, n1, out


def pategan(x_train: np.ndarray, parameters: dict[str, Any], *, tf1: Any, sess: Any,
            probe: Any = None) -> Callable[[int], np.ndarray]:
    """Train PATE-GAN on ``x_train`` (expected in [0, 1]); returns ``generate(n)``."""
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

    with sess.graph.as_default():
        Z = tf1.placeholder(tf1.float32, shape=[None, z_dim])
        Y = tf1.placeholder(tf1.float32, shape=[None, 1])

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

        def generator(z: Any) -> Any:
            G_h1 = tf1.nn.tanh(tf1.matmul(z, G_W1) + G_b1)
            G_h2 = tf1.nn.tanh(tf1.matmul(G_h1, G_W2) + G_b2)
            return tf1.nn.sigmoid(tf1.matmul(G_h2, G_W3) + G_b3)

        def student(x: Any) -> Any:
            S_h1 = tf1.nn.relu(tf1.matmul(x, S_W1) + S_b1)
            return tf1.matmul(S_h1, S_W2) + S_b2

        G_sample = generator(Z)
        S_fake = student(G_sample)

        # WGAN-style losses on the teacher-labelled samples, with weight clipping
        S_loss = tf1.reduce_mean((1.0 - Y) * S_fake) - tf1.reduce_mean(Y * S_fake)
        G_loss = -tf1.reduce_mean(S_fake)

        S_solver = tf1.train.RMSPropOptimizer(learning_rate=1e-4).minimize(S_loss, var_list=theta_S)
        G_solver = tf1.train.RMSPropOptimizer(learning_rate=1e-4).minimize(G_loss, var_list=theta_G)
        clip_S = [p.assign(tf1.clip_by_value(p, -0.01, 0.01)) for p in theta_S]
        init = tf1.global_variables_initializer()

    sess.run(init)
    if probe is not None:
        probe.latent("uniform", phase="train")

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

        teacher_models = []
        for _ in range(k):
            temp_x = x_partition[i]
            idx = np.random.permutation(len(temp_x[:, 0]))[:batch_size]
            x_comb = np.concatenate((temp_x[idx, :], g_mb), axis=0)
            y_comb = np.concatenate((np.ones([len(idx), ]), np.zeros([batch_size, ])), axis=0)
            if probe is not None:
                probe.teacher_data(len(teacher_models), idx_partition[i][idx], iteration=iteration)
            model = LogisticRegression()
            model.fit(x_comb, y_comb)
            teacher_models = teacher_models + [model]

        # 2. Student training
        for _ in range(n_s):
            z_mb = sample_Z(batch_size, z_dim)
            g_mb = sess.run(G_sample, feed_dict={Z: z_mb})
            n0, n1, y_hat = pate_lamda(g_mb, teacher_models, lamda, probe, iteration)

            # Update moments accountant
            q = (2 + lamda * np.abs(n0 - n1)) / (4 * np.exp(lamda * np.abs(n0 - n1)))
            for l in range(L):
                temp1 = 2 * (lamda ** 2) * (l + 1) * (l + 2)
                temp2 = (1 - q) * (((1 - q) / (1 - q * np.exp(2 * lamda))) ** (l + 1)) + q * np.exp(2 * lamda * (l + 1))
                alpha[l] = alpha[l] + np.sum(np.minimum(temp1, np.log(temp2)))
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
        # the generator's [0, 1] output is returned as is
        if probe is not None:
            probe.latent("uniform", phase="generate")
        x_train_hat = sess.run(G_sample, feed_dict={Z: sample_Z(n, z_dim)})
        if probe is not None:
            probe.output_transform("none")
        return x_train_hat

    return generate
