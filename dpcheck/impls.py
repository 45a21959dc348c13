"""The implementation adapter protocol and the registry of built-in implementations.

``get(name)`` returns a fresh adapter for one of the twelve built-in names (six vendored
PATE-GAN implementations and their corrected twins) or for ``package.module:Factory``.
"""
from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from dpcheck.probe import Probe

BUGGY = ("original", "updated", "synthcity", "turing", "borealis", "smartnoise")
TWINS = tuple(f"{n}-fixed" for n in BUGGY)
NAMES = BUGGY + TWINS

#: standard hyperparameter names every built-in implementation honours
BUDGET_KNOBS = ("max_iterations", "num_teachers", "lamda", "num_moments", "batch_size")


@runtime_checkable
class Implementation(Protocol):
    name: str
    framework: str  # "tensorflow" | "torch" | "numpy" | ...
    upstream: str  # where the original code lives

    def fit(
        self,
        data: Any,
        *,
        epsilon: float,
        delta: float,
        seed: int,
        probe: Probe | None = None,
        **hyperparams: Any,
    ) -> "Implementation": ...

    def sample(self, n: int) -> np.ndarray: ...


def _entry(name: str) -> str:
    base = name.removesuffix("-fixed")
    cls = "Fixed" if name.endswith("-fixed") else "Upstream"
    return f"dpcheck.vendored_impls.{base}.adapter:{cls}"


def load_factory(spec: str) -> Any:
    """``package.module:Factory`` -> the factory object."""
    if ":" not in spec:
        raise ValueError(f"expected 'package.module:Factory', got {spec!r}")
    module_name, _, attr = spec.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ValueError(f"cannot import {module_name!r} for implementation {spec!r}: {exc}") from exc
    try:
        return getattr(module, attr)
    except AttributeError:
        raise ValueError(f"module {module_name!r} has no attribute {attr!r}") from None


def get(name: str) -> Implementation:
    """A fresh adapter for a built-in name or a ``package.module:Factory`` spec."""
    if name in NAMES:
        factory = load_factory(_entry(name))
    elif ":" in name:
        factory = load_factory(name)
    else:
        raise ValueError(f"unknown implementation {name!r}; built-in: {', '.join(NAMES)}; "
                         "or pass package.module:Factory")
    impl = factory()
    missing = [a for a in ("name", "framework", "upstream", "fit", "sample") if not hasattr(impl, a)]
    if missing:
        raise ValueError(f"{name!r} does not implement the adapter protocol: missing {', '.join(missing)}")
    return impl


def resolve(names: list[str] | tuple[str, ...] | None) -> list[str]:
    """Expand ``all`` / ``buggy`` / ``twins`` into names."""
    out: list[str] = []
    for n in names or ["all"]:
        out.extend({"all": NAMES, "buggy": BUGGY, "twins": TWINS}.get(n, (n,)))
    return out


def source_files(impl: Any) -> list[Path]:
    """The source files static analysis should read for an implementation."""
    files = getattr(impl, "source_files", None)
    if files:
        return [Path(f) for f in files]
    module = importlib.import_module(type(impl).__module__)
    return [Path(module.__file__)] if getattr(module, "__file__", None) else []
