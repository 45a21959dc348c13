"""A reference DP-SGD target and the gradient canary (an active white-box attack).

``ref-dpsgd`` (:class:`DPSGD`) trains a logistic regression with full-batch DP-SGD and releases
its final parameters: features are the dataset's columns but the last, min-max scaled by the
public bounds, plus a constant 1 (the bias); the label is the last column, 1 above the middle of
its public range. Each of ``steps`` (T) steps clips every per-example gradient to ℓ2 norm ``clip``
(C), sums them, adds N(0, σ²C² I) and moves θ ← θ − lr · (noisy sum), from θ = 0.

Accounting: adding or removing one example moves each noisy sum by at most C, so each step is a
Gaussian mechanism with μ = 1/σ and T full-batch steps compose to exactly μ-GDP with
μ = √T/σ (Dong, Roth & Su 2019). σ is set so that this μ gives the claimed (ε, δ) through μ-GDP's
exact δ(ε) (:func:`dpcheck.audit.gdp.gdp_delta`).

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

import math
from typing import Any

import numpy as np

from dpcheck.vendored_impls._common import as_numeric_array

GRADIENT = "gradient"
ATTACK = "gradient-canary"
DEFAULTS = {"steps": 10, "clip": 1.0, "lr": 0.1, "canary_coord": 0}
#: what a DP-SGD-style adapter must offer for the gradient canary
NEEDS = ("per-example gradients with clipping and Gaussian noise", "fit(..., canary='gradient', canary_present=bool)")


def claimed_mu(epsilon: float, delta: float) -> float:
    """The μ of μ-GDP whose exact δ(ε) is the claimed (ε, δ)."""
    from dpcheck.targets.exact_targets import mu_for

    return mu_for(epsilon, delta)


def noise_multiplier(epsilon: float, delta: float, steps: int) -> float:
    """σ such that T full-batch steps with noise σ·C are (ε, δ)-DP: σ = √T / μ(ε, δ)."""
    return math.sqrt(steps) / claimed_mu(epsilon, delta)


def accountant_epsilon(sigma: float, steps: int, delta: float) -> float:
    """ε of T full-batch DP-SGD steps with noise multiplier σ at δ (μ = √T/σ)."""
    from dpcheck.audit.gdp import gaussian_mu, gdp_epsilon

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
    from dpcheck.audit.mechanisms import REFERENCE

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
    from dpcheck.audit.crafting import is_craft

    if is_craft(spec.target):
        raise ValueError("the gradient canary is the target (an adversary-set gradient): it cannot be combined "
                         "with a crafted target record (--target craft)")
    if spec.attack == ATTACK and spec.hyperparams.get("canary") != GRADIENT:
        raise ValueError(f"--attack {ATTACK} reads runs trained with the canary: set the hyperparameter "
                         f"canary={GRADIENT} (the command line does so)")
    coord = spec.hyperparams.get("canary_coord", DEFAULTS["canary_coord"])
    from dpcheck.audit import datasets

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
    from dpcheck.audit.spec import WORLD_IN

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
