"""The observer protocol instrumented implementations call at the points that matter.

Implementations call ``probe.<event>(...)`` only where their upstream does the corresponding
thing, guarded by ``if probe is not None`` so that running without a probe costs nothing.
``Probe`` is a no-op base: subclass it and override the events you care about.
``RecordingProbe`` keeps every event for property tests and differential views.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

Source = Literal["data", "parameter", "dp"]
LabelSource = Literal["training", "public", "dp", "none"]


class Probe:
    def teacher_data(self, teacher: int, idx: np.ndarray, *, iteration: int) -> None:
        """Teacher ``teacher`` was (re)trained on rows ``idx`` (indices into the input data)."""

    def votes(self, n0: np.ndarray, n1: np.ndarray, *, iteration: int) -> None:
        """Teacher vote counts per student sample: n0 = 'fake', n1 = 'real'."""

    def noise(
        self,
        values: np.ndarray,
        *,
        distribution: str,
        scale: float,
        applied_to: Literal["votes", "labels"],
        iteration: int,
    ) -> None:
        """Noise drawn for the aggregation (distribution: 'laplace' | 'gaussian'; scale as drawn:
        Laplace b, Gaussian std)."""

    def accountant(self, moments: np.ndarray, eps_hat: float, *, iteration: int) -> None:
        """The accountant's moment vector alpha(1..L) and its epsilon estimate after an update."""

    def bounds(self, lower: np.ndarray, upper: np.ndarray, *, source: Source) -> None:
        """Data bounds used for scaling/encoding and where they came from."""

    def generation_labels(self, values: np.ndarray, *, source: LabelSource) -> None:
        """Labels or class ratios consumed at generation time."""

    def latent(self, distribution: str, *, phase: Literal["train", "generate"]) -> None:
        """The latent noise distribution drawn ('uniform' | 'normal')."""

    def output_transform(self, name: str, **detail: Any) -> None:
        """Transform applied to generator output (e.g. 'inverse_minmax', 'truncate_int',
        'round_int', 'none')."""

    def training_end(self, iterations: int, *, reason: Literal["budget", "max_iterations", "fixed"]) -> None:
        """Training stopped after ``iterations`` outer iterations, and why."""


@dataclass
class Event:
    kind: str
    args: tuple[Any, ...]
    kwargs: dict[str, Any]


@dataclass
class RecordingProbe(Probe):
    events: list[Event] = field(default_factory=list)

    def of(self, kind: str) -> list[Event]:
        return [e for e in self.events if e.kind == kind]

    def __getattribute__(self, name: str) -> Any:
        if name in _EVENTS:
            events = object.__getattribute__(self, "events")

            def record(*args: Any, **kwargs: Any) -> None:
                events.append(Event(name, tuple(_copy(a) for a in args), {k: _copy(v) for k, v in kwargs.items()}))

            return record
        return object.__getattribute__(self, name)


_EVENTS = frozenset(n for n in vars(Probe) if not n.startswith("_"))


def _copy(value: Any) -> Any:
    return np.array(value, copy=True) if isinstance(value, np.ndarray) else value
