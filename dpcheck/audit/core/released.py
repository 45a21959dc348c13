"""What an adapter releases besides synthetic data (``release_model()``), below the reference
mechanisms that release it and the white-box attacks that read it (:mod:`dpcheck.audit.attacks.whitebox`)."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class ReleasedModel:
    """What an adapter releases besides synthetic data (see :mod:`dpcheck.audit.attacks.whitebox`)."""

    params: np.ndarray
    critic: Callable[[np.ndarray], np.ndarray] | None = None
