"""A DP function as an audit target: any callable taking an input and ε, returning any output.

Contract (docs/byo.md): ``f(x, epsilon, rng)`` returns one output for input ``x`` drawing its
randomness from the numpy Generator ``rng``; with a parameter named ``n`` it is vectorised and
returns ``n`` outputs along the first axis. Outputs may be scalars, vectors, indices, sentinel
values, NaN or inf. Probe calls check the contract before any audited run.
"""
from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from dpcheck.mechaudit.catalog import CATALOG, BenchMechanism
from dpcheck.mechaudit.encode import as_matrix


class MechanismError(ValueError):
    """The function breaks the contract; the message says how."""


@dataclass
class MechanismTarget:
    name: str
    draw: Callable[[np.ndarray, int, np.random.Generator], np.ndarray]
    claimed: float
    sentinels: tuple[float, ...] = ()
    bench: BenchMechanism | None = None

    def sample(self, x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        out = as_matrix(self.draw(x, n, rng))
        if out.shape[0] != n:
            raise MechanismError(f"{self.name}: asked for {n} outputs, got {out.shape[0]}")
        return out


def from_benchmark(name: str) -> MechanismTarget:
    m = CATALOG[name]
    return MechanismTarget(name, m.sample, m.claimed, m.sentinels, m)


def load_function(spec: str) -> Callable:
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise MechanismError(f"--mechanism takes MODULE:FUNCTION, got {spec!r}")
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:  # the user's module failed to import: say so, with its own error
        raise MechanismError(f"importing your module {module_name!r} failed: {type(exc).__name__}: {exc}") from None
    obj = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise MechanismError(f"module {module_name!r} has no attribute {attr!r}")
        obj = getattr(obj, part)
    if not callable(obj):
        raise MechanismError(f"{spec} is not callable")
    return obj


def from_function(spec: str, epsilon: float, sentinels: tuple[float, ...] = ()) -> MechanismTarget:
    fn = load_function(spec)
    params = inspect.signature(fn).parameters
    for needed in ("epsilon", "rng"):
        if needed not in params:
            raise MechanismError(f"{spec} must take parameters x, epsilon, rng (and optionally n); "
                                 f"it has ({', '.join(params)})")
    if "n" in params:
        def draw(x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
            return np.asarray(fn(x, epsilon=epsilon, rng=rng, n=n))
    else:
        def draw(x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
            return np.stack([np.asarray(fn(x, epsilon=epsilon, rng=rng), dtype=float).reshape(-1)
                             for _ in range(n)])
    return MechanismTarget(spec, draw, epsilon, sentinels)


def probe(target: MechanismTarget, x: np.ndarray, seed: int = 12345) -> int:
    """Check the contract on a few calls; returns the output width. Raises MechanismError."""
    def call(seed_: int) -> np.ndarray:
        try:
            return target.sample(x, 4, np.random.default_rng(seed_))
        except MechanismError:
            raise
        except Exception as exc:
            raise MechanismError(f"{target.name} raised on input {x.tolist()}: {type(exc).__name__}: {exc}") from None
    first, again, other = call(seed), call(seed), call(seed + 1)
    if first.shape != again.shape or first.shape != other.shape:
        raise MechanismError(f"{target.name} returns outputs of varying shape: {first.shape}, {other.shape}")
    if not np.array_equal(first, again, equal_nan=True):
        raise MechanismError(f"{target.name} ignores its rng: two calls with the same seed differ "
                             "(draw every random number from the rng argument)")
    return first.shape[1]
