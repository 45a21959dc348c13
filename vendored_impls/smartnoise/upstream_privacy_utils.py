"""smartnoise-synth ``snsynth/pytorch/nn/privacy_utils.py`` rebuilt bug for bug: PATE vote
aggregation with Laplace(1/λ) noise, and the moments accountant whose data-dependent term is
clamped WITHOUT the ``log``."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import torch


def pate(data: torch.Tensor, teachers: Sequence[torch.nn.Module], lap_scale: float, device: str = "cpu",
         probe: Any = None, iteration: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    num_teachers = len(teachers)
    labels = torch.zeros((num_teachers, data.shape[0]), dtype=torch.int64, device=device)
    for i in range(num_teachers):
        output = teachers[i](data)
        pred = (output > 0.5).squeeze(1).to(torch.int64)
        labels[i] = pred

    votes = torch.sum(labels, dim=0).unsqueeze(1).to(torch.float64).to(device)
    noise = torch.from_numpy(np.random.laplace(loc=0, scale=1 / lap_scale, size=votes.size())).to(device)
    noisy_votes = votes + noise
    noisy_labels = (noisy_votes > num_teachers / 2).to(torch.float64).to(device)
    if probe is not None:
        n1 = votes.squeeze(1).cpu().numpy()
        probe.votes(num_teachers - n1, n1, iteration=iteration)
        probe.noise(noise.squeeze(1).cpu().numpy(), distribution="laplace", scale=1 / lap_scale,
                    applied_to="votes", iteration=iteration)
    return noisy_labels, votes


def moments_acc(num_teachers: Any, votes: torch.Tensor, lap_scale: float, l_list: torch.Tensor,
                device: str = "cpu") -> torch.Tensor:
    votes = votes.reshape(1, -1)
    q = (2 + lap_scale * torch.abs(2 * votes - num_teachers)) / (
        4 * torch.exp(lap_scale * torch.abs(2 * votes - num_teachers))
    ).to(device)

    l_val = l_list.to(torch.float64).unsqueeze(1).to(device)  # every order at once, one row per l
    a = 2 * lap_scale ** 2 * l_val * (l_val + 1)
    t_one = (1 - q) * torch.pow((1 - q) / (1 - q * np.exp(2 * lap_scale)), l_val)
    t_two = q * torch.exp(2 * lap_scale * l_val)
    t = t_one + t_two
    alpha = torch.clamp(t, max=a).sum(dim=1)

    return alpha.to(device)
