"""The fast path of shadow runs: several runs of a built-in implementation trained at once.

A fast path computes, for a list of seeds, what the plain path (``impl.fit`` + ``impl.sample``
in :func:`dpcheck.audit.runners.executor.run_one`) computes for each seed alone — the same distribution,
each model with its own data, seed and noise — while keeping graphs and sessions alive across
runs and stepping K models per ``session.run``. Its own randomness (what the plain path draws
inside the framework) depends only on the run's seed, so a run's output does not depend on the
batch it was computed in.

Two kinds of evidence back a fast path (docs/audit.md, "Fast path"):

* ``EXACT``: the torch fast paths replay every draw and the arithmetic of the plain path, so the
  released data equals the plain path's up to float32 rounding (``tests/test_audit_fast.py``
  compares the unrounded output element by element within a few float32 ulps);
* the others (TF1 graphs whose initial weights come from numpy, and ``synthcity``'s sklearn
  teachers solved by a batched Newton solver) differ by construction: they passed the two-sample
  equivalence test of ``benchmarks/fast_path_equivalence.py`` (``reports/fast_path_equivalence.json``,
  a failure to reject, with its power stated), and the committed verdicts computed on them are
  re-run on the plain path by ``benchmarks/fast_path_confirm.py``
  (``reports/fast_path_confirmation.json``).

``COVERED`` lists the implementations that run fast by default; only those fall back to the plain
path when a fast batch fails. A forced fast path (``--fast``) on any other implementation records a
failed run instead.
"""
from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

import numpy as np

PATHS = ("auto", "fast", "plain")
#: implementation -> "module:function", the function being
#: ``fit_sample_batch(data, seeds, rows, *, epsilon, delta, **hyperparams) -> [released data per seed]``
FAST_FUNCTIONS: dict[str, str] = {
    "original": "dpcheck.vendored_impls.original.fast:fit_sample_batch",
    "original-fixed": "dpcheck.vendored_impls.original.fast_fixed:fit_sample_batch",
    "turing": "dpcheck.vendored_impls.turing.fast:fit_sample_batch",
    "turing-fixed": "dpcheck.vendored_impls.turing.fast_fixed:fit_sample_batch",
    "updated": "dpcheck.vendored_impls.updated.fast:fit_sample_batch",
    "updated-fixed": "dpcheck.vendored_impls.updated.fast:fit_sample_batch_fixed",
    "smartnoise": "dpcheck.vendored_impls.smartnoise.fast:fit_sample_batch",
    "smartnoise-fixed": "dpcheck.vendored_impls.smartnoise.fast:fit_sample_batch_fixed",
    "borealis": "dpcheck.vendored_impls.borealis.fast:fit_sample_batch",
    "borealis-fixed": "dpcheck.vendored_impls.borealis.fast:fit_sample_batch_fixed",
    "synthcity": "dpcheck.vendored_impls.synthcity.fast:fit_sample_batch",
    "synthcity-fixed": "dpcheck.vendored_impls.synthcity.fast:fit_sample_batch_fixed",
}
#: fast paths that passed the equivalence test at R = 200 per world (reports/fast_path_equivalence.json)
COVERED: frozenset[str] = frozenset({"original", "original-fixed", "turing", "turing-fixed", "updated",
                                     "updated-fixed", "synthcity", "borealis", "smartnoise", "borealis-fixed",
                                     "smartnoise-fixed", "synthcity-fixed"})
#: fast paths whose released data equals the plain path's up to float32 rounding (same draws, same arithmetic)
EXACT: frozenset[str] = frozenset({"borealis", "borealis-fixed", "smartnoise", "smartnoise-fixed", "synthcity-fixed"})
#: shadow models trained together (larger batches gain little once session overhead is amortised)
BATCH_SIZE = 32


class FastPathError(RuntimeError):
    """A fast batch raised."""


def check_path(path: str) -> str:
    if path not in PATHS:
        raise ValueError(f"unknown run path {path!r}; choose from {', '.join(PATHS)}")
    return path


def has_fast_path(impl: str) -> bool:
    return impl in FAST_FUNCTIONS


def chosen_path(impl: str, path: str) -> str:
    """"fast" or "plain" for ``impl`` under the requested ``path`` (auto = fast only if covered)."""
    check_path(path)
    if path == "plain" or not has_fast_path(impl):
        return "plain"
    if path == "fast":
        return "fast"
    return "fast" if impl in COVERED else "plain"


def batch_function(impl: str) -> Callable[..., list[np.ndarray]]:
    module, _, function = FAST_FUNCTIONS[impl].partition(":")
    return getattr(importlib.import_module(module), function)


def fit_sample_batch(impl: str, data: np.ndarray, seeds: list[int], rows: int, *, epsilon: float, delta: float,
                     bounds: Any, hyperparams: dict[str, Any]) -> list[np.ndarray]:
    """One released dataset per seed, from ``impl``'s fast path; FastPathError if it raises."""
    try:
        outs = batch_function(impl)(data.copy(), list(seeds), int(rows), epsilon=float(epsilon), delta=float(delta),
                                    bounds=bounds, **hyperparams)
    except Exception as exc:  # noqa: BLE001 - the caller decides between fallback and failure
        raise FastPathError(f"{impl} fast path failed: {type(exc).__name__}: {exc}") from exc
    if len(outs) != len(seeds):
        raise FastPathError(f"{impl} fast path returned {len(outs)} outputs for {len(seeds)} seeds")
    return [np.asarray(o, dtype=np.float64) for o in outs]
