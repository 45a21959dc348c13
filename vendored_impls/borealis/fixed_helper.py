"""Corrected twin of ``upstream_helper.py`` (borealis ``utils/helper.py``): ``moments_acc`` takes the
``log`` of the data-dependent term before clamping it at the data-independent bound (Theorem 5)."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import torch


def pate(data: torch.Tensor, teachers: Sequence[torch.nn.Module], lap_scale: float, probe: Any = None,
         iteration: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    num_teachers = len(teachers)
    labels = torch.zeros(num_teachers, data.shape[0], dtype=torch.int64)
    for i in range(num_teachers):
        output = teachers[i](data)
        pred = (output > 0.5).squeeze(1)
        labels[i] = pred
    votes = torch.sum(labels, dim=0).unsqueeze(1).to(torch.float64)
    noise = torch.from_numpy(np.random.laplace(loc=0, scale=1 / lap_scale, size=votes.size()))
    noisy_votes = votes + noise
    noisy_labels = (noisy_votes > num_teachers / 2).to(torch.float64)
    if probe is not None:
        n1 = votes.squeeze(1).numpy()
        probe.votes(num_teachers - n1, n1, iteration=iteration)
        probe.noise(noise.squeeze(1).numpy(), distribution="laplace", scale=1 / lap_scale, applied_to="votes",
                    iteration=iteration)
    return noisy_labels, votes


def moments_acc(num_teachers: Any, votes: torch.Tensor, lap_scale: float, l_list: torch.Tensor) -> torch.Tensor:
    votes = votes.reshape(1, -1).to(torch.float64)
    log_q = (torch.log(2 + lap_scale * torch.abs(2 * votes - num_teachers)) - np.log(4.0)
             - lap_scale * torch.abs(2 * votes - num_teachers))
    q = torch.exp(log_q)
    q_e2l = torch.exp(log_q + 2 * lap_scale)
    # PATE 2017, Theorem 2: the data-dependent bound needs q < (e^{2λ}-1)/(e^{4λ}-1) = 1/(e^{2λ}+1)
    # (which keeps 1 - q * exp(2 * lap_scale) > 0); elsewhere only the data-independent bound holds
    valid = log_q < -np.logaddexp(0.0, 2 * lap_scale)
    q_e2l = torch.where(valid, q_e2l, torch.zeros_like(q_e2l))

    l_val = l_list.to(torch.float64).unsqueeze(1)  # every order at once, one row per l
    a = 2 * lap_scale ** 2 * l_val * (l_val + 1)
    # log(t_one + t_two) in log space, so that it stays exact in float64 when q -> 0
    log_t_one = torch.log1p(-q) + l_val * (torch.log1p(-q) - torch.log1p(-q_e2l))
    t_two = torch.exp(log_q + 2 * lap_scale * l_val)
    log_t = torch.log1p(torch.expm1(log_t_one) + t_two)
    log_t = torch.where(valid, log_t, torch.full_like(log_t, float("inf")))
    alpha = torch.clamp(log_t, max=a).sum(dim=1)

    return alpha
