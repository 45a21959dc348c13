"""The dynamic-check evidence record."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

Status = Literal["fail", "pass", "not_applicable", "error"]


@dataclass
class CheckResult:
    impl: str
    category: str
    check: str  # stable id, e.g. "partition.disjoint_teacher_rows"
    status: Status
    summary: str  # one sentence a reviewer can read
    evidence: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def failed(self) -> bool:
        return self.status == "fail"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "CheckResult":
        return cls(**data)
