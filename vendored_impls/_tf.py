"""TensorFlow session plumbing shared by the TF adapters (not part of any upstream).

Every fit builds its own ``tf.Graph`` and ``tf.compat.v1.Session`` with one intra/inter-op
thread and a graph-level seed, so runs are deterministic and never touch the process-wide
eager mode. TensorFlow is imported here lazily, only when a fit starts.
"""
from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from typing import Any


@contextlib.contextmanager
def _quiet_native_stderr() -> Iterator[None]:
    """Hide the C++ start-up banner TensorFlow writes to fd 2 on import (oneDNN notes, absl's
    pre-initialisation warning); Python exceptions still propagate. DPCHECK_DEBUG=1 keeps it."""
    if os.environ.get("DPCHECK_DEBUG") or "tensorflow" in sys.modules:
        yield
        return
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 2)
            yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def graph_session(seed: int) -> tuple[Any, Any, Any]:
    """(tf.compat.v1 module, a fresh seeded graph, a single-threaded session on it)."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    with _quiet_native_stderr():
        import tensorflow as tf

    tf.get_logger().setLevel("ERROR")
    tf1 = tf.compat.v1
    graph = tf.Graph()
    with graph.as_default():
        tf1.set_random_seed(seed % 2**31)
    config = tf1.ConfigProto(intra_op_parallelism_threads=1, inter_op_parallelism_threads=1)
    # Grappler's graph rewrites cost more than they save on these tiny, short-lived graphs
    config.graph_options.rewrite_options.disable_meta_optimizer = True
    session = tf1.Session(graph=graph, config=config)
    return tf1, graph, session


class SessionHolder:
    """Owns a session and closes it when the adapter is refitted, closed or dropped."""

    _session: Any = None

    def _set_session(self, session: Any) -> None:
        self.close()
        self._session = session

    def close(self) -> None:
        if self._session is not None:
            try:
                self._session.close()
            finally:
                self._session = None

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass


def merge_hyperparams(name: str, defaults: dict[str, Any], given: dict[str, Any]) -> dict[str, Any]:
    """Defaults overridden by ``given``; unknown names raise TypeError naming them."""
    unknown = sorted(set(given) - set(defaults))
    if unknown:
        raise TypeError(f"{name}: unknown hyperparameter(s) {', '.join(unknown)}; "
                        f"accepted: {', '.join(sorted(defaults))}")
    return {**defaults, **given}


def public_bounds(name: str, bounds: Any, dim: int) -> tuple[Any, Any]:
    """Validate ``bounds=(lower, upper)``; None raises, since bounds are public metadata."""
    import numpy as np

    if bounds is None:
        raise ValueError(f"{name} needs bounds=(lower, upper): per-column bounds are public metadata "
                         "that must be passed in, they are never read from the private data")
    lower, upper = (np.broadcast_to(np.asarray(b, dtype=np.float64), (dim,)).copy() for b in bounds)
    if not np.all(np.isfinite(lower)) or not np.all(np.isfinite(upper)) or np.any(upper < lower):
        raise ValueError(f"{name}: bounds must be finite with lower <= upper per column")
    return lower, upper


def integral_columns(data: Any) -> tuple[int, ...]:
    """Columns whose values are all whole numbers: the integer type of the input schema."""
    import numpy as np

    return tuple(int(j) for j in np.nonzero(np.all(data == np.round(data), axis=0))[0])
