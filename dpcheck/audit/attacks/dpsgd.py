"""A reference DP-SGD target and the gradient canary (an active white-box attack).

``ref-dpsgd`` (:class:`DPSGD`) trains a logistic regression with full-batch DP-SGD and releases
its final parameters: features are the dataset's columns but the last, min-max scaled by the
public bounds, plus a constant 1 (the bias); the label is the last column, 1 above the middle of
its public range. Each of ``steps`` (T) steps clips every per-example gradient to ℓ2 norm ``clip``
(C), sums them, adds N(0, σ²C² I) and moves θ ← θ − lr · (noisy sum), from θ = 0.

Accounting: adding or removing one example moves each noisy sum by at most C, so each step is a
Gaussian mechanism with μ = 1/σ and T full-batch steps compose to exactly μ-GDP with
μ = √T/σ (Dong, Roth & Su 2019). σ is set so that this μ gives the claimed (ε, δ) through μ-GDP's
exact δ(ε) (:func:`dpcheck.audit.core.gdp.gdp_delta`).

Broken twins: ``ref-dpsgd-mean-noise`` (:class:`MeanNoiseDPSGD`) draws the noise for the *mean*
gradient, N(0, (σC/n)²) for a batch of n examples, so it is ≈ n·μ-GDP; ``ref-dpsgd-unclipped``
(:class:`UnclippedDPSGD`) skips the clipping, so one example's influence is unbounded.

Gradient canary (``--attack gradient-canary``, which sets the hyperparameter ``canary=gradient``):
the adversary controls the target's gradient. The target is not a row: world D′ is the dataset's
D′ and world D is D′ plus an example whose gradient at every step is ``canary_norm``·e_k (a
"Dirac" canary on coordinate k = ``canary_coord``; ``canary_norm`` defaults to C), passed through
the implementation's own clipping like every other example. The attack's score is the released
parameter on that coordinate, negated (gradient descent moves it down by lr·C per step when the
canary is present), thresholded; nothing is trained. On a coordinate no data gradient touches,
this score is exactly N(0, ·) versus N(lr·T·C, ·) with the same spread: the optimal test, tight
against μ.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from dpcheck.audit.reference.refdpsgd import (  # noqa: F401 - re-exported: the reference DP-SGD adapters
    ADAPTERS, DEFAULTS, DPSGD, GRADIENT, MeanNoiseDPSGD, UnclippedDPSGD, _sigmoid, accountant_epsilon, claimed_mu,
    noise_multiplier,
)

ATTACK = "gradient-canary"
#: what a DP-SGD-style adapter must offer for the gradient canary
NEEDS = ("per-example gradients with clipping and Gaussian noise", "fit(..., canary='gradient', canary_present=bool)")


def _target_class(impl: str) -> Any:
    """The factory class of a real-library target (main env), None for anything else."""
    if ":" not in impl:
        return None
    from dpcheck.targets import registry
    from dpcheck.targets.base import factory_class

    if not registry.is_target(impl):
        return None
    info = registry.get(impl)
    return factory_class(info) if info.env == "main" else None


def is_dpsgd_style(impl: str) -> bool:
    """Whether ``impl`` names an adapter (or a real-library target, e.g. ``opacus:DPSGD``) that
    accepts the gradient canary."""
    from dpcheck.audit.reference.mechanisms import REFERENCE

    return bool(getattr(REFERENCE.get(impl) or _target_class(impl), "gradient_canary", False))


def uses_gradient_canary(spec: Any) -> bool:
    return spec.attack == ATTACK or spec.hyperparams.get("canary") == GRADIENT


def check_gradient_canary(spec: Any) -> None:
    """Refuse, before any run, a gradient canary the target cannot take, naming what is missing."""
    if not uses_gradient_canary(spec):
        return
    if not is_dpsgd_style(spec.impl):
        raise ValueError(f"the gradient canary needs a DP-SGD-style target: {spec.impl} lacks "
                         f"{NEEDS[0]} exposed as {NEEDS[1]} (built in: "
                         f"{', '.join(a.name for a in ADAPTERS)}; real libraries: opacus:DPSGD)")
    from dpcheck.audit.core.canary import is_craft

    if is_craft(spec.target):
        raise ValueError("the gradient canary is the target (an adversary-set gradient): it cannot be combined "
                         "with a crafted target record (--target craft)")
    if spec.attack == ATTACK and spec.hyperparams.get("canary") != GRADIENT:
        raise ValueError(f"--attack {ATTACK} reads runs trained with the canary: set the hyperparameter "
                         f"canary={GRADIENT} (the command line does so)")
    coord = spec.hyperparams.get("canary_coord", DEFAULTS["canary_coord"])
    from dpcheck.audit.worlds import datasets

    if spec.dataset == "cervical" and spec.target is None:  # the target is chosen later; the columns are known
        dim = len(datasets.cervical_clean()[2])
    else:
        dim = len(datasets.load(spec.dataset, spec.target, spec.data).columns)
    if not isinstance(coord, int) or not 0 <= coord < dim:
        raise ValueError(f"canary_coord must be an integer in [0, {dim}) (the parameters of {spec.impl} on "
                         f"{spec.dataset}), got {coord!r}")
    target = _target_class(spec.impl)
    if hasattr(target, "canary_projection") and not (spec.dataset == "cervical" and spec.target is None):
        target.canary_projection(spec)  # a real-library target's canary row: refuses e.g. data without a label


def world_input(data: Any, world: int, hyperparams: dict[str, Any]) -> tuple[np.ndarray, dict[str, Any]]:
    """What one run trains on: with the gradient canary, D′ in both worlds and the canary present in
    world D only (the target is the adversary's gradient, not a row); otherwise the world's rows."""
    from dpcheck.audit.core.spec import WORLD_IN

    if hyperparams.get("canary") != GRADIENT:
        return data.world(world), hyperparams
    return data.without_target, {**hyperparams, "canary_present": world == WORLD_IN}


class ProjectionScore:
    """The gradient canary's test: the score is minus the released parameter on the canary's
    coordinate; nothing is fitted. ``column`` indexes the release-attack feature row
    ([failed?, length, θ...]). A real-library target whose canary is a row moves several
    coordinates: ``column`` is then their list, and the score is ``-sign`` × their sum (``sign``
    1: the canary moves them down, as for ``ref-dpsgd``; −1: up)."""

    classes_ = np.array([0, 1])

    def __init__(self, column: int | list[int], sign: float = 1.0) -> None:
        self.columns = [column] if isinstance(column, int) else list(column)
        self.sign = sign

    def fit(self, x: np.ndarray, y: np.ndarray) -> "ProjectionScore":
        return self

    def predict_proba(self, x: np.ndarray) -> np.ndarray:
        score = -self.sign * np.asarray(x, dtype=float)[:, self.columns].sum(axis=1)
        return np.column_stack([-score, score])


RELEASE_PREFIX = 2  # release features: [failed?, length] before the released values


def model_for(spec: Any) -> ProjectionScore | None:
    """The gradient canary's scorer for ``spec``, None for every other attack."""
    if spec.attack != ATTACK:
        return None
    target = _target_class(spec.impl)
    if target is not None and hasattr(target, "canary_projection"):  # the canary is the target row
        coords, direction = target.canary_projection(spec)
        return ProjectionScore([RELEASE_PREFIX + k for k in coords], sign=-direction)
    return ProjectionScore(RELEASE_PREFIX + int(spec.hyperparams.get("canary_coord", DEFAULTS["canary_coord"])))
