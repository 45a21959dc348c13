"""Engine diagnostics (DP000-DP009): a file the engine could not analyse, or a rule that crashed.

Each becomes one ``Finding`` of category ``diagnostic`` naming the file and the reason; the scan
goes on with the next file. DP005 (a crashed rule) also makes the exit code 2.
"""
from __future__ import annotations

from dataclasses import dataclass

from dpcheck.categories import DIAGNOSTIC
from dpcheck.finding import Finding


@dataclass(frozen=True)
class Diagnostic:
    id: str
    name: str
    severity: str
    summary: str


SYNTAX_ERROR = Diagnostic("DP000", "syntax-error", "error", "The file is not valid Python; no rule could run on it.")
UNDECODABLE = Diagnostic(
    "DP001", "undecodable", "error",
    "The file's bytes do not decode with its PEP 263 encoding declaration (UTF-8 when there is none).",
)
UNREADABLE = Diagnostic("DP002", "unreadable", "error", "The file could not be read (permission denied or another OS error).")
TOO_LARGE = Diagnostic(
    "DP003", "too-large", "warning",
    "The file is larger than the size limit (--max-file-size / max-file-size) and was skipped.",
)
BAD_SYMLINK = Diagnostic("DP004", "bad-symlink", "error", "A symlink loop or a symlink whose target does not exist.")
RULE_CRASH = Diagnostic(
    "DP005", "rule-crash", "error",
    "A rule raised an exception on this file; the other rules still ran. The exit code is 2.",
)
NOT_A_FILE = Diagnostic(
    "DP006", "not-a-regular-file", "warning",
    "A path matching *.py is a FIFO, socket or device; it is never opened.",
)

NOT_ANALYSED = Diagnostic(
    "DP007", "not-analysed", "error",
    "Valid Python (or beyond a parser limit) that could not be analysed: nested deeper than --max-depth, "
    "refused by libcst, or over the per-file time or memory limit. The message names the lines.",
)
WORKER_DIED = Diagnostic(
    "DP008", "worker-died", "error",
    "The process analysing this file died (twice: e.g. killed by a signal or out of memory); the file was "
    "not analysed. The exit code is 2.",
)
UNLISTABLE = Diagnostic(
    "DP009", "unlistable-folder", "error",
    "A folder below a scanned path could not be listed (permission denied or another OS error); its files "
    "were not scanned.",
)

DIAGNOSTICS: dict[str, Diagnostic] = {
    d.id: d for d in (SYNTAX_ERROR, UNDECODABLE, UNREADABLE, TOO_LARGE, BAD_SYMLINK, RULE_CRASH, NOT_A_FILE,
                      NOT_ANALYSED, WORKER_DIED, UNLISTABLE)
}


def diagnostic(kind: Diagnostic, path: str, message: str, line: int = 1, col: int = 1) -> Finding:
    return Finding(
        path=path,
        line=max(line, 1),
        col=max(col, 1),
        rule=kind.id,
        category=DIAGNOSTIC,
        severity=kind.severity,
        message=message,
        name=kind.name,
    )


def is_diagnostic_id(rule_id: str) -> bool:
    return rule_id in DIAGNOSTICS
