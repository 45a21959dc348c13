"""The smartnoise fast path's accountant: the module's own moments_acc, tabulated per vote count."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from dpcheck.vendored_impls.smartnoise import fixed_privacy_utils, upstream_privacy_utils
from dpcheck.vendored_impls.smartnoise.fast_accountant import VoteTable


@pytest.mark.parametrize("utils", [upstream_privacy_utils, fixed_privacy_utils], ids=["upstream", "fixed"])
@pytest.mark.parametrize("k, lamda", [(2, 1e-3), (5, 1e-3), (5, 0.3), (11, 0.05)])
def test_vote_table_charges_what_moments_acc_charges(utils, k: int, lamda: float) -> None:
    l_list = 1 + torch.tensor(range(100))
    table = VoteTable(utils.moments_acc, k, lamda, l_list)
    rng = np.random.default_rng(7)
    votes = torch.from_numpy(rng.integers(0, k + 1, size=(3, 4, 64)))
    got = table.increments(votes)
    assert got.shape == (3, 4, 100) and got.dtype == torch.float64
    for a in range(3):
        for b in range(4):
            want = utils.moments_acc(k, votes[a, b].to(torch.float64), lamda, l_list)
            np.testing.assert_allclose(got[a, b].numpy(), want.numpy(), rtol=1e-12, atol=0)


def test_vote_table_tells_the_accountants_apart() -> None:
    l_list = 1 + torch.tensor(range(100))
    votes = torch.tensor([[0, 11, 11, 0, 1]])  # clear majorities: the data-dependent bound applies
    upstream = VoteTable(upstream_privacy_utils.moments_acc, 11, 0.3, l_list).increments(votes)
    fixed = VoteTable(fixed_privacy_utils.moments_acc, 11, 0.3, l_list).increments(votes)
    assert not torch.allclose(upstream, fixed)


def test_vote_table_refuses_no_teachers() -> None:
    with pytest.raises(ValueError, match="num_teachers"):
        VoteTable(upstream_privacy_utils.moments_acc, 0, 1e-3, 1 + torch.tensor(range(10)))
