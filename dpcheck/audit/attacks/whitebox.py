"""Passive white-box attacks: the adversary also sees the model an implementation releases.

An adapter MAY implement ``release_model()``: after ``fit()`` it returns what it releases besides
synthetic data, as a :class:`ReleasedModel` (or a mapping with the same keys):

* ``params`` — every released number as one flat vector (or a mapping of named arrays, flattened
  in order): generator and critic weights, noisy measurements, conditional probabilities, the
  normalisation the model applies;
* ``critic`` — optional ``critic(x) -> scores``: the released discriminator/critic (or, for a
  density model, its probability) evaluated on records ``x`` given in input units, one score per
  row; the model applies its own preprocessing.

Models are not stored: the worker computes the white-box feature row right after ``fit()``
(:func:`model_features`) and the store keeps that row as the run's array. Such runs have their own
generation (field ``"release": "model"``, set by :meth:`AuditSpec.generation`), so they are never mixed with
runs that store synthetic data; one stored run serves both white-box attacks.

* ``logan`` (Hayes et al., LOGAN, white-box): the critic's score on the target, one number per
  run; its direction (higher = member, or lower) is fixed on the training part, then a threshold
  is chosen on the validation part, as for every attack.
* ``model-params``: the released parameter vector (preceded by its length) as features of the
  random forest of the black-box attacks.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from dpcheck.audit.core.released import ReleasedModel
from dpcheck.audit.core.spec import WHITEBOX_ATTACKS, WORLDS

BLACK_BOX, WHITE_BOX_PASSIVE = "black-box", "white-box (passive)"
WHITE_BOX_ACTIVE_GRADIENT, ACTIVE_CRAFTED = "white-box (active): gradient canary", "active: crafted canary"
#: clip of released values, as for mechanism releases (a forest cannot take inf)
LIMIT = 1e12


def threat_model_of(spec: Any) -> str:
    """The threat model an audit's result belongs to, from its attack (and the active canaries of
    dpcheck.audit.attacks.dpsgd and dpcheck.audit.runners.crafting)."""
    from dpcheck.audit.attacks.dpsgd import uses_gradient_canary
    from dpcheck.audit.core.canary import is_craft

    if uses_gradient_canary(spec):
        return WHITE_BOX_ACTIVE_GRADIENT
    base = WHITE_BOX_PASSIVE if spec.attack in WHITEBOX_ATTACKS else BLACK_BOX
    return f"{ACTIVE_CRAFTED} ({base} attack)" if is_craft(spec.target) else base


def check_supported(impl: str, attack: str) -> None:
    """Refuse, before any run, a white-box attack on an implementation that releases no model."""
    if attack not in WHITEBOX_ATTACKS:
        return
    from dpcheck.targets.registry import is_target

    lacks = (f"--attack {attack} is a white-box attack: it reads the model an implementation releases "
             "through release_model(), but")
    if is_target(impl):
        raise ValueError(f"{lacks} {impl} is a real-library target, whose adapter has no release_model() "
                         "(mechanism targets release their model as the audited array: use --attack release)")
    from dpcheck.audit.reference.mechanisms import get_impl

    adapter = get_impl(impl)
    if not callable(getattr(adapter, "release_model", None)):
        raise ValueError(f"{lacks} the adapter of {impl} ({type(adapter).__name__}) has no release_model() "
                         "method; add one (docs/byo.md) or use a black-box attack")


def flat_parameters(module: Any) -> np.ndarray:
    """Every parameter of a torch module, in registration order, as one float64 vector."""
    return np.concatenate([p.detach().numpy().ravel() for p in module.parameters()]).astype(np.float64)


def as_released(value: Any, name: str = "release_model()") -> ReleasedModel:
    """A :class:`ReleasedModel` from what an adapter returned (the dataclass or a mapping)."""
    if isinstance(value, ReleasedModel):
        params, critic = value.params, value.critic
    elif isinstance(value, Mapping) and "params" in value:
        params, critic = value["params"], value.get("critic")
    else:
        raise TypeError(f"{name} must return a ReleasedModel or a mapping with 'params' (and optionally "
                        f"'critic'), got {type(value).__name__}")
    if isinstance(params, Mapping):
        params = [np.ravel(np.asarray(v, dtype=np.float64)) for v in params.values()]
        flat = np.concatenate(params) if params else np.zeros(0)
    else:
        flat = np.ravel(np.asarray(params, dtype=np.float64))
    if critic is not None and not callable(critic):
        raise TypeError(f"{name}: critic must be callable, got {type(critic).__name__}")
    return ReleasedModel(flat, critic)


def _clean(values: np.ndarray) -> np.ndarray:
    return np.clip(np.nan_to_num(np.asarray(values, dtype=np.float64), nan=0.0, posinf=LIMIT, neginf=-LIMIT),
                   -LIMIT, LIMIT)


def model_features(adapter: Any, target: np.ndarray) -> np.ndarray:
    """The stored row of one white-box run: [critic score on the target (NaN: no critic), params...]."""
    release_model = getattr(adapter, "release_model", None)
    if not callable(release_model):
        raise TypeError(f"{type(adapter).__name__} has no release_model()")
    released = as_released(release_model())
    score = np.nan
    if released.critic is not None:
        scores = np.ravel(np.asarray(released.critic(np.asarray(target, np.float64).reshape(1, -1)), np.float64))
        if scores.size != 1:
            raise ValueError(f"the released critic returned {scores.size} scores for one record")
        score = float(_clean(scores)[0])
    return np.concatenate([[score], _clean(released.params)]).reshape(1, -1)


def features_of(attack: str, records: list, runs: int) -> dict[int, np.ndarray]:
    """Per world, one feature row per run (ordered by run index) for a white-box attack."""
    chosen = sorted((r for r in records if r.index < runs), key=lambda r: r.index)
    rows: dict[int, list[np.ndarray]] = {w: [] for w in WORLDS}
    width = max((int(r.synth.size) - 1 for r in chosen), default=0)
    for r in chosen:
        flat = np.ravel(r.synth)
        if attack == "logan":
            if flat.size == 0 or np.isnan(flat[0]):
                raise ValueError("--attack logan needs a critic: this implementation's release_model() returns "
                                 "parameters only (use --attack model-params)")
            rows[r.world].append(flat[:1])
        else:
            params = np.zeros(width)
            params[: flat.size - 1] = flat[1:]
            rows[r.world].append(np.concatenate([[float(flat.size - 1)], params]))
    for w in WORLDS:
        if len(rows[w]) != runs:
            raise ValueError(f"expected {runs} stored white-box runs in world {w}, found {len(rows[w])}")
    return {w: np.vstack(f) for w, f in rows.items()}


class OrientedScore:
    """LOGAN's decision: the critic score itself; whether members score higher or lower is read off
    the training part (the means of the two worlds), nothing else is fitted."""

    classes_ = np.array([0, 1])

    def __init__(self) -> None:
        self.sign = 1.0

    def fit(self, x: np.ndarray, y: np.ndarray) -> "OrientedScore":
        score = np.asarray(x, dtype=float)[:, 0]
        y = np.asarray(y).astype(bool)
        if y.any() and (~y).any():
            self.sign = -1.0 if score[y].mean() < score[~y].mean() else 1.0
        return self

    def predict_proba(self, x: np.ndarray) -> np.ndarray:
        score = self.sign * np.asarray(x, dtype=float)[:, 0]
        return np.column_stack([-score, score])


def model_for(attack: str) -> Any:
    """The scorer of a white-box attack: LOGAN's oriented score, or None (the random forest)."""
    return OrientedScore() if attack == "logan" else None


# ------------------------------------------------------------------ helpers for adapters

def mlp_critic(layers: list[tuple[np.ndarray, np.ndarray]], hidden: Callable[[np.ndarray], np.ndarray],
               output: Callable[[np.ndarray], np.ndarray] | None = None) -> Callable[[np.ndarray], np.ndarray]:
    """A numpy forward pass of a dense network: ``hidden`` after every layer but the last,
    ``output`` (identity when None) after the last; returns one score per row."""
    frozen = [(np.array(w, dtype=np.float64), np.array(b, dtype=np.float64).reshape(-1)) for w, b in layers]

    def forward(x: np.ndarray) -> np.ndarray:
        h = np.asarray(x, dtype=np.float64)
        for i, (w, b) in enumerate(frozen):
            h = h @ w + b
            if i < len(frozen) - 1:
                h = hidden(h)
        return (output(h) if output is not None else h).reshape(len(h), -1)[:, 0]

    return forward


def relu(x: np.ndarray) -> np.ndarray:
    return np.maximum(x, 0.0)


def leaky_relu(slope: float) -> Callable[[np.ndarray], np.ndarray]:
    return lambda x: np.where(x > 0, x, slope * x)


def sigmoid(x: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * x))
