"""Two DP functions to audit with `dpcheck mechanism` (docs/byo.md): a correct one and a buggy one."""
import numpy as np


def noisy_sum(x, epsilon, rng, n=1):
    """The sum of counts (sensitivity 1 under l1 neighbours) plus Laplace(1/epsilon) noise."""
    return np.sum(x) + rng.laplace(0.0, 1.0 / epsilon, size=n)


def noisy_sum_buggy(x, epsilon, rng, n=1):
    """The same release with the scale written as epsilon: a violation for any epsilon < 1."""
    return np.sum(x) + rng.laplace(0.0, epsilon, size=n)
