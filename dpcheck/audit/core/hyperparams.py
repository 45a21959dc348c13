"""``--hp KEY=VALUE`` hyperparameters, shared by ``dpcheck audit`` and the one-run audit (``dpcheck.audit.runners.onerun``)."""
from __future__ import annotations

import ast
from typing import Any

from dpcheck.exitcodes import UsageError


def _value(text: str) -> Any:
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def parse_hyperparams(items: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"--hp expects KEY=VALUE, got {item!r}")
        out[key.strip()] = _value(value.strip())
    return out
