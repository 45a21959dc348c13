"""opacus 1.6.0 (Meta) DP-SGD as audit targets, for the gradient canary (white-box, active).

``opacus:DPSGD`` trains a logistic regression (one ``nn.Linear(features, 1)`` with bias, zero
initialised, ``BCEWithLogitsLoss``) with plain SGD made private as opacus's documentation shows
(https://opacus.ai/api/privacy_engine.html, ``PrivacyEngine.make_private_with_epsilon``)::

    engine = PrivacyEngine(accountant="prv", secure_mode=False)
    model, optimizer, loader = engine.make_private(module=..., optimizer=..., data_loader=...,
                                                   noise_multiplier=sigma, max_grad_norm=C, ...)

where ``sigma = get_noise_multiplier(target_epsilon=ε, target_delta=δ, sample_rate=1/len(loader),
epochs=epochs, accountant="prv")`` — exactly the call ``make_private_with_epsilon`` makes, done
once per (ε, δ, sample rate, epochs) and cached, because the PRV search takes up to seconds and
every shadow run would repeat it. The claimed ε is therefore opacus's own promise: its accountant
says ``epochs`` epochs of Poisson sampling at rate ``1/len(loader)`` with noise ``sigma`` are
(ε, δ)-DP. The release is the trained parameters ``[weight..., bias]``.

Features are the schema's feature columns min-max scaled by their public bounds; the label is 1
above the middle of the label column's public range. On ``worstcase-classification`` the
background rows have all-zero features, so their gradients touch only the bias; the target row
(every feature at its upper bound, label 1) is the gradient canary: its per-example gradient
``(σ(z) − 1)·(x, 1)`` lives on the feature weights nobody else touches and, with the default small
``max_grad_norm`` and learning rate, has norm above C at every step, so opacus clips it to exactly
C. The gradient canary's score (:meth:`DPSGD.canary_projection`) is the sum of the feature weights
the target row touches, signed so that the canary's presence raises it.

Defaults are the worst case for the auditor: one batch (``batch_size`` ≥ the dataset, so opacus's
sample rate is 1 and every step sees the canary: T = ``epochs`` full-batch steps of the Gaussian
mechanism, exactly μ-GDP with μ = √T/σ) and ``loss_reduction="sum"``. Smaller batches switch on
opacus's Poisson sampling (rate 1/len(loader), which must be the same in both worlds) — still a
valid audit against the accountant's ε for that rate, but no longer GDP and looser. With
``loss_reduction="mean"`` opacus divides by ``int(len(dataset)·rate)``, a function of the private
dataset size under add/remove; the default avoids conflating that with the gradient.

``opacus:DPSGD-misaccounted`` is a documented user-level misuse on the same library: the noise
multiplier comes from ``get_noise_multiplier(steps=<the steps really taken>, sample_rate=...)``
told a sample rate 0.1 times the one the loader really uses (e.g. ``batch_size /
len(full_dataset)`` for a loader over a ten times smaller shard), and the user claims the target
ε. opacus's own ``get_epsilon`` after training (the accountant hooked to the real loader) reports
the larger ε actually spent (:meth:`DPSGD.spent_epsilon`).

opacus and torch are imported inside the targets only.
"""
from __future__ import annotations

import functools
from typing import Any

import numpy as np
import pandas as pd

from dpcheck.targets.base import Schema, TargetInfo

DOCS = "https://opacus.ai/api/privacy_engine.html"
SETTINGS: dict[str, Any] = {"epochs": 10, "batch_size": 64, "max_grad_norm": 0.1, "lr": 0.05,
                            "accountant": "prv", "loss_reduction": "sum"}
GRADIENT = "gradient"


def features_and_labels(data: pd.DataFrame, schema: Schema) -> tuple[np.ndarray, np.ndarray]:
    """Feature columns min-max scaled by the public bounds, and binary labels (1 above the middle)."""
    if schema.label is None:
        raise ValueError("opacus targets train a classifier: the schema needs a label column")
    encoded = schema.encode(data)
    lower, upper = schema.bounds()
    span = np.where(upper > lower, upper - lower, 1.0)
    scaled = np.clip((encoded - lower) / span, 0.0, 1.0)
    j = schema.names.index(schema.label)
    return np.delete(scaled, j, axis=1), (scaled[:, j] > 0.5).astype(np.float32)


@functools.lru_cache(maxsize=64)
def noise_multiplier(epsilon: float, delta: float, sample_rate: float, accountant: str, *,
                     epochs: int | None = None, steps: int | None = None) -> float:
    """opacus's own σ for (ε, δ) after ``epochs`` epochs (or ``steps`` steps) at ``sample_rate``
    (with ``epochs``, what ``make_private_with_epsilon`` computes)."""
    from opacus.accountants.utils import get_noise_multiplier

    return float(get_noise_multiplier(target_epsilon=epsilon, target_delta=delta, sample_rate=sample_rate,
                                      epochs=epochs, steps=steps, accountant=accountant))


class DPSGD:
    """``PrivacyEngine().make_private(...)`` with opacus's σ for the claimed (ε, δ); releases the parameters."""

    name = "opacus:DPSGD"
    #: DP-SGD-style: the gradient canary (dpcheck.audit.attacks.dpsgd) applies; the target row is the canary
    gradient_canary = True

    def __init__(self) -> None:
        self.noise_multiplier: float | None = None
        self.sample_rate: float | None = None
        self.engine: Any = None

    def sigma(self, epsilon: float, delta: float, sample_rate: float, epochs: int, accountant: str) -> float:
        """σ as ``make_private_with_epsilon`` picks it: opacus's accountant at the loader's sample rate."""
        return noise_multiplier(epsilon, delta, sample_rate, accountant, epochs=epochs)

    def release(self, data: pd.DataFrame, *, schema: Schema, epsilon: float, delta: float, seed: int,
                epochs: int = SETTINGS["epochs"], batch_size: int = SETTINGS["batch_size"],
                max_grad_norm: float = SETTINGS["max_grad_norm"], lr: float = SETTINGS["lr"],
                accountant: str = SETTINGS["accountant"], loss_reduction: str = SETTINGS["loss_reduction"],
                canary: str | None = None, canary_coord: int | None = None, **ignored: Any) -> np.ndarray:
        if canary not in (None, GRADIENT):
            raise ValueError(f"{self.name}: unknown canary {canary!r}; the only one is {GRADIENT!r} "
                             "(the target row is the canary)")
        if int(epochs) < 1 or int(batch_size) < 1 or not max_grad_norm > 0 or not lr > 0:
            raise ValueError(f"{self.name}: need epochs >= 1, batch_size >= 1, max_grad_norm > 0 and lr > 0, "
                             f"got {epochs}, {batch_size}, {max_grad_norm}, {lr}")
        if loss_reduction not in ("sum", "mean"):
            raise ValueError(f"{self.name}: loss_reduction is 'sum' or 'mean', got {loss_reduction!r}")
        import torch
        from opacus import PrivacyEngine
        from torch.utils.data import DataLoader, TensorDataset

        x, y = features_and_labels(data, schema)
        torch.manual_seed(int(seed) & 0x7FFFFFFF)  # Poisson sampling draws from torch's global generator
        model = torch.nn.Linear(x.shape[1], 1)
        torch.nn.init.zeros_(model.weight)
        torch.nn.init.zeros_(model.bias)
        optimizer = torch.optim.SGD(model.parameters(), lr=float(lr))
        criterion = torch.nn.BCEWithLogitsLoss(reduction=loss_reduction)
        loader = DataLoader(TensorDataset(torch.tensor(x, dtype=torch.float32), torch.tensor(y)),
                            batch_size=int(batch_size))
        self.sample_rate = 1.0 / len(loader)
        sigma = self.sigma(float(epsilon), float(delta), self.sample_rate, int(epochs), str(accountant))
        self.noise_multiplier = sigma
        engine = PrivacyEngine(accountant=str(accountant), secure_mode=False)
        model, optimizer, loader = engine.make_private(
            module=model, optimizer=optimizer, data_loader=loader, criterion=criterion, noise_multiplier=sigma,
            max_grad_norm=float(max_grad_norm), loss_reduction=loss_reduction,
            noise_generator=torch.Generator().manual_seed(int(seed) & 0x7FFFFFFF))
        for _ in range(int(epochs)):
            for xb, yb in loader:
                optimizer.zero_grad()
                logits = model(xb).squeeze(-1)
                criterion(logits, yb).backward()
                optimizer.step()
        self.engine = engine
        module = model._module
        return np.concatenate([module.weight.detach().numpy().ravel(),
                               module.bias.detach().numpy().ravel()]).astype(np.float64)

    def spent_epsilon(self, delta: float) -> float:
        """opacus's ``get_epsilon(δ)`` for the training just run (its accountant, hooked to the real
        loader; not computed during audit runs: at sample rates below 1 it takes seconds)."""
        if self.engine is None:
            raise RuntimeError("call release() first")
        return float(self.engine.get_epsilon(float(delta)))

    @staticmethod
    def canary_projection(spec: Any) -> tuple[list[int], float]:
        """The released coordinates the target row's gradient moves (the feature weights where its
        scaled value is non-zero) and the direction they move in (+1: up; label 1 gives a negative
        gradient (σ(z) − 1)·x, which gradient descent turns into a rise)."""
        from dpcheck.audit.worlds import datasets

        data = datasets.load(spec.dataset, spec.target, spec.data)
        schema = data.get_schema()
        x, y = features_and_labels(schema.decode(data.target.reshape(1, -1)), schema)
        coords = [int(k) for k in np.flatnonzero(x[0] > 0)]
        if not coords:
            raise ValueError(f"the gradient canary on {spec.impl} needs a target row with a non-zero feature "
                             "(its gradient on the weights would be zero)")
        return coords, (1.0 if y[0] == 1 else -1.0)


class MisaccountedDPSGD(DPSGD):
    """The same training, but σ from ``get_noise_multiplier`` told the real number of steps and a
    ``RATE_FACTOR`` times smaller sample rate."""

    name = "opacus:DPSGD-misaccounted"
    RATE_FACTOR = 0.1

    def sigma(self, epsilon: float, delta: float, sample_rate: float, epochs: int, accountant: str) -> float:
        steps = int(round(epochs / sample_rate))  # the optimizer steps the loader really takes
        return noise_multiplier(epsilon, delta, sample_rate * self.RATE_FACTOR, accountant, steps=steps)


def _info(cls: type, doc: str, note: str) -> TargetInfo:
    return TargetInfo(name=cls.name, library="opacus", kind="mechanism", env="main",
                      factory=f"{__name__}:{cls.__name__}", settings=dict(SETTINGS), doc=doc,
                      dataset="worstcase-classification", requires=("opacus", "torch"), note=note)


TARGETS: list[TargetInfo] = [
    _info(DPSGD, f"PrivacyEngine().make_private(noise_multiplier=get_noise_multiplier(ε, δ, 1/len(loader), "
                 f"epochs)) on nn.Linear + BCEWithLogitsLoss, SGD {DOCS}",
          "claimed ε = opacus's PRV accountant for the sample rate really used (1 by default: full batch, "
          "exactly μ-GDP); audit with --attack gradient-canary"),
    _info(MisaccountedDPSGD, f"as opacus:DPSGD, but get_noise_multiplier(sample_rate=0.1 x the rate used) {DOCS}",
          "deliberate user-level misuse: the accountant is told a 10x smaller sample rate than the loader "
          "uses, so the claimed ε is too small (must be caught)"),
]
