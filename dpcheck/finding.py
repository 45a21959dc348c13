"""The static-analysis evidence record."""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True, order=True)
class RelatedLocation:
    """Another place that explains a finding (e.g. the DP call site that feeds a leaking encoder)."""

    path: str
    line: int
    col: int = 1  # 1-based
    message: str = ""

    @classmethod
    def coerce(cls, value: Any) -> "RelatedLocation":
        """From a ``RelatedLocation``, a dict (JSON, ``asdict``) or a row (``astuple``, cache)."""
        if isinstance(value, RelatedLocation):
            return value
        if isinstance(value, dict):
            return cls(**value)
        return cls(*value)


@dataclass(frozen=True, order=True)
class Finding:
    path: str
    line: int
    col: int  # 1-based
    rule: str
    category: str
    severity: str
    message: str
    name: str = ""
    end_line: int = 0
    end_col: int = 0
    #: the stripped source line; lets baselines survive unrelated line shifts
    snippet: str = ""
    #: other places that explain the finding, shown as "via path:line"
    related: tuple[RelatedLocation, ...] = ()

    def __post_init__(self) -> None:
        if self.related and not all(isinstance(r, RelatedLocation) for r in self.related):
            object.__setattr__(self, "related", _related(self.related))
        elif not isinstance(self.related, tuple):
            object.__setattr__(self, "related", tuple(self.related))

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Finding":
        return cls(**data)


def _related(values: Iterable[Any]) -> tuple[RelatedLocation, ...]:
    return tuple(RelatedLocation.coerce(v) for v in values)
