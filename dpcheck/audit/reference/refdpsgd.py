"""The reference DP-SGD adapters (``ref-dpsgd`` and its broken twins), below the reference
mechanisms that list them (:mod:`dpcheck.audit.reference.mechanisms`); the accounting, the twins and the
gradient canary they accept are described in :mod:`dpcheck.audit.attacks.dpsgd`, which re-exports them."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from dpcheck.vendored_impls._common import as_numeric_array

GRADIENT = "gradient"
DEFAULTS = {"steps": 10, "clip": 1.0, "lr": 0.1, "canary_coord": 0}


def claimed_mu(epsilon: float, delta: float) -> float:
    """The μ of μ-GDP whose exact δ(ε) is the claimed (ε, δ)."""
    from dpcheck.audit.core.gdp import mu_for

    return mu_for(epsilon, delta)


def noise_multiplier(epsilon: float, delta: float, steps: int) -> float:
    """σ such that T full-batch steps with noise σ·C are (ε, δ)-DP: σ = √T / μ(ε, δ)."""
    return math.sqrt(steps) / claimed_mu(epsilon, delta)


def accountant_epsilon(sigma: float, steps: int, delta: float) -> float:
    """ε of T full-batch DP-SGD steps with noise multiplier σ at δ (μ = √T/σ)."""
    from dpcheck.audit.core.gdp import gaussian_mu, gdp_epsilon

    return gdp_epsilon(gaussian_mu(sigma, compositions=steps), delta)


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * z))


class DPSGD:
    name = "ref-dpsgd"
    framework = "numpy"
    upstream = "dpcheck built-in reference (full-batch DP-SGD logistic regression, exactly mu-GDP)"
    #: DP-SGD-style: accepts the adversary-set gradient of the gradient canary
    gradient_canary = True

    def __init__(self) -> None:
        self.theta: np.ndarray | None = None

    def clip(self, grads: np.ndarray, c: float) -> np.ndarray:
        norms = np.linalg.norm(grads, axis=1, keepdims=True)
        return grads * np.minimum(1.0, c / np.maximum(norms, 1e-300))

    def noise_std(self, sigma: float, c: float, batch: int) -> float:
        return sigma * c

    def fit(self, data: Any, *, epsilon: float, delta: float, seed: int, bounds: Any = None,
            steps: int = DEFAULTS["steps"], clip: float = DEFAULTS["clip"], lr: float = DEFAULTS["lr"],
            canary: str | None = None, canary_present: bool = False, canary_coord: int = DEFAULTS["canary_coord"],
            canary_norm: float | None = None, probe: Any = None, delay: float = 0.0, **ignored: Any) -> "DPSGD":
        x, _ = as_numeric_array(data)
        if bounds is None:
            raise ValueError(f"{self.name} needs the public domain as bounds=(lower, upper)")
        if int(steps) < 1 or not clip > 0 or not lr > 0:
            raise ValueError(f"{self.name}: need steps >= 1, clip > 0 and lr > 0, got {steps}, {clip}, {lr}")
        if canary not in (None, GRADIENT):
            raise ValueError(f"{self.name}: unknown canary {canary!r}; the only one is {GRADIENT!r}")
        lower, upper = (np.broadcast_to(np.asarray(b, dtype=float), (x.shape[1],)) for b in bounds)
        span = np.where(upper > lower, upper - lower, 1.0)
        scaled = np.clip((x - lower) / span, 0.0, 1.0)
        features = np.column_stack([scaled[:, :-1], np.ones(len(x))])
        labels = (scaled[:, -1] > 0.5).astype(float)
        dim = features.shape[1]
        present = canary == GRADIENT and bool(canary_present)
        if canary == GRADIENT and not 0 <= int(canary_coord) < dim:
            raise ValueError(f"{self.name}: canary_coord must be in [0, {dim}) (the parameters), got {canary_coord}")
        canary_grad = np.zeros((1, dim))
        if present:
            canary_grad[0, int(canary_coord)] = float(clip if canary_norm is None else canary_norm)
        sigma = noise_multiplier(epsilon, delta, int(steps))
        batch = len(features) + int(present)
        rng = np.random.default_rng(seed)
        theta = np.zeros(dim)
        for _ in range(int(steps)):
            grads = (_sigmoid(features @ theta) - labels)[:, None] * features
            if present:
                grads = np.vstack([grads, canary_grad])
            total = self.clip(grads, float(clip)).sum(axis=0)
            theta = theta - float(lr) * (total + rng.normal(0.0, self.noise_std(sigma, float(clip), batch), dim))
        self.theta = theta
        return self

    def sample(self, n: int) -> np.ndarray:
        """The released parameters, one row (the run's array; ``n`` is ignored)."""
        if self.theta is None:
            raise RuntimeError("call fit() before sample()")
        return self.theta.reshape(1, -1).copy()

    def release_model(self) -> dict[str, Any]:
        if self.theta is None:
            raise RuntimeError("call fit() before release_model()")
        return {"params": self.theta.copy()}


class MeanNoiseDPSGD(DPSGD):
    name = "ref-dpsgd-mean-noise"
    upstream = "dpcheck built-in reference (deliberately broken: noise sigma*C/n, scaled for the mean gradient)"

    def noise_std(self, sigma: float, c: float, batch: int) -> float:
        return sigma * c / max(batch, 1)


class UnclippedDPSGD(DPSGD):
    name = "ref-dpsgd-unclipped"
    upstream = "dpcheck built-in reference (deliberately broken: per-example gradients are not clipped)"

    def clip(self, grads: np.ndarray, c: float) -> np.ndarray:
        return grads


ADAPTERS = (DPSGD, MeanNoiseDPSGD, UnclippedDPSGD)
