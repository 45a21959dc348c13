"""BorealisAI private-data-generation ``models/pate_gan.py`` rebuilt bug for bug (PyTorch).

k teacher discriminators on disjoint contiguous slices, Laplace(1/λ) vote noise, a student and a
budget-driven loop; the accountant is ``utils/helper.py``'s ``moments_acc`` (log missing). In
conditional mode the generator is conditioned on labels drawn with the training class ratios.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import nn

from .upstream_helper import moments_acc, pate


@dataclass
class Hyperparams:
    batch_size: int = 64
    num_teacher_iters: int = 5
    num_student_iters: int = 5
    num_moments: int = 100
    lap_scale: float = 1e-4
    lr: float = 1e-4
    max_iterations: int = 10_000


class Generator(nn.Module):
    def __init__(self, latent_size: int, output_size: int, conditional: bool = False) -> None:
        super().__init__()
        z = latent_size + 1 if conditional else latent_size
        self.main = nn.Sequential(
            nn.Linear(z, 2 * output_size), nn.LeakyReLU(0.2),
            nn.Linear(2 * output_size, output_size), nn.Sigmoid(),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.main(x)


class Discriminator(nn.Module):
    def __init__(self, input_size: int) -> None:
        super().__init__()
        hidden = max(1, input_size // 2)
        self.main = nn.Sequential(nn.Linear(input_size, hidden), nn.LeakyReLU(0.2), nn.Linear(hidden, 1), nn.Sigmoid())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.main(x)


class PATE_GAN:
    def __init__(self, input_dim: int, z_dim: int, num_teachers: int, target_epsilon: float, target_delta: float,
                 conditional: bool = False, probe: Any = None) -> None:
        self.input_dim = input_dim
        self.z_dim = z_dim
        self.num_teachers = num_teachers
        self.target_epsilon = target_epsilon
        self.target_delta = target_delta
        self.conditional = conditional
        self.probe = probe
        disc_dim = input_dim + 1 if conditional else input_dim
        self.generator = Generator(z_dim, input_dim, conditional)
        self.student_disc = Discriminator(disc_dim)
        self.teacher_disc = [Discriminator(disc_dim) for _ in range(num_teachers)]

    def _latent(self, n: int, categories: torch.Tensor | None) -> torch.Tensor:
        z = torch.rand(n, self.z_dim)
        if self.conditional:
            z = torch.cat([z, categories.unsqueeze(1)], dim=1)
        return z

    def _with(self, x: torch.Tensor, categories: torch.Tensor | None) -> torch.Tensor:
        return torch.cat([x, categories.unsqueeze(1)], dim=1) if self.conditional else x

    def train(self, x_train: np.ndarray, y_train: np.ndarray, hyperparams: Hyperparams) -> float:
        batch_size = hyperparams.batch_size
        num_teacher_iters = hyperparams.num_teacher_iters
        num_student_iters = hyperparams.num_student_iters
        num_moments = hyperparams.num_moments
        lap_scale = hyperparams.lap_scale
        probe = self.probe

        class_ratios = None
        if self.conditional:
            class_ratios = torch.from_numpy(np.bincount(y_train.astype(np.int64)) / len(y_train))
        self.class_ratios = class_ratios

        alpha = torch.tensor([0.0 for _ in range(num_moments)], dtype=torch.float64)
        l_list = 1 + torch.tensor(range(num_moments))

        x_train = torch.from_numpy(np.asarray(x_train, dtype=np.float32))
        y_train = torch.from_numpy(np.asarray(y_train, dtype=np.float32))
        # one shuffled loader per teacher over its contiguous slice of the data
        data_size = len(x_train) // self.num_teachers
        slices = []
        for i in range(self.num_teachers):
            start_id = i * data_size
            end_id = (i + 1) * data_size if i != self.num_teachers - 1 else len(x_train)
            slices.append((start_id, end_id))

        optimizer_g = torch.optim.Adam(self.generator.parameters(), lr=hyperparams.lr)
        optimizer_s = torch.optim.Adam(self.student_disc.parameters(), lr=hyperparams.lr)
        optimizer_t = [torch.optim.Adam(t.parameters(), lr=hyperparams.lr) for t in self.teacher_disc]
        criterion = nn.BCELoss()
        if probe is not None:
            probe.latent("uniform", phase="train")

        epsilon = 0.0
        iteration = 0
        while self.target_epsilon > epsilon and iteration < hyperparams.max_iterations:
            iteration += 1
            # train the teacher discriminators
            for t_2 in range(num_teacher_iters):
                for i in range(self.num_teachers):
                    start_id, end_id = slices[i]
                    idx = start_id + torch.randperm(end_id - start_id)[:batch_size]
                    if probe is not None:
                        probe.teacher_data(i, idx.numpy(), iteration=iteration)
                    inputs, categories = x_train[idx], y_train[idx]
                    z = self._latent(inputs.size(0), categories)
                    fake = self.generator(z)

                    optimizer_t[i].zero_grad()
                    output_real = self.teacher_disc[i](self._with(inputs, categories))
                    loss_real = criterion(output_real, torch.ones_like(output_real))
                    output_fake = self.teacher_disc[i](self._with(fake.detach(), categories))
                    loss_fake = criterion(output_fake, torch.zeros_like(output_fake))
                    (loss_real + loss_fake).backward()
                    optimizer_t[i].step()

            # train the student discriminator
            for t_3 in range(num_student_iters):
                categories = (torch.multinomial(class_ratios, batch_size, replacement=True).float()
                              if self.conditional else None)
                fake = self.generator(self._latent(batch_size, categories)).detach()
                fake_in = self._with(fake, categories)
                with torch.no_grad():
                    predictions, votes = pate(fake_in, self.teacher_disc, lap_scale, probe, iteration)
                output = self.student_disc(fake_in)

                # update moments accountant
                alpha = alpha + moments_acc(self.num_teachers, votes, lap_scale, l_list)
                if probe is not None:
                    eps_now = float(torch.min((alpha + np.log(1 / self.target_delta)) / l_list))
                    probe.accountant(alpha.numpy().copy(), eps_now, iteration=iteration)

                loss_s = criterion(output, predictions.float())
                optimizer_s.zero_grad()
                loss_s.backward()
                optimizer_s.step()

            # train the generator
            categories = (torch.multinomial(class_ratios, batch_size, replacement=True).float()
                          if self.conditional else None)
            gen_data = self._with(self.generator(self._latent(batch_size, categories)), categories)
            output_g = self.student_disc(gen_data)
            loss_g = criterion(output_g, torch.ones_like(output_g))
            optimizer_g.zero_grad()
            loss_g.backward()
            optimizer_g.step()

            epsilon = float(torch.min((alpha + np.log(1 / self.target_delta)) / l_list))

        if probe is not None:
            probe.training_end(iteration, reason="budget" if epsilon >= self.target_epsilon else "max_iterations")
        return epsilon

    def generate(self, num_rows: int, class_ratios: torch.Tensor | None = None) -> tuple[np.ndarray, np.ndarray | None]:
        categories = None
        if self.conditional:
            if self.probe is not None:
                self.probe.generation_labels(class_ratios.numpy().copy(), source="training")
            categories = torch.multinomial(class_ratios, num_rows, replacement=True).float()
        if self.probe is not None:
            self.probe.latent("uniform", phase="generate")
        with torch.no_grad():
            synthetic = self.generator(self._latent(num_rows, categories)).numpy()
        return synthetic, None if categories is None else categories.numpy()
