"""GitHub Actions workflow commands: one ``::error``/``::warning``/``::notice`` per finding."""
from __future__ import annotations

from dpcheck.output.escape import unicode_safe
from dpcheck.scan.engine import ScanResult

_LEVEL = {"error": "error", "warning": "warning", "note": "notice"}


def _data(value: str) -> str:
    return unicode_safe(value).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _prop(value: str) -> str:
    return _data(value).replace(":", "%3A").replace(",", "%2C")


def render(result: ScanResult) -> str:
    out = []
    for f in result.findings:
        props = [f"file={_prop(f.path)}", f"line={f.line}", f"col={f.col}"]
        if f.end_line:
            props.append(f"endLine={f.end_line}")
        if f.end_col and f.end_line == f.line:
            props.append(f"endColumn={f.end_col}")
        props.append(f"title={_prop(f'{f.rule} {f.name} ({f.category})')}")
        message = f"{f.rule} [{f.category}] {f.message}"
        if f.related:
            message += " (via " + ", ".join(f"{r.path}:{r.line}" for r in f.related) + ")"
        out.append(f"::{_LEVEL.get(f.severity, 'error')} {','.join(props)}::{_data(message)}")
    return "".join(line + "\n" for line in out)
