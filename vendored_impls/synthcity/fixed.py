"""Corrected twin of ``upstream.py`` (synthcity PATE-GAN), changed only where Table 2 marks it:
- data_partition: one permutation drawn once, cut into k fixed slices, teachers kept for the run;
- teachers: neural teacher discriminators updated by SGD each iteration instead of re-fitted
  ``LogisticRegression`` models;
- moments_accountant: ``exp(2 * lamda * (j + 1))`` (Theorem 5), evaluated in log space, with the
  data-independent bound wherever PATE's validity condition q < 1/(e^{2λ}+1) fails (DP302);
- metadata: encoder bounds are public parameters, never read from the data.
Outside Table 2, the labelling callback now charges the accountant before its skip branch.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np
import torch
from torch import nn


class TabularEncoder:
    """Column-wise scaling to [-1, 1]; integer columns are rounded back on decode."""

    def __init__(self, integer_columns: np.ndarray, bounds: tuple[np.ndarray, np.ndarray],
                 probe: Any = None) -> None:
        self.integer_columns = integer_columns
        self.bounds = bounds
        self.probe = probe

    def fit(self, X: np.ndarray) -> "TabularEncoder":
        self.min_, self.max_ = self.bounds
        if self.probe is not None:
            self.probe.bounds(self.min_, self.max_, source="parameter")
        return self

    def transform(self, X: np.ndarray) -> np.ndarray:
        span = np.where(self.max_ > self.min_, self.max_ - self.min_, 1.0)
        return 2.0 * (X - self.min_) / span - 1.0

    def inverse_transform(self, X: np.ndarray) -> np.ndarray:
        span = np.where(self.max_ > self.min_, self.max_ - self.min_, 1.0)
        out = (np.clip(X, -1.0, 1.0) + 1.0) / 2.0 * span + self.min_
        out[:, self.integer_columns] = np.rint(out[:, self.integer_columns])
        if self.probe is not None:
            self.probe.output_transform("inverse_minmax")
            if self.integer_columns.any():
                self.probe.output_transform("round_int", columns=np.flatnonzero(self.integer_columns).tolist())
        return out


class Teachers:
    def __init__(self, n_teachers: int, samples_per_iter: int, lamda: float = 1e-3, probe: Any = None, *,
                 n_rows: int, n_features: int, n_units_hidden: int = 100, lr: float = 1e-4) -> None:
        self.n_teachers = n_teachers
        self.samples_per_iter = samples_per_iter
        self.lamda = lamda
        self.probe = probe
        self.permutations = np.random.permutation(n_rows)
        self.model: list[nn.Module] = [
            nn.Sequential(nn.Linear(n_features, n_units_hidden), nn.LeakyReLU(0.2),
                          nn.Linear(n_units_hidden, 1), nn.Sigmoid())
            for _ in range(n_teachers)
        ]
        self.optimizers = [torch.optim.Adam(teacher.parameters(), lr=lr) for teacher in self.model]
        self.criterion = nn.BCELoss()

    def fit(self, X: np.ndarray, generator: Callable[[int], np.ndarray], iteration: int = 0) -> "Teachers":
        permutations = self.permutations
        partition_size = len(X) / self.n_teachers
        for tidx in range(self.n_teachers):
            teacher_idx = permutations[int(tidx * partition_size): int((tidx + 1) * partition_size)]
            if self.probe is not None:
                self.probe.teacher_data(tidx, teacher_idx, iteration=iteration)
            teacher_X = X[teacher_idx]
            g_samples = generator(self.samples_per_iter)
            X_comb = torch.from_numpy(np.concatenate([teacher_X, g_samples]).astype(np.float32))
            y_comb = torch.from_numpy(np.concatenate([np.ones(len(teacher_X)), np.zeros(len(g_samples))]).astype(np.float32))
            self.optimizers[tidx].zero_grad()
            loss = self.criterion(self.model[tidx](X_comb).squeeze(1), y_comb)
            loss.backward()
            self.optimizers[tidx].step()
        return self

    def pate_lamda(self, x: np.ndarray, iteration: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        with torch.no_grad():
            x_t = torch.from_numpy(np.asarray(x, dtype=np.float32))
            y_pred = np.stack([(teacher(x_t).squeeze(1) > 0.5).numpy() for teacher in self.model])
        n0 = np.sum(y_pred == 0, axis=0).astype(np.float64)
        n1 = np.sum(y_pred == 1, axis=0).astype(np.float64)
        lap_noise = np.random.laplace(loc=0.0, scale=1 / self.lamda, size=n1.shape)
        out = (n1 + lap_noise) / (n0 + n1)
        if self.probe is not None:
            self.probe.votes(n0, n1, iteration=iteration)
            self.probe.noise(lap_noise, distribution="laplace", scale=1 / self.lamda, applied_to="votes",
                             iteration=iteration)
        return n0, n1, (out > 0.5).astype(np.float32)


class PATEGAN:
    def __init__(
        self,
        n_iter: int = 1000,
        generator_n_units_hidden: int = 100,
        discriminator_n_units_hidden: int = 100,
        n_iter_student: int = 10,
        n_teachers: int = 10,
        epsilon: float = 1.0,
        delta: float | None = None,
        lamda: float = 1e-3,
        alpha: int = 100,
        batch_size: int = 200,
        lr: float = 1e-4,
        integer_columns: np.ndarray | None = None,
        bounds: tuple[np.ndarray, np.ndarray] | None = None,
        student_batches: int = 4,
        probe: Any = None,
    ) -> None:
        self.n_iter = n_iter
        self.generator_n_units_hidden = generator_n_units_hidden
        self.discriminator_n_units_hidden = discriminator_n_units_hidden
        self.n_iter_student = n_iter_student
        self.n_teachers = n_teachers
        self.epsilon = epsilon
        self.delta = delta
        self.lamda = lamda
        self.alpha = alpha
        self.batch_size = batch_size
        self.lr = lr
        self.integer_columns = integer_columns
        self.bounds = bounds
        self.student_batches = student_batches
        self.probe = probe
        self.alpha_dict = np.zeros(alpha)
        self._iteration = 0

    # -- the GAN ---------------------------------------------------------------------------
    def _build(self, n_features: int) -> None:
        self.n_noise = n_features
        self.generator = nn.Sequential(
            nn.Linear(self.n_noise, self.generator_n_units_hidden), nn.LeakyReLU(0.2),
            nn.Linear(self.generator_n_units_hidden, n_features), nn.Tanh(),
        )
        self.discriminator = nn.Sequential(
            nn.Linear(n_features, self.discriminator_n_units_hidden), nn.LeakyReLU(0.2),
            nn.Linear(self.discriminator_n_units_hidden, 1), nn.Sigmoid(),
        )
        self.optimizer_g = torch.optim.Adam(self.generator.parameters(), lr=self.lr)
        self.optimizer_d = torch.optim.Adam(self.discriminator.parameters(), lr=self.lr)
        self.criterion = nn.BCELoss()

    def _generate_encoded(self, count: int) -> np.ndarray:
        with torch.no_grad():
            return self.generator(torch.randn(count, self.n_noise)).numpy().astype(np.float64)

    def _fake_labels_generator(self, X: np.ndarray) -> torch.Tensor:
        n0, n1, y_mb = self.teachers.pate_lamda(X, iteration=self._iteration)
        self._update_alpha(n0, n1)
        if np.sum(y_mb) >= len(X) / 2:
            return torch.zeros(len(X))
        return torch.from_numpy(y_mb)

    def _train_epoch(self, n_batches: int) -> None:
        ones = torch.ones(self.samples_per_iter)
        for _ in range(n_batches):
            with torch.no_grad():
                fake = self.generator(torch.randn(self.samples_per_iter, self.n_noise))
            labels = self._fake_labels_generator(fake.numpy())
            self.optimizer_d.zero_grad()
            loss_d = self.criterion(self.discriminator(fake).squeeze(1), labels)
            loss_d.backward()
            self.optimizer_d.step()

            self.optimizer_g.zero_grad()
            fake = self.generator(torch.randn(self.samples_per_iter, self.n_noise))
            loss_g = self.criterion(self.discriminator(fake).squeeze(1), ones)
            loss_g.backward()
            self.optimizer_g.step()

    # -- the accountant --------------------------------------------------------------------
    def _update_alpha(self, n0: np.ndarray, n1: np.ndarray) -> None:
        n0, n1 = np.atleast_1d(n0), np.atleast_1d(n1)
        log_q = np.log(2 + self.lamda * np.abs(n0 - n1)) - np.log(4.0) - self.lamda * np.abs(n0 - n1)
        q = np.exp(log_q)
        q_e2l = np.exp(log_q + 2 * self.lamda)
        # PATE 2017, Theorem 2: the data-dependent bound needs q < (e^{2λ}-1)/(e^{4λ}-1) = 1/(e^{2λ}+1)
        # (which keeps 1 - q * exp(2 * lamda) > 0); elsewhere only the data-independent bound holds
        valid = log_q < -np.logaddexp(0.0, 2 * self.lamda)
        q_e2l = np.where(valid, q_e2l, 0.0)
        q, log_q, q_e2l, valid = q[None, :], log_q[None, :], q_e2l[None, :], valid[None, :]
        j = np.arange(self.alpha)[:, None]  # every moment index at once, one row per j
        temp1 = 2 * (self.lamda ** 2) * (j + 1) * (j + 2)
        log_t1 = np.log1p(-q) + (j + 1) * (np.log1p(-q) - np.log1p(-q_e2l))
        with np.errstate(over="ignore"):
            temp2 = np.log1p(np.expm1(log_t1) + np.exp(log_q + 2 * self.lamda * (j + 1)))
        temp2 = np.where(valid, temp2, np.inf)
        self.alpha_dict += np.sum(np.clip(temp2, 0, temp1), axis=1)
        if self.probe is not None:
            self.probe.accountant(self.alpha_dict.copy(), self._update_epsilon_hat(), iteration=self._iteration)

    def _update_epsilon_hat(self) -> float:
        curr_list = []
        for lidx in range(self.alpha):
            temp_alpha = (self.alpha_dict[lidx] + np.log(1 / self.delta)) / float(lidx + 1)
            curr_list.append(temp_alpha)
        return float(np.min(curr_list))

    # -- plugin API ------------------------------------------------------------------------
    def fit(self, X: np.ndarray) -> "PATEGAN":
        integer_columns = self.integer_columns if self.integer_columns is not None else np.zeros(X.shape[1], bool)
        if self.bounds is None:
            raise ValueError("bounds=(lower, upper) is required: data bounds are public metadata")
        self.encoder = TabularEncoder(integer_columns, self.bounds, probe=self.probe).fit(X)
        X = self.encoder.transform(X)
        if self.delta is None:
            self.delta = 1 / (len(X) * np.sqrt(len(X)))
        # the schedule is public: upstream's min(batch_size, N) generated rows and ceil(N / batch_size)
        # steps per epoch read N, which add/remove neighbours differ in
        self.samples_per_iter = self.batch_size
        n_batches = self.student_batches
        self._build(X.shape[1])
        if self.probe is not None:
            self.probe.latent("normal", phase="train")

        self.alpha_dict = np.zeros(self.alpha)
        epsilon_hat = 0.0
        it = 0
        self.teachers = Teachers(self.n_teachers, self.samples_per_iter, self.lamda, probe=self.probe,
                                 n_rows=len(X), n_features=X.shape[1], lr=self.lr)
        while epsilon_hat < self.epsilon and it < self.n_iter:
            it += 1
            self._iteration = it
            self.teachers.fit(X, self._generate_encoded, iteration=it)
            for _ in range(self.n_iter_student):
                self._train_epoch(n_batches)
            epsilon_hat = self._update_epsilon_hat()
        self.epsilon_hat = epsilon_hat
        if self.probe is not None:
            self.probe.training_end(it, reason="budget" if epsilon_hat >= self.epsilon else "max_iterations")
        return self

    def generate(self, count: int) -> np.ndarray:
        if self.probe is not None:
            self.probe.latent("normal", phase="generate")
        return self.encoder.inverse_transform(self._generate_encoded(count))
