"""The Laplace and Gaussian mechanisms of installed DP libraries as mechanism targets.

Each wrapper calls the library's public API the way its documentation shows and releases one
noisy value of the scalar query answer ``x[0]`` (sensitivity 1) per output row.

* diffprivlib: ``Laplace`` / ``Gaussian`` / ``GaussianAnalytic(...).randomise(value)``. The
  mechanism takes ``random_state``; every block of outputs builds the mechanism with an integer
  ``random_state`` drawn from the audit's generator, so the audit's seed fixes every output.
* OpenDP: ``make_laplace`` / ``make_gaussian`` measurements. OpenDP draws its noise from the
  operating system's randomness and has no seed; the generator passed in controls nothing, so the
  probe's "ignores its seed" check refuses these targets (rightly), and an audit of them is not
  reproducible output for output — only in distribution. ``unseeded_probe`` checks the rest of
  the contract (shape, type, no exception) for them.

The wrappers import their library lazily, so importing this module needs neither library.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from dpcheck.mechaudit.target import MechanismError, MechanismTarget

SENSITIVITY = 1.0


Draw = Callable[[np.ndarray, int, np.random.Generator], np.ndarray]


def _diffprivlib_draw(kind: str, epsilon: float, delta: float) -> Draw:
    from diffprivlib import mechanisms

    cls = getattr(mechanisms, kind)
    kwargs = {"epsilon": epsilon, "sensitivity": SENSITIVITY}
    if delta:
        kwargs["delta"] = delta
    cls(**kwargs, random_state=0)  # the library's own parameter checks, before any audited run

    def draw(x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        mech = cls(**kwargs, random_state=int(rng.integers(2**32 - 1)))
        value = float(x[0])
        return np.fromiter((mech.randomise(value) for _ in range(n)), dtype=np.float64, count=n)[:, None]

    return draw


def diffprivlib_target(kind: str, epsilon: float, delta: float = 0.0) -> MechanismTarget:
    """``kind``: Laplace, Gaussian or GaussianAnalytic."""
    if kind not in ("Laplace", "Gaussian", "GaussianAnalytic"):
        raise ValueError(f"unknown diffprivlib mechanism {kind!r}")
    if kind != "Laplace" and not delta:
        raise ValueError(f"diffprivlib {kind} needs δ > 0")
    return MechanismTarget(f"diffprivlib.{kind}", _diffprivlib_draw(kind, epsilon, delta), epsilon)


def opendp_measurement(kind: str, scale: float):
    """OpenDP's vector Laplace (ℓ1) or Gaussian (ℓ2) measurement on floats with the given scale."""
    import opendp.prelude as dp

    dp.enable_features("contrib")
    atoms = dp.vector_domain(dp.atom_domain(T=float, nan=False))
    if kind == "laplace":
        return dp.m.make_laplace(atoms, dp.l1_distance(T=float), scale=scale)
    if kind == "gaussian":
        return dp.m.make_gaussian(atoms, dp.l2_distance(T=float), scale=scale)
    raise ValueError(f"unknown OpenDP mechanism {kind!r}")


def opendp_target(kind: str, epsilon: float, scale: float) -> MechanismTarget:
    """One call releases n outputs: the measurement applied to n copies of the answer, each entry
    with its own noise (the vector measurement adds independent noise per entry)."""
    meas = opendp_measurement(kind, scale)

    def draw(x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        del rng  # OpenDP draws from OS randomness: the audit's seed cannot reach it
        return np.asarray(meas([float(x[0])] * n), dtype=np.float64)[:, None]

    return MechanismTarget(f"opendp.{kind}", draw, epsilon)


def opendp_laplace_epsilon(scale: float) -> float:
    """The ε OpenDP's own privacy map states for its Laplace measurement at sensitivity 1."""
    return float(opendp_measurement("laplace", scale).map(SENSITIVITY))


def opendp_gaussian_epsilon(scale: float, delta: float) -> float:
    """The ε OpenDP's own maps state at δ for its Gaussian (zCDP, converted to approximate DP)."""
    import opendp.prelude as dp

    meas = dp.c.make_zCDP_to_approxDP(opendp_measurement("gaussian", scale))
    return float(meas.map(SENSITIVITY).epsilon(delta))


def unseeded_probe(target: MechanismTarget, x: np.ndarray) -> int:
    """The probe's checks except reproducibility under a seed, for a library that cannot be seeded."""
    shapes = []
    for seed in (1, 2):
        try:
            out = target.sample(np.asarray(x, dtype=float), 4, np.random.default_rng(seed))
        except MechanismError:
            raise
        except Exception as exc:
            raise MechanismError(f"{target.name} raised on input {list(x)}: {type(exc).__name__}: {exc}") from None
        shapes.append(out.shape)
    if shapes[0] != shapes[1]:
        raise MechanismError(f"{target.name} returns outputs of varying shape: {shapes}")
    return shapes[0][1]
