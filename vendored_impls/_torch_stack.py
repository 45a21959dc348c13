"""K copies of a torch module trained as one (the audit's fast path; not part of any upstream).

:class:`Stacked` holds the parameters of K modules of one architecture stacked along a leading
model axis; the architecture's layers are computed on all slices at once with batched matrix
products (:func:`linear`, :func:`layer_norm`). Per-model losses are summed before ``backward``, so each slice receives the gradient of its own
loss, and ``torch.optim.Adam`` is element-wise: every model takes the steps it would take alone.

:func:`replay` builds each model's modules exactly as the plain path does (same seed, same order
of construction, hence the same initial weights) and returns a per-model ``torch.Generator``
positioned where the plain path's global generator is after construction, so the model's later
``randperm``/``rand`` draws are the plain path's draws.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch


class Stacked:
    """The parameters of K modules of one architecture, stacked, and a batched ``forward(params, x)``
    that computes the architecture's layers on every slice (x: [K, rows, features])."""

    def __init__(self, modules: list[torch.nn.Module],
                 forward: Callable[[dict[str, torch.Tensor], torch.Tensor], torch.Tensor]) -> None:
        per_module = [dict(m.named_parameters()) for m in modules]
        self.params = {n: torch.stack([p[n].detach() for p in per_module]).requires_grad_() for n in per_module[0]}
        self._forward = forward

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        return self._forward(self.params, x)

    def parameters(self) -> list[torch.Tensor]:
        return list(self.params.values())

    def zero_grad(self) -> None:
        for p in self.params.values():
            p.grad = None

    def snapshot(self, j: int) -> dict[str, torch.Tensor]:
        return {n: p[j].detach().clone() for n, p in self.params.items()}

    def restore(self, j: int, snap: dict[str, torch.Tensor]) -> None:
        with torch.no_grad():
            for n, p in self.params.items():
                p[j] = snap[n]


def linear(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None = None) -> torch.Tensor:
    """``nn.Linear`` per model: x [K, rows, in], weight [K, out, in], bias [K, out]."""
    out = torch.bmm(x, weight.transpose(1, 2))
    return out if bias is None else out + bias.unsqueeze(1)


def layer_norm(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float = 1e-5) -> torch.Tensor:
    """``nn.LayerNorm(features)`` per model: normalise the last axis, then the model's own affine."""
    normed = torch.nn.functional.layer_norm(x, x.shape[-1:], eps=eps)
    return normed * weight.unsqueeze(1) + bias.unsqueeze(1)


def replay(seed: int, build: Callable[[], Any]) -> tuple[Any, torch.Generator]:
    """``build()`` under ``torch.manual_seed(seed)`` (the plain path's seeding), and a generator in
    the state the global one has right after it."""
    torch.set_num_threads(1)  # as the plain path's seed_torch: one thread, shared cores
    torch.manual_seed(seed)
    built = build()
    generator = torch.Generator()
    generator.set_state(torch.get_rng_state())
    return built, generator


def bce(output: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """``nn.BCELoss()`` (mean, log clamped at -100) per model: [K, ...] -> [K]."""
    losses = torch.nn.functional.binary_cross_entropy(output, target, reduction="none")
    return losses.reshape(losses.shape[0], -1).mean(dim=1)
