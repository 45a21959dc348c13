"""smartnoise-synth ``snsynth/pytorch/nn/pategan.py`` rebuilt bug for bug (PyTorch).

Disjoint ``np.array_split`` partitions for k = N/1000 teachers, Laplace(1/λ) vote noise, a student,
and a budget-driven loop whose accountant is ``privacy_utils.moments_acc`` (log missing). The noise
multiplier is the hard-coded ``1e-3``; training draws ``torch.rand`` latents, generation ``torch.randn``.
Bounds are public parameters or estimated with DP by the transformer (the preprocessor budget).
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch
from torch import nn

from .upstream_privacy_utils import moments_acc, pate


class Generator(nn.Module):
    def __init__(self, latent_dim: int, output_dim: int, binary: bool = True) -> None:
        super().__init__()

        def block(in_: int, out: int) -> nn.Module:
            activation = nn.Tanh() if binary else nn.LeakyReLU(0.2)
            return nn.Sequential(nn.Linear(in_, out, bias=False), nn.LayerNorm(out), activation)

        self.layer_0 = block(latent_dim, latent_dim)
        self.layer_1 = block(latent_dim, latent_dim)
        self.layer_2 = block(latent_dim, output_dim)

    def forward(self, noise: torch.Tensor) -> torch.Tensor:
        noise = self.layer_0(noise) + noise
        noise = self.layer_1(noise) + noise
        return self.layer_2(noise)


class Discriminator(nn.Module):
    def __init__(self, input_dim: int) -> None:
        super().__init__()
        h1, h2 = max(1, 2 * input_dim // 3), max(1, input_dim // 3)
        self.model = nn.Sequential(
            nn.Linear(input_dim, h1), nn.LeakyReLU(0.2),
            nn.Linear(h1, h2), nn.LeakyReLU(0.2),
            nn.Linear(h2, 1), nn.Sigmoid(),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.model(x)


def approx_bounds(values: np.ndarray, epsilon: float) -> tuple[float, float]:
    """DP bounds of one column: a Laplace-noised histogram over signed powers-of-two bins; the outermost
    bins whose noisy count clears a threshold give the bounds (each row lies in one bin: sensitivity 1)."""
    mags = np.abs(values)
    bins = np.where(mags < 1, 0, np.minimum(np.floor(np.log2(np.maximum(mags, 1.0))) + 1, 63)).astype(np.int64)
    signed = np.where(values >= 0, 64 + bins, 63 - bins)
    noisy = np.bincount(signed, minlength=128) + np.random.laplace(scale=1 / epsilon, size=128)
    over = np.flatnonzero(noisy > math.log(128 / 0.01) / epsilon)
    if over.size == 0:
        raise ValueError("cannot estimate bounds privately with this budget: too few rows per bin; "
                         "pass bounds=(lower, upper) or raise preprocessor_eps")

    def edge(index: int, upper: bool) -> float:
        b = index - 64 if index >= 64 else 63 - index
        outer = 2.0 ** b if b > 0 else 1.0
        inner = 2.0 ** (b - 1) if b > 0 else 0.0
        if index >= 64:
            return outer if upper else inner
        return -inner if upper else -outer

    return edge(int(over.min()), upper=False), edge(int(over.max()), upper=True)


class MinMaxTransformer:
    """Columns to [-1, 1] with public or DP bounds; integer columns rounded on the way back."""

    def __init__(self, bounds: tuple[np.ndarray, np.ndarray] | None, epsilon: float, integer_columns: np.ndarray,
                 probe: Any = None) -> None:
        self.bounds = bounds
        self.epsilon = epsilon
        self.integer_columns = integer_columns
        self.probe = probe

    def fit(self, data: np.ndarray) -> "MinMaxTransformer":
        if self.bounds is not None:
            self.lower, self.upper = self.bounds
            source = "parameter"
        else:
            per_column = self.epsilon / data.shape[1]
            found = [approx_bounds(data[:, j], per_column) for j in range(data.shape[1])]
            self.lower = np.array([lo for lo, _ in found])
            self.upper = np.array([hi for _, hi in found])
            source = "dp"
        if self.probe is not None:
            self.probe.bounds(self.lower, self.upper, source=source)
        self.span = np.where(self.upper > self.lower, self.upper - self.lower, 1.0)
        return self

    def transform(self, data: np.ndarray) -> np.ndarray:
        return 2.0 * (np.clip(data, self.lower, self.upper) - self.lower) / self.span - 1.0

    def inverse_transform(self, data: np.ndarray) -> np.ndarray:
        out = (np.clip(data, -1.0, 1.0) + 1.0) / 2.0 * self.span + self.lower
        out[:, self.integer_columns] = np.rint(out[:, self.integer_columns])
        if self.probe is not None:
            self.probe.output_transform("inverse_minmax")
            if self.integer_columns.any():
                self.probe.output_transform("round_int", columns=np.flatnonzero(self.integer_columns).tolist())
        return out


class PATEGAN:
    def __init__(self, epsilon: float, delta: float | None = None, binary: bool = False, latent_dim: int = 64,
                 batch_size: int = 64, teacher_iters: int = 5, student_iters: int = 5) -> None:
        self.epsilon = epsilon
        self.delta = delta
        self.binary = binary
        self.latent_dim = latent_dim
        self.batch_size = batch_size
        self.teacher_iters = teacher_iters
        self.student_iters = student_iters
        self.device = "cpu"
        self.probe: Any = None
        self._lamda_override: float | None = None

    def train(self, data: np.ndarray, *, bounds: tuple[np.ndarray, np.ndarray] | None = None,
              preprocessor_eps: float = 0.0, integer_columns: np.ndarray | None = None,
              num_teachers: int | None = None, num_moments: int = 100, lr: float = 1e-4,
              max_iterations: int | None = None, probe: Any = None) -> None:
        self.probe = probe
        if integer_columns is None:
            integer_columns = np.zeros(data.shape[1], dtype=bool)
        if bounds is None and preprocessor_eps <= 0:
            raise ValueError("bounds are not given: pass bounds=(lower, upper) or a preprocessor_eps > 0 to "
                             "estimate them with differential privacy")
        if bounds is None:
            self.epsilon = self.epsilon - preprocessor_eps
        self._transformer = MinMaxTransformer(bounds, preprocessor_eps, integer_columns, probe).fit(data)
        data = self._transformer.transform(data)
        data_dim = data.shape[1]

        self.num_teachers = int(len(data) / 1000)
        if num_teachers is not None:
            self.num_teachers = num_teachers
        self.num_teachers = max(1, self.num_teachers)

        data_partitions = np.array_split(np.arange(len(data)), self.num_teachers)
        tensor_partitions = [torch.from_numpy(data[part].astype("double")).to(self.device) for part in data_partitions]

        self.generator = Generator(self.latent_dim, data_dim, binary=self.binary).double().to(self.device)
        student_disc = self.student_disc = Discriminator(data_dim).double().to(self.device)  # kept: release_model
        teacher_disc = [Discriminator(data_dim).double().to(self.device) for _ in range(self.num_teachers)]

        optimizer_g = torch.optim.Adam(self.generator.parameters(), lr=lr)
        optimizer_s = torch.optim.Adam(student_disc.parameters(), lr=lr)
        optimizer_t = [torch.optim.Adam(teacher_disc[i].parameters(), lr=lr) for i in range(self.num_teachers)]

        criterion = nn.BCELoss()

        noise_multiplier = 1e-3
        if self._lamda_override is not None:  # dpcheck's budget knob; upstream has no way to set it
            noise_multiplier = self._lamda_override
        alphas = torch.tensor([0.0 for _ in range(num_moments)], dtype=torch.float64)
        l_list = 1 + torch.tensor(range(num_moments))
        eps = torch.zeros(1)

        if self.delta is None:
            self.delta = 1 / (data.shape[0] * np.sqrt(data.shape[0]))
        if probe is not None:
            probe.latent("uniform", phase="train")

        iteration = 0
        while eps.item() < self.epsilon and (max_iterations is None or iteration < max_iterations):
            iteration += 1

            eps = min((alphas - math.log(self.delta)) / l_list)

            if eps.item() > self.epsilon:
                if iteration == 1:
                    raise ValueError("Inputted epsilon parameter is too small to create a private dataset. "
                                     "Try increasing epsilon and rerunning.")
                break

            # train teacher discriminators
            for t_2 in range(self.teacher_iters):
                for i in range(self.num_teachers):
                    size = len(tensor_partitions[i])
                    batch = torch.randperm(size)[: self.batch_size]
                    if probe is not None:
                        probe.teacher_data(i, data_partitions[i][batch.numpy()], iteration=iteration)
                    real_data = tensor_partitions[i][batch]

                    optimizer_t[i].zero_grad()

                    # train with real data
                    label_real = torch.full((real_data.shape[0],), 1, dtype=torch.float64, device=self.device)
                    output = teacher_disc[i](real_data)
                    loss_t_real = criterion(output.squeeze(1), label_real)
                    loss_t_real.backward()

                    # train with fake data
                    noise = torch.rand(self.batch_size, self.latent_dim, device=self.device)
                    label_fake = torch.full((self.batch_size,), 0, dtype=torch.float64, device=self.device)
                    fake_data = self.generator(noise.double())
                    output = teacher_disc[i](fake_data.detach())
                    loss_t_fake = criterion(output.squeeze(1), label_fake)
                    loss_t_fake.backward()
                    optimizer_t[i].step()

            # train student discriminator
            for t_3 in range(self.student_iters):
                noise = torch.rand(self.batch_size, self.latent_dim, device=self.device)
                fake_data = self.generator(noise.double()).detach()
                with torch.no_grad():
                    predictions, votes = pate(fake_data, teacher_disc, noise_multiplier, device=self.device,
                                              probe=probe, iteration=iteration)
                output = student_disc(fake_data)

                # update moments accountant
                alphas = alphas + moments_acc(self.num_teachers, votes, noise_multiplier, l_list, device=self.device)
                if probe is not None:
                    eps_now = float(min((alphas - math.log(self.delta)) / l_list))
                    probe.accountant(alphas.numpy().copy(), eps_now, iteration=iteration)

                loss_s = criterion(output.squeeze(1), predictions.to(self.device).squeeze(1))
                optimizer_s.zero_grad()
                loss_s.backward()
                optimizer_s.step()

            # train generator
            label_g = torch.full((self.batch_size,), 1, dtype=torch.float64, device=self.device)
            noise = torch.rand(self.batch_size, self.latent_dim, device=self.device)
            gen_data = self.generator(noise.double())
            output_g = student_disc(gen_data)
            loss_g = criterion(output_g.squeeze(1), label_g)
            optimizer_g.zero_grad()
            loss_g.backward()
            optimizer_g.step()

        self.epsilon_hat = float(min((alphas - math.log(self.delta)) / l_list))
        if probe is not None:
            probe.training_end(iteration, reason="budget" if self.epsilon_hat >= self.epsilon else "max_iterations")

    def generate(self, n: int) -> np.ndarray:
        if self.probe is not None:
            self.probe.latent("normal", phase="generate")
        steps = n // self.batch_size + 1
        data = []
        with torch.no_grad():
            for _ in range(steps):
                noise = torch.randn(self.batch_size, self.latent_dim, device=self.device)
                noise = noise.view(-1, self.latent_dim)
                fake_data = self.generator(noise.double())
                data.append(fake_data.cpu().numpy())
        data = np.concatenate(data, axis=0)[:n]
        return self._transformer.inverse_transform(data)
