"""The moments accountant of the smartnoise fast path: a module's own ``moments_acc`` tabulated per vote count.

``moments_acc(k, votes, λ, l)`` sums, over the votes of one labelled batch, a term that depends on a
vote only through its count ``n1 ∈ {0, …, k}``. :class:`VoteTable` evaluates that term once per count
with the module's own function (upstream's log-less clamp or the twin's Theorem 5) and then charges a
batch as ``counts @ table``: the same terms, summed per count instead of per vote, for every model and
student step at once. The two sums agree up to float64 rounding of the summation order.
"""
from __future__ import annotations

from collections.abc import Callable

import torch


class VoteTable:
    """Increment of α(1..L) for each vote count 0..k, from ``moments_acc(k, votes, lamda, l_list)``."""

    def __init__(self, moments_acc: Callable[..., torch.Tensor], num_teachers: int, lamda: float,
                 l_list: torch.Tensor) -> None:
        if num_teachers < 1:
            raise ValueError(f"num_teachers must be at least 1, got {num_teachers}")
        self.num_teachers = num_teachers
        self.table = torch.stack([
            moments_acc(num_teachers, torch.tensor([[float(v)]], dtype=torch.float64), lamda, l_list)
            for v in range(num_teachers + 1)
        ]).to(torch.float64)  # [k + 1, L]

    def increments(self, votes: torch.Tensor) -> torch.Tensor:
        """votes [..., batch] (integer counts) -> α increment of each batch [..., L]."""
        counts = torch.nn.functional.one_hot(votes.to(torch.int64), self.num_teachers + 1).sum(dim=-2)
        return counts.to(torch.float64) @ self.table
