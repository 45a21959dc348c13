"""Renderers for scan results: ``render(result) -> str`` per format."""
from __future__ import annotations

from collections.abc import Callable

from dpcheck.output import github, json_format, sarif, text
from dpcheck.scan.engine import ScanResult

FORMATS: dict[str, Callable[[ScanResult], str]] = {
    "text": text.render,
    "json": json_format.render,
    "sarif": sarif.render,
    "github": github.render,
}
