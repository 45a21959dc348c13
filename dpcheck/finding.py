"""The static-analysis evidence record."""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


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

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Finding":
        return cls(**data)
